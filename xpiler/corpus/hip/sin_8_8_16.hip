#include <hip/hip_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_sin, float* __restrict__ A) {
  T_sin[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = sinf(A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))]);
}

extern "C" void sin_kernel(float* A, float* T_sin) {
  float* d_A;
  float* d_T_sin;
  hipMalloc((void**)&d_A, 1024 * sizeof(float));
  hipMalloc((void**)&d_T_sin, 1024 * sizeof(float));
  hipMemcpy(d_A, A, 1024 * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(default_function_kernel, dim3(4), dim3(256), 0, 0, d_T_sin, d_A);
  hipMemcpy(T_sin, d_T_sin, 1024 * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_A);
  hipFree(d_T_sin);
}
