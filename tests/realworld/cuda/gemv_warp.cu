// y = A x with one warp per row: __ldg loads, lane-strided dot product, __shfl_down_sync
// reduction, lane 0 writes. Kernel-only (the case file gives the launch).
#include <cuda_runtime.h>

__global__ void __launch_bounds__(256) gemv_warp_kernel(const float* __restrict__ A,
                                                         const float* __restrict__ x,
                                                         float* __restrict__ y, int rows, int cols) {
  const unsigned FULL = 0xffffffffu;
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
  int lane = threadIdx.x % warpSize;
  if (warp >= rows) return;
  float dot = 0.f;
  for (int j = lane; j < cols; j += warpSize) dot += __ldg(&A[(long)warp * cols + j]) * __ldg(&x[j]);
  for (int off = warpSize / 2; off > 0; off /= 2) dot += __shfl_down_sync(FULL, dot, off);
  if (lane == 0) y[warp] = dot;
}
