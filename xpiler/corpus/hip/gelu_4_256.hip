#include <hip/hip_runtime.h>

// grid-stride loop: any grid size covers all n elements
__global__ void gelu_forward(const float* __restrict__ x, float* __restrict__ out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    out[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.7071067812f));
  }
}

extern "C" void gelu_kernel(float* x, float* out, int n) {
  float* d_x;
  float* d_out;
  hipMalloc((void**)&d_x, n * sizeof(float));
  hipMalloc((void**)&d_out, n * sizeof(float));
  hipMemcpy(d_x, x, n * sizeof(float), hipMemcpyHostToDevice);
  gelu_forward<<<4, 256>>>(d_x, d_out, n);
  hipMemcpy(out, d_out, n * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_out);
}
