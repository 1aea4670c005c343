// conv1d_64_8 (valid): int8 taps, accumulation helper through a reference, OpenMP pragma.
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

constexpr int TAPS = 8;

static inline void accumulate(int32_t& dst, const uint8_t* x, const int8_t* w) {
  int32_t s = 0;
  for (int t = 0; t < TAPS; ++t) s += (int32_t)x[t] * (int32_t)w[t];
  dst += s;
}

extern "C" void conv1d_kernel(const uint8_t* __restrict__ x, const int8_t* __restrict__ w, int32_t* __restrict__ y, int out_len) {
  const int8_t* taps = w != nullptr ? w : nullptr;
  #pragma omp parallel for
  for (int i = 0; i < out_len; ++i) {
    y[i] = 0;
    accumulate(y[i], x + i, taps);
  }
  __m512i probe = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512());
  (void)probe;
}
