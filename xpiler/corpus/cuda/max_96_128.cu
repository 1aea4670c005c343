#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(128) default_function_kernel(float* __restrict__ A, float* __restrict__ A_red) {
  float A_red_local[1];
  A_red_local[0] = -3.402823e+38f;
  for (int k0 = 0; k0 < 96; ++k0) {
    A_red_local[0] = max(A_red_local[0], A[(((((((((int)blockIdx.x) * 128) + ((int)threadIdx.x)) / 128) * 12288) + (k0 * 128)) + (((((int)blockIdx.x) * 128) + ((int)threadIdx.x)) % 128)))]);
  }
  A_red[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] = A_red_local[0];
}

extern "C" void max_kernel(float* A, float* A_red) {
  float* d_A;
  float* d_A_red;
  cudaMalloc((void**)&d_A, 12288 * sizeof(float));
  cudaMalloc((void**)&d_A_red, 128 * sizeof(float));
  cudaMemcpy(d_A, A, 12288 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<1, 128>>>(d_A, d_A_red);
  cudaMemcpy(A_red, d_A_red, 128 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_A_red);
}
