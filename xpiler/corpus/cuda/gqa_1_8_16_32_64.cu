#include <cuda_runtime.h>

#include <math.h>

#define NUM_KEYS 64
#define HEAD_DIM 32
#define KV_PITCH (HEAD_DIM + 1)
#define WARPS 4

// Q, out: [B, H, M, HEAD_DIM]; K, V: [B, G, NUM_KEYS, HEAD_DIM]; query head h reads kv head h / (H / G).
__global__ void __launch_bounds__(WARPS * 32) gqa_kernel_dev(const float* __restrict__ Q, const float* __restrict__ K,
                                                             const float* __restrict__ V, float* __restrict__ out,
                                                             int H, int G, int M, float scale) {
  __shared__ float k_s[NUM_KEYS * KV_PITCH];
  __shared__ float v_s[NUM_KEYS * KV_PITCH];
  __shared__ float q_s[WARPS][HEAD_DIM];
  __shared__ float p_s[WARPS][NUM_KEYS];
  const int b = blockIdx.y;
  const int h = blockIdx.x;
  const int g = h / (H / G);
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const float* kg = K + ((size_t)(b * G + g) * NUM_KEYS) * HEAD_DIM;
  const float* vg = V + ((size_t)(b * G + g) * NUM_KEYS) * HEAD_DIM;
  for (int i = threadIdx.x; i < NUM_KEYS * HEAD_DIM; i += blockDim.x) {
    const int r = i / HEAD_DIM;
    const int c = i % HEAD_DIM;
    k_s[r * KV_PITCH + c] = kg[i];
    v_s[r * KV_PITCH + c] = vg[i];
  }
  __syncthreads();

  for (int m = warp; m < M; m += WARPS) {
    const float* qr = Q + ((size_t)(b * H + h) * M + m) * HEAD_DIM;
    for (int d = lane; d < HEAD_DIM; d += 32) q_s[warp][d] = qr[d] * scale;
    __syncwarp();
    float mx = -INFINITY;
    for (int j = lane; j < NUM_KEYS; j += 32) {
      float s = 0.0f;
      for (int d = 0; d < HEAD_DIM; ++d) s += q_s[warp][d] * k_s[j * KV_PITCH + d];
      p_s[warp][j] = s;
      mx = fmaxf(mx, s);
    }
    for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, off));
    float sum = 0.0f;
    for (int j = lane; j < NUM_KEYS; j += 32) {
      const float e = expf(p_s[warp][j] - mx);
      p_s[warp][j] = e;
      sum += e;
    }
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffff, sum, off);
    __syncwarp();
    const float inv = 1.0f / sum;
    float* orow = out + ((size_t)(b * H + h) * M + m) * HEAD_DIM;
    for (int d = lane; d < HEAD_DIM; d += 32) {
      float acc = 0.0f;
      for (int j = 0; j < NUM_KEYS; ++j) acc += p_s[warp][j] * v_s[j * KV_PITCH + d];
      orow[d] = acc * inv;
    }
    __syncwarp();
  }
}

extern "C" void gqa_kernel(float* Q, float* K, float* V, float* out, int batch, int heads, int kv_heads, int M) {
  float* d_Q;
  float* d_K;
  float* d_V;
  float* d_out;
  cudaMalloc(&d_Q, (batch * heads * M * HEAD_DIM) * sizeof(float));
  cudaMalloc(&d_K, (batch * kv_heads * NUM_KEYS * HEAD_DIM) * sizeof(float));
  cudaMalloc(&d_V, (batch * kv_heads * NUM_KEYS * HEAD_DIM) * sizeof(float));
  cudaMalloc(&d_out, (batch * heads * M * HEAD_DIM) * sizeof(float));
  cudaMemcpy(d_Q, Q, (batch * heads * M * HEAD_DIM) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_K, K, (batch * kv_heads * NUM_KEYS * HEAD_DIM) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_V, V, (batch * kv_heads * NUM_KEYS * HEAD_DIM) * sizeof(float), cudaMemcpyHostToDevice);
  dim3 grid(heads, batch);
  gqa_kernel_dev<<<grid, WARPS * 32>>>(d_Q, d_K, d_V, d_out, heads, kv_heads, M, 1.767767e-01f);
  cudaMemcpy(out, d_out, (batch * heads * M * HEAD_DIM) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_Q);
  cudaFree(d_K);
  cudaFree(d_V);
  cudaFree(d_out);
}
