// Softmax cross-entropy with integer class targets; one warp per sample,
// __shfl_xor_sync butterfly reductions. Second kernel computes the mean loss
// (ignore_index samples excluded) in a fixed order.
#include <cuda_runtime.h>
#include <cfloat>

#define FULL_MASK 0xffffffffu

__host__ __device__ inline bool valid_target(int t, int C, int ignore_index) {
  return t != ignore_index && t >= 0 && t < C;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, off));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL_MASK, v, off);
  return v;
}

__global__ void ce_per_sample(const float* logits, const int* labels, float* losses,
                              int N, int C, int ignore_index) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x & 31;
  if (warp >= N) return;  // whole warp exits together
  const float* row = logits + (size_t)warp * C;
  float m = -FLT_MAX;
  for (int c = lane; c < C; c += 32) m = fmaxf(m, row[c]);
  m = warp_max(m);
  float s = 0.f;
  for (int c = lane; c < C; c += 32) s += expf(row[c] - m);
  s = warp_sum(s);
  if (lane == 0) {
    int t = labels[warp];
    losses[warp] = valid_target(t, C, ignore_index) ? (logf(s) + m - row[t]) : 0.f;
  }
}

__global__ void ce_mean(const float* losses, const int* labels, float* out, int N, int C,
                        int ignore_index) {
  __shared__ float s_loss[32];
  __shared__ int s_cnt[32];
  float acc = 0.f;
  int cnt = 0;
  for (int i = threadIdx.x; i < N; i += 32) {
    acc += losses[i];
    cnt += valid_target(labels[i], C, ignore_index);
  }
  acc = warp_sum(acc);
  for (int off = 16; off > 0; off >>= 1) cnt += __shfl_xor_sync(FULL_MASK, cnt, off);
  s_loss[threadIdx.x] = acc;
  s_cnt[threadIdx.x] = cnt;
  __syncwarp();
  if (threadIdx.x == 0) out[0] = s_cnt[0] > 0 ? s_loss[0] / s_cnt[0] : 0.f;
}

// out[0..N-1] = per-sample loss, out[N] = mean loss
extern "C" void cross_entropy_forward(const float* logits, const int* labels, float* out,
                                      int N, int C, int ignore_index) {
  float *d_logits, *d_out;
  int* d_labels;
  cudaMalloc(&d_logits, (size_t)N * C * sizeof(float));
  cudaMalloc(&d_labels, N * sizeof(int));
  cudaMalloc(&d_out, (N + 1) * sizeof(float));
  cudaMemcpy(d_logits, logits, (size_t)N * C * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_labels, labels, N * sizeof(int), cudaMemcpyHostToDevice);
  const int threads = 128;  // 4 samples per block
  int blocks = (N * 32 + threads - 1) / threads;
  ce_per_sample<<<blocks, threads>>>(d_logits, d_labels, d_out, N, C, ignore_index);
  ce_mean<<<1, 32>>>(d_out, d_labels, d_out + N, N, C, ignore_index);
  cudaMemcpy(out, d_out, (N + 1) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_logits);
  cudaFree(d_labels);
  cudaFree(d_out);
}
