// GELU (tanh approximation) on an AVX2 (_mm256) code path. tanh is Eigen's
// clamped 13/6 rational approximation; the scalar tail uses a lambda + std::tanh.
#include <immintrin.h>
#include <cmath>
#include <cstdint>

namespace act {
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluC = 0.044715f;

static inline __m256 tanh_ps(__m256 a) {
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  const __m256 tiny_mask = _mm256_cmp_ps(_mm256_andnot_ps(sign_mask, a), _mm256_set1_ps(0.0004f), _CMP_LT_OQ);
  const __m256 x = _mm256_max_ps(_mm256_min_ps(a, _mm256_set1_ps(7.90531110763549805f)),
                                 _mm256_set1_ps(-7.90531110763549805f));
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_fmadd_ps(x2, _mm256_set1_ps(-2.76076847742355e-16f), _mm256_set1_ps(2.00018790482477e-13f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(-8.60467152213735e-11f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(5.12229709037114e-08f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(1.48572235717979e-05f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(6.37261928875436e-04f));
  p = _mm256_fmadd_ps(x2, p, _mm256_set1_ps(4.89352455891786e-03f));
  p = _mm256_mul_ps(x, p);
  __m256 q = _mm256_fmadd_ps(x2, _mm256_set1_ps(1.19825839466702e-06f), _mm256_set1_ps(1.18534705686654e-04f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(2.26843463243900e-03f));
  q = _mm256_fmadd_ps(x2, q, _mm256_set1_ps(4.89352518554385e-03f));
  return _mm256_blendv_ps(_mm256_div_ps(p, q), x, tiny_mask);
}
}  // namespace act

extern "C" void gelu_tanh_f32(const float* in, float* out, int n) {
  auto gelu = [](float x) {
    return 0.5f * x * (1.0f + std::tanh(act::kSqrt2OverPi * (x + act::kGeluC * x * x * x)));
  };
  const int nvec = n & ~7;
#pragma omp parallel for if (n > 4096) schedule(static)
  for (int i = 0; i < nvec; i += 8) {
    const __m256 x = _mm256_loadu_ps(in + i);
    const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(x, x), x);
    const __m256 u = _mm256_mul_ps(_mm256_set1_ps(act::kSqrt2OverPi),
                                   _mm256_fmadd_ps(_mm256_set1_ps(act::kGeluC), x3, x));
    const __m256 t = _mm256_add_ps(_mm256_set1_ps(1.0f), act::tanh_ps(u));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), t));
  }
  for (int i = nvec; i < n; ++i) out[i] = gelu(in[i]);
}
