#include <hip/hip_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_sign, float* __restrict__ A) {
  if (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) < 385) {
    T_sign[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = ((0.000000e+00f < A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))]) ? 1.000000e+00f : ((A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] < 0.000000e+00f) ? -1.000000e+00f : 0.000000e+00f));
  }
}

extern "C" void sign_kernel(float* A, float* T_sign) {
  float* d_A;
  float* d_T_sign;
  hipMalloc((void**)&d_A, 385 * sizeof(float));
  hipMalloc((void**)&d_T_sign, 385 * sizeof(float));
  hipMemcpy(d_A, A, 385 * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(default_function_kernel, dim3(2), dim3(256), 0, 0, d_T_sign, d_A);
  hipMemcpy(T_sign, d_T_sign, 385 * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_A);
  hipFree(d_T_sign);
}
