// nn.EmbeddingBag(mode="sum") with per_sample_weights, plain C++ + OpenMP.
//   table[V, D], indices[nnz] (int32), offsets[B] (int32, start of each bag; bag b spans
//   [offsets[b], offsets[b+1]) and the last bag ends at nnz), psw[nnz] per-sample weights
//   (may be null -> 1.0). Empty bags produce zeros. Bags have variable length, so the loop
//   uses schedule(dynamic, 4); each bag's row is accumulated by a single thread in index order,
//   so the result does not depend on the schedule.
#include <stddef.h>
#include <stdint.h>

extern "C" void embedding_bag_sum(const float* table, const int32_t* indices, const int32_t* offsets,
                                  const float* psw, float* out, int B, int nnz, int V, int D) {
#pragma omp parallel for schedule(dynamic, 4)
  for (int b = 0; b < B; ++b) {
    const int start = offsets[b];
    const int end = (b + 1 < B) ? offsets[b + 1] : nnz;
    float* o = out + (size_t)b * D;
    for (int d = 0; d < D; ++d) o[d] = 0.0f;
    for (int t = start; t < end; ++t) {
      int idx = indices[t];
      if (idx < 0 || idx >= V) continue;  // out-of-range ids are ignored
      const float wgt = psw ? psw[t] : 1.0f;
      const float* row = table + (size_t)idx * D;
      for (int d = 0; d < D; ++d) o[d] += wgt * row[d];
    }
  }
}
