// sign(x) branch-free ((0 < x) - (x < 0)), grid-stride over int indices computed from
// blockDim.x * gridDim.x, kernel-only.
#include <cuda_runtime.h>

template <typename T>
__device__ __forceinline__ T sgn(T v) {
  return static_cast<T>((T(0) < v) - (v < T(0)));
}

__global__ void sign_kernel(const float* __restrict__ in, float* __restrict__ out, const int n) {
  const int stride = gridDim.x * blockDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = sgn(in[i]);
}
