#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_concat, float* __restrict__ x0, float* __restrict__ x1) {
  T_concat[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = ((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 64) / 1) < 32) ? x0[((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 64) * 32) + ((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 64) / 1) - 0) * 1)) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 1))] : x1[((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 64) * 32) + ((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 64) / 1) - 32) * 1)) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 1))]);
}

extern "C" void concat_kernel(float* x0, float* x1, float* out) {
  float* d_x0;
  float* d_x1;
  float* d_out;
  cudaMalloc(&d_x0, 512 * sizeof(float));
  cudaMalloc(&d_x1, 512 * sizeof(float));
  cudaMalloc(&d_out, 1024 * sizeof(float));
  cudaMemcpy(d_x0, x0, 512 * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_x1, x1, 512 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<4, 256>>>(d_out, d_x0, d_x1);
  cudaMemcpy(out, d_out, 1024 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x0);
  cudaFree(d_x1);
  cudaFree(d_out);
}
