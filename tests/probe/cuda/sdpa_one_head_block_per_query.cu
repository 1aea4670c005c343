// Scaled dot-product attention for a single small head, one kernel, one block per query row:
//   O[i, :] = softmax(Q[i, :] K^T * scale + key_mask) V, Q[L, D], K[S, D], V[S, Dv].
// key_len limits the visible keys (keys j >= key_len are masked out; pass S for none).
// The query row is cached in shared memory, scores live in dynamic shared memory (S floats),
// row max / sum are block-wide shared-memory tree reductions (blockDim.x a power of two).
#include <cuda_runtime.h>
#include <math.h>

#define SDPA_THREADS 128

__global__ void sdpa_row_kernel(const float* __restrict__ Q, const float* __restrict__ K,
                                const float* __restrict__ V, float* __restrict__ O,
                                int S, int D, int Dv, int key_len, float scale) {
  extern __shared__ float smem[];
  float* q = smem;          // D floats
  float* p = smem + D;      // S floats
  __shared__ float red[SDPA_THREADS];
  const int i = blockIdx.x, t = threadIdx.x;
  const int nk = key_len < S ? key_len : S;
  for (int d = t; d < D; d += SDPA_THREADS) q[d] = Q[(size_t)i * D + d];
  __syncthreads();

  float lmax = -INFINITY;
  for (int j = t; j < nk; j += SDPA_THREADS) {
    float s = 0.0f;
    for (int d = 0; d < D; ++d) s = fmaf(q[d], K[(size_t)j * D + d], s);
    s *= scale;
    p[j] = s;
    lmax = fmaxf(lmax, s);
  }
  red[t] = lmax;
  __syncthreads();
  for (int o = SDPA_THREADS / 2; o > 0; o >>= 1) {
    if (t < o) red[t] = fmaxf(red[t], red[t + o]);
    __syncthreads();
  }
  const float mx = red[0];
  __syncthreads();

  float lsum = 0.0f;
  for (int j = t; j < nk; j += SDPA_THREADS) {
    const float e = expf(p[j] - mx);
    p[j] = e;
    lsum += e;
  }
  red[t] = lsum;
  __syncthreads();
  for (int o = SDPA_THREADS / 2; o > 0; o >>= 1) {
    if (t < o) red[t] += red[t + o];
    __syncthreads();
  }
  const float inv = nk > 0 ? 1.0f / red[0] : 0.0f;

  for (int e = t; e < Dv; e += SDPA_THREADS) {
    float acc = 0.0f;
    for (int j = 0; j < nk; ++j) acc = fmaf(p[j], V[(size_t)j * Dv + e], acc);
    O[(size_t)i * Dv + e] = acc * inv;
  }
}

extern "C" void sdpa_single_head_cuda(const float* Q, const float* K, const float* V, float* O,
                                      int L, int S, int D, int Dv, int key_len, float scale) {
  float *dQ, *dK, *dV, *dO;
  cudaMalloc(&dQ, (size_t)L * D * sizeof(float));
  cudaMalloc(&dK, (size_t)S * D * sizeof(float));
  cudaMalloc(&dV, (size_t)S * Dv * sizeof(float));
  cudaMalloc(&dO, (size_t)L * Dv * sizeof(float));
  cudaMemcpy(dQ, Q, (size_t)L * D * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dK, K, (size_t)S * D * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dV, V, (size_t)S * Dv * sizeof(float), cudaMemcpyHostToDevice);
  const size_t shmem = (size_t)(D + S) * sizeof(float);
  sdpa_row_kernel<<<L, SDPA_THREADS, shmem>>>(dQ, dK, dV, dO, S, D, Dv, key_len, scale);
  cudaMemcpy(O, dO, (size_t)L * Dv * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dQ);
  cudaFree(dK);
  cudaFree(dV);
  cudaFree(dO);
}
