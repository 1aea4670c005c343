// Mean over the last axis with 64-bit indexing (int64_t everywhere, as ATen kernels do for
// large tensors): one thread per output row, a plain sequential loop. Kernel-only.
#include <cuda_runtime.h>
#include <stdint.h>

__global__ void mean_lastdim_kernel(const float* __restrict__ in, float* __restrict__ out,
                                    int64_t outer, int64_t inner) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r < outer) {
    const float* p = in + r * inner;
    float acc = 0.f;
    for (int64_t k = 0; k < inner; ++k) acc += p[k];
    out[r] = acc / static_cast<float>(inner);
  }
}
