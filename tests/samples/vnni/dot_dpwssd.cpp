// dot product of float vectors quantised to int16, saturating _mm512_dpwssds_epi32.
#include <immintrin.h>
#include <stdint.h>
#include <algorithm>
#include <cmath>

static inline int16_t quantize(float v, float inv_scale) {
  float q = std::nearbyint(v * inv_scale);
  q = std::max(-32768.0f, std::min(32767.0f, q));
  return static_cast<int16_t>(q);
}

extern "C" void dot_kernel(const float* x, const float* y, float* out, int n) {
  alignas(64) int16_t xq[32];
  alignas(64) static int16_t yq[32];
  __m512i acc = _mm512_setzero_si512();
  const float inv = 256.0f;
  for (int i = 0; i < n; i += 32) {
    for (int j = 0; j < 32; ++j) {
      xq[j] = i + j < n ? quantize(x[i + j], inv) : 0;
      yq[j] = i + j < n ? quantize(y[i + j], inv) : 0;
    }
    __m512i a = _mm512_load_si512(reinterpret_cast<const void*>(xq));
    __m512i b = _mm512_load_si512(reinterpret_cast<const void*>(yq));
    acc = _mm512_dpwssds_epi32(acc, a, b);
  }
  out[0] = static_cast<float>(_mm512_reduce_add_epi32(acc)) / (inv * inv);
}
