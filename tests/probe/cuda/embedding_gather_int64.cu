// Kernel-only: embedding lookup with int64_t indices and padding_idx, plus a
// generic gather along dim 1 of a [outer, in_dim, inner] tensor.
#include <cuda_runtime.h>
#include <cstdint>

__global__ void embedding_forward_kernel(const int64_t* __restrict__ indices,
                                         const float* __restrict__ weight,
                                         float* __restrict__ out, size_t num_indices,
                                         int64_t embedding_dim, int64_t num_embeddings,
                                         int64_t padding_idx) {
  const size_t total = num_indices * (size_t)embedding_dim;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (size_t)blockDim.x * gridDim.x) {
    size_t tok = i / embedding_dim;
    int64_t col = (int64_t)(i % embedding_dim);
    int64_t idx = indices[tok];
    if (idx < 0) idx += num_embeddings;  // python-style negative index
    float v = 0.f;
    if (idx != padding_idx && idx >= 0 && idx < num_embeddings)
      v = weight[idx * embedding_dim + col];
    out[i] = v;
  }
}

// out[o, j, k] = in[o, index[o, j, k], k]
__global__ void gather_dim1_kernel(const float* __restrict__ in,
                                   const int64_t* __restrict__ index,
                                   float* __restrict__ out, int64_t outer, int64_t in_dim,
                                   int64_t idx_dim, int64_t inner) {
  int64_t n = outer * idx_dim * inner;
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int64_t k = i % inner;
  int64_t o = i / (idx_dim * inner);
  int64_t src = index[i];
  src = src < 0 ? 0 : (src >= in_dim ? in_dim - 1 : src);
  out[i] = in[(o * in_dim + src) * inner + k];
}
