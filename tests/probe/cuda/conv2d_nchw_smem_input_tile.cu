// conv2d NCHW, stride 1, zero padding `pad`, square-or-not kernel R x S (R, S <= 7), bias.
//   in[N,C,H,W], w[KO,C,R,S], bias[KO] -> out[N,KO,OH,OW], OH = H + 2*pad - R + 1.
// Each 16x16 thread block computes a 16x16 output tile for one (n, ko). For every input channel
// the block cooperatively stages the (16+R-1) x (16+S-1) input patch (halo included, zeros outside
// the image) and the R*S filter taps of that channel in shared memory.
// Limits: R, S <= MAXK (7); N*KO <= 65535 (grid.z).
#include <cuda_runtime.h>

#define TW 16
#define MAXK 7
#define PATCH (TW + MAXK - 1)

__global__ void conv2d_nchw_tile_kernel(const float* __restrict__ in, const float* __restrict__ w,
                                        const float* __restrict__ bias, float* __restrict__ out,
                                        int C, int H, int W, int KO, int R, int S, int pad,
                                        int OH, int OW) {
  __shared__ float patch[PATCH][PATCH + 1];
  __shared__ float wt[MAXK * MAXK];
  const int n = blockIdx.z / KO;
  const int ko = blockIdx.z % KO;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int tid = ty * TW + tx;
  const int oh0 = blockIdx.y * TW, ow0 = blockIdx.x * TW;
  const int ph = TW + R - 1, pw = TW + S - 1;
  float acc = 0.0f;
  for (int c = 0; c < C; ++c) {
    const float* ip = in + ((size_t)n * C + c) * H * W;
    for (int i = tid; i < ph * pw; i += TW * TW) {
      const int py = i / pw, px = i % pw;
      const int ih = oh0 + py - pad, iw = ow0 + px - pad;
      patch[py][px] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? ip[(size_t)ih * W + iw] : 0.0f;
    }
    if (tid < R * S) wt[tid] = w[((size_t)ko * C + c) * R * S + tid];
    __syncthreads();
    for (int r = 0; r < R; ++r)
      for (int s = 0; s < S; ++s) acc = fmaf(patch[ty + r][tx + s], wt[r * S + s], acc);
    __syncthreads();
  }
  const int oh = oh0 + ty, ow = ow0 + tx;
  if (oh < OH && ow < OW) out[(((size_t)n * KO + ko) * OH + oh) * OW + ow] = acc + bias[ko];
}

extern "C" void conv2d_nchw_smem(const float* in, const float* w, const float* bias, float* out,
                                 int N, int C, int H, int W, int KO, int R, int S, int pad) {
  const int OH = H + 2 * pad - R + 1;
  const int OW = W + 2 * pad - S + 1;
  const size_t szIn = (size_t)N * C * H * W * sizeof(float);
  const size_t szW = (size_t)KO * C * R * S * sizeof(float);
  const size_t szB = (size_t)KO * sizeof(float);
  const size_t szOut = (size_t)N * KO * OH * OW * sizeof(float);
  float *dIn, *dW, *dB, *dOut;
  cudaMalloc(&dIn, szIn);
  cudaMalloc(&dW, szW);
  cudaMalloc(&dB, szB);
  cudaMalloc(&dOut, szOut);
  cudaMemcpy(dIn, in, szIn, cudaMemcpyHostToDevice);
  cudaMemcpy(dW, w, szW, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, bias, szB, cudaMemcpyHostToDevice);
  dim3 block(TW, TW);
  dim3 grid((OW + TW - 1) / TW, (OH + TW - 1) / TW, N * KO);
  conv2d_nchw_tile_kernel<<<grid, block>>>(dIn, dW, dB, dOut, C, H, W, KO, R, S, pad, OH, OW);
  cudaMemcpy(out, dOut, szOut, cudaMemcpyDeviceToHost);
  cudaFree(dIn);
  cudaFree(dW);
  cudaFree(dB);
  cudaFree(dOut);
}
