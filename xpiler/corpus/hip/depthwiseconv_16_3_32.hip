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

extern "C" void depthwiseconv_kernel(float* x, float* w, float* out, int H, int K, int C) {
  float* d_x;
  float* d_w;
  float* d_out;
  hipMalloc((void**)&d_x, (H * H * C) * sizeof(float));
  hipMalloc((void**)&d_w, (K * K * C) * sizeof(float));
  hipMalloc((void**)&d_out, ((H - K + 1) * (H - K + 1) * C) * sizeof(float));
  hipMemcpy(d_x, x, (H * H * C) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_w, w, (K * K * C) * sizeof(float), hipMemcpyHostToDevice);
  const int O = H - K + 1;
  hipLaunchKernelGGL(depthwise_hwc, dim3(O, O), dim3(C), 0, 0, d_x, d_w, d_out, H, K, C);
  hipMemcpy(out, d_out, ((H - K + 1) * (H - K + 1) * C) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_w);
  hipFree(d_out);
}
