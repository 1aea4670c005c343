// RMSNorm with the block size as a template parameter, launched through
// hipLaunchKernelGGL(HIP_KERNEL_NAME(...)); wave-level __shfl_xor then LDS across waves,
// __builtin_amdgcn_readfirstlane-free (plain shared broadcast).
#include <hip/hip_runtime.h>

template <int BLOCK>
__global__ void rmsnorm_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                               int hidden, float eps) {
  __shared__ float partial[BLOCK / 64];
  __shared__ float inv;
  const float* xr = x + blockIdx.x * hidden;
  float ss = 0.f;
  for (int i = threadIdx.x; i < hidden; i += BLOCK) ss += xr[i] * xr[i];
  for (int off = 32; off > 0; off >>= 1) ss += __shfl_xor(ss, off, 64);
  if (threadIdx.x % 64 == 0) partial[threadIdx.x / 64] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int i = 0; i < BLOCK / 64; ++i) t += partial[i];
    inv = rsqrtf(t / hidden + eps);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < hidden; i += BLOCK) y[blockIdx.x * hidden + i] = xr[i] * inv * w[i];
}

extern "C" void rmsnorm(const float* x, const float* w, float* y, int rows, int hidden) {
  float *dx, *dw, *dy;
  hipMalloc(&dx, sizeof(float) * rows * hidden);
  hipMalloc(&dw, sizeof(float) * hidden);
  hipMalloc(&dy, sizeof(float) * rows * hidden);
  hipMemcpy(dx, x, sizeof(float) * rows * hidden, hipMemcpyHostToDevice);
  hipMemcpy(dw, w, sizeof(float) * hidden, hipMemcpyHostToDevice);
  hipLaunchKernelGGL(HIP_KERNEL_NAME(rmsnorm_kernel<128>), dim3(rows), dim3(128), 0, 0, dx, dw, dy, hidden, 1e-5f);
  hipMemcpy(y, dy, sizeof(float) * rows * hidden, hipMemcpyDeviceToHost);
  hipFree(dx); hipFree(dw); hipFree(dy);
}
