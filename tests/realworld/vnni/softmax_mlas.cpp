// Row softmax in the style of MLAS's MlasComputeSoftmax: per row a vector max (_mm512_max_ps
// then _mm512_reduce_max_ps, masked tail filled with -FLT_MAX), exponentials with the sum
// accumulated on the side, then one vector scale by 1 / sum; rows in parallel with OpenMP.
#include <immintrin.h>
#include <cfloat>
#include <cmath>

static inline float ReduceMaximum(const float* x, int n) {
  __m512 vmax = _mm512_set1_ps(-FLT_MAX);
  int i = 0;
  for (; i + 16 <= n; i += 16) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(x + i));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
    vmax = _mm512_max_ps(vmax, _mm512_mask_loadu_ps(_mm512_set1_ps(-FLT_MAX), m, x + i));
  }
  return _mm512_reduce_max_ps(vmax);
}

static inline float ComputeExpSum(const float* x, float* y, int n, float neg_max) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) {
    float e = std::exp(x[i] + neg_max);
    y[i] = e;
    sum += e;
  }
  return sum;
}

static inline void Scale(float* y, int n, float s) {
  const __m512 vs = _mm512_set1_ps(s);
  int i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), vs));
  for (; i < n; ++i) y[i] *= s;
}

extern "C" void softmax_f32(const float* input, float* output, int N, int D) {
#pragma omp parallel for
  for (int n = 0; n < N; ++n) {
    const float* x = input + (size_t)n * D;
    float* y = output + (size_t)n * D;
    const float maximum = ReduceMaximum(x, D);
    const float sum = ComputeExpSum(x, y, D, -maximum);
    Scale(y, D, 1.0f / sum);
  }
}
