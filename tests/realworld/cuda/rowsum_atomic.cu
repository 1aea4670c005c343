// Row sums with a 2-D grid: blockIdx.y is the row, blockIdx.x a chunk of columns; each
// block reduces its chunk in shared memory and adds it with atomicAdd (output starts zeroed).
#include <cuda_runtime.h>

#define THREADS 128

__global__ void row_sum_atomic_kernel(const float* __restrict__ x, float* __restrict__ out, int cols) {
  __shared__ float buf[THREADS];
  const int row = blockIdx.y;
  const int col = blockIdx.x * THREADS + threadIdx.x;
  buf[threadIdx.x] = col < cols ? x[(size_t)row * cols + col] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(&out[row], buf[0]);
}

extern "C" void row_sum(const float* x, float* out, int rows, int cols) {
  float *dx, *dout;
  cudaMalloc(&dx, sizeof(float) * rows * cols);
  cudaMalloc(&dout, sizeof(float) * rows);
  cudaMemcpy(dx, x, sizeof(float) * rows * cols, cudaMemcpyHostToDevice);
  cudaMemset(dout, 0, sizeof(float) * rows);
  dim3 grid((cols + THREADS - 1) / THREADS, rows);
  row_sum_atomic_kernel<<<grid, THREADS>>>(dx, dout, cols);
  cudaDeviceSynchronize();
  cudaMemcpy(out, dout, sizeof(float) * rows, cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dout);
}
