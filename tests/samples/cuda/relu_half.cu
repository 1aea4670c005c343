// relu over half values: a kernel-only file (the entry is the kernel itself).
#include <cuda_fp16.h>

__global__ void relu_half_kernel(const half* __restrict__ x, half* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = __half2float(x[i]);
    y[i] = __float2half(v > 0.0f ? v : 0.0f);
  }
}
