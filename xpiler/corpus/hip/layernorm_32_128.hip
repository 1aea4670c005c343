#include <hip/hip_runtime.h>

#define COLS 128
#define MAX_VALS_PER_LANE 4  // for a 32-lane wavefront; a 64-lane one uses half

// blockDim.x == warpSize: one wavefront per row
__global__ void layernorm_wave(const float* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ y, float eps) {
  const int lane = threadIdx.x;
  const float* xr = x + (size_t)blockIdx.x * COLS;
  float* yr = y + (size_t)blockIdx.x * COLS;
  float v[MAX_VALS_PER_LANE];
  float s = 0.0f;
  for (int i = 0; i < MAX_VALS_PER_LANE; ++i) {
    const int j = lane + i * warpSize;
    v[i] = (j < COLS) ? xr[j] : 0.0f;
    s += v[i];
  }
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) s += __shfl_xor(s, mask);
  const float mean = s / COLS;
  float q = 0.0f;
  for (int i = 0; i < MAX_VALS_PER_LANE; ++i) {
    const int j = lane + i * warpSize;
    const float d = (j < COLS) ? v[i] - mean : 0.0f;
    q += d * d;
  }
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) q += __shfl_xor(q, mask);
  const float rstd = rsqrtf(q / COLS + eps);
  for (int i = 0; i < MAX_VALS_PER_LANE; ++i) {
    const int j = lane + i * warpSize;
    if (j < COLS) yr[j] = (v[i] - mean) * rstd * gamma[j] + beta[j];
  }
}

extern "C" void layernorm_kernel(float* x, float* gamma, float* beta, float* out, int rows) {
  float* d_x;
  float* d_gamma;
  float* d_beta;
  float* d_out;
  hipMalloc((void**)&d_x, (rows * COLS) * sizeof(float));
  hipMalloc((void**)&d_gamma, COLS * sizeof(float));
  hipMalloc((void**)&d_beta, COLS * sizeof(float));
  hipMalloc((void**)&d_out, (rows * COLS) * sizeof(float));
  hipMemcpy(d_x, x, (rows * COLS) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_gamma, gamma, COLS * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_beta, beta, COLS * sizeof(float), hipMemcpyHostToDevice);
  hipDeviceProp_t prop;
  hipGetDeviceProperties(&prop, 0);
  hipLaunchKernelGGL(layernorm_wave, dim3(rows), dim3(prop.warpSize), 0, 0, d_x, d_gamma, d_beta, d_out, 1e-5f);
  hipMemcpy(out, d_out, (rows * COLS) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_gamma);
  hipFree(d_beta);
  hipFree(d_out);
}
