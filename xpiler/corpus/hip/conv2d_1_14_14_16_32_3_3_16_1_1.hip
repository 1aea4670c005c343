#include <hip/hip_runtime.h>

typedef struct {
  int N, H, W, C, OC, KH, KW, IC, stride, pad, OH, OW;
} ConvParams;

// output[n][oh][ow][oc] = sum_{kh,kw,ic} input[n][ih][iw][g*IC + ic] * weight[oc][kh][kw][ic], g = oc / (OC / groups)
__global__ void conv2d_nhwc_direct(const float* __restrict__ input, const float* __restrict__ weight,
                                   float* __restrict__ output, ConvParams p) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  const int total = p.N * p.OH * p.OW * p.OC;
  if (idx >= total) return;
  const int oc = idx % p.OC;
  const int ow = (idx / p.OC) % p.OW;
  const int oh = (idx / (p.OC * p.OW)) % p.OH;
  const int n = idx / (p.OC * p.OW * p.OH);
  const int groups = p.C / p.IC;
  const int g = oc / (p.OC / groups);
  const float* wp = weight + (size_t)oc * p.KH * p.KW * p.IC;
  float acc = 0.0f;
  for (int kh = 0; kh < p.KH; ++kh) {
    const int ih = oh * p.stride - p.pad + kh;
    if (ih < 0 || ih >= p.H) continue;
    for (int kw = 0; kw < p.KW; ++kw) {
      const int iw = ow * p.stride - p.pad + kw;
      if (iw < 0 || iw >= p.W) continue;
      const float* ip = input + (((size_t)n * p.H + ih) * p.W + iw) * p.C + g * p.IC;
      const float* wk = wp + (kh * p.KW + kw) * p.IC;
      for (int ic = 0; ic < p.IC; ++ic) acc += ip[ic] * wk[ic];
    }
  }
  output[idx] = acc;
}

extern "C" void conv2d_kernel(float* input, float* weight, float* output, int N, int H, int W, int C, int OC, int KH, int KW, int IC, int stride, int pad) {
  const int OH = (H + 2 * pad - KH) / stride + 1;
  const int OW = (W + 2 * pad - KW) / stride + 1;
  float* d_input;
  float* d_weight;
  float* d_output;
  hipMalloc((void**)&d_input, (N * H * W * C) * sizeof(float));
  hipMalloc((void**)&d_weight, (OC * KH * KW * IC) * sizeof(float));
  hipMalloc((void**)&d_output, (N * OH * OW * OC) * sizeof(float));
  hipMemcpy(d_input, input, (N * H * W * C) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_weight, weight, (OC * KH * KW * IC) * sizeof(float), hipMemcpyHostToDevice);
  ConvParams p;
  p.N = N; p.H = H; p.W = W; p.C = C; p.OC = OC; p.KH = KH; p.KW = KW; p.IC = IC;
  p.stride = stride; p.pad = pad; p.OH = OH; p.OW = OW;
  const int total = N * OH * OW * OC;
  hipLaunchKernelGGL(conv2d_nhwc_direct, dim3((total + 255) / 256), dim3(256), 0, 0, d_input, d_weight, d_output, p);
  hipMemcpy(output, d_output, (N * OH * OW * OC) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_input);
  hipFree(d_weight);
  hipFree(d_output);
}
