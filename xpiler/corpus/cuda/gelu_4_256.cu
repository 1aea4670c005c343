#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_multiply, float* __restrict__ A) {
  T_multiply[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = ((A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] * 5.000000e-01f) * (1.000000e+00f + erff((A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] * 7.071068e-01f))));
}

extern "C" void gelu_kernel(float* A, float* T_multiply, int size) {
  float* d_A;
  float* d_T_multiply;
  cudaMalloc(&d_A, size * sizeof(float));
  cudaMalloc(&d_T_multiply, size * sizeof(float));
  cudaMemcpy(d_A, A, size * sizeof(float), cudaMemcpyHostToDevice);
  dim3 grid((size + 255) / 256);
  dim3 block(256);
  default_function_kernel<<<grid, block>>>(d_T_multiply, d_A);
  cudaMemcpy(T_multiply, d_T_multiply, size * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_T_multiply);
}
