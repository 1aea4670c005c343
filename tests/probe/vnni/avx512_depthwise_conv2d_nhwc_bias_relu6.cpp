// Depthwise conv2d (MobileNet style), NHWC layout, weights [R][S][C], per-channel bias,
// fused ReLU6. Vectorised over channels, 16 per zmm, channel tail via _mm512_mask_loadu_ps /
// _mm512_mask_storeu_ps. Spatial padding: taps falling outside the image are skipped.
#include <immintrin.h>

extern "C" void depthwise_conv2d_nhwc_relu6(const float* in, const float* w, const float* bias,
                                            float* out, int N, int H, int W, int C, int R, int S,
                                            int stride, int pad) {
  const int OH = (H + 2 * pad - R) / stride + 1;
  const int OW = (W + 2 * pad - S) / stride + 1;
  const __m512 zero = _mm512_setzero_ps(), six = _mm512_set1_ps(6.0f);
#pragma omp parallel for collapse(2) schedule(static)
  for (int n = 0; n < N; ++n)
    for (int oh = 0; oh < OH; ++oh) {
      const int ih0 = oh * stride - pad;
      const int r_lo = ih0 < 0 ? -ih0 : 0;
      const int r_hi = (ih0 + R > H) ? H - ih0 : R;
      for (int ow = 0; ow < OW; ++ow) {
        const int iw0 = ow * stride - pad;
        const int s_lo = iw0 < 0 ? -iw0 : 0;
        const int s_hi = (iw0 + S > W) ? W - iw0 : S;
        float* o = out + (((size_t)n * OH + oh) * OW + ow) * C;
        for (int c = 0; c < C; c += 16) {
          const int rem = C - c;
          const __mmask16 m = rem >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << rem) - 1);
          __m512 acc = _mm512_maskz_loadu_ps(m, bias + c);
          for (int r = r_lo; r < r_hi; ++r)
            for (int s = s_lo; s < s_hi; ++s) {
              const float* ip = in + (((size_t)n * H + (ih0 + r)) * W + (iw0 + s)) * C + c;
              const float* wp = w + ((size_t)r * S + s) * C + c;
              acc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, ip), _mm512_maskz_loadu_ps(m, wp), acc);
            }
          acc = _mm512_min_ps(_mm512_max_ps(acc, zero), six);
          _mm512_mask_storeu_ps(o + c, m, acc);
        }
      }
    }
}
