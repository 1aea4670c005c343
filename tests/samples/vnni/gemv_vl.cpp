// gemv with 128-bit VNNI (_mm_dpbusds_epi32, needs AVX512VL) and GNU vector types via using.
#include <immintrin.h>
#include <stdint.h>

using float4_ = float __attribute__((__vector_size__(16)));
typedef int int4_ __attribute__((vector_size(16)));

extern "C" void gemv_kernel(const uint8_t* A, const int8_t* x, int32_t* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    __m128i acc = _mm_setzero_si128();
    for (int c = 0; c + 16 <= cols; c += 16) {
      __m128i a = _mm_loadu_si128((const __m128i*)(A + r * cols + c));
      __m128i b = _mm_loadu_si128((const __m128i*)(x + c));
      acc = _mm_dpbusds_epi32(acc, a, b);
    }
    int4_ lanes = (int4_)acc;
    float4_ scale = {1.0f, 1.0f, 1.0f, 1.0f};
    y[r] = (int32_t)((lanes[0] + lanes[1] + lanes[2] + lanes[3]) * scale[0]);
  }
}
