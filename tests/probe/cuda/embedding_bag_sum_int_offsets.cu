// nn.EmbeddingBag(mode="sum", padding_idx) forward.
//   weight[V, D], indices[nnz] (int32), offsets[B + 1] (int32, CSR style: bag b is
//   indices[offsets[b] .. offsets[b+1]) ), out[B, D]. Indices equal to padding_idx are skipped
//   (pass padding_idx = -1 for none); empty bags give zeros.
// One block per bag, threads stride over the embedding dim; each output element is produced by
// exactly one thread summing the bag in index order.
#include <cuda_runtime.h>

__global__ void embedding_bag_sum_kernel(const float* __restrict__ weight, const int* __restrict__ indices,
                                         const int* __restrict__ offsets, float* __restrict__ out,
                                         int D, int padding_idx) {
  const int b = blockIdx.x;
  const int start = offsets[b], end = offsets[b + 1];
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float acc = 0.0f;
    for (int t = start; t < end; ++t) {
      const int idx = indices[t];
      if (idx == padding_idx) continue;
      acc += weight[(size_t)idx * D + d];
    }
    out[(size_t)b * D + d] = acc;
  }
}

extern "C" void embedding_bag_sum_csr(const float* weight, const int* indices, const int* offsets,
                                      float* out, int V, int D, int B, int padding_idx) {
  int nnz = offsets[B];  // host pointer: total number of indices
  float *dW, *dOut;
  int *dIdx, *dOff;
  cudaMalloc(&dW, (size_t)V * D * sizeof(float));
  cudaMalloc(&dIdx, (size_t)(nnz > 0 ? nnz : 1) * sizeof(int));
  cudaMalloc(&dOff, (size_t)(B + 1) * sizeof(int));
  cudaMalloc(&dOut, (size_t)B * D * sizeof(float));
  cudaMemcpy(dW, weight, (size_t)V * D * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dIdx, indices, (size_t)nnz * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(dOff, offsets, (size_t)(B + 1) * sizeof(int), cudaMemcpyHostToDevice);
  const int threads = D >= 128 ? 128 : ((D + 31) / 32) * 32;
  embedding_bag_sum_kernel<<<B, threads>>>(dW, dIdx, dOff, dOut, D, padding_idx);
  cudaMemcpy(out, dOut, (size_t)B * D * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dW);
  cudaFree(dIdx);
  cudaFree(dOff);
  cudaFree(dOut);
}
