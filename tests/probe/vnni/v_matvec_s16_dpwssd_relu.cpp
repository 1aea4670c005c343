// y = relu(w_scale[r] * x_scale * (Wq[r,:] . xq) + bias[r]) with int16 weights.
// x is quantised once to int16 with cvtps_epi32 + _mm512_packs_epi32; packs works per
// 128-bit lane, so the result is restored to natural order with _mm512_permutexvar_epi64.
// Dot products use _mm512_dpwssd_epi32 on 32 int16 per step, masked K tail.
#include <immintrin.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

extern "C" void matvec_s16_bias_relu(const int16_t* W, const float* w_scale, const float* x,
                                     float x_scale, const float* bias, float* y, int rows, int cols) {
  const int cols_pad = (cols + 31) / 32 * 32;
  std::vector<int16_t> xq(cols_pad, 0);
  const __m512 vinv = _mm512_set1_ps(1.0f / x_scale);
  const __m512i fix = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
  int c = 0;
  for (; c + 32 <= cols; c += 32) {
    const __m512i lo = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + c), vinv));
    const __m512i hi = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + c + 16), vinv));
    const __m512i packed = _mm512_permutexvar_epi64(fix, _mm512_packs_epi32(lo, hi));
    _mm512_storeu_si512(xq.data() + c, packed);
  }
  for (; c < cols; ++c) {
    const float v = std::nearbyint(x[c] * (1.0f / x_scale));
    xq[c] = static_cast<int16_t>(std::min(32767.0f, std::max(-32768.0f, v)));
  }

#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const int16_t* w = W + static_cast<int64_t>(r) * cols;
    __m512i acc = _mm512_setzero_si512();
    int k = 0;
    for (; k + 32 <= cols; k += 32)
      acc = _mm512_dpwssd_epi32(acc, _mm512_loadu_si512(w + k), _mm512_loadu_si512(xq.data() + k));
    if (k < cols) {
      const __mmask32 m = static_cast<__mmask32>((1ull << (cols - k)) - 1ull);
      acc = _mm512_dpwssd_epi32(acc, _mm512_maskz_loadu_epi16(m, w + k), _mm512_loadu_si512(xq.data() + k));
    }
    const int32_t dot = _mm512_reduce_add_epi32(acc);
    const float v = static_cast<float>(dot) * w_scale[r] * x_scale + bias[r];
    y[r] = std::max(0.0f, v);
  }
}
