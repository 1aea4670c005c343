#include <immintrin.h>
#include <cstddef>
extern "C" void scale_add(const float* a, const float* b, float* c, float s, size_t n) {
  size_t i = 0;
  const __m512 vs = _mm512_set1_ps(s);
  for (; i + 16 <= n; i += 16) {
    __m512 va = _mm512_loadu_ps(a + i);
    __m512 vb = _mm512_loadu_ps(b + i);
    _mm512_storeu_ps(c + i, _mm512_fmadd_ps(va, vs, vb));
  }
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
    __m512 va = _mm512_maskz_loadu_ps(m, a + i);
    __m512 vb = _mm512_maskz_loadu_ps(m, b + i);
    _mm512_mask_storeu_ps(c + i, m, _mm512_fmadd_ps(va, vs, vb));
  }
}
