// conv2d NCHW via im2col + GEMM, plain scalar C++ with OpenMP.
//   in[N,C,H,W], w[KO, C*R*S], bias[KO] -> out[N,KO,OH,OW]; stride, pad, dilation.
// Stage 1: im2col into col[C*R*S, OH*OW] per image (zero for padded taps), collapse(2) over rows.
// Stage 2: GEMM out = w * col + bias, collapse(2) over (ko, output-pixel block).
#include <stdlib.h>

static void im2col_nchw(const float* img, float* col, int C, int H, int W, int R, int S,
                        int stride, int pad, int dil, int OH, int OW) {
  const int rows = C * R * S;
#pragma omp parallel for collapse(2) schedule(static)
  for (int row = 0; row < rows; ++row)
    for (int oh = 0; oh < OH; ++oh) {
      const int c = row / (R * S), r = (row / S) % R, s = row % S;
      const int ih = oh * stride - pad + r * dil;
      float* dst = col + ((size_t)row * OH + oh) * OW;
      for (int ow = 0; ow < OW; ++ow) {
        const int iw = ow * stride - pad + s * dil;
        dst[ow] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? img[((size_t)c * H + ih) * W + iw] : 0.0f;
      }
    }
}

extern "C" void conv2d_im2col_nchw(const float* in, const float* w, const float* bias, float* out,
                                   int N, int C, int H, int W, int KO, int R, int S,
                                   int stride, int pad, int dil) {
  const int OH = (H + 2 * pad - dil * (R - 1) - 1) / stride + 1;
  const int OW = (W + 2 * pad - dil * (S - 1) - 1) / stride + 1;
  const int KK = C * R * S;
  const int P = OH * OW;
  const int PB = 64;
  const int nblk = (P + PB - 1) / PB;
  float* col = (float*)malloc(sizeof(float) * (size_t)KK * (P > 0 ? P : 1));
  for (int n = 0; n < N; ++n) {
    im2col_nchw(in + (size_t)n * C * H * W, col, C, H, W, R, S, stride, pad, dil, OH, OW);
    float* on = out + (size_t)n * KO * P;
#pragma omp parallel for collapse(2) schedule(static)
    for (int ko = 0; ko < KO; ++ko)
      for (int pb = 0; pb < nblk; ++pb) {
        const int p0 = pb * PB, p1 = p0 + PB < P ? p0 + PB : P;
        float acc[PB];
        for (int p = p0; p < p1; ++p) acc[p - p0] = bias[ko];
        for (int k = 0; k < KK; ++k) {
          const float wk = w[(size_t)ko * KK + k];
          const float* cr = col + (size_t)k * P;
          for (int p = p0; p < p1; ++p) acc[p - p0] += wk * cr[p];
        }
        for (int p = p0; p < p1; ++p) on[(size_t)ko * P + p] = acc[p - p0];
      }
  }
  free(col);
}
