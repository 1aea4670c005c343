// 512x512x512 half->float gemm with nvcuda::wmma m16n16k16, one warp per 16x16 output tile.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

__global__ void wmma_gemm(const half* A, const half* B, float* C, int M, int N, int K) {
  int warp_m = blockIdx.y;
  int warp_n = blockIdx.x;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b_frag;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c_frag;
  wmma::fill_fragment(c_frag, 0.0f);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a_frag, A + warp_m * 16 * K + k, K);
    wmma::load_matrix_sync(b_frag, B + k * N + warp_n * 16, N);
    wmma::mma_sync(c_frag, a_frag, b_frag, c_frag);
  }
  wmma::store_matrix_sync(C + warp_m * 16 * N + warp_n * 16, c_frag, N, wmma::mem_row_major);
}

extern "C" void gemm_kernel(const half* A, const half* B, float* C, int M, int N, int K) {
  half *dA, *dB;
  float* dC;
  cudaMalloc((void**)&dA, sizeof(half) * M * K);
  cudaMalloc((void**)&dB, sizeof(half) * K * N);
  cudaMalloc((void**)&dC, sizeof(float) * M * N);
  cudaMemcpy(dA, A, sizeof(half) * M * K, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B, sizeof(half) * K * N, cudaMemcpyHostToDevice);
  dim3 grid(N / 16, M / 16);
  dim3 block(32);
  wmma_gemm<<<grid, block>>>(dA, dB, dC, M, N, K);
  cudaMemcpy(C, dC, sizeof(float) * M * N, cudaMemcpyDeviceToHost);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
}
