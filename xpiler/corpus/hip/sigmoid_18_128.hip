#include <hip/hip_runtime.h>

__global__ void sigmoid_forward(const float* __restrict__ x, float* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = 1.0f / (1.0f + expf(-x[i]));
  }
}
