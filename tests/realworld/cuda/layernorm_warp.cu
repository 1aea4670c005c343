// LayerNorm forward, one warp per row (llm.c layernorm_forward_kernel3 style): two-pass
// mean / variance with __shfl_down_sync reductions broadcast by __shfl_sync, rsqrtf.
#include <cuda_runtime.h>

__device__ __forceinline__ float warpReduceSum(float v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  return __shfl_sync(0xffffffffu, v, 0);
}

__global__ void layernorm_forward_kernel(float* __restrict__ out, const float* __restrict__ inp,
                                         const float* __restrict__ weight, const float* __restrict__ bias,
                                         int N, int C) {
  int lane = threadIdx.x & 31;
  int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (row >= N) return;
  const float* x = inp + row * C;
  float sum = 0.0f;
  for (int i = lane; i < C; i += 32) sum += x[i];
  float m = warpReduceSum(sum) / C;
  float sq = 0.0f;
  for (int i = lane; i < C; i += 32) {
    float d = x[i] - m;
    sq += d * d;
  }
  float s = rsqrtf(warpReduceSum(sq) / C + 1e-5f);
  float* o = out + row * C;
  for (int c = lane; c < C; c += 32) {
    float n = s * (__ldg(x + c) - m);
    o[c] = n * __ldg(weight + c) + __ldg(bias + c);
  }
}

extern "C" void layernorm_forward(const float* inp, const float* weight, const float* bias, float* out,
                                  int N, int C) {
  float *d_inp, *d_w, *d_b, *d_out;
  cudaMalloc(&d_inp, N * C * sizeof(float));
  cudaMalloc(&d_w, C * sizeof(float));
  cudaMalloc(&d_b, C * sizeof(float));
  cudaMalloc(&d_out, N * C * sizeof(float));
  cudaMemcpy(d_inp, inp, N * C * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_w, weight, C * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_b, bias, C * sizeof(float), cudaMemcpyHostToDevice);
  const int block_size = 256;
  const int grid_size = (N * 32 + block_size - 1) / block_size;
  layernorm_forward_kernel<<<grid_size, block_size>>>(d_out, d_inp, d_w, d_b, N, C);
  cudaMemcpy(out, d_out, N * C * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_inp); cudaFree(d_w); cudaFree(d_b); cudaFree(d_out);
}
