#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
#include <math.h>

using namespace nvcuda;

#define SEQ 32
#define HEAD_DIM 32

// Q, K, V: [B*H, SEQ, HEAD_DIM] half; O: float. Grid (SEQ / 16, B * H), one warp per block.
__global__ void __launch_bounds__(32) mha_wmma_kernel(const half* __restrict__ Q, const half* __restrict__ K,
                                                      const half* __restrict__ V, float* __restrict__ O, float scale) {
  __shared__ float s_tile[16 * SEQ];
  __shared__ half p_tile[16 * SEQ];
  const int bh = blockIdx.y;
  const int q0 = blockIdx.x * 16;
  const half* q = Q + ((size_t)bh * SEQ + q0) * HEAD_DIM;
  const half* k = K + (size_t)bh * SEQ * HEAD_DIM;
  const half* v = V + (size_t)bh * SEQ * HEAD_DIM;

  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> q_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> kt_frag;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> s_frag;
  for (int n0 = 0; n0 < SEQ; n0 += 16) {
    wmma::fill_fragment(s_frag, 0.0f);
    for (int d0 = 0; d0 < HEAD_DIM; d0 += 16) {
      wmma::load_matrix_sync(q_frag, q + d0, HEAD_DIM);
      wmma::load_matrix_sync(kt_frag, k + n0 * HEAD_DIM + d0, HEAD_DIM);  // K^T as col-major
      wmma::mma_sync(s_frag, q_frag, kt_frag, s_frag);
    }
    wmma::store_matrix_sync(s_tile + n0, s_frag, SEQ, wmma::mem_row_major);
  }
  __syncwarp();

  // softmax of each of the 16 rows; lanes r and r + 16 share row r (even / odd columns)
  const int row = threadIdx.x & 15;
  const int part = threadIdx.x >> 4;
  float m = -INFINITY;
  for (int j = part; j < SEQ; j += 2) m = fmaxf(m, s_tile[row * SEQ + j] * scale);
  m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, 16));
  float sum = 0.0f;
  for (int j = part; j < SEQ; j += 2) {
    const float e = __expf(s_tile[row * SEQ + j] * scale - m);
    s_tile[row * SEQ + j] = e;
    sum += e;
  }
  sum += __shfl_xor_sync(0xffffffff, sum, 16);
  const float inv = 1.0f / sum;
  for (int j = part; j < SEQ; j += 2) p_tile[row * SEQ + j] = __float2half(s_tile[row * SEQ + j] * inv);
  __syncwarp();

  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> p_frag;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> v_frag;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> o_frag;
  for (int d0 = 0; d0 < HEAD_DIM; d0 += 16) {
    wmma::fill_fragment(o_frag, 0.0f);
    for (int n0 = 0; n0 < SEQ; n0 += 16) {
      wmma::load_matrix_sync(p_frag, p_tile + n0, SEQ);
      wmma::load_matrix_sync(v_frag, v + n0 * HEAD_DIM + d0, HEAD_DIM);
      wmma::mma_sync(o_frag, p_frag, v_frag, o_frag);
    }
    wmma::store_matrix_sync(O + ((size_t)bh * SEQ + q0) * HEAD_DIM + d0, o_frag, HEAD_DIM, wmma::mem_row_major);
  }
}

extern "C" void mha_kernel(half* Q, half* K, half* V, float* out, int batch, int heads) {
  half* d_Q;
  half* d_K;
  half* d_V;
  float* d_out;
  cudaMalloc(&d_Q, (batch * heads * SEQ * HEAD_DIM) * sizeof(half));
  cudaMalloc(&d_K, (batch * heads * SEQ * HEAD_DIM) * sizeof(half));
  cudaMalloc(&d_V, (batch * heads * SEQ * HEAD_DIM) * sizeof(half));
  cudaMalloc(&d_out, (batch * heads * SEQ * HEAD_DIM) * sizeof(float));
  cudaMemcpy(d_Q, Q, (batch * heads * SEQ * HEAD_DIM) * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(d_K, K, (batch * heads * SEQ * HEAD_DIM) * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(d_V, V, (batch * heads * SEQ * HEAD_DIM) * sizeof(half), cudaMemcpyHostToDevice);
  dim3 grid(SEQ / 16, batch * heads);
  mha_wmma_kernel<<<grid, 32>>>(d_Q, d_K, d_V, d_out, 1.767767e-01f);
  cudaMemcpy(out, d_out, (batch * heads * SEQ * HEAD_DIM) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_Q);
  cudaFree(d_K);
  cudaFree(d_V);
  cudaFree(d_out);
}
