// Inclusive prefix sum along each row: one block per row, Hillis-Steele scan
// over chunks of blockDim.x elements in dynamic shared memory (double-buffered),
// carrying the running total between chunks.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void cumsum_rows_kernel(const float* __restrict__ in, float* __restrict__ out,
                                   int cols) {
  extern __shared__ float smem[];  // 2 * blockDim.x floats
  float* buf[2] = {smem, smem + blockDim.x};
  const float* src = in + (size_t)blockIdx.x * cols;
  float* dst = out + (size_t)blockIdx.x * cols;
  const int tid = threadIdx.x;
  float carry = 0.f;
  for (int base = 0; base < cols; base += blockDim.x) {
    int idx = base + tid;
    int cur = 0;
    buf[cur][tid] = idx < cols ? src[idx] : 0.f;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off <<= 1) {
      float v = buf[cur][tid];
      if (tid >= off) v += buf[cur][tid - off];
      buf[cur ^ 1][tid] = v;
      cur ^= 1;
      __syncthreads();
    }
    if (idx < cols) dst[idx] = buf[cur][tid] + carry;
    carry += buf[cur][blockDim.x - 1];
    __syncthreads();  // everyone has read the chunk total before it is overwritten
  }
}

extern "C" void cumsum_rows(const float* in, float* out, int rows, int cols) {
  size_t bytes = (size_t)rows * cols * sizeof(float);
  float *d_in, *d_out;
  cudaMalloc(&d_in, bytes);
  cudaMalloc(&d_out, bytes);
  cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice);
  cudaMemset(d_out, 0, bytes);
  int threads = 1;
  while (threads < cols && threads < 512) threads <<= 1;
  cumsum_rows_kernel<<<rows, threads, 2 * threads * sizeof(float)>>>(d_in, d_out, cols);
  if (cudaGetLastError() != cudaSuccess) fprintf(stderr, "cumsum_rows_kernel failed\n");
  cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
}
