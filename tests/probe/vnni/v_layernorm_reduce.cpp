// LayerNorm over the last dimension, one row per OpenMP iteration.
// Mean / variance via 2x-unrolled AVX-512 accumulators + _mm512_reduce_add_ps.
#include <immintrin.h>
#include <cmath>
#include <cstdint>

namespace {
constexpr int kVec = 16;

inline float row_sum(const float* x, int n) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int i = 0;
  for (; i + 2 * kVec <= n; i += 2 * kVec) {
    acc0 = _mm512_add_ps(acc0, _mm512_loadu_ps(x + i));
    acc1 = _mm512_add_ps(acc1, _mm512_loadu_ps(x + i + kVec));
  }
  for (; i + kVec <= n; i += kVec) acc0 = _mm512_add_ps(acc0, _mm512_loadu_ps(x + i));
  float s = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
  for (; i < n; ++i) s += x[i];
  return s;
}

inline float row_sq_dev(const float* x, int n, float mean) {
  const __m512 vm = _mm512_set1_ps(mean);
  __m512 acc = _mm512_setzero_ps();
  int i = 0;
  for (; i + kVec <= n; i += kVec) {
    const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + i), vm);
    acc = _mm512_fmadd_ps(d, d, acc);
  }
  float s = _mm512_reduce_add_ps(acc);
  for (; i < n; ++i) { const float d = x[i] - mean; s += d * d; }
  return s;
}
}  // namespace

extern "C" void layernorm_f32(const float* in, const float* gamma, const float* beta,
                              float* out, int rows, int cols, float eps) {
#pragma omp parallel for schedule(static)
  for (int r = 0; r < rows; ++r) {
    const float* x = in + static_cast<int64_t>(r) * cols;
    float* y = out + static_cast<int64_t>(r) * cols;
    const float mean = row_sum(x, cols) / static_cast<float>(cols);
    const float var = row_sq_dev(x, cols, mean) / static_cast<float>(cols);
    const __m512 vmean = _mm512_set1_ps(mean);
    const __m512 vinv = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_sqrt_ps(_mm512_set1_ps(var + eps)));
    int i = 0;
    for (; i + kVec <= cols; i += kVec) {
      __m512 v = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(x + i), vmean), vinv);
      v = _mm512_fmadd_ps(v, _mm512_loadu_ps(gamma + i), _mm512_loadu_ps(beta + i));
      _mm512_storeu_ps(y + i, v);
    }
    const float inv = 1.0f / std::sqrt(var + eps);
    for (; i < cols; ++i) y[i] = (x[i] - mean) * inv * gamma[i] + beta[i];
  }
}
