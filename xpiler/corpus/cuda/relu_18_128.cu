#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ compute, float* __restrict__ A) {
  compute[((((((int)blockIdx.x) * 256) + (((int)threadIdx.y) * 32)) + ((int)threadIdx.x)))] = max(A[((((((int)blockIdx.x) * 256) + (((int)threadIdx.y) * 32)) + ((int)threadIdx.x)))], 0.000000e+00f);
}

extern "C" void relu_kernel(float* A, float* compute, int size) {
  float* d_A;
  float* d_compute;
  cudaMalloc(&d_A, size * sizeof(float));
  cudaMalloc(&d_compute, size * sizeof(float));
  cudaMemcpy(d_A, A, size * sizeof(float), cudaMemcpyHostToDevice);
  dim3 b(32, 8);
  dim3 g((size + 255) / 256);
  default_function_kernel<<<g, b>>>(d_compute, d_A);
  cudaMemcpy(compute, d_compute, size * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_compute);
}
