// NHWC max pooling like oneDNN's nhwc pooling kernel: every output pixel walks its KH x KW
// window with the channels vectorised 16 at a time (_mm512_max_ps from -FLT_MAX, masked
// channel tail); the N * OH * OW output pixels are shared out by a collapsed OpenMP loop.
#include <immintrin.h>
#include <cfloat>
#include <cstddef>

extern "C" void max_pool_nhwc(const float* src, float* dst, int N, int H, int W, int C, int KH, int KW,
                              int SH, int SW) {
  const int OH = (H - KH) / SH + 1;
  const int OW = (W - KW) / SW + 1;
#pragma omp parallel for collapse(3)
  for (int n = 0; n < N; ++n)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        float* out = dst + (((size_t)n * OH + oh) * OW + ow) * C;
        for (int c = 0; c < C; c += 16) {
          const int left = C - c;
          const __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
          __m512 acc = _mm512_set1_ps(-FLT_MAX);
          for (int kh = 0; kh < KH; ++kh)
            for (int kw = 0; kw < KW; ++kw) {
              const float* in = src + (((size_t)n * H + oh * SH + kh) * W + ow * SW + kw) * C + c;
              acc = _mm512_mask_max_ps(acc, m, acc, _mm512_maskz_loadu_ps(m, in));
            }
          _mm512_mask_storeu_ps(out + c, m, acc);
        }
      }
}
