#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_subtract, float* __restrict__ A, float* __restrict__ B) {
  if (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) < 300) {
    T_subtract[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = (A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] - B[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))]);
  }
}

extern "C" void sub_kernel(float* A, float* B, float* T_subtract) {
  float* d_A;
  float* d_B;
  float* d_T_subtract;
  cudaMalloc((void**)&d_A, 300 * sizeof(float));
  cudaMalloc((void**)&d_B, 300 * sizeof(float));
  cudaMalloc((void**)&d_T_subtract, 300 * sizeof(float));
  cudaMemcpy(d_A, A, 300 * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, 300 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<2, 256>>>(d_T_subtract, d_A, d_B);
  cudaMemcpy(T_subtract, d_T_subtract, 300 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_B);
  cudaFree(d_T_subtract);
}
