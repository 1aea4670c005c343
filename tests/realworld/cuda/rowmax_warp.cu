// Row max, kernel-only: one block of 32*k threads per row, warp max by __shfl_down_sync,
// per-warp partials in static shared memory, first warp finishes.
#include <cuda_runtime.h>
#include <float.h>

static constexpr int kWarp = 32;
static constexpr int kMaxWarps = 8;

__inline__ __device__ float warpMax(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_down_sync(0xffffffff, v, o));
  return v;
}

__global__ void rowmax_kernel(const float* __restrict__ in, float* __restrict__ out, int ncols) {
  __shared__ float partial[kMaxWarps];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  float m = -FLT_MAX;
  for (int c = threadIdx.x; c < ncols; c += blockDim.x) m = fmaxf(m, in[blockIdx.x * ncols + c]);
  m = warpMax(m);
  if (lane == 0) partial[warp] = m;
  __syncthreads();
  if (warp == 0) {
    m = lane < blockDim.x / kWarp ? partial[lane] : -FLT_MAX;
    m = warpMax(m);
    if (lane == 0) out[blockIdx.x] = m;
  }
}
