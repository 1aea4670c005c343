#include <cuda_runtime.h>
// one warp per row: value and index of the row maximum
__global__ void row_argmax(const float* x, int* idx, float* val, int rows, int cols) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (warp >= rows) return;
  float best = -INFINITY; int bi = -1;
  for (int c = lane; c < cols; c += 32) {
    float v = x[(size_t)warp * cols + c];
    if (v > best) { best = v; bi = c; }
  }
  for (int off = 16; off; off >>= 1) {
    float ov = __shfl_xor_sync(0xffffffff, best, off);
    int oi = __shfl_xor_sync(0xffffffff, bi, off);
    if (ov > best || (ov == best && oi < bi && oi >= 0)) { best = ov; bi = oi; }
  }
  if (lane == 0) { idx[warp] = bi; val[warp] = best; }
}
extern "C" void argmax_rows(const float* x, int* idx, float* val, int rows, int cols) {
  float *dx, *dv; int* di;
  cudaMalloc(&dx, sizeof(float) * rows * cols); cudaMalloc(&dv, sizeof(float) * rows); cudaMalloc(&di, sizeof(int) * rows);
  cudaMemcpy(dx, x, sizeof(float) * rows * cols, cudaMemcpyHostToDevice);
  int threads = 128;
  int blocks = (rows * 32 + threads - 1) / threads;
  row_argmax<<<blocks, threads>>>(dx, di, dv, rows, cols);
  cudaMemcpy(idx, di, sizeof(int) * rows, cudaMemcpyDeviceToHost);
  cudaMemcpy(val, dv, sizeof(float) * rows, cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dv); cudaFree(di);
}
