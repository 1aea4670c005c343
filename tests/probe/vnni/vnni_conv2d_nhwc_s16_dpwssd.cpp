// Direct conv2d, NHWC int16 activations, int16 weights [KO][R][S][C], int32 accumulation
// with AVX-512 VNNI _mm512_dpwssd_epi32. 16 output channels per zmm; each dpwssd consumes
// an input-channel pair (c, c+1) broadcast as one 32-bit lane.
// Weights are repacked to [KO/16][R][S][Cp/2][16][2] (Cp = C rounded up to even, zero padded).
// Spatial zero padding by bounds checks, output-channel tail by masked stores.
// out (fp32, NHWC) = acc * oscale[ko] + bias[ko]
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern "C" void conv2d_nhwc_s16_dpwssd(const int16_t* in, const int16_t* wt, const float* oscale,
                                       const float* bias, float* out, int N, int H, int W, int C,
                                       int KO, int R, int S, int stride, int pad) {
  const int OH = (H + 2 * pad - R) / stride + 1;
  const int OW = (W + 2 * pad - S) / stride + 1;
  const int Cp = (C + 1) & ~1;
  const int KB = (KO + 15) / 16;
  const size_t blk = (size_t)R * S * (Cp / 2) * 32;  // int16 elements per 16-output-channel block
  int16_t* pk = (int16_t*)aligned_alloc(64, ((KB * blk * sizeof(int16_t)) + 63) & ~(size_t)63);
  memset(pk, 0, KB * blk * sizeof(int16_t));
  for (int ko = 0; ko < KO; ++ko)
    for (int r = 0; r < R; ++r)
      for (int s = 0; s < S; ++s)
        for (int c = 0; c < C; ++c) {
          size_t dst = (size_t)(ko / 16) * blk + ((((size_t)r * S + s) * (Cp / 2) + c / 2) * 16 + (ko % 16)) * 2 + (c & 1);
          pk[dst] = wt[(((size_t)ko * R + r) * S + s) * C + c];
        }

#pragma omp parallel for collapse(2) schedule(static)
  for (int nb = 0; nb < N; ++nb)
    for (int oh = 0; oh < OH; ++oh) {
      for (int ow = 0; ow < OW; ++ow) {
        float* o = out + (((size_t)nb * OH + oh) * OW + ow) * KO;
        for (int kb = 0; kb < KB; ++kb) {
          __m512i acc = _mm512_setzero_si512();
          const int16_t* wb = pk + (size_t)kb * blk;
          for (int r = 0; r < R; ++r) {
            int ih = oh * stride - pad + r;
            if (ih < 0 || ih >= H) continue;
            for (int s = 0; s < S; ++s) {
              int iw = ow * stride - pad + s;
              if (iw < 0 || iw >= W) continue;
              const int16_t* ip = in + (((size_t)nb * H + ih) * W + iw) * C;
              const int16_t* wp = wb + ((size_t)r * S + s) * (Cp / 2) * 32;
              int c = 0;
              for (; c + 2 <= C; c += 2) {
                int32_t pair;
                memcpy(&pair, ip + c, 4);
                acc = _mm512_dpwssd_epi32(acc, _mm512_set1_epi32(pair),
                                          _mm512_load_si512((const void*)(wp + (size_t)(c / 2) * 32)));
              }
              if (c < C) {  // odd channel count: pair (in[c], 0)
                int32_t pair = (int32_t)(uint16_t)ip[c];
                acc = _mm512_dpwssd_epi32(acc, _mm512_set1_epi32(pair),
                                          _mm512_load_si512((const void*)(wp + (size_t)(c / 2) * 32)));
              }
            }
          }
          int rem = KO - kb * 16;
          __mmask16 m = rem >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rem) - 1);
          __m512 sc = _mm512_maskz_loadu_ps(m, oscale + kb * 16);
          __m512 bi = _mm512_maskz_loadu_ps(m, bias + kb * 16);
          __m512 r = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), sc, bi);
          _mm512_mask_storeu_ps(o + kb * 16, m, r);
        }
      }
    }
  free(pk);
}
