// GELU (erf form), kernel-only: a typed template with a per-thread vector width, compiled for
// one configuration by an explicit instantiation (the library-header pattern); erff, static_cast.
#include <cuda_runtime.h>

template <typename T, int VEC>
__global__ void gelu_erf_kernel(const T* __restrict__ x, T* __restrict__ y, int n) {
  const int base = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
#pragma unroll
  for (int v = 0; v < VEC; ++v) {
    const int i = base + v;
    if (i < n) {
      const float xv = static_cast<float>(x[i]);
      y[i] = static_cast<T>(0.5f * xv * (1.0f + erff(xv * 0.7071067811865475f)));
    }
  }
}

template __global__ void gelu_erf_kernel<float, 2>(const float* __restrict__, float* __restrict__, int);
