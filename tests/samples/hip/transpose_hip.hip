// transpose through a padded shared tile; the grid is built by dim3 field assignments.
#include <hip/hip_runtime.h>

#define TILE 32

__global__ void transpose_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += 8) {
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  }
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += 8) {
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}

extern "C" void transpose(const float* in, float* out, int rows, int cols) {
  float *d_in, *d_out;
  size_t bytes = static_cast<size_t>(rows) * cols * sizeof(float);
  hipMalloc((void**)&d_in, bytes);
  hipMalloc((void**)&d_out, bytes);
  hipMemcpy(d_in, in, bytes, hipMemcpyHostToDevice);
  dim3 block(TILE, 8);
  dim3 grid;
  grid.x = (cols + TILE - 1) / TILE;
  grid.y = (rows + TILE - 1) / TILE;
  transpose_kernel<<<grid, block>>>(d_in, d_out, rows, cols);
  hipMemcpy(out, d_out, bytes, hipMemcpyDeviceToHost);
  hipFree(d_in);
  hipFree(d_out);
}
