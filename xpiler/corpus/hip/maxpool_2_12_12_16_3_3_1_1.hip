#include <cfloat>
#include <hip/hip_runtime.h>

__global__ void max_pool2d_nhwc(const float* __restrict__ in, float* __restrict__ out, int N, int H, int W, int C,
                    int KH, int KW, int SH, int SW, int OH, int OW) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= N * OH * OW * C) return;
  const int c = idx % C;
  const int ow = (idx / C) % OW;
  const int oh = (idx / (C * OW)) % OH;
  const int n = idx / (C * OW * OH);
  float acc = -FLT_MAX;
  for (int kh = 0; kh < KH; ++kh) {
    for (int kw = 0; kw < KW; ++kw) {
      const float v = in[((n * H + oh * SH + kh) * W + ow * SW + kw) * C + c];
      acc = fmaxf(acc, v);
    }
  }
  out[idx] = acc;
}

extern "C" void maxpool_kernel(float* x, float* out, int N, int H, int W, int C, int KH, int KW, int SH, int SW) {
  const int OH = (H - KH) / SH + 1;
  const int OW = (W - KW) / SW + 1;
  float* d_x;
  float* d_out;
  hipMalloc((void**)&d_x, (N * H * W * C) * sizeof(float));
  hipMalloc((void**)&d_out, (N * OH * OW * C) * sizeof(float));
  hipMemcpy(d_x, x, (N * H * W * C) * sizeof(float), hipMemcpyHostToDevice);
  const int total = N * OH * OW * C;
  max_pool2d_nhwc<<<(total + 255) / 256, 256>>>(d_x, d_out, N, H, W, C, KH, KW, SH, SW, OH, OW);
  hipMemcpy(out, d_out, (N * OH * OW * C) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_out);
}
