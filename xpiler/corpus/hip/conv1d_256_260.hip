#include <hip/hip_runtime.h>

// out[i] = sum_k x[i + k] * w[k], i < out_len, k < in_len - out_len + 1
__global__ void conv1d_valid(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ out,
                             int out_len, int taps) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= out_len) return;
  float acc = 0.0f;
  for (int k = 0; k < taps; ++k) acc = fmaf(x[i + k], w[k], acc);
  out[i] = acc;
}

extern "C" void conv1d_kernel(float* x, float* w, float* out, int out_len, int in_len) {
  float* d_x;
  float* d_w;
  float* d_out;
  hipMalloc((void**)&d_x, in_len * sizeof(float));
  hipMalloc((void**)&d_w, (in_len - out_len + 1) * sizeof(float));
  hipMalloc((void**)&d_out, out_len * sizeof(float));
  hipMemcpy(d_x, x, in_len * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_w, w, (in_len - out_len + 1) * sizeof(float), hipMemcpyHostToDevice);
  const int taps = in_len - out_len + 1;
  hipLaunchKernelGGL(conv1d_valid, dim3((out_len + 127) / 128), dim3(128), 0, 0, d_x, d_w, d_out, out_len, taps);
  hipMemcpy(out, d_out, out_len * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_w);
  hipFree(d_out);
}
