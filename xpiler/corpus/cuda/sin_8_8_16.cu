#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ compute, float* __restrict__ A) {
  compute[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = sinf(A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))]);
}

extern "C" void sin_kernel(float* A, float* compute) {
  float* d_A;
  float* d_compute;
  cudaMalloc((void**)&d_A, 1024 * sizeof(float));
  cudaMalloc((void**)&d_compute, 1024 * sizeof(float));
  cudaMemcpy(d_A, A, 1024 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<4, 256>>>(d_compute, d_A);
  cudaMemcpy(compute, d_compute, 1024 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_compute);
}
