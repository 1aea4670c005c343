// Row softmax with the online (single-pass max+sum) formulation, one block per row.
// (max, sum) pairs are merged with a __syncthreads tree reduction in dynamic smem.
#include <cuda_runtime.h>
#include <cfloat>
#include <cstdio>

__device__ __forceinline__ void online_merge(float& m, float& d, float m2, float d2) {
  float mn = fmaxf(m, m2);
  d = d * __expf(m - mn) + d2 * __expf(m2 - mn);
  m = mn;
}

__global__ void online_softmax_kernel(const float* __restrict__ x, float* __restrict__ y,
                                      int cols) {
  extern __shared__ float smem[];  // [2 * blockDim.x]: maxes then sums
  float* s_max = smem;
  float* s_sum = smem + blockDim.x;
  const float* row_in = x + (size_t)blockIdx.x * cols;
  float* row_out = y + (size_t)blockIdx.x * cols;

  float m = -FLT_MAX, d = 0.f;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) {
    float v = row_in[i];
    online_merge(m, d, v, 1.f);
  }
  s_max[threadIdx.x] = m;
  s_sum[threadIdx.x] = d;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      float mm = s_max[threadIdx.x], dd = s_sum[threadIdx.x];
      online_merge(mm, dd, s_max[threadIdx.x + s], s_sum[threadIdx.x + s]);
      s_max[threadIdx.x] = mm;
      s_sum[threadIdx.x] = dd;
    }
    __syncthreads();
  }
  const float row_max = s_max[0];
  const float row_sum = s_sum[0];
  for (int i = threadIdx.x; i < cols; i += blockDim.x)
    row_out[i] = __fdividef(__expf(row_in[i] - row_max), row_sum);
}

extern "C" void softmax_rows(const float* in, float* out, int rows, int cols) {
  size_t bytes = (size_t)rows * cols * sizeof(float);
  float *d_in, *d_out;
  cudaMalloc(&d_in, bytes);
  cudaMalloc(&d_out, bytes);
  cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice);
  const int threads = 256;  // must be a power of two for the tree reduction
  size_t shmem = 2 * threads * sizeof(float);
  online_softmax_kernel<<<rows, threads, shmem>>>(d_in, d_out, cols);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    fprintf(stderr, "online_softmax_kernel: %s\n", cudaGetErrorString(err));
  }
  cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
}
