// 1-D valid correlation with the filter in __constant__ memory, uploaded with
// cudaMemcpyToSymbol (the CUDA samples convolutionSeparable idea in 1-D); std::min in the launcher.
#include <cuda_runtime.h>
#include <algorithm>

#define KERNEL_RADIUS 3
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)

__constant__ float c_Kernel[KERNEL_LENGTH];

__global__ void convolution1D(float* __restrict__ d_Dst, const float* __restrict__ d_Src, int outLen) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= outLen) return;
  float sum = 0;
#pragma unroll
  for (int k = 0; k < KERNEL_LENGTH; k++) sum += d_Src[i + k] * c_Kernel[k];
  d_Dst[i] = sum;
}

extern "C" void conv1d(const float* h_Src, const float* h_Kernel, float* h_Dst, int outLen) {
  float *d_Src, *d_Dst;
  const int inLen = outLen + KERNEL_LENGTH - 1;
  cudaMalloc((void**)&d_Src, inLen * sizeof(float));
  cudaMalloc((void**)&d_Dst, outLen * sizeof(float));
  cudaMemcpy(d_Src, h_Src, inLen * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpyToSymbol(c_Kernel, h_Kernel, KERNEL_LENGTH * sizeof(float));
  const int threads = std::min(128, outLen);
  convolution1D<<<(outLen + threads - 1) / threads, threads>>>(d_Dst, d_Src, outLen);
  cudaMemcpy(h_Dst, d_Dst, outLen * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_Src);
  cudaFree(d_Dst);
}
