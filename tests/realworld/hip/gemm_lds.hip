// LDS-tiled SGEMM with a templated tile and the launch through <<<>>> (hipcc accepts the
// CUDA syntax), constexpr tile in the launcher.
#include <hip/hip_runtime.h>

template <int TS>
__global__ void sgemm_lds(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float sA[TS][TS];
  __shared__ float sB[TS][TS];
  const int r = blockIdx.y * TS + threadIdx.y;
  const int c = blockIdx.x * TS + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += TS) {
    sA[threadIdx.y][threadIdx.x] = (r < M && k0 + threadIdx.x < K) ? A[r * K + k0 + threadIdx.x] : 0.f;
    sB[threadIdx.y][threadIdx.x] = (c < N && k0 + threadIdx.y < K) ? B[(k0 + threadIdx.y) * N + c] : 0.f;
    __syncthreads();
    for (int kk = 0; kk < TS; ++kk) acc += sA[threadIdx.y][kk] * sB[kk][threadIdx.x];
    __syncthreads();
  }
  if (r < M && c < N) C[r * N + c] = acc;
}

extern "C" void gemm(const float* A, const float* B, float* C, int M, int K, int N) {
  constexpr int TS = 8;
  float *dA, *dB, *dC;
  hipMalloc(&dA, sizeof(float) * M * K);
  hipMalloc(&dB, sizeof(float) * K * N);
  hipMalloc(&dC, sizeof(float) * M * N);
  hipMemcpy(dA, A, sizeof(float) * M * K, hipMemcpyHostToDevice);
  hipMemcpy(dB, B, sizeof(float) * K * N, hipMemcpyHostToDevice);
  dim3 grid((N + TS - 1) / TS, (M + TS - 1) / TS);
  dim3 block(TS, TS);
  sgemm_lds<TS><<<grid, block>>>(dA, dB, dC, M, N, K);
  hipMemcpy(C, dC, sizeof(float) * M * N, hipMemcpyDeviceToHost);
  hipFree(dA); hipFree(dB); hipFree(dC);
}
