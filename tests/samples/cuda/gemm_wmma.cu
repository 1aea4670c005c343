// gemm_32_128_128: half x half -> float with tensor cores (nvcuda::wmma m16n16k16).
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

constexpr int WMMA_M = 16;
constexpr int WMMA_N = 16;
constexpr int WMMA_K = 16;

typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc_frag_t;

__device__ __forceinline__ void mma_tile(const half* a, const half* b, acc_frag_t& acc, int lda, int ldb) {
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, WMMA_M, WMMA_N, WMMA_K, half, nvcuda::wmma::row_major> a_frag;
  wmma::fragment<wmma::matrix_b, WMMA_M, WMMA_N, WMMA_K, half, wmma::row_major> b_frag;
  wmma::load_matrix_sync(a_frag, a, lda);
  wmma::load_matrix_sync(b_frag, b, ldb);
  wmma::mma_sync(acc, a_frag, b_frag, acc);
}

__global__ void gemm_wmma_kernel(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
  int tile_m = blockIdx.y * WMMA_M;
  int tile_n = blockIdx.x * WMMA_N;
  acc_frag_t acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int k = 0; k < K; k += WMMA_K) {
    mma_tile(A + tile_m * K + k, B + k * N + tile_n, acc, K, N);
  }
  wmma::store_matrix_sync(C + tile_m * N + tile_n, acc, N, wmma::mem_row_major);
}

extern "C" void gemm_kernel(const half* A, const half* B, float* C, int M, int K, int N) {
  half *d_A, *d_B;
  float* d_C;
  cudaMalloc(&d_A, sizeof(half) * M * K);
  cudaMalloc(&d_B, sizeof(half) * K * N);
  cudaMalloc(&d_C, sizeof(float) * M * N);
  cudaMemcpy(d_A, A, sizeof(half) * M * K, cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, sizeof(half) * K * N, cudaMemcpyHostToDevice);
  dim3 grid = dim3(N / WMMA_N, M / WMMA_M);
  dim3 block(32, 1, 1);
  cudaStream_t stream = 0;
  gemm_wmma_kernel<<<grid, block, 0, stream>>>(d_A, d_B, d_C, M, N, K);
  cudaDeviceSynchronize();
  cudaMemcpy(C, d_C, sizeof(float) * M * N, cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_B);
  cudaFree(d_C);
}
