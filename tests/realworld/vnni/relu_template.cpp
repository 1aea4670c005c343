// oneDNN-style jit-free eltwise ReLU with a negative slope template parameter: max(x, 0) +
// slope * min(x, 0) per 16 lanes, masked tail; only the slope-0 instance is exported.
#include <immintrin.h>
#include <algorithm>

template <int kSlopeNum, int kSlopeDen>
static void relu_fwd(const float* src, float* dst, int len) {
  const __m512 zero = _mm512_setzero_ps();
  const __m512 slope = _mm512_set1_ps((float)kSlopeNum / (float)kSlopeDen);
  int i = 0;
  for (; i + 16 <= len; i += 16) {
    __m512 x = _mm512_loadu_ps(src + i);
    __m512 pos = _mm512_max_ps(x, zero);
    __m512 neg = _mm512_min_ps(x, zero);
    _mm512_storeu_ps(dst + i, _mm512_fmadd_ps(neg, slope, pos));
  }
  for (; i < len; ++i) {
    const float x = src[i];
    dst[i] = std::max(x, 0.0f) + ((float)kSlopeNum / (float)kSlopeDen) * std::min(x, 0.0f);
  }
}

extern "C" void relu_forward(const float* src, float* dst, int len) { relu_fwd<0, 1>(src, dst, len); }
