#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(64) default_function_kernel(float* __restrict__ data, float* __restrict__ kernel, float* __restrict__ DepthwiseConv2d) {
  float DepthwiseConv2d_local[1];
  DepthwiseConv2d_local[0] = 0.000000e+00f;
  for (int di = 0; di < 5; ++di) {
    for (int dj = 0; dj < 5; ++dj) {
      DepthwiseConv2d_local[0] = (DepthwiseConv2d_local[0] + (data[(((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) / 96) + di) * 160) + ((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 96) / 16) + dj) * 16)) + (((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 16))] * kernel[(((di * 80) + (dj * 16)) + (((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 16))]));
    }
  }
  DepthwiseConv2d[((((int)blockIdx.x) * 64) + ((int)threadIdx.x))] = DepthwiseConv2d_local[0];
}

extern "C" void depthwiseconv_kernel(float* x, float* w, float* out, int H, int K, int C) {
  float* d_x;
  float* d_w;
  float* d_out;
  cudaMalloc(&d_x, (H * H * C) * sizeof(float));
  cudaMalloc(&d_w, (K * K * C) * sizeof(float));
  cudaMalloc(&d_out, ((H - K + 1) * (H - K + 1) * C) * sizeof(float));
  cudaMemcpy(d_x, x, (H * H * C) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_w, w, (K * K * C) * sizeof(float), cudaMemcpyHostToDevice);
  int out_size = (H - K + 1) * (H - K + 1) * C;
  default_function_kernel<<<(out_size + 63) / 64, 64>>>(d_x, d_w, d_out);
  cudaMemcpy(out, d_out, ((H - K + 1) * (H - K + 1) * C) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_w);
  cudaFree(d_out);
}
