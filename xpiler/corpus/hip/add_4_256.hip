#include <hip/hip_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_add, float* __restrict__ A, float* __restrict__ B) {
  T_add[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = (A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] + B[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))]);
}

extern "C" void add_kernel(float* A, float* B, float* T_add) {
  float* d_A;
  float* d_B;
  float* d_T_add;
  hipMalloc((void**)&d_A, 1024 * sizeof(float));
  hipMalloc((void**)&d_B, 1024 * sizeof(float));
  hipMalloc((void**)&d_T_add, 1024 * sizeof(float));
  hipMemcpy(d_A, A, 1024 * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_B, B, 1024 * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(default_function_kernel, dim3(4), dim3(256), 0, 0, d_T_add, d_A, d_B);
  hipMemcpy(T_add, d_T_add, 1024 * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_A);
  hipFree(d_B);
  hipFree(d_T_add);
}
