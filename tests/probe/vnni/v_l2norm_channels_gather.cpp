// Per-pixel L2 normalisation across channels of an NCHW tensor (SSD "Normalize",
// across_spatial = false), then per-channel scale and clamp to [lo, hi].
// Channel-strided access with _mm512_mask_i32gather_ps / _mm512_mask_i32scatter_ps.
#include <immintrin.h>
#include <algorithm>
#include <cmath>
#include <cstdint>

extern "C" void l2norm_channels_nchw(const float* in, const float* channel_scale, float* out,
                                     int N, int C, int HW, float eps, float lo, float hi) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i vstride = _mm512_set1_epi32(HW);
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const int64_t total = static_cast<int64_t>(N) * HW;

#pragma omp parallel for schedule(static)
  for (int64_t np = 0; np < total; ++np) {
    const int64_t n = np / HW, p = np % HW;
    const float* src = in + n * C * HW + p;
    float* dst = out + n * C * HW + p;
    __m512 acc = _mm512_setzero_ps();
    for (int c = 0; c < C; c += 16) {
      const __mmask16 m = C - c >= 16 ? static_cast<__mmask16>(0xFFFF)
                                      : static_cast<__mmask16>((1u << (C - c)) - 1u);
      const __m512i vindex = _mm512_mullo_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(c)), vstride);
      const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, vindex, src, 4);
      acc = _mm512_fmadd_ps(v, v, acc);
    }
    const float inv = 1.0f / std::max(std::sqrt(_mm512_reduce_add_ps(acc)), eps);
    const __m512 vinv = _mm512_set1_ps(inv);
    for (int c = 0; c < C; c += 16) {
      const __mmask16 m = C - c >= 16 ? static_cast<__mmask16>(0xFFFF)
                                      : static_cast<__mmask16>((1u << (C - c)) - 1u);
      const __m512i vindex = _mm512_mullo_epi32(_mm512_add_epi32(lane, _mm512_set1_epi32(c)), vstride);
      __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, vindex, src, 4);
      v = _mm512_mul_ps(_mm512_mul_ps(v, vinv), _mm512_maskz_loadu_ps(m, channel_scale + c));
      v = _mm512_min_ps(_mm512_max_ps(v, vlo), vhi);
      _mm512_mask_i32scatter_ps(dst, m, vindex, v, 4);
    }
  }
}
