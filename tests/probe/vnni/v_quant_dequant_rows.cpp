// Per-row quantise + dequantise (round trip). Symmetric s8: absmax via
// _mm512_abs_ps/_mm512_reduce_max_ps, roundscale + cvtps_epi32 + cvtsepi32_epi8.
// Asymmetric u8: min/max range, zero point, max_epi32 + cvtusepi32_epi8, cvtepu8_epi32.
#include <immintrin.h>
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace q {
constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

inline float quant_row_s8(const float* x, int8_t* qv, float* y, int n) {
  __m512 amax = _mm512_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) amax = _mm512_max_ps(amax, _mm512_abs_ps(_mm512_loadu_ps(x + i)));
  float m = _mm512_reduce_max_ps(amax);
  for (; i < n; ++i) m = std::max(m, std::fabs(x[i]));
  const float scale = m > 0.0f ? m / 127.0f : 1.0f, inv = 1.0f / scale;
  const __m512 vinv = _mm512_set1_ps(inv), vs = _mm512_set1_ps(scale);
  for (i = 0; i + 16 <= n; i += 16) {
    const __m512 t = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), vinv), kRound);
    const __m128i b = _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(t));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qv + i), b);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b)), vs));
  }
  for (; i < n; ++i) {
    const int v = std::min(127, std::max(-128, static_cast<int>(std::nearbyint(x[i] * inv))));
    qv[i] = static_cast<int8_t>(v);
    y[i] = static_cast<float>(v) * scale;
  }
  return scale;
}

inline float quant_row_u8(const float* x, uint8_t* qv, float* y, int n, int32_t* zp_out) {
  __m512 vmn = _mm512_setzero_ps(), vmx = _mm512_setzero_ps();  // range always includes 0
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    vmn = _mm512_min_ps(vmn, v);
    vmx = _mm512_max_ps(vmx, v);
  }
  float mn = _mm512_reduce_min_ps(vmn), mx = _mm512_reduce_max_ps(vmx);
  for (; i < n; ++i) { mn = std::min(mn, x[i]); mx = std::max(mx, x[i]); }
  const float scale = mx > mn ? (mx - mn) / 255.0f : 1.0f, inv = 1.0f / scale;
  const int32_t zp = std::min(255, std::max(0, static_cast<int>(std::nearbyint(-mn * inv))));
  *zp_out = zp;
  const __m512 vinv = _mm512_set1_ps(inv), vs = _mm512_set1_ps(scale);
  const __m512i vzp = _mm512_set1_epi32(zp);
  for (i = 0; i + 16 <= n; i += 16) {
    __m512i v = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i), vinv)), vzp);
    v = _mm512_max_epi32(v, _mm512_setzero_si512());  // cvtusepi32 treats input as unsigned
    const __m128i b = _mm512_cvtusepi32_epi8(v);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(qv + i), b);
    const __m512i d = _mm512_sub_epi32(_mm512_cvtepu8_epi32(b), vzp);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_cvtepi32_ps(d), vs));
  }
  for (; i < n; ++i) {
    const int v = std::min(255, std::max(0, static_cast<int>(std::nearbyint(x[i] * inv)) + zp));
    qv[i] = static_cast<uint8_t>(v);
    y[i] = static_cast<float>(v - zp) * scale;
  }
  return scale;
}
}  // namespace q

extern "C" void quant_dequant_rows(const float* in, uint8_t* qout, float* scales, int32_t* zero_points,
                                   float* out, int rows, int cols, int asymmetric) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const int64_t off = static_cast<int64_t>(r) * cols;
    if (asymmetric) {
      scales[r] = q::quant_row_u8(in + off, qout + off, out + off, cols, &zero_points[r]);
    } else {
      scales[r] = q::quant_row_s8(in + off, reinterpret_cast<int8_t*>(qout + off), out + off, cols);
      zero_points[r] = 0;
    }
  }
}
