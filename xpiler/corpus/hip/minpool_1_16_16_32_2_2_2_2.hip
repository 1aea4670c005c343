#include <cfloat>
#include <hip/hip_runtime.h>

__global__ void min_pool2d_nhwc(const float* __restrict__ in, float* __restrict__ out, int N, int H, int W, int C,
                    int KH, int KW, int SH, int SW, int OH, int OW) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= N * OH * OW * C) return;
  const int c = idx % C;
  const int ow = (idx / C) % OW;
  const int oh = (idx / (C * OW)) % OH;
  const int n = idx / (C * OW * OH);
  float acc = FLT_MAX;
  for (int kh = 0; kh < KH; ++kh) {
    for (int kw = 0; kw < KW; ++kw) {
      const float v = in[((n * H + oh * SH + kh) * W + ow * SW + kw) * C + c];
      acc = fminf(acc, v);
    }
  }
  out[idx] = acc;
}
