// Batched matmul (torch.bmm): C[b] = A[b] (MxK) * B[b] (KxN), row-major, contiguous batches.
// Shared-memory tiling with TILE = 32 (32x32 threads), +1 padding on the B tile, bounds checks
// on every load/store so any M, N, K work. Batch index on blockIdx.z. Host entry takes host pointers.
#include <cuda_runtime.h>

#define TILE 32

__global__ void bmm_tiled32_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ C, int M, int N, int K) {
  __shared__ float sA[TILE][TILE];
  __shared__ float sB[TILE][TILE + 1];
  const int b = blockIdx.z;
  const float* Ab = A + (size_t)b * M * K;
  const float* Bb = B + (size_t)b * K * N;
  float* Cb = C + (size_t)b * M * N;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  const int ntiles = (K + TILE - 1) / TILE;
  for (int t = 0; t < ntiles; ++t) {
    const int ka = t * TILE + tx;
    const int kb = t * TILE + ty;
    sA[ty][tx] = (row < M && ka < K) ? Ab[(size_t)row * K + ka] : 0.0f;
    sB[ty][tx] = (kb < K && col < N) ? Bb[(size_t)kb * N + col] : 0.0f;
    __syncthreads();
#pragma unroll 8
    for (int k = 0; k < TILE; ++k) acc = fmaf(sA[ty][k], sB[k][tx], acc);
    __syncthreads();
  }
  if (row < M && col < N) Cb[(size_t)row * N + col] = acc;
}

extern "C" void bmm_tiled32(const float* A, const float* B, float* C, int batch, int M, int N, int K) {
  const size_t szA = (size_t)batch * M * K * sizeof(float);
  const size_t szB = (size_t)batch * K * N * sizeof(float);
  const size_t szC = (size_t)batch * M * N * sizeof(float);
  float *dA = nullptr, *dB = nullptr, *dC = nullptr;
  cudaMalloc(&dA, szA);
  cudaMalloc(&dB, szB);
  cudaMalloc(&dC, szC);
  cudaMemcpy(dA, A, szA, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B, szB, cudaMemcpyHostToDevice);
  dim3 block(TILE, TILE);
  dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE, batch);
  bmm_tiled32_kernel<<<grid, block>>>(dA, dB, dC, M, N, K);
  cudaMemcpy(C, dC, szC, cudaMemcpyDeviceToHost);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
}
