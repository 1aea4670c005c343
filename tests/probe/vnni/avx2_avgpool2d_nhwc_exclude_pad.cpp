// AvgPool2d, NHWC, kernel KxK, stride, padding, count_include_pad = false
// (divisor = number of in-image taps). Vectorised over channels with AVX2, 8 per ymm;
// the channel tail uses _mm256_maskload_ps / _mm256_maskstore_ps with an integer lane mask.
#include <immintrin.h>

static inline __m256i lane_mask(int rem) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(rem), iota);  // lane i active if i < rem
}

extern "C" void avgpool2d_nhwc(const float* in, float* out, int N, int H, int W, int C,
                               int K, int stride, int pad) {
  const int OH = (H + 2 * pad - K) / stride + 1;
  const int OW = (W + 2 * pad - K) / stride + 1;
#pragma omp parallel for collapse(3) schedule(static)
  for (int n = 0; n < N; ++n)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        int h0 = oh * stride - pad, w0 = ow * stride - pad;
        int h1 = h0 + K < H ? h0 + K : H, w1 = w0 + K < W ? w0 + K : W;
        if (h0 < 0) h0 = 0;
        if (w0 < 0) w0 = 0;
        const int cnt = (h1 - h0) * (w1 - w0);
        const __m256 vinv = _mm256_set1_ps(1.0f / (float)cnt);
        float* o = out + (((size_t)n * OH + oh) * OW + ow) * C;
        int c = 0;
        for (; c + 8 <= C; c += 8) {
          __m256 acc = _mm256_setzero_ps();
          for (int ih = h0; ih < h1; ++ih)
            for (int iw = w0; iw < w1; ++iw)
              acc = _mm256_add_ps(acc, _mm256_loadu_ps(in + (((size_t)n * H + ih) * W + iw) * C + c));
          _mm256_storeu_ps(o + c, _mm256_mul_ps(acc, vinv));
        }
        if (c < C) {
          const __m256i m = lane_mask(C - c);
          __m256 acc = _mm256_setzero_ps();
          for (int ih = h0; ih < h1; ++ih)
            for (int iw = w0; iw < w1; ++iw)
              acc = _mm256_add_ps(acc, _mm256_maskload_ps(in + (((size_t)n * H + ih) * W + iw) * C + c, m));
          _mm256_maskstore_ps(o + c, m, _mm256_mul_ps(acc, vinv));
        }
      }
}
