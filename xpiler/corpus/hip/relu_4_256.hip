#include <hip/hip_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_relu, float* __restrict__ A) {
  T_relu[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = max(A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))], 0.000000e+00f);
}

extern "C" void relu_kernel(float* A, float* T_relu) {
  float* d_A;
  float* d_T_relu;
  hipMalloc((void**)&d_A, 1024 * sizeof(float));
  hipMalloc((void**)&d_T_relu, 1024 * sizeof(float));
  hipMemcpy(d_A, A, 1024 * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(default_function_kernel, dim3(4), dim3(256), 0, 0, d_T_relu, d_A);
  hipMemcpy(T_relu, d_T_relu, 1024 * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_A);
  hipFree(d_T_relu);
}
