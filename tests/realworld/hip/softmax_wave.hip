// Row softmax, one wavefront (64 lanes) per row, __shfl_xor butterflies without a mask,
// kernel-only (the case file gives the launch).
#include <hip/hip_runtime.h>
#include <float.h>

__global__ void softmax_wave_kernel(const float* __restrict__ in, float* __restrict__ out, int n_rows, int n_cols) {
  const int lane = threadIdx.x & (warpSize - 1);
  const int row = blockIdx.x * (blockDim.x / warpSize) + threadIdx.x / warpSize;
  if (row >= n_rows) return;
  const float* r = in + (size_t)row * n_cols;
  float mx = -FLT_MAX;
  for (int c = lane; c < n_cols; c += warpSize) mx = fmaxf(mx, r[c]);
  for (int m = warpSize / 2; m >= 1; m /= 2) mx = fmaxf(mx, __shfl_xor(mx, m));
  float s = 0.f;
  for (int c = lane; c < n_cols; c += warpSize) s += __expf(r[c] - mx);
  for (int m = warpSize / 2; m >= 1; m /= 2) s += __shfl_xor(s, m);
  for (int c = lane; c < n_cols; c += warpSize) out[(size_t)row * n_cols + c] = __expf(r[c] - mx) / s;
}
