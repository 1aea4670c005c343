#include <hip/hip_runtime.h>

#define TILE 64
#define ROWS_PER_PASS 4

__global__ void transpose_lds_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS_PER_PASS) {
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
  }
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS_PER_PASS) {
    if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}

extern "C" void transpose_kernel(float* x, float* out, int rows, int cols) {
  float* d_x;
  float* d_out;
  hipMalloc((void**)&d_x, (rows * cols) * sizeof(float));
  hipMalloc((void**)&d_out, (rows * cols) * sizeof(float));
  hipMemcpy(d_x, x, (rows * cols) * sizeof(float), hipMemcpyHostToDevice);
  dim3 block(TILE, ROWS_PER_PASS);
  dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
  hipLaunchKernelGGL(transpose_lds_kernel, grid, block, 0, 0, d_x, d_out, rows, cols);
  hipMemcpy(out, d_out, (rows * cols) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_out);
}
