// RMS norm as in ggml_compute_forward_rms_norm_f32 + llama.cpp's multiply by the weight: the
// sum of squares accumulates in double (ggml_float), scale = 1/sqrtf(mean + eps), then
// ggml_vec_scale_f32 (AVX-512 body, scalar leftovers) and an element-wise weight multiply.
#include <immintrin.h>
#include <cmath>
#include <cstdint>

typedef double ggml_float;

inline static void ggml_vec_scale_f32(const int n, float* y, const float v) {
  const int np = n & ~15;
  const __m512 vx = _mm512_set1_ps(v);
  for (int i = 0; i < np; i += 16) {
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), vx));
  }
  for (int i = np; i < n; ++i) y[i] *= v;
}

inline static void ggml_vec_mul_f32(const int n, float* z, const float* x, const float* y) {
  for (int i = 0; i < n; ++i) z[i] = x[i] * y[i];
}

extern "C" void rms_norm_mul(const float* src0, const float* weight, float* dst, int ne00, int nrows) {
  const float eps = 1e-6f;
#pragma omp parallel for
  for (int i01 = 0; i01 < nrows; i01++) {
    const float* x = src0 + (int64_t)i01 * ne00;
    float* y = dst + (int64_t)i01 * ne00;
    ggml_float sum = 0.0;
    for (int i00 = 0; i00 < ne00; i00++) sum += (ggml_float)(x[i00] * x[i00]);
    const float mean = sum / ne00;
    for (int i00 = 0; i00 < ne00; i00++) y[i00] = x[i00];
    const float scale = 1.0f / sqrtf(mean + eps);
    ggml_vec_scale_f32(ne00, y, scale);
    ggml_vec_mul_f32(ne00, y, y, weight);
  }
}
