#include <cfloat>
#include <hip/hip_runtime.h>

// grid (OW, OH, N), block C threads: out[n][oh][ow][c] = min over the KH x KW window
__global__ void min_pool2d_nhwc(const float* __restrict__ in, float* __restrict__ out, int H, int W, int C,
                    int KH, int KW, int SH, int SW) {
  const int c = threadIdx.x;
  const int ow = blockIdx.x, oh = blockIdx.y, n = blockIdx.z;
  const int OW = gridDim.x, OH = gridDim.y;
  float acc = FLT_MAX;
  for (int kh = 0; kh < KH; ++kh) {
    for (int kw = 0; kw < KW; ++kw) {
      const float v = in[(((size_t)n * H + oh * SH + kh) * W + ow * SW + kw) * C + c];
      acc = fminf(acc, v);
    }
  }
  out[(((size_t)n * OH + oh) * OW + ow) * C + c] = acc;
}

extern "C" void minpool_kernel(float* x, float* out, int N, int H, int W, int C, int KH, int KW, int SH, int SW) {
  const int OH = (H - KH) / SH + 1;
  const int OW = (W - KW) / SW + 1;
  float* d_x;
  float* d_out;
  hipMalloc((void**)&d_x, (N * H * W * C) * sizeof(float));
  hipMalloc((void**)&d_out, (N * OH * OW * C) * sizeof(float));
  hipMemcpy(d_x, x, (N * H * W * C) * sizeof(float), hipMemcpyHostToDevice);
  dim3 grid(OW, OH, N);
  hipLaunchKernelGGL(min_pool2d_nhwc, grid, dim3(C), 0, 0, d_x, d_out, H, W, C, KH, KW, SH, SW);
  hipMemcpy(out, d_out, (N * OH * OW * C) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_out);
}
