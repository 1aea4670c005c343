#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

extern "C" __global__ void __launch_bounds__(128) default_function_kernel(half* __restrict__ X, half* __restrict__ W, float* __restrict__ bias, float* __restrict__ T_add) {
  __shared__ float bias_shared[1024];
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> T_matmul_NT_wmma_accumulator[1];
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> X_wmma_matrix_a[1];
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, half, nvcuda::wmma::col_major> W_wmma_matrix_b[1];
  for (int ax0_ax1_fused_outer = 0; ax0_ax1_fused_outer < 8; ++ax0_ax1_fused_outer) {
    bias_shared[(((((int)threadIdx.y) * 256) + (ax0_ax1_fused_outer * 32)) + ((int)threadIdx.x))] = bias[(((((int)blockIdx.x) * 64) + (((int)threadIdx.y) * 16)) + (((int)threadIdx.x) & 15))];
  }
  __syncthreads();
  nvcuda::wmma::load_matrix_sync(T_matmul_NT_wmma_accumulator[0], (&(bias_shared[(((int)threadIdx.y) * 256)])), 16, nvcuda::wmma::mem_row_major);
  for (int k_outer = 0; k_outer < 8; ++k_outer) {
    nvcuda::wmma::load_matrix_sync(X_wmma_matrix_a[0], (&(X[((((int)blockIdx.y) * 2048) + (k_outer * 16))])), 128);
    nvcuda::wmma::load_matrix_sync(W_wmma_matrix_b[0], (&(W[((((((int)blockIdx.x) * 64) + (((int)threadIdx.y) * 16)) * 128) + (k_outer * 16))])), 128);
    nvcuda::wmma::mma_sync(T_matmul_NT_wmma_accumulator[0], X_wmma_matrix_a[0], W_wmma_matrix_b[0], T_matmul_NT_wmma_accumulator[0]);
  }
  nvcuda::wmma::store_matrix_sync((&(T_add[(((((int)blockIdx.y) * 1024) + (((int)blockIdx.x) * 64)) + (((int)threadIdx.y) * 16))])), T_matmul_NT_wmma_accumulator[0], 64, nvcuda::wmma::mem_row_major);
}

extern "C" void dense_kernel(half* X, half* W, float* bias, float* out, int M, int K, int N) {
  half* d_X;
  half* d_W;
  float* d_bias;
  float* d_out;
  cudaMalloc(&d_X, (M * K) * sizeof(half));
  cudaMalloc(&d_W, (N * K) * sizeof(half));
  cudaMalloc(&d_bias, N * sizeof(float));
  cudaMalloc(&d_out, (M * N) * sizeof(float));
  cudaMemcpy(d_X, X, (M * K) * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(d_W, W, (N * K) * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(d_bias, bias, N * sizeof(float), cudaMemcpyHostToDevice);
  dim3 grid(N / 64, M / 16);
  dim3 block(32, 4);
  default_function_kernel<<<grid, block>>>(d_X, d_W, d_bias, d_out);
  cudaMemcpy(out, d_out, (M * N) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_X);
  cudaFree(d_W);
  cudaFree(d_bias);
  cudaFree(d_out);
}
