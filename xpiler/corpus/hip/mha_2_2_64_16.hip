#include <cfloat>
#include <hip/hip_runtime.h>

typedef float floatx4 __attribute__((ext_vector_type(4)));

#define SEQ 64
#define HEAD_DIM 16

// Q, K, V, O: [B * H, SEQ, HEAD_DIM] float. Grid (SEQ / 16, B * H), block = one wavefront (64).
__global__ void __launch_bounds__(64) mha_mfma_kernel(const float* __restrict__ Q, const float* __restrict__ K,
                                                      const float* __restrict__ V, float* __restrict__ O, float scale) {
  __shared__ float p_lds[16][SEQ + 1];
  const int lane = threadIdx.x;
  const int bh = blockIdx.y;
  const int q0 = blockIdx.x * 16;
  const float* q = Q + ((size_t)bh * SEQ + q0) * HEAD_DIM;
  const float* k = K + (size_t)bh * SEQ * HEAD_DIM;
  const float* v = V + (size_t)bh * SEQ * HEAD_DIM;

  for (int n0 = 0; n0 < SEQ; n0 += 16) {
    floatx4 s = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int kk = 0; kk < HEAD_DIM; kk += 4) {
      const float a = q[(lane % 16) * HEAD_DIM + kk + lane / 16];
      const float b = k[(n0 + lane % 16) * HEAD_DIM + kk + lane / 16];  // (K^T)[kk + lane/16][n0 + lane%16]
      s = __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, s, 0, 0, 0);
    }
    for (int i = 0; i < 4; ++i) p_lds[4 * (lane / 16) + i][n0 + lane % 16] = s[i] * scale;
  }
  __syncthreads();

  const int r = lane % 16;
  const int part = lane / 16;
  float m = -FLT_MAX;
  for (int j = part; j < SEQ; j += 4) m = fmaxf(m, p_lds[r][j]);
  m = fmaxf(m, __shfl_xor(m, 16));
  m = fmaxf(m, __shfl_xor(m, 32));
  float sum = 0.0f;
  for (int j = part; j < SEQ; j += 4) {
    const float e = expf(p_lds[r][j] - m);
    p_lds[r][j] = e;
    sum += e;
  }
  sum += __shfl_xor(sum, 16);
  sum += __shfl_xor(sum, 32);
  const float inv = 1.0f / sum;
  for (int j = part; j < SEQ; j += 4) p_lds[r][j] *= inv;
  __syncthreads();

  for (int d0 = 0; d0 < HEAD_DIM; d0 += 16) {
    floatx4 o = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int n = 0; n < SEQ; n += 4) {
      o = __builtin_amdgcn_mfma_f32_16x16x4f32(p_lds[lane % 16][n + lane / 16],
                                               v[(n + lane / 16) * HEAD_DIM + d0 + lane % 16], o, 0, 0, 0);
    }
    for (int i = 0; i < 4; ++i) {
      O[((size_t)bh * SEQ + q0 + 4 * (lane / 16) + i) * HEAD_DIM + d0 + lane % 16] = o[i];
    }
  }
}

extern "C" void mha_kernel(float* Q, float* K, float* V, float* out, int batch, int heads) {
  float* d_Q;
  float* d_K;
  float* d_V;
  float* d_out;
  hipMalloc((void**)&d_Q, (batch * heads * SEQ * HEAD_DIM) * sizeof(float));
  hipMalloc((void**)&d_K, (batch * heads * SEQ * HEAD_DIM) * sizeof(float));
  hipMalloc((void**)&d_V, (batch * heads * SEQ * HEAD_DIM) * sizeof(float));
  hipMalloc((void**)&d_out, (batch * heads * SEQ * HEAD_DIM) * sizeof(float));
  hipMemcpy(d_Q, Q, (batch * heads * SEQ * HEAD_DIM) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_K, K, (batch * heads * SEQ * HEAD_DIM) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_V, V, (batch * heads * SEQ * HEAD_DIM) * sizeof(float), hipMemcpyHostToDevice);
  const float scale = 1.0f / sqrtf((float)HEAD_DIM);
  hipLaunchKernelGGL(mha_mfma_kernel, dim3(SEQ / 16, batch * heads), dim3(64), 0, 0, d_Q, d_K, d_V, d_out, scale);
  hipMemcpy(out, d_out, (batch * heads * SEQ * HEAD_DIM) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_Q);
  hipFree(d_K);
  hipFree(d_V);
  hipFree(d_out);
}
