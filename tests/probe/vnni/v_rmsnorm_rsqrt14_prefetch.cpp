// RMSNorm (llama.cpp-style) with _mm512_rsqrt14_ps + one Newton-Raphson step,
// software prefetch of the next row, __restrict pointers and int64_t strides.
#include <immintrin.h>
#include <cstdint>

static inline __m512 rsqrt_nr(__m512 x) {
  const __m512 y0 = _mm512_rsqrt14_ps(x);
  const __m512 half_x = _mm512_mul_ps(x, _mm512_set1_ps(0.5f));
  // y1 = y0 * (1.5 - 0.5 * x * y0 * y0)
  return _mm512_mul_ps(y0, _mm512_fnmadd_ps(half_x, _mm512_mul_ps(y0, y0), _mm512_set1_ps(1.5f)));
}

extern "C" void rmsnorm_f32(const float* __restrict in, const float* __restrict weight,
                            float* __restrict out, int rows, int cols, float eps) {
  const int64_t in_stride = cols;
  const int64_t out_stride = cols;
  for (int r = 0; r < rows; ++r) {
    const float* __restrict x = in + r * in_stride;
    float* __restrict y = out + r * out_stride;
    if (r + 1 < rows) {
      for (int64_t off = 0; off < in_stride; off += 16)
        _mm_prefetch(reinterpret_cast<const char*>(x + in_stride + off), _MM_HINT_T0);
    }
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= cols; i += 16) {
      const __m512 v = _mm512_loadu_ps(x + i);
      acc = _mm512_fmadd_ps(v, v, acc);
    }
    float ss = _mm512_reduce_add_ps(acc);
    for (; i < cols; ++i) ss += x[i] * x[i];
    const __m512 ms = _mm512_set1_ps(ss / static_cast<float>(cols) + eps);
    const __m512 vscale = rsqrt_nr(ms);
    const float scale = _mm512_cvtss_f32(vscale);
    for (i = 0; i + 16 <= cols; i += 16) {
      const __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + i), vscale);
      _mm512_storeu_ps(y + i, _mm512_mul_ps(v, _mm512_loadu_ps(weight + i)));
    }
    for (; i < cols; ++i) y[i] = x[i] * scale * weight[i];
  }
}
