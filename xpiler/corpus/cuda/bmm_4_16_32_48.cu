#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

extern "C" __global__ void __launch_bounds__(32) default_function_kernel(half* __restrict__ A, half* __restrict__ B, float* __restrict__ T_batch_matmul_NN) {
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> T_batch_matmul_NN_wmma_accumulator[1];
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> A_wmma_matrix_a[1];
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, half, nvcuda::wmma::row_major> B_wmma_matrix_b[1];
  nvcuda::wmma::fill_fragment(T_batch_matmul_NN_wmma_accumulator[0], 0.000000e+00f);
  for (int k_outer = 0; k_outer < 2; ++k_outer) {
    nvcuda::wmma::load_matrix_sync(A_wmma_matrix_a[0], (&(A[(((((int)blockIdx.z) * 512) + (((int)blockIdx.y) * 512)) + (k_outer * 16))])), 32);
    nvcuda::wmma::load_matrix_sync(B_wmma_matrix_b[0], (&(B[(((((int)blockIdx.z) * 1536) + (k_outer * 768)) + (((int)blockIdx.x) * 16))])), 48);
    nvcuda::wmma::mma_sync(T_batch_matmul_NN_wmma_accumulator[0], A_wmma_matrix_a[0], B_wmma_matrix_b[0], T_batch_matmul_NN_wmma_accumulator[0]);
  }
  nvcuda::wmma::store_matrix_sync((&(T_batch_matmul_NN[(((((int)blockIdx.z) * 768) + (((int)blockIdx.y) * 768)) + (((int)blockIdx.x) * 16))])), T_batch_matmul_NN_wmma_accumulator[0], 48, nvcuda::wmma::mem_row_major);
}

extern "C" void bmm_kernel(half* A, half* B, float* C, int batch, int I, int J, int K) {
  half* d_A;
  half* d_B;
  float* d_C;
  cudaMalloc(&d_A, (batch * I * J) * sizeof(half));
  cudaMalloc(&d_B, (batch * J * K) * sizeof(half));
  cudaMalloc(&d_C, (batch * I * K) * sizeof(float));
  cudaMemcpy(d_A, A, (batch * I * J) * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, (batch * J * K) * sizeof(half), cudaMemcpyHostToDevice);
  dim3 grid(K / 16, I / 16, batch);
  default_function_kernel<<<grid, 32>>>(d_A, d_B, d_C);
  cudaMemcpy(C, d_C, (batch * I * K) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_B);
  cudaFree(d_C);
}
