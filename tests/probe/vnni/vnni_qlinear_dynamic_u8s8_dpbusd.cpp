// Dynamic-quantized linear layer (int8 quantized matmul):
//   activations x[M,K] (fp32) are quantized per row to uint8 (asymmetric, zero point),
//   weights w[N,K] are already int8 with a per-output-channel scale wscale[N].
//   out[M,N] = xs[m] * wscale[n] * (sum_k qx[m,k]*w[n,k] - zp[m]*sum_k w[n,k]) + bias[n]
// Inner product uses AVX-512 VNNI _mm512_dpbusds_epi32 (u8 x s8 -> s32, saturating; no saturation
// for K < 16000), weight column sums use _mm512_dpbusd_epi32 with all-ones; K tail via masked loads.
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

static inline __mmask64 tail_mask64(int r) {
  return r >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << r) - 1);
}

// quantize one row of K floats to u8 with per-row scale / zero point
static void quantize_row_u8(const float* x, uint8_t* q, int K, float* scale_out, int32_t* zp_out) {
  __m512 vmin = _mm512_set1_ps(0.f), vmax = _mm512_set1_ps(0.f);  // range always contains 0
  int k = 0;
  for (; k + 16 <= K; k += 16) {
    __m512 v = _mm512_loadu_ps(x + k);
    vmin = _mm512_min_ps(vmin, v);
    vmax = _mm512_max_ps(vmax, v);
  }
  if (k < K) {
    __mmask16 m = (__mmask16)((1u << (K - k)) - 1);
    __m512 v = _mm512_maskz_loadu_ps(m, x + k);  // masked-out lanes are 0, inside range already
    vmin = _mm512_min_ps(vmin, v);
    vmax = _mm512_max_ps(vmax, v);
  }
  float mn = _mm512_reduce_min_ps(vmin), mx = _mm512_reduce_max_ps(vmax);
  float scale = (mx - mn) / 255.f;
  if (scale == 0.f) scale = 1.f;
  float inv = 1.f / scale;
  int32_t zp = (int32_t)nearbyintf(-mn * inv);
  if (zp < 0) zp = 0;
  if (zp > 255) zp = 255;
  __m512 vinv = _mm512_set1_ps(inv);
  __m512i vzp = _mm512_set1_epi32(zp);
  __m512i v0 = _mm512_setzero_si512(), v255 = _mm512_set1_epi32(255);
  for (k = 0; k < K; k += 16) {
    int rem = K - k;
    __mmask16 m = rem >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rem) - 1);
    __m512 v = _mm512_maskz_loadu_ps(m, x + k);
    __m512i qi = _mm512_add_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(v, vinv)), vzp);
    qi = _mm512_min_epi32(_mm512_max_epi32(qi, v0), v255);
    _mm_mask_storeu_epi8(q + k, m, _mm512_cvtepi32_epi8(qi));
  }
  *scale_out = scale;
  *zp_out = zp;
}

extern "C" void qlinear_dynamic_u8s8(const float* x, const int8_t* w, const float* wscale,
                                     const float* bias, float* out, int M, int N, int K) {
  uint8_t* qx = (uint8_t*)malloc((size_t)M * K + 64);
  float* xs = (float*)malloc(sizeof(float) * (M > 0 ? M : 1));
  int32_t* xzp = (int32_t*)malloc(sizeof(int32_t) * (M > 0 ? M : 1));
  int32_t* wsum = (int32_t*)malloc(sizeof(int32_t) * (N > 0 ? N : 1));

#pragma omp parallel for schedule(static)
  for (int m = 0; m < M; ++m) quantize_row_u8(x + (size_t)m * K, qx + (size_t)m * K, K, &xs[m], &xzp[m]);

  // column sums of weights for zero-point compensation (dpbusd with all-ones u8)
  const __m512i ones = _mm512_set1_epi8(1);
#pragma omp parallel for schedule(static)
  for (int n = 0; n < N; ++n) {
    __m512i acc = _mm512_setzero_si512();
    for (int k = 0; k < K; k += 64) {
      __m512i vw = _mm512_maskz_loadu_epi8(tail_mask64(K - k), w + (size_t)n * K + k);
      acc = _mm512_dpbusd_epi32(acc, ones, vw);
    }
    wsum[n] = _mm512_reduce_add_epi32(acc);
  }

#pragma omp parallel for schedule(static)
  for (int m = 0; m < M; ++m) {
    const uint8_t* a = qx + (size_t)m * K;
    for (int n = 0; n < N; ++n) {
      const int8_t* b = w + (size_t)n * K;
      __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
      int k = 0;
      for (; k + 128 <= K; k += 128) {
        acc0 = _mm512_dpbusds_epi32(acc0, _mm512_loadu_si512(a + k), _mm512_loadu_si512(b + k));
        acc1 = _mm512_dpbusds_epi32(acc1, _mm512_loadu_si512(a + k + 64), _mm512_loadu_si512(b + k + 64));
      }
      for (; k < K; k += 64) {
        __mmask64 mk = tail_mask64(K - k);
        acc0 = _mm512_dpbusds_epi32(acc0, _mm512_maskz_loadu_epi8(mk, a + k), _mm512_maskz_loadu_epi8(mk, b + k));
      }
      int32_t dot = _mm512_reduce_add_epi32(_mm512_add_epi32(acc0, acc1));
      int32_t corr = dot - xzp[m] * wsum[n];
      out[(size_t)m * N + n] = (float)corr * (xs[m] * wscale[n]) + bias[n];
    }
  }
  free(qx); free(xs); free(xzp); free(wsum);
}
