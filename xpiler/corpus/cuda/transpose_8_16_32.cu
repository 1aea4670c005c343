#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_transpose, float* __restrict__ x) {
  T_transpose[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = x[(((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 128) + (((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 128) / 16) * 512)) + ((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 16) * 32))];
}

extern "C" void transpose_kernel(float* x, float* out) {
  float* d_x;
  float* d_out;
  cudaMalloc(&d_x, 4096 * sizeof(float));
  cudaMalloc(&d_out, 4096 * sizeof(float));
  cudaMemcpy(d_x, x, 4096 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<16, 256>>>(d_out, d_x);
  cudaMemcpy(out, d_out, 4096 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_out);
}
