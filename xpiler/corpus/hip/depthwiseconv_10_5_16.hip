#include <hip/hip_runtime.h>

// out[i][j][c] = sum_{p,q} x[i+p][j+q][c] * w[p][q][c]
__global__ void depthwise_hwc(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ out,
                              int H, int K, int C) {
  const int c = threadIdx.x;
  const int j = blockIdx.x;
  const int i = blockIdx.y;
  const int O = H - K + 1;
  if (c >= C) return;
  float acc = 0.0f;
  for (int p = 0; p < K; ++p) {
    for (int q = 0; q < K; ++q) {
      acc += x[((i + p) * H + (j + q)) * C + c] * w[(p * K + q) * C + c];
    }
  }
  out[(i * O + j) * C + c] = acc;
}
