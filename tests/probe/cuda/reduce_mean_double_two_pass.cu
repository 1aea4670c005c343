// Two-pass mean/variance reduction in double precision without atomics:
// pass 1 writes per-block partial sums, pass 2 reduces the partials in one block.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>

template <int BLOCK>
__device__ __forceinline__ void block_reduce2(double* s_a, double* s_b) {
#pragma unroll
  for (int s = BLOCK / 2; s > 32; s >>= 1) {
    if (threadIdx.x < s) {
      s_a[threadIdx.x] += s_a[threadIdx.x + s];
      s_b[threadIdx.x] += s_b[threadIdx.x + s];
    }
    __syncthreads();
  }
  if (threadIdx.x < 32) {
#pragma unroll
    for (int s = 32; s > 0; s >>= 1) {
      double a = s_a[threadIdx.x] + s_a[threadIdx.x + s];
      double b = s_b[threadIdx.x] + s_b[threadIdx.x + s];
      __syncwarp();
      s_a[threadIdx.x] = a;
      s_b[threadIdx.x] = b;
      __syncwarp();
    }
  }
}

template <int BLOCK>
static __global__ void partial_sums(const float* __restrict__ x, double* __restrict__ part,
                                    size_t n) {
  __shared__ double s_sum[BLOCK], s_sq[BLOCK];
  double a = 0.0, b = 0.0;
  for (size_t i = (size_t)blockIdx.x * BLOCK + threadIdx.x; i < n; i += (size_t)BLOCK * gridDim.x) {
    double v = x[i];
    a += v;
    b += v * v;
  }
  s_sum[threadIdx.x] = a;
  s_sq[threadIdx.x] = b;
  __syncthreads();
  block_reduce2<BLOCK>(s_sum, s_sq);
  if (threadIdx.x == 0) {
    part[2 * blockIdx.x] = s_sum[0];
    part[2 * blockIdx.x + 1] = s_sq[0];
  }
}

template <int BLOCK>
static __global__ void finalize(const double* __restrict__ part, int nparts, size_t n,
                                float* __restrict__ out) {
  __shared__ double s_sum[BLOCK], s_sq[BLOCK];
  double a = 0.0, b = 0.0;
  for (int i = threadIdx.x; i < nparts; i += BLOCK) {
    a += part[2 * i];
    b += part[2 * i + 1];
  }
  s_sum[threadIdx.x] = a;
  s_sq[threadIdx.x] = b;
  __syncthreads();
  block_reduce2<BLOCK>(s_sum, s_sq);
  if (threadIdx.x == 0) {
    double mean = s_sum[0] / (double)n;
    out[0] = (float)s_sum[0];
    out[1] = (float)mean;
    out[2] = (float)(s_sq[0] / (double)n - mean * mean);
  }
}

// out[0] = sum, out[1] = mean, out[2] = population variance
extern "C" void reduce_sum_mean_var(const float* in, float* out, int n) {
  constexpr int kBlock = 256;
  const int blocks = std::min((n + kBlock - 1) / kBlock, 1024);
  float *d_x, *d_out;
  double* d_part;
  cudaMalloc(&d_x, (size_t)n * sizeof(float));
  cudaMalloc(&d_part, 2 * blocks * sizeof(double));
  cudaMalloc(&d_out, 3 * sizeof(float));
  cudaMemcpy(d_x, in, (size_t)n * sizeof(float), cudaMemcpyHostToDevice);
  partial_sums<kBlock><<<blocks, kBlock>>>(d_x, d_part, (size_t)n);
  finalize<kBlock><<<1, kBlock>>>(d_part, blocks, (size_t)n, d_out);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) fprintf(stderr, "reduce: %s\n", cudaGetErrorString(err));
  cudaMemcpy(out, d_out, 3 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_part);
  cudaFree(d_out);
}
