#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_transpose, float* __restrict__ x) {
  T_transpose[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = x[(((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 1024) * 1024) + (((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 1024) / 64) * 8)) + (((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 64) / 8) * 128)) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 8))];
}
