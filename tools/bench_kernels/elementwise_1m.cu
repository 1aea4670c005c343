// 1M-element element-wise kernel (TVM style) for the virtual-device benchmark.
#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_add,
    const float* __restrict__ A, const float* __restrict__ B, int n) {
  int i = ((int)blockIdx.x) * 256 + ((int)threadIdx.x);
  if (i < n) {
    T_add[i] = (A[i] * 2.000000e+00f) + B[i];
  }
}

extern "C" void add_kernel(const float* A, const float* B, float* C, int n) {
  float *dA, *dB, *dC;
  size_t bytes = (size_t)n * sizeof(float);
  cudaMalloc((void**)&dA, bytes);
  cudaMalloc((void**)&dB, bytes);
  cudaMalloc((void**)&dC, bytes);
  cudaMemcpy(dA, A, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B, bytes, cudaMemcpyHostToDevice);
  dim3 grid((n + 255) / 256);
  dim3 block(256);
  default_function_kernel<<<grid, block>>>(dC, dA, dB, n);
  cudaMemcpy(C, dC, bytes, cudaMemcpyDeviceToHost);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
}
