// Depthwise conv2d, NCHW, groups = C, channel multiplier `mult` (out channels = C * mult,
// out channel oc reads input channel oc / mult), stride, zero padding, bias, optional dilation.
//   w[C*mult, 1, R, S], bias[C*mult] -> out[N, C*mult, OH, OW]
// One thread per output element; 2-D grid: x over OH*OW, y over N*C*mult.
// Limit: N*C*mult <= 65535 (grid.y).
#include <cuda_runtime.h>

__global__ void depthwise_conv2d_nchw_kernel(const float* __restrict__ in, const float* __restrict__ w,
                                             const float* __restrict__ bias, float* __restrict__ out,
                                             int C, int H, int W, int mult, int R, int S,
                                             int stride, int pad, int dil, int OH, int OW) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= OH * OW) return;
  const int plane = blockIdx.y;  // n * (C*mult) + oc
  const int CO = C * mult;
  const int n = plane / CO, oc = plane % CO, ic = oc / mult;
  const int oh = p / OW, ow = p % OW;
  const float* ip = in + ((size_t)n * C + ic) * H * W;
  const float* wp = w + (size_t)oc * R * S;
  float acc = bias[oc];
  for (int r = 0; r < R; ++r) {
    const int ih = oh * stride - pad + r * dil;
    if (ih < 0 || ih >= H) continue;
    for (int s = 0; s < S; ++s) {
      const int iw = ow * stride - pad + s * dil;
      if (iw < 0 || iw >= W) continue;
      acc = fmaf(ip[(size_t)ih * W + iw], wp[r * S + s], acc);
    }
  }
  out[(size_t)plane * OH * OW + p] = acc;
}

extern "C" void depthwise_conv2d_nchw(const float* in, const float* w, const float* bias, float* out,
                                      int N, int C, int H, int W, int mult, int R, int S,
                                      int stride, int pad, int dil) {
  const int OH = (H + 2 * pad - dil * (R - 1) - 1) / stride + 1;
  const int OW = (W + 2 * pad - dil * (S - 1) - 1) / stride + 1;
  const int CO = C * mult;
  const size_t bIn = (size_t)N * C * H * W * sizeof(float);
  const size_t bW = (size_t)CO * R * S * sizeof(float);
  const size_t bB = (size_t)CO * sizeof(float);
  const size_t bOut = (size_t)N * CO * OH * OW * sizeof(float);
  float *dIn, *dW, *dB, *dOut;
  cudaMalloc(&dIn, bIn);
  cudaMalloc(&dW, bW);
  cudaMalloc(&dB, bB);
  cudaMalloc(&dOut, bOut);
  cudaMemcpy(dIn, in, bIn, cudaMemcpyHostToDevice);
  cudaMemcpy(dW, w, bW, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, bias, bB, cudaMemcpyHostToDevice);
  const int threads = 128;
  dim3 grid((OH * OW + threads - 1) / threads, N * CO);
  depthwise_conv2d_nchw_kernel<<<grid, threads>>>(dIn, dW, dB, dOut, C, H, W, mult, R, S, stride, pad, dil, OH, OW);
  cudaMemcpy(out, dOut, bOut, cudaMemcpyDeviceToHost);
  cudaFree(dIn);
  cudaFree(dW);
  cudaFree(dB);
  cudaFree(dOut);
}
