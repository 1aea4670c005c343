// ReLU with 128-bit vector loads (float4) and a scalar tail, kernel-only (launched by the
// case file): the PyTorch "vectorized elementwise" idea written out by hand.
#include <cuda_runtime.h>

__device__ __forceinline__ float relu_op(float v) { return v > 0.f ? v : 0.f; }

__global__ void relu_vec4_kernel(const float* __restrict__ in, float* __restrict__ out, int n) {
  const int n4 = n / 4;
  const float4* in4 = reinterpret_cast<const float4*>(in);
  float4* out4 = reinterpret_cast<float4*>(out);
  int stride = blockDim.x * gridDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
    float4 v = in4[i];
    v.x = relu_op(v.x);
    v.y = relu_op(v.y);
    v.z = relu_op(v.z);
    v.w = relu_op(v.w);
    out4[i] = v;
  }
  // tail
  for (int i = n4 * 4 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = relu_op(in[i]);
  }
}
