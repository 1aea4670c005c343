// log_softmax over the last axis, x[rows, cols] -> out[rows, cols].
// One warp per row (4 warps per 128-thread block); each lane walks the row with stride 32,
// max and sum-of-exp are combined with __shfl_xor_sync butterflies so every lane ends with the
// row totals. out = x - (max + log(sum exp(x - max))).
#include <cuda_runtime.h>
#include <math.h>

#define WARPS_PER_BLOCK 4

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void log_softmax_warp_kernel(const float* __restrict__ x, float* __restrict__ out,
                                        int rows, int cols) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * WARPS_PER_BLOCK + (threadIdx.x >> 5);
  if (row >= rows) return;  // whole warp exits together
  const float* xr = x + (size_t)row * cols;
  float* orow = out + (size_t)row * cols;
  float m = -INFINITY;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
  m = warp_max(m);
  float s = 0.0f;
  for (int c = lane; c < cols; c += 32) s += expf(xr[c] - m);
  s = warp_sum(s);
  const float lse = m + logf(s);
  for (int c = lane; c < cols; c += 32) orow[c] = xr[c] - lse;
}

extern "C" void log_softmax_rows(const float* x, float* out, int rows, int cols) {
  const size_t bytes = (size_t)rows * cols * sizeof(float);
  float *dx, *dout;
  cudaMalloc(&dx, bytes);
  cudaMalloc(&dout, bytes);
  cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice);
  const int blocks = (rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
  log_softmax_warp_kernel<<<blocks, WARPS_PER_BLOCK * 32>>>(dx, dout, rows, cols);
  cudaMemcpy(out, dout, bytes, cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dout);
}
