// RMSNorm (LLaMA-style): y = x * rsqrt(mean(x^2) + eps) * weight.
// One warp per row, __shfl_xor_sync butterfly; several rows per block.
#include <cuda_runtime.h>
#include <cstdio>

constexpr int WARP_SIZE = 32;

template <int ROWS_PER_BLOCK>
__global__ void rmsnorm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                               float* __restrict__ y, int rows, int dim, float eps) {
  const int lane = threadIdx.x % WARP_SIZE;
  const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / WARP_SIZE;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * dim;
  float* yr = y + (size_t)row * dim;
  float ss = 0.f;
  for (int i = lane; i < dim; i += WARP_SIZE) ss = fmaf(xr[i], xr[i], ss);
#pragma unroll
  for (int mask = WARP_SIZE / 2; mask > 0; mask >>= 1)
    ss += __shfl_xor_sync(0xffffffff, ss, mask);
  const float scale = rsqrtf(ss / dim + eps);
  for (int i = lane; i < dim; i += WARP_SIZE) yr[i] = xr[i] * scale * w[i];
}

extern "C" void rmsnorm_forward(const float* in, const float* weight, float* out,
                                int rows, int dim, float eps) {
  constexpr int kRows = 4;
  size_t bytes = (size_t)rows * dim * sizeof(float);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  float *d_x, *d_w, *d_y;
  cudaMalloc(&d_x, bytes);
  cudaMalloc(&d_w, dim * sizeof(float));
  cudaMalloc(&d_y, bytes);
  cudaMemcpyAsync(d_x, in, bytes, cudaMemcpyHostToDevice, stream);
  cudaMemcpyAsync(d_w, weight, dim * sizeof(float), cudaMemcpyHostToDevice, stream);
  dim3 block(kRows * WARP_SIZE);
  dim3 grid((rows + kRows - 1) / kRows);
  rmsnorm_kernel<kRows><<<grid, block, 0, stream>>>(d_x, d_w, d_y, rows, dim, eps);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    fprintf(stderr, "rmsnorm_kernel launch error: %s\n", cudaGetErrorString(err));
  }
  cudaMemcpyAsync(out, d_y, bytes, cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  cudaFree(d_x);
  cudaFree(d_w);
  cudaFree(d_y);
  cudaStreamDestroy(stream);
}
