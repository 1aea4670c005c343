#include <cuda_runtime.h>

#define TILE_DIM 32
#define BLOCK_ROWS 8

// odata[cols][rows] = idata[rows][cols]^T; the +1 column avoids shared-memory bank conflicts.
__global__ void transpose_tile_kernel(float* __restrict__ odata, const float* __restrict__ idata, int rows, int cols) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    if (x < cols && y + j < rows) {
      tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * cols + x];
    }
  }
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    if (x < rows && y + j < cols) {
      odata[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
  }
}

extern "C" void transpose_kernel(float* x, float* out, int rows, int cols) {
  float* d_x;
  float* d_out;
  cudaMalloc(&d_x, (rows * cols) * sizeof(float));
  cudaMalloc(&d_out, (rows * cols) * sizeof(float));
  cudaMemcpy(d_x, x, (rows * cols) * sizeof(float), cudaMemcpyHostToDevice);
  dim3 b(TILE_DIM, BLOCK_ROWS);
  dim3 g((cols + TILE_DIM - 1) / TILE_DIM, (rows + TILE_DIM - 1) / TILE_DIM);
  transpose_tile_kernel<<<g, b>>>(d_out, d_x, rows, cols);
  cudaMemcpy(out, d_out, (rows * cols) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_out);
}
