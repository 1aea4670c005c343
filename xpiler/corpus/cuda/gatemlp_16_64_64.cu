#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

// X: [Bm, K], A, B: [K, N] half; out: [Bm, N] float. Block dim3(32, 2): two warps, two 16-column tiles.
__global__ void __launch_bounds__(64) gatemlp_wmma_kernel(const half* __restrict__ X, const half* __restrict__ A,
                                                          const half* __restrict__ B, float* __restrict__ out,
                                                          int K, int N) {
  const int row0 = blockIdx.y * 16;
  const int col0 = (blockIdx.x * 2 + threadIdx.y) * 16;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> x_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> a_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b_frag;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> gate_frag;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> up_frag;
  wmma::fill_fragment(gate_frag, 0.0f);
  wmma::fill_fragment(up_frag, 0.0f);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(x_frag, X + row0 * K + k, K);
    wmma::load_matrix_sync(a_frag, A + k * N + col0, N);
    wmma::load_matrix_sync(b_frag, B + k * N + col0, N);
    wmma::mma_sync(gate_frag, x_frag, a_frag, gate_frag);
    wmma::mma_sync(up_frag, x_frag, b_frag, up_frag);
  }
  for (int i = 0; i < gate_frag.num_elements; ++i) {
    const float g = gate_frag.x[i];
    gate_frag.x[i] = g / (1.0f + __expf(-g)) * up_frag.x[i];
  }
  wmma::store_matrix_sync(out + row0 * N + col0, gate_frag, N, wmma::mem_row_major);
}

extern "C" void gatemlp_kernel(half* X, half* A, half* B, float* out, int batch, int K, int N) {
  half* d_X;
  half* d_A;
  half* d_B;
  float* d_out;
  cudaMalloc(&d_X, (batch * K) * sizeof(half));
  cudaMalloc(&d_A, (K * N) * sizeof(half));
  cudaMalloc(&d_B, (K * N) * sizeof(half));
  cudaMalloc(&d_out, (batch * N) * sizeof(float));
  cudaMemcpy(d_X, X, (batch * K) * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(d_A, A, (K * N) * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, (K * N) * sizeof(half), cudaMemcpyHostToDevice);
  dim3 block(32, 2);
  dim3 grid(N / 32, batch / 16);
  gatemlp_wmma_kernel<<<grid, block>>>(d_X, d_A, d_B, d_out, K, N);
  cudaMemcpy(out, d_out, (batch * N) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_X);
  cudaFree(d_A);
  cudaFree(d_B);
  cudaFree(d_out);
}
