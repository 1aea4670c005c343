// Element-wise add in the style of ONNX Runtime's MLAS / oneDNN binary kernels: the range is
// split into 1024-element blocks shared out by OpenMP, each block runs 16 lanes at a time and
// finishes with a masked tail (__mmask16) instead of a scalar loop.
#include <immintrin.h>
#include <cstddef>
#include <cstdint>

static constexpr int64_t kBlock = 1024;

static inline void AddBlock(const float* __restrict a, const float* __restrict b, float* __restrict c,
                            int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 va = _mm512_loadu_ps(a + i);
    __m512 vb = _mm512_loadu_ps(b + i);
    _mm512_storeu_ps(c + i, _mm512_add_ps(va, vb));
  }
  if (i < n) {
    const __mmask16 tail = (__mmask16)((1u << (n - i)) - 1u);
    __m512 va = _mm512_maskz_loadu_ps(tail, a + i);
    __m512 vb = _mm512_maskz_loadu_ps(tail, b + i);
    _mm512_mask_storeu_ps(c + i, tail, _mm512_add_ps(va, vb));
  }
}

extern "C" void add_f32(const float* a, const float* b, float* c, int64_t n) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t start = blk * kBlock;
    const int64_t len = n - start < kBlock ? n - start : kBlock;
    AddBlock(a + start, b + start, c + start, len);
  }
}
