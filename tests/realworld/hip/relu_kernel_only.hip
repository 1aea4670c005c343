// ReLU, kernel-only with __launch_bounds__ and fmaxf, one element per thread.
#include <hip/hip_runtime.h>

__global__ void __launch_bounds__(256) relu_kernel(float* __restrict__ y, const float* __restrict__ x, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n) y[tid] = fmaxf(x[tid], 0.0f);
}
