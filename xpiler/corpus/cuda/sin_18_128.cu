#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(1024) default_function_kernel(float* __restrict__ compute, float* __restrict__ A) {
  if (((((int)blockIdx.x) * 1024) + ((int)threadIdx.x)) < 2304) {
    compute[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] = sinf(A[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))]);
  }
}

extern "C" void sin_kernel(float* A, float* compute) {
  float* d_A;
  float* d_compute;
  cudaMalloc((void**)&d_A, 2304 * sizeof(float));
  cudaMalloc((void**)&d_compute, 2304 * sizeof(float));
  cudaMemcpy(d_A, A, 2304 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<3, 1024>>>(d_compute, d_A);
  cudaMemcpy(compute, d_compute, 2304 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_compute);
}
