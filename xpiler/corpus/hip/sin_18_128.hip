#include <hip/hip_runtime.h>

__global__ void sin_forward(const float* __restrict__ x, float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = sinf(x[i]);
  }
}

extern "C" void sin_kernel(float* x, float* out, int n) {
  float* d_x;
  float* d_out;
  hipMalloc((void**)&d_x, n * sizeof(float));
  hipMalloc((void**)&d_out, n * sizeof(float));
  hipMemcpy(d_x, x, n * sizeof(float), hipMemcpyHostToDevice);
  const int block = 256;
  const int grid = (n + block - 1) / block;
  hipLaunchKernelGGL(sin_forward, dim3(grid), dim3(block), 0, 0, d_x, d_out, n);
  hipMemcpy(out, d_out, n * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_out);
}
