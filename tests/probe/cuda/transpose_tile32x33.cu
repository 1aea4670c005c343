// Batched 2-D matrix transpose with a padded shared-memory tile (no bank conflicts).
#include <cuda_runtime.h>
#include <cstdio>

constexpr int TILE_DIM = 32;
constexpr int BLOCK_ROWS = 8;

__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                int rows, int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  const size_t batch_off = (size_t)blockIdx.z * rows * cols;
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    if (x < cols && (y + j) < rows)
      tile[threadIdx.y + j][threadIdx.x] = in[batch_off + (size_t)(y + j) * cols + x];
  }
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;  // column in output = row in input
  y = blockIdx.x * TILE_DIM + threadIdx.y;
#pragma unroll
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    if (x < rows && (y + j) < cols)
      out[batch_off + (size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}

extern "C" void batched_transpose(const float* in, float* out, int batch, int rows,
                                  int cols) {
  size_t bytes = (size_t)batch * rows * cols * sizeof(float);
  float *d_in = nullptr, *d_out = nullptr;
  cudaMalloc(&d_in, bytes);
  cudaMalloc(&d_out, bytes);
  cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice);
  dim3 block(TILE_DIM, BLOCK_ROWS);
  dim3 grid((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM, batch);
  transpose_tiled<<<grid, block>>>(d_in, d_out, rows, cols);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) fprintf(stderr, "transpose: %s\n", cudaGetErrorString(e));
  cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
}
