// add_4_1000 for ROCm: hipLaunchKernelGGL launch form.
#include <hip/hip_runtime.h>

__global__ void add_kernel_device(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  if (i < n) {
    c[i] = a[i] + b[i];
  }
}

extern "C" void add_kernel(const float* a, const float* b, float* c, int n) {
  float *d_a, *d_b, *d_c;
  const size_t bytes = n * sizeof(float);
  hipMalloc((void**)&d_a, bytes);
  hipMalloc((void**)&d_b, bytes);
  hipMalloc((void**)&d_c, bytes);
  hipMemcpy(d_a, a, bytes, hipMemcpyHostToDevice);
  hipMemcpy(d_b, b, bytes, hipMemcpyHostToDevice);
  hipLaunchKernelGGL(add_kernel_device, dim3((n + 255) / 256), dim3(256), 0, 0, d_a, d_b, d_c, n);
  hipDeviceSynchronize();
  hipMemcpy(c, d_c, bytes, hipMemcpyDeviceToHost);
  hipFree(d_a);
  hipFree(d_b);
  hipFree(d_c);
}
