// LayerNorm over the last dim using Welford's algorithm; one block per row.
#include <cuda_runtime.h>
#include <cstdio>

struct WelfordData {
  float mean, m2, count;
};

__device__ __forceinline__ WelfordData welford_combine(WelfordData a, WelfordData b) {
  float count = a.count + b.count;
  if (count == 0.f) return a;
  float delta = b.mean - a.mean;
  float nb_over_n = b.count / count;
  WelfordData r;
  r.mean = a.mean + delta * nb_over_n;
  r.m2 = a.m2 + b.m2 + delta * delta * a.count * nb_over_n;
  r.count = count;
  return r;
}

template <int BLOCK>
__global__ void layernorm_welford_kernel(const float* __restrict__ x,
                                         const float* __restrict__ gamma,
                                         const float* __restrict__ beta,
                                         float* __restrict__ y, int D, float eps) {
  __shared__ WelfordData shm[BLOCK];
  const float* xr = x + (size_t)blockIdx.x * D;
  float* yr = y + (size_t)blockIdx.x * D;
  WelfordData w = {0.f, 0.f, 0.f};
  for (int i = threadIdx.x; i < D; i += BLOCK) {
    float v = xr[i];
    w.count += 1.f;
    float delta = v - w.mean;
    w.mean += delta / w.count;
    w.m2 += delta * (v - w.mean);
  }
  shm[threadIdx.x] = w;
  __syncthreads();
#pragma unroll
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shm[threadIdx.x] = welford_combine(shm[threadIdx.x], shm[threadIdx.x + s]);
    __syncthreads();
  }
  const float mean = shm[0].mean;
  const float rstd = rsqrtf(shm[0].m2 / shm[0].count + eps);
  for (int i = threadIdx.x; i < D; i += BLOCK)
    yr[i] = (xr[i] - mean) * rstd * gamma[i] + beta[i];
}

extern "C" void layernorm_forward(const float* in, const float* gamma, const float* beta,
                                  float* out, int rows, int D, float eps) {
  size_t bytes = (size_t)rows * D * sizeof(float);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  float *d_x, *d_g, *d_b, *d_y;
  cudaMalloc(&d_x, bytes);
  cudaMalloc(&d_y, bytes);
  cudaMalloc(&d_g, D * sizeof(float));
  cudaMalloc(&d_b, D * sizeof(float));
  cudaMemcpyAsync(d_x, in, bytes, cudaMemcpyHostToDevice, stream);
  cudaMemcpyAsync(d_g, gamma, D * sizeof(float), cudaMemcpyHostToDevice, stream);
  cudaMemcpyAsync(d_b, beta, D * sizeof(float), cudaMemcpyHostToDevice, stream);
  constexpr int kBlock = 128;
  layernorm_welford_kernel<kBlock><<<rows, kBlock, 0, stream>>>(d_x, d_g, d_b, d_y, D, eps);
  if (cudaGetLastError() != cudaSuccess) fprintf(stderr, "layernorm launch failed\n");
  cudaMemcpyAsync(out, d_y, bytes, cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  cudaFree(d_x);
  cudaFree(d_y);
  cudaFree(d_g);
  cudaFree(d_b);
  cudaStreamDestroy(stream);
}
