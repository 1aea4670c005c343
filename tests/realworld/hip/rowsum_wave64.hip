// Row sums with a wavefront reduction: __shfl_down without a mask (HIP), warpSize = 64 on
// CDNA; one wavefront per row, several rows per block.
#include <hip/hip_runtime.h>

__device__ inline float wave_reduce_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset >>= 1) v += __shfl_down(v, offset);
  return v;
}

__global__ void row_sum_wave(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  const int lane = threadIdx.x % warpSize;
  const int row = blockIdx.x * (blockDim.x / warpSize) + threadIdx.x / warpSize;
  if (row >= rows) return;
  float acc = 0.0f;
  for (int c = lane; c < cols; c += warpSize) acc += x[row * cols + c];
  acc = wave_reduce_sum(acc);
  if (lane == 0) y[row] = acc;
}

extern "C" void row_sum(const float* x, float* y, int rows, int cols) {
  float *dx, *dy;
  hipMalloc(&dx, sizeof(float) * rows * cols);
  hipMalloc(&dy, sizeof(float) * rows);
  hipMemcpy(dx, x, sizeof(float) * rows * cols, hipMemcpyHostToDevice);
  const int block = 256;
  const int rows_per_block = block / 64;
  hipLaunchKernelGGL(row_sum_wave, dim3((rows + rows_per_block - 1) / rows_per_block), dim3(block), 0, 0,
                     dx, dy, rows, cols);
  hipMemcpy(y, dy, sizeof(float) * rows, hipMemcpyDeviceToHost);
  hipFree(dx);
  hipFree(dy);
}
