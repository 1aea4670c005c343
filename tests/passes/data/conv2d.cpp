// direct conv2d NCHW (stride 1, no padding) + relu helper; batch and out-channel loops fused
static inline float relu(float v) { return v > 0.0f ? v : 0.0f; }
extern "C" void conv2d_kernel(const float* in, const float* w, float* out,
                              int C, int H, int W, int F, int R) {
  int OH = H - R + 1, OW = W - R + 1;
  for (int f = 0; f < F; ++f)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        float acc = 0.0f;
        for (int c = 0; c < C; ++c)
          for (int kh = 0; kh < R; ++kh)
            for (int kw = 0; kw < R; ++kw)
              acc += in[(c * H + oh + kh) * W + ow + kw] * w[((f * C + c) * R + kh) * R + kw];
        out[(f * OH + oh) * OW + ow] = relu(acc);
      }
}
