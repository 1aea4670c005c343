#include <hip/hip_runtime.h>

// grid-stride loop: any grid size covers all n elements
__global__ void sub_forward(const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = x[i] - y[i];
  }
}

extern "C" void sub_kernel(float* x, float* y, float* out, int n) {
  float* d_x;
  float* d_y;
  float* d_out;
  hipMalloc((void**)&d_x, n * sizeof(float));
  hipMalloc((void**)&d_y, n * sizeof(float));
  hipMalloc((void**)&d_out, n * sizeof(float));
  hipMemcpy(d_x, x, n * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_y, y, n * sizeof(float), hipMemcpyHostToDevice);
  sub_forward<<<4, 256>>>(d_x, d_y, d_out, n);
  hipMemcpy(out, d_out, n * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_y);
  hipFree(d_out);
}
