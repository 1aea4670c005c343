// Batched SGEMM C[b] = alpha * A[b] (MxK) * B[b] (KxN) + beta * C[b], row-major,
// shared-memory tiling, blockIdx.z selects the batch.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>

#define HIP_CHECK(cmd)                                                         \
  do {                                                                         \
    hipError_t e = (cmd);                                                      \
    if (e != hipSuccess) {                                                     \
      fprintf(stderr, "HIP error %s at %s:%d\n", hipGetErrorString(e),         \
              __FILE__, __LINE__);                                             \
      exit(EXIT_FAILURE);                                                      \
    }                                                                          \
  } while (0)

#define TILE 16

__global__ void batched_sgemm(const float* A, const float* B, float* C, int M, int N,
                              int K, float alpha, float beta) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int batch = blockIdx.z;
  const float* Ab = A + (size_t)batch * M * K;
  const float* Bb = B + (size_t)batch * K * N;
  float* Cb = C + (size_t)batch * M * N;
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < K; t += TILE) {
    As[threadIdx.y][threadIdx.x] =
        (row < M && t + threadIdx.x < K) ? Ab[row * K + t + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] =
        (col < N && t + threadIdx.y < K) ? Bb[(t + threadIdx.y) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) Cb[row * N + col] = alpha * acc + beta * Cb[row * N + col];
}

// c is read (for beta) and overwritten with the result
extern "C" void batched_gemm(const float* a, const float* b, float* c, int batch, int M,
                             int N, int K, float alpha, float beta) {
  size_t sa = (size_t)batch * M * K, sb = (size_t)batch * K * N, sc = (size_t)batch * M * N;
  float *dA, *dB, *dC;
  HIP_CHECK(hipMalloc(&dA, sa * sizeof(float)));
  HIP_CHECK(hipMalloc(&dB, sb * sizeof(float)));
  HIP_CHECK(hipMalloc(&dC, sc * sizeof(float)));
  HIP_CHECK(hipMemcpy(dA, a, sa * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dB, b, sb * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dC, c, sc * sizeof(float), hipMemcpyHostToDevice));
  dim3 block(TILE, TILE);
  dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE, batch);
  hipLaunchKernelGGL(batched_sgemm, grid, block, 0, 0, dA, dB, dC, M, N, K, alpha, beta);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(c, dC, sc * sizeof(float), hipMemcpyDeviceToHost));
  HIP_CHECK(hipFree(dA));
  HIP_CHECK(hipFree(dB));
  HIP_CHECK(hipFree(dC));
}
