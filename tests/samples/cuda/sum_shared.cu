// sum_32_4096: row sums with a shared-memory tree, warp shuffles and atomics.
#include <cuda_runtime.h>
#include <algorithm>

#define THREADS 256
#define DIV_UP(a, b) (((a) + (b) - 1) / (b))
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float warp_reduce(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    v += __shfl_down_sync(FULL_MASK, v, offset);
  }
  return v;
}

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ out, int rows, int cols) {
  __shared__ float partial[THREADS / 32];
  int row = blockIdx.y;
  float acc = 0.0f;
  for (int c = blockIdx.x * THREADS + threadIdx.x; c < cols; c += gridDim.x * THREADS) {
    acc += x[row * cols + c];
  }
  acc = warp_reduce(acc);
  if ((threadIdx.x & 31) == 0) {
    partial[threadIdx.x / 32] = acc;
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    float v = threadIdx.x < THREADS / 32 ? partial[threadIdx.x] : 0.0f;
    v = warp_reduce(v);
    if (threadIdx.x == 0) {
      atomicAdd(&out[row], v);
    }
  }
}

extern "C" void sum_kernel(const float* x, float* out, int rows, int cols) {
  float *d_x, *d_out;
  cudaMalloc((void**)&d_x, rows * cols * sizeof(float));
  cudaMalloc((void**)&d_out, rows * sizeof(float));
  cudaMemcpy(d_x, x, rows * cols * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(d_out, 0, rows * sizeof(float));
  dim3 grid;
  grid.x = std::max(1, std::min(DIV_UP(cols, THREADS), 64));
  grid.y = rows;
  row_sum_kernel<<<grid, THREADS>>>(d_x, d_out, rows, cols);
  cudaMemcpy(out, d_out, rows * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_out);
}
