#include <cfloat>
#include <cuda_runtime.h>

// avg pooling, NHWC, no padding; out[n][oh][ow][c]
__global__ void avgpool2d_nhwc(const float* __restrict__ in, float* __restrict__ out,
                                 int H, int W, int C, int KH, int KW, int SH, int SW, int OH, int OW) {
  const int c = threadIdx.x;
  const int ow = threadIdx.y;
  const int oh = blockIdx.x;
  const int n = blockIdx.y;
  const float* base = in + ((size_t)n * H * W) * C + c;
  float acc = 0.0f;
  for (int kh = 0; kh < KH; ++kh) {
    const int ih = oh * SH + kh;
    for (int kw = 0; kw < KW; ++kw) {
      const int iw = ow * SW + kw;
      const float v = base[(ih * W + iw) * C];
      acc += v;
    }
  }
  out[(((size_t)n * OH + oh) * OW + ow) * C + c] = acc / (KH * KW);
}

extern "C" void avgpool_kernel(float* x, float* out, int N, int H, int W, int C, int KH, int KW, int SH, int SW) {
  const int OH = (H - KH) / SH + 1;
  const int OW = (W - KW) / SW + 1;
  float* d_x;
  float* d_out;
  cudaMalloc(&d_x, (N * H * W * C) * sizeof(float));
  cudaMalloc(&d_out, (N * OH * OW * C) * sizeof(float));
  cudaMemcpy(d_x, x, (N * H * W * C) * sizeof(float), cudaMemcpyHostToDevice);
  dim3 b(C, OW);
  dim3 g(OH, N);
  avgpool2d_nhwc<<<g, b>>>(d_x, d_out, H, W, C, KH, KW, SH, SW, OH, OW);
  cudaMemcpy(out, d_out, (N * OH * OW * C) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_out);
}
