#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(128) default_function_kernel(float* __restrict__ A, float* __restrict__ T_divide) {
  float T_divide_local[1];
  T_divide_local[0] = 0.000000e+00f;
  for (int k1 = 0; k1 < 48; ++k1) {
    T_divide_local[0] = (T_divide_local[0] + A[(((((((((int)blockIdx.x) * 128) + ((int)threadIdx.x)) / 8) * 384) + (k1 * 8)) + (((((int)blockIdx.x) * 128) + ((int)threadIdx.x)) % 8)))]);
  }
  T_divide[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] = (T_divide_local[0] / 4.800000e+01f);
}

extern "C" void mean_kernel(float* A, float* T_divide) {
  float* d_A;
  float* d_T_divide;
  cudaMalloc((void**)&d_A, 6144 * sizeof(float));
  cudaMalloc((void**)&d_T_divide, 128 * sizeof(float));
  cudaMemcpy(d_A, A, 6144 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<1, 128>>>(d_A, d_T_divide);
  cudaMemcpy(T_divide, d_T_divide, 128 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_T_divide);
}
