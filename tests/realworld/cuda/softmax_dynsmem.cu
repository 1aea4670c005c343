// Row softmax, one block per row: the row is staged in dynamic shared memory
// (extern __shared__), tree reductions with __syncthreads, a templated block size.
#include <cuda_runtime.h>
#include <math.h>

template <int BLOCK>
__global__ void softmax_smem_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
  extern __shared__ float smem[];
  float* row = smem;
  __shared__ float red[BLOCK];
  const int tid = threadIdx.x;
  const float* xr = x + (size_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int j = tid; j < cols; j += BLOCK) {
    float v = xr[j];
    row[j] = v;
    m = fmaxf(m, v);
  }
  red[tid] = m;
  __syncthreads();
#pragma unroll
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
    __syncthreads();
  }
  const float row_max = red[0];
  __syncthreads();
  float sum = 0.f;
  for (int j = tid; j < cols; j += BLOCK) {
    float e = __expf(row[j] - row_max);
    row[j] = e;
    sum += e;
  }
  red[tid] = sum;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) red[tid] += red[tid + s];
    __syncthreads();
  }
  const float inv = 1.f / red[0];
  for (int j = tid; j < cols; j += BLOCK) y[(size_t)blockIdx.x * cols + j] = row[j] * inv;
}

extern "C" void softmax_rows(const float* x, float* y, int rows, int cols) {
  float *dx, *dy;
  size_t bytes = sizeof(float) * rows * cols;
  cudaMalloc(&dx, bytes);
  cudaMalloc(&dy, bytes);
  cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice);
  constexpr int kBlock = 64;
  size_t smem = cols * sizeof(float);
  softmax_smem_kernel<kBlock><<<rows, kBlock, smem>>>(dx, dy, cols);
  cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
}
