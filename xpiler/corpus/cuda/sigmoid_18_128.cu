#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(1024) default_function_kernel(float* __restrict__ compute, float* __restrict__ A) {
  if (((((int)blockIdx.x) * 1024) + ((int)threadIdx.x)) < 2304) {
    compute[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] = (1.000000e+00f / (1.000000e+00f + __expf((0.000000e+00f - A[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))]))));
  }
}

extern "C" void sigmoid_kernel(float* A, float* compute, int size) {
  float* d_A;
  float* d_compute;
  cudaMalloc(&d_A, size * sizeof(float));
  cudaMalloc(&d_compute, size * sizeof(float));
  cudaMemcpy(d_A, A, size * sizeof(float), cudaMemcpyHostToDevice);
  dim3 grid((size + 1023) / 1024);
  dim3 block(1024);
  default_function_kernel<<<grid, block>>>(d_compute, d_A);
  cudaMemcpy(compute, d_compute, size * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_compute);
}
