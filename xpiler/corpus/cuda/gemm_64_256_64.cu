#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

#define WMMA_M 16
#define WMMA_N 16
#define WMMA_K 16

// C[M, N] = A[M, K] * B[K, N]; A and B row-major half, C row-major float.
// Each warp computes one WMMA_M x WMMA_N tile; M, N, K are multiples of 16.
__global__ void wmma_gemm_kernel(const half* __restrict__ a, const half* __restrict__ b, float* __restrict__ c,
                                 int M, int N, int K) {
  int warpM = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
  int warpN = blockIdx.y * blockDim.y + threadIdx.y;

  wmma::fragment<wmma::matrix_a, WMMA_M, WMMA_N, WMMA_K, half, wmma::row_major> a_frag;
  wmma::fragment<wmma::matrix_b, WMMA_M, WMMA_N, WMMA_K, half, wmma::row_major> b_frag;
  wmma::fragment<wmma::accumulator, WMMA_M, WMMA_N, WMMA_K, float> acc_frag;
  wmma::fill_fragment(acc_frag, 0.0f);

  int aRow = warpM * WMMA_M;
  int bCol = warpN * WMMA_N;
  if (aRow < M && bCol < N) {  // warp-uniform
    for (int k = 0; k < K; k += WMMA_K) {
      wmma::load_matrix_sync(a_frag, a + aRow * K + k, K);
      wmma::load_matrix_sync(b_frag, b + k * N + bCol, N);
      wmma::mma_sync(acc_frag, a_frag, b_frag, acc_frag);
    }
    wmma::store_matrix_sync(c + aRow * N + bCol, acc_frag, N, wmma::mem_row_major);
  }
}

extern "C" void gemm_kernel(half* A, half* B, float* C, int M, int K, int N) {
  half* d_A;
  half* d_B;
  float* d_C;
  cudaMalloc((void**)&d_A, (M * K) * sizeof(half));
  cudaMalloc((void**)&d_B, (K * N) * sizeof(half));
  cudaMalloc((void**)&d_C, (M * N) * sizeof(float));
  cudaMemcpy(d_A, A, (M * K) * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, (K * N) * sizeof(half), cudaMemcpyHostToDevice);
  dim3 blockDim(128, 4);
  dim3 gridDim((M + (WMMA_M * blockDim.x / 32 - 1)) / (WMMA_M * blockDim.x / 32),
               (N + WMMA_N * blockDim.y - 1) / (WMMA_N * blockDim.y));
  wmma_gemm_kernel<<<gridDim, blockDim>>>(d_A, d_B, d_C, M, N, K);
  cudaDeviceSynchronize();
  cudaMemcpy(C, d_C, (M * N) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_B);
  cudaFree(d_C);
}
