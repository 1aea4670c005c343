// Scaled dot-product attention for one head, optional causal mask:
//   S = Q K^T * scale  (Q[L,D], K[S,D], V[S,Dv]),  P = softmax(S) row-wise,  O = P V  (O[L,Dv])
// AVX2/FMA dot products (8-wide, horizontal sum via hadd/extract) with scalar tail over D;
// row softmax in scalar; P V accumulated with _mm256_fmadd_ps over Dv with a scalar tail.
// Causal: query i attends keys j <= i + (S - L) (bottom-right aligned, like PyTorch is_causal for L==S).
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>

static inline float hsum256(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  __m128 s = _mm_add_ps(lo, hi);
  s = _mm_hadd_ps(s, s);
  s = _mm_hadd_ps(s, s);
  return _mm_cvtss_f32(s);
}

static inline float dot_avx2(const float* a, const float* b, int D) {
  __m256 acc = _mm256_setzero_ps();
  int d = 0;
  for (; d + 8 <= D; d += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + d), _mm256_loadu_ps(b + d), acc);
  float s = hsum256(acc);
  for (; d < D; ++d) s += a[d] * b[d];
  return s;
}

extern "C" void sdpa_single_head(const float* Q, const float* K, const float* V, float* O,
                                 int L, int S, int D, int Dv, float scale, int causal) {
#pragma omp parallel
  {
    float* p = (float*)malloc(sizeof(float) * (S > 0 ? S : 1));
#pragma omp for schedule(static)
    for (int i = 0; i < L; ++i) {
      int jmax = causal ? i + (S - L) + 1 : S;
      if (jmax > S) jmax = S;
      if (jmax < 0) jmax = 0;
      float* o = O + (size_t)i * Dv;
      if (jmax == 0) {  // fully masked row -> zeros
        for (int e = 0; e < Dv; ++e) o[e] = 0.f;
        continue;
      }
      float mx = -INFINITY;
      for (int j = 0; j < jmax; ++j) {
        p[j] = dot_avx2(Q + (size_t)i * D, K + (size_t)j * D, D) * scale;
        mx = p[j] > mx ? p[j] : mx;
      }
      float sum = 0.f;
      for (int j = 0; j < jmax; ++j) {
        p[j] = expf(p[j] - mx);
        sum += p[j];
      }
      const float inv = 1.0f / sum;
      int e = 0;
      for (; e + 8 <= Dv; e += 8) {
        __m256 acc = _mm256_setzero_ps();
        for (int j = 0; j < jmax; ++j)
          acc = _mm256_fmadd_ps(_mm256_set1_ps(p[j]), _mm256_loadu_ps(V + (size_t)j * Dv + e), acc);
        _mm256_storeu_ps(o + e, _mm256_mul_ps(acc, _mm256_set1_ps(inv)));
      }
      for (; e < Dv; ++e) {
        float acc = 0.f;
        for (int j = 0; j < jmax; ++j) acc += p[j] * V[(size_t)j * Dv + e];
        o[e] = acc * inv;
      }
    }
    free(p);
  }
}
