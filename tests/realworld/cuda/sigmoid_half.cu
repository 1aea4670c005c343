// Sigmoid on half storage with float math (the usual mixed-precision pattern):
// __half2float / __float2half, expf, kernel-only with the launch in the case file.
#include <cuda_fp16.h>

__global__ void sigmoid_half_kernel(const __half* __restrict__ x, __half* __restrict__ y, int64_t n) {
  int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= n) return;
  float v = __half2float(x[idx]);
  y[idx] = __float2half(1.0f / (1.0f + expf(-v)));
}
