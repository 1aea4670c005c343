#include <cfloat>
#include <hip/hip_runtime.h>

#define NUM_KEYS 32
#define HEAD_DIM 64
#define BLOCK 256

__global__ void __launch_bounds__(BLOCK) gqa_wave_kernel(const float* __restrict__ Q, const float* __restrict__ K,
                                                             const float* __restrict__ V, float* __restrict__ out,
                                                             int heads, int kv_heads, int M, float scale) {
  __shared__ float p_lds[BLOCK / 32][NUM_KEYS];  // one row per wavefront (wave32 or wave64)
  const int b = blockIdx.y;
  const int h = blockIdx.x;
  const int g = h / (heads / kv_heads);
  const int wave = threadIdx.x / warpSize;
  const int lane = threadIdx.x % warpSize;
  const int waves = blockDim.x / warpSize;
  const float* kg = K + (size_t)(b * kv_heads + g) * NUM_KEYS * HEAD_DIM;
  const float* vg = V + (size_t)(b * kv_heads + g) * NUM_KEYS * HEAD_DIM;
  // all waves run the same number of iterations, so the barriers below stay block-uniform
  for (int m0 = 0; m0 < M; m0 += waves) {
    const int m = m0 + wave;
    const bool active = m < M;
    const float* qr = Q + ((size_t)(b * heads + h) * M + (active ? m : 0)) * HEAD_DIM;
    float mx = -FLT_MAX;
    for (int j = lane; j < NUM_KEYS; j += warpSize) {
      float s = 0.0f;
      for (int d = 0; d < HEAD_DIM; ++d) s += qr[d] * kg[j * HEAD_DIM + d];
      s *= scale;
      p_lds[wave][j] = s;
      mx = fmaxf(mx, s);
    }
    for (int mask = warpSize / 2; mask > 0; mask >>= 1) mx = fmaxf(mx, __shfl_xor(mx, mask));
    float sum = 0.0f;
    for (int j = lane; j < NUM_KEYS; j += warpSize) {
      const float e = expf(p_lds[wave][j] - mx);
      p_lds[wave][j] = e;
      sum += e;
    }
    for (int mask = warpSize / 2; mask > 0; mask >>= 1) sum += __shfl_xor(sum, mask);
    __syncthreads();
    if (active) {
      for (int d = lane; d < HEAD_DIM; d += warpSize) {
        float acc = 0.0f;
        for (int j = 0; j < NUM_KEYS; ++j) acc += p_lds[wave][j] * vg[j * HEAD_DIM + d];
        out[((size_t)(b * heads + h) * M + m) * HEAD_DIM + d] = acc / sum;
      }
    }
    __syncthreads();
  }
}

extern "C" void gqa_kernel(float* Q, float* K, float* V, float* out, int batch, int heads, int kv_heads, int M) {
  float* d_Q;
  float* d_K;
  float* d_V;
  float* d_out;
  hipMalloc((void**)&d_Q, (batch * heads * M * HEAD_DIM) * sizeof(float));
  hipMalloc((void**)&d_K, (batch * kv_heads * NUM_KEYS * HEAD_DIM) * sizeof(float));
  hipMalloc((void**)&d_V, (batch * kv_heads * NUM_KEYS * HEAD_DIM) * sizeof(float));
  hipMalloc((void**)&d_out, (batch * heads * M * HEAD_DIM) * sizeof(float));
  hipMemcpy(d_Q, Q, (batch * heads * M * HEAD_DIM) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_K, K, (batch * kv_heads * NUM_KEYS * HEAD_DIM) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_V, V, (batch * kv_heads * NUM_KEYS * HEAD_DIM) * sizeof(float), hipMemcpyHostToDevice);
  const float scale = 1.0f / sqrtf((float)HEAD_DIM);
  hipLaunchKernelGGL(gqa_wave_kernel, dim3(heads, batch), dim3(BLOCK), 0, 0,
                     d_Q, d_K, d_V, d_out, heads, kv_heads, M, scale);
  hipMemcpy(out, d_out, (batch * heads * M * HEAD_DIM) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_Q);
  hipFree(d_K);
  hipFree(d_V);
  hipFree(d_out);
}
