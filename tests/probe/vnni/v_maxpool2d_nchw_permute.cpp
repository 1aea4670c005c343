// MaxPool2d NCHW, no padding. Fast path for k=2,s=2: vertical max of two rows,
// then even/odd de-interleave with _mm512_permutexvar_ps + _mm512_shuffle_f32x4.
// Generic scalar path uses numeric_limits<float>::lowest() and std::max.
#include <immintrin.h>
#include <algorithm>
#include <cstdint>
#include <limits>

extern "C" void maxpool2d_nchw(const float* in, float* out, int N, int C, int H, int W,
                               int k, int stride) {
  const int OH = (H - k) / stride + 1;
  const int OW = (W - k) / stride + 1;
  const int planes = N * C;
  const __m512i even_odd = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);

#pragma omp parallel for schedule(static)
  for (int p = 0; p < planes; ++p) {
    const float* src = in + static_cast<int64_t>(p) * H * W;
    float* dst = out + static_cast<int64_t>(p) * OH * OW;
    for (int oh = 0; oh < OH; ++oh) {
      int ow = 0;
      if (k == 2 && stride == 2) {
        const float* r0 = src + static_cast<int64_t>(2 * oh) * W;
        const float* r1 = r0 + W;
        for (; ow + 16 <= OW; ow += 16) {
          __m512 m0 = _mm512_max_ps(_mm512_loadu_ps(r0 + 2 * ow), _mm512_loadu_ps(r1 + 2 * ow));
          __m512 m1 = _mm512_max_ps(_mm512_loadu_ps(r0 + 2 * ow + 16), _mm512_loadu_ps(r1 + 2 * ow + 16));
          m0 = _mm512_permutexvar_ps(even_odd, m0);  // [e0..e7 | o0..o7]
          m1 = _mm512_permutexvar_ps(even_odd, m1);  // [e8..e15 | o8..o15]
          const __m512 ev = _mm512_shuffle_f32x4(m0, m1, _MM_SHUFFLE(1, 0, 1, 0));
          const __m512 od = _mm512_shuffle_f32x4(m0, m1, _MM_SHUFFLE(3, 2, 3, 2));
          _mm512_storeu_ps(dst + static_cast<int64_t>(oh) * OW + ow, _mm512_max_ps(ev, od));
        }
      }
      for (; ow < OW; ++ow) {
        float m = std::numeric_limits<float>::lowest();
        for (int kh = 0; kh < k; ++kh) {
          const float* row = src + static_cast<int64_t>(oh * stride + kh) * W + ow * stride;
          for (int kw = 0; kw < k; ++kw) m = std::max(m, row[kw]);
        }
        dst[static_cast<int64_t>(oh) * OW + ow] = m;
      }
    }
  }
}
