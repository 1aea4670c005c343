#include <cuda_runtime.h>
#include <math.h>

#define COLS 200
#define PER_LANE 7

// softmax over the last axis; one warp per row, PER_LANE values per lane in registers.
__global__ void __launch_bounds__(128) softmax_warp_kernel(const float* __restrict__ x, float* __restrict__ y, int rows) {
  const int row = blockIdx.x * 4 + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float* xr = x + row * COLS;
  float v[PER_LANE];
  float m = -INFINITY;
#pragma unroll
  for (int i = 0; i < PER_LANE; ++i) {
    const int j = lane + i * 32;
    v[i] = (j < COLS) ? xr[j] : -INFINITY;
    m = fmaxf(m, v[i]);
  }
  for (int offset = 16; offset > 0; offset >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, offset));
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < PER_LANE; ++i) {
    v[i] = (lane + i * 32 < COLS) ? __expf(v[i] - m) : 0.0f;
    s += v[i];
  }
  for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffff, s, offset);
  const float inv = 1.0f / s;
#pragma unroll
  for (int i = 0; i < PER_LANE; ++i) {
    const int j = lane + i * 32;
    if (j < COLS) y[row * COLS + j] = v[i] * inv;
  }
}

extern "C" void softmax_kernel(float* x, float* out, int rows) {
  float* d_x;
  float* d_out;
  cudaMalloc(&d_x, (rows * COLS) * sizeof(float));
  cudaMalloc(&d_out, (rows * COLS) * sizeof(float));
  cudaMemcpy(d_x, x, (rows * COLS) * sizeof(float), cudaMemcpyHostToDevice);
  softmax_warp_kernel<<<(rows + 3) / 4, 128>>>(d_x, d_out, rows);
  cudaMemcpy(out, d_out, (rows * COLS) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_out);
}
