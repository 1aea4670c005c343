#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ A, float* __restrict__ A_red) {
  float A_red_local[1];
  A_red_local[0] = 3.402823e+38f;
  for (int k1 = 0; k1 < 64; ++k1) {
    A_red_local[0] = min(A_red_local[0], A[(((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 32) * 2048) + (k1 * 32)) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 32)))]);
  }
  A_red[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = A_red_local[0];
}

extern "C" void min_kernel(float* A, float* A_red) {
  float* d_A;
  float* d_A_red;
  cudaMalloc((void**)&d_A, 16384 * sizeof(float));
  cudaMalloc((void**)&d_A_red, 256 * sizeof(float));
  cudaMemcpy(d_A, A, 16384 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<1, 256>>>(d_A, d_A_red);
  cudaMemcpy(A_red, d_A_red, 256 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_A_red);
}
