#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(1024) default_function_kernel(float* __restrict__ T_subtract, float* __restrict__ A, float* __restrict__ B) {
  if (((((int)blockIdx.x) * 1024) + ((int)threadIdx.x)) < 2304) {
    T_subtract[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] = (A[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] - B[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))]);
  }
}

extern "C" void sub_kernel(float* A, float* B, float* T_subtract, int size) {
  float* d_A;
  float* d_B;
  float* d_T_subtract;
  cudaMalloc(&d_A, size * sizeof(float));
  cudaMalloc(&d_B, size * sizeof(float));
  cudaMalloc(&d_T_subtract, size * sizeof(float));
  cudaMemcpy(d_A, A, size * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, size * sizeof(float), cudaMemcpyHostToDevice);
  dim3 grid((size + 1023) / 1024);
  dim3 block(1024);
  default_function_kernel<<<grid, block>>>(d_T_subtract, d_A, d_B);
  cudaMemcpy(T_subtract, d_T_subtract, size * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_B);
  cudaFree(d_T_subtract);
}
