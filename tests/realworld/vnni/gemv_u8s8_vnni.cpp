// Quantised GEMV y = W x in the FBGEMM / ONNX Runtime style: x is quantised once to uint8 with
// zero point 128, W row by row to int8 (symmetric); _mm512_dpbusd_epi32 multiplies 4 byte pairs
// per 32-bit lane, the zero point is removed with the per-row sum of W codes, and the result is
// dequantised with the product of the two scales. Row remainder bytes go through a masked load.
#include <immintrin.h>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <algorithm>

static constexpr float kXScale = 1.0f / 128.0f;   // power-of-two scales: exact dequantisation
static constexpr float kWScale = 1.0f / 128.0f;
static constexpr int32_t kXZeroPoint = 128;
static constexpr int kMaxK = 1024;

static inline uint8_t quantize_u8(float v) {
  int32_t q = (int32_t)std::nearbyint(v / kXScale) + kXZeroPoint;
  return (uint8_t)std::min(255, std::max(0, q));
}
static inline int8_t quantize_s8(float v) {
  int32_t q = (int32_t)std::nearbyint(v / kWScale);
  return (int8_t)std::min(127, std::max(-128, q));
}

extern "C" void qgemv_u8s8(const float* W, const float* x, float* y, int M, int K) {
  alignas(64) uint8_t xq[kMaxK];
  for (int k = 0; k < K; ++k) xq[k] = quantize_u8(x[k]);
#pragma omp parallel for
  for (int m = 0; m < M; ++m) {
    alignas(64) int8_t wq[kMaxK];
    int32_t row_sum = 0;
    for (int k = 0; k < K; ++k) {
      wq[k] = quantize_s8(W[(size_t)m * K + k]);
      row_sum += wq[k];
    }
    __m512i acc = _mm512_setzero_si512();
    int k = 0;
    for (; k + 64 <= K; k += 64) {
      __m512i a = _mm512_loadu_si512((const void*)(xq + k));
      __m512i b = _mm512_loadu_si512((const void*)(wq + k));
      acc = _mm512_dpbusd_epi32(acc, a, b);
    }
    if (k < K) {
      const int left = K - k;
      const __mmask64 tail = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
      __m512i a = _mm512_maskz_loadu_epi8(tail, xq + k);
      __m512i b = _mm512_maskz_loadu_epi8(tail, wq + k);
      acc = _mm512_dpbusd_epi32(acc, a, b);
    }
    const int32_t dot = _mm512_reduce_add_epi32(acc) - kXZeroPoint * row_sum;
    y[m] = (float)dot * (kXScale * kWScale);
  }
}
