// lane-wise multiply-accumulate over 16-float vectors: the lift's lane temporaries
// (one array per intrinsic operand and result) are joined by whole-array copies
#include <immintrin.h>
extern "C" void lanes_dot(const float* a, const float* b, int n, float* out) {
  __m512 acc = _mm512_setzero_ps();
  for (int i = 0; i + 16 <= n; i += 16) {
    __m512 x = _mm512_loadu_ps(a + i);
    __m512 y = _mm512_loadu_ps(b + i);
    acc = _mm512_fmadd_ps(x, y, acc);
  }
  _mm512_storeu_ps(out, acc);
}
