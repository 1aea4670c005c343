#include <immintrin.h>
extern "C" void add_rows(const float* src, float* dst, int rows, int cols) {
  // dst[c] += sum over rows of src[r][c], walking pointers
  for (int r = 0; r < rows; ++r) {
    const float* s = src + r * cols;
    float* d = dst;
    int c = cols;
    while (c >= 16) {
      _mm512_storeu_ps(d, _mm512_add_ps(_mm512_loadu_ps(d), _mm512_loadu_ps(s)));
      s += 16; d += 16; c -= 16;
    }
    while (c-- > 0) *d++ += *s++;
  }
}
