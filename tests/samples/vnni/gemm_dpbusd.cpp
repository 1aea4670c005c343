// gemm_16_64_16: uint8 x int8 -> int32 with _mm512_dpbusd_epi32 (B pre-packed as [K/4][N][4]).
#include <immintrin.h>
#include <stdint.h>

#define M 16
#define K 64
#define N 16

extern "C" void gemm_u8s8(const uint8_t* A, const int8_t* Bp, int32_t* C) {
  for (int i = 0; i < M; ++i) {
    __m512i acc = _mm512_setzero_si512();
    for (int k = 0; k < K; k += 4) {
      int32_t a4;
      __builtin_memcpy(&a4, A + i * K + k, 4);
      __m512i a = _mm512_set1_epi32(a4);
      __m512i b = _mm512_loadu_si512((const void*)(Bp + (k / 4) * N * 4));
      acc = _mm512_dpbusd_epi32(acc, a, b);
    }
    _mm512_storeu_si512((void*)(C + i * N), acc);
  }
}
