#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ compute, float* __restrict__ A) {
  if (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) < 300) {
    compute[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = (1.000000e+00f / (1.000000e+00f + __expf((0.000000e+00f - A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))]))));
  }
}

extern "C" void sigmoid_kernel(float* A, float* compute) {
  float* d_A;
  float* d_compute;
  cudaMalloc((void**)&d_A, 300 * sizeof(float));
  cudaMalloc((void**)&d_compute, 300 * sizeof(float));
  cudaMemcpy(d_A, A, 300 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<2, 256>>>(d_compute, d_A);
  cudaMemcpy(compute, d_compute, 300 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_compute);
}
