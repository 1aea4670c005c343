#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_add, float* __restrict__ A, float* __restrict__ B) {
  T_add[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = (A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] + B[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))]);
}

extern "C" void add_kernel(float* A, float* B, float* T_add, int size) {
  float* d_A;
  float* d_B;
  float* d_T_add;
  cudaMalloc(&d_A, size * sizeof(float));
  cudaMalloc(&d_B, size * sizeof(float));
  cudaMalloc(&d_T_add, size * sizeof(float));
  cudaMemcpy(d_A, A, size * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, size * sizeof(float), cudaMemcpyHostToDevice);
  dim3 grid((size + 255) / 256);
  dim3 block(256);
  default_function_kernel<<<grid, block>>>(d_T_add, d_A, d_B);
  cudaMemcpy(T_add, d_T_add, size * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_B);
  cudaFree(d_T_add);
}
