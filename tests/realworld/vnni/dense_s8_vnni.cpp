// int8 inner product (fully connected) with the weight in the VNNI-friendly blocked layout
// oneDNN and FBGEMM use: 16 output channels x 4 consecutive input channels per 64-byte block,
// so one _mm512_dpbusd_epi32 of a broadcast 4-byte group of the uint8 activation row updates
// 16 outputs. Activations: uint8, zero point 128; weights: int8; out = dequantised + bias.
#include <immintrin.h>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <algorithm>

namespace {

constexpr int OC_BLOCK = 16;
constexpr int IC_GROUP = 4;
constexpr float X_SCALE = 1.0f / 64.0f, W_SCALE = 1.0f / 64.0f;
constexpr int32_t X_ZP = 128;
constexpr int MAX_K = 512, MAX_N = 256, MAX_M = 64;

alignas(64) uint8_t x_q[MAX_M * MAX_K];
alignas(64) int8_t w_packed[MAX_N * MAX_K];
alignas(64) int32_t w_comp[MAX_N];

inline int32_t round_clamp(float v, float scale, int32_t zp, int32_t lo, int32_t hi) {
  return std::min(hi, std::max(lo, (int32_t)std::nearbyint(v / scale) + zp));
}

inline int32_t load_group(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

}  // namespace

extern "C" void inner_product_s8(const float* src, const float* weights, const float* bias, float* dst,
                                 int M, int K, int N) {
  const int KP = (K + IC_GROUP - 1) / IC_GROUP * IC_GROUP;
  const int NB = (N + OC_BLOCK - 1) / OC_BLOCK;
  std::memset(x_q, X_ZP, sizeof(x_q));
  std::memset(w_packed, 0, sizeof(w_packed));
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < K; ++k) x_q[m * KP + k] = (uint8_t)round_clamp(src[m * K + k], X_SCALE, X_ZP, 0, 255);
  // reorder: w_packed[nb][k / 4][oc % 16][k % 4]; w_comp[n] = zero-point compensation
  for (int n = 0; n < N; ++n) {
    int32_t s = 0;
    for (int k = 0; k < K; ++k) {
      const int8_t q = (int8_t)round_clamp(weights[n * K + k], W_SCALE, 0, -128, 127);
      w_packed[((n / OC_BLOCK) * (KP / IC_GROUP) + k / IC_GROUP) * OC_BLOCK * IC_GROUP +
               (n % OC_BLOCK) * IC_GROUP + k % IC_GROUP] = q;
      s += q;
    }
    w_comp[n] = X_ZP * s;
  }
#pragma omp parallel for collapse(2)
  for (int m = 0; m < M; ++m)
    for (int nb = 0; nb < NB; ++nb) {
      __m512i acc = _mm512_setzero_si512();
      for (int g = 0; g < KP / IC_GROUP; ++g) {
        const __m512i a = _mm512_set1_epi32(load_group(x_q + m * KP + g * IC_GROUP));
        const __m512i b = _mm512_load_si512(
            (const void*)(w_packed + (nb * (KP / IC_GROUP) + g) * OC_BLOCK * IC_GROUP));
        acc = _mm512_dpbusd_epi32(acc, a, b);
      }
      const int n0 = nb * OC_BLOCK;
      const int left = N - n0;
      const __mmask16 mask = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
      const __m512i comp = _mm512_maskz_loadu_epi32(mask, w_comp + n0);
      const __m512 v = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, comp));
      const __m512 out = _mm512_fmadd_ps(v, _mm512_set1_ps(X_SCALE * W_SCALE), _mm512_maskz_loadu_ps(mask, bias + n0));
      _mm512_mask_storeu_ps(dst + m * N + n0, mask, out);
    }
}
