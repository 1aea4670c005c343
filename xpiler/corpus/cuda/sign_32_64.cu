#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(1024) default_function_kernel(float* __restrict__ T_sign, float* __restrict__ A) {
  T_sign[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] = ((0.000000e+00f < A[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))]) ? 1.000000e+00f : ((A[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] < 0.000000e+00f) ? -1.000000e+00f : 0.000000e+00f));
}
