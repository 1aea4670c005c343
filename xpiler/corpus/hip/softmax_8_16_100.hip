#include <hip/hip_runtime.h>

// dynamic LDS: cols floats of the row + blockDim.x floats of scratch
__global__ void softmax_block_lds(const float* __restrict__ x, float* __restrict__ y, int cols) {
  extern __shared__ float lds[];
  float* row = lds;
  float* red = lds + cols;
  const int tid = threadIdx.x;
  float m = -3.402823466e+38f;
  for (int j = tid; j < cols; j += blockDim.x) {
    row[j] = x[(size_t)blockIdx.x * cols + j];
    m = fmaxf(m, row[j]);
  }
  red[tid] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (int j = tid; j < cols; j += blockDim.x) {
    row[j] = __expf(row[j] - m);
    sum += row[j];
  }
  red[tid] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads();
  }
  const float inv = 1.0f / red[0];
  for (int j = tid; j < cols; j += blockDim.x) y[(size_t)blockIdx.x * cols + j] = row[j] * inv;
}
