// Row softmax with one warp per row and butterfly (__shfl_xor_sync) reductions, in the
// style of llm.c's softmax_forward_kernel: several warps per block, each owns a row.
#include <cuda_runtime.h>
#include <float.h>

#define WARP_SIZE 32

__device__ __forceinline__ float warp_reduce_max(float val) {
  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
    val = fmaxf(val, __shfl_xor_sync(0xffffffff, val, offset));
  return val;
}

__device__ __forceinline__ float warp_reduce_sum(float val) {
  for (int offset = WARP_SIZE / 2; offset > 0; offset /= 2)
    val += __shfl_xor_sync(0xffffffff, val, offset);
  return val;
}

__global__ void softmax_forward_kernel(float* out, const float* inp, int N, int C) {
  const int warps_per_block = blockDim.x / WARP_SIZE;
  const int warp_id = threadIdx.x / WARP_SIZE;
  const int lane = threadIdx.x % WARP_SIZE;
  const int row = blockIdx.x * warps_per_block + warp_id;
  if (row >= N) return;
  const float* x = inp + (size_t)row * C;
  float maxval = -FLT_MAX;
  for (int i = lane; i < C; i += WARP_SIZE) maxval = fmaxf(maxval, x[i]);
  maxval = warp_reduce_max(maxval);
  float sumval = 0.0f;
  for (int i = lane; i < C; i += WARP_SIZE) sumval += expf(x[i] - maxval);
  sumval = warp_reduce_sum(sumval);
  float inv = 1.0f / sumval;
  for (int i = lane; i < C; i += WARP_SIZE) out[(size_t)row * C + i] = expf(x[i] - maxval) * inv;
}

extern "C" void softmax_forward(const float* inp, float* out, int N, int C) {
  float *d_inp, *d_out;
  cudaMalloc(&d_inp, (size_t)N * C * sizeof(float));
  cudaMalloc(&d_out, (size_t)N * C * sizeof(float));
  cudaMemcpy(d_inp, inp, (size_t)N * C * sizeof(float), cudaMemcpyHostToDevice);
  const int block_size = 128;
  const int rows_per_block = block_size / WARP_SIZE;
  const int grid = (N + rows_per_block - 1) / rows_per_block;
  softmax_forward_kernel<<<grid, block_size>>>(d_out, d_inp, N, C);
  cudaMemcpy(out, d_out, (size_t)N * C * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_inp);
  cudaFree(d_out);
}
