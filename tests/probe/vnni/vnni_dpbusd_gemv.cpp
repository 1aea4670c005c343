#include <immintrin.h>
#include <stdint.h>
// y[m] = sum_k a[m][k] (u8) * x[k] (s8), K a multiple of 64
extern "C" void gemv_u8s8(const uint8_t* a, const int8_t* x, int32_t* y, int M, int K) {
#pragma omp parallel for
  for (int m = 0; m < M; ++m) {
    __m512i acc = _mm512_setzero_si512();
    for (int k = 0; k < K; k += 64) {
      __m512i va = _mm512_loadu_si512((const void*)(a + (size_t)m * K + k));
      __m512i vx = _mm512_loadu_si512((const void*)(x + k));
      acc = _mm512_dpbusd_epi32(acc, va, vx);
    }
    y[m] = _mm512_reduce_add_epi32(acc);
  }
}
