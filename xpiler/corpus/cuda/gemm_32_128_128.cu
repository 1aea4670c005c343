#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

extern "C" __global__ void __launch_bounds__(128) default_function_kernel(half* __restrict__ A, half* __restrict__ B, float* __restrict__ compute) {
  nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> compute_wmma_accumulator[1];
  __shared__ half A_shared[1280];
  __shared__ half B_shared[1280];
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> A_shared_wmma_matrix_a[1];
  nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, 16, 16, 16, half, nvcuda::wmma::row_major> B_shared_wmma_matrix_b[1];
  nvcuda::wmma::fill_fragment(compute_wmma_accumulator[0], 0.000000e+00f);
  for (int k_outer = 0; k_outer < 4; ++k_outer) {
    __syncthreads();
    for (int ax0_ax1_fused_outer = 0; ax0_ax1_fused_outer < 8; ++ax0_ax1_fused_outer) {
      A_shared[((((ax0_ax1_fused_outer * 160) + (((int)threadIdx.z) * 80)) + (((int)threadIdx.y) * 40)) + ((int)threadIdx.x))] = A[((((((((int)blockIdx.y) * 4096) + (ax0_ax1_fused_outer * 512)) + (((int)threadIdx.z) * 256)) + (((int)threadIdx.y) * 128)) + (k_outer * 32)) + ((int)threadIdx.x))];
    }
    for (int ax0_ax1_fused_outer_1 = 0; ax0_ax1_fused_outer_1 < 8; ++ax0_ax1_fused_outer_1) {
      B_shared[((((ax0_ax1_fused_outer_1 * 160) + (((int)threadIdx.z) * 80)) + (((int)threadIdx.y) * 40)) + ((int)threadIdx.x))] = B[((((((k_outer * 4096) + (ax0_ax1_fused_outer_1 * 512)) + (((int)threadIdx.z) * 256)) + (((int)threadIdx.y) * 128)) + (((int)blockIdx.x) * 32)) + ((int)threadIdx.x))];
    }
    __syncthreads();
    for (int k_inner = 0; k_inner < 2; ++k_inner) {
      nvcuda::wmma::load_matrix_sync(A_shared_wmma_matrix_a[0], (&(A_shared[((((int)threadIdx.y) * 640) + (k_inner * 16))])), 40);
      nvcuda::wmma::load_matrix_sync(B_shared_wmma_matrix_b[0], (&(B_shared[((k_inner * 640) + (((int)threadIdx.z) * 16))])), 40);
      nvcuda::wmma::mma_sync(compute_wmma_accumulator[0], A_shared_wmma_matrix_a[0], B_shared_wmma_matrix_b[0], compute_wmma_accumulator[0]);
    }
  }
  nvcuda::wmma::store_matrix_sync((&(compute[((((((int)blockIdx.y) * 4096) + (((int)threadIdx.y) * 2048)) + (((int)blockIdx.x) * 32)) + (((int)threadIdx.z) * 16))])), compute_wmma_accumulator[0], 128, nvcuda::wmma::mem_row_major);
}

extern "C" void gemm_kernel(half* A, half* B, float* C, int M, int K, int N) {
  half* d_A;
  half* d_B;
  float* d_C;
  cudaMalloc(&d_A, (M * K) * sizeof(half));
  cudaMalloc(&d_B, (K * N) * sizeof(half));
  cudaMalloc(&d_C, (M * N) * sizeof(float));
  cudaMemcpy(d_A, A, (M * K) * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, (K * N) * sizeof(half), cudaMemcpyHostToDevice);
  dim3 grid(N / 32, M / 32);
  dim3 block(32, 2, 2);
  default_function_kernel<<<grid, block>>>(d_A, d_B, d_C);
  cudaMemcpy(C, d_C, (M * N) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_B);
  cudaFree(d_C);
}
