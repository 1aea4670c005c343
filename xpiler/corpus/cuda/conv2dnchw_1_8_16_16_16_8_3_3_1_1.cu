#include <cuda_runtime.h>

// output[n][oc][oh][ow] = sum_{ic,kh,kw} input[n][ic][oh*stride-pad+kh][ow*stride-pad+kw] * weight[oc][ic][kh][kw]
__global__ void conv2d_nchw_kernel(const float* __restrict__ input, const float* __restrict__ weight,
                                   float* __restrict__ output, int C, int H, int W, int OC, int KH, int KW,
                                   int stride, int pad, int OH, int OW) {
  extern __shared__ float w_s[];
  const int oc = blockIdx.x;
  const int n = blockIdx.y;
  const int filter_size = C * KH * KW;
  for (int i = threadIdx.x; i < filter_size; i += blockDim.x) {
    w_s[i] = weight[oc * filter_size + i];
  }
  __syncthreads();
  const int oh = threadIdx.x / OW;
  const int ow = threadIdx.x % OW;
  if (oh >= OH) return;
  float acc = 0.0f;
  for (int ic = 0; ic < C; ++ic) {
    const float* in_c = input + ((size_t)n * C + ic) * H * W;
    for (int kh = 0; kh < KH; ++kh) {
      const int ih = oh * stride - pad + kh;
      if (ih < 0 || ih >= H) continue;
      for (int kw = 0; kw < KW; ++kw) {
        const int iw = ow * stride - pad + kw;
        if (iw < 0 || iw >= W) continue;
        acc += in_c[ih * W + iw] * w_s[(ic * KH + kh) * KW + kw];
      }
    }
  }
  output[(((size_t)n * OC + oc) * OH + oh) * OW + ow] = acc;
}

extern "C" void conv2dnchw_kernel(float* input, float* weight, float* output, int N, int C, int H, int W, int OC, int KH, int KW, int stride, int pad) {
  const int OH = (H + 2 * pad - KH) / stride + 1;
  const int OW = (W + 2 * pad - KW) / stride + 1;
  float* d_input;
  float* d_weight;
  float* d_output;
  cudaMalloc(&d_input, (N * C * H * W) * sizeof(float));
  cudaMalloc(&d_weight, (OC * C * KH * KW) * sizeof(float));
  cudaMalloc(&d_output, (N * OC * OH * OW) * sizeof(float));
  cudaMemcpy(d_input, input, (N * C * H * W) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_weight, weight, (OC * C * KH * KW) * sizeof(float), cudaMemcpyHostToDevice);
  dim3 grid(OC, N);
  dim3 block(OH * OW);
  size_t smem = C * KH * KW * sizeof(float);
  conv2d_nchw_kernel<<<grid, block, smem>>>(d_input, d_weight, d_output, C, H, W, OC, KH, KW,
                                            stride, pad, OH, OW);
  cudaMemcpy(output, d_output, (N * OC * OH * OW) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_input);
  cudaFree(d_weight);
  cudaFree(d_output);
}
