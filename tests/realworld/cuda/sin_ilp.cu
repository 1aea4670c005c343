// sin with instruction-level parallelism: each thread handles UNROLL elements spaced by the
// block size (PyTorch's elementwise "thread_work_size" loop), kernel-only.
#include <cuda_runtime.h>

constexpr int UNROLL = 4;

__global__ void sin_unrolled_kernel(int n, const float* __restrict__ x, float* __restrict__ y) {
  int base = blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
  float vals[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    int idx = base + u * blockDim.x;
    vals[u] = idx < n ? x[idx] : 0.f;
  }
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    int idx = base + u * blockDim.x;
    if (idx < n) y[idx] = sinf(vals[u]);
  }
}
