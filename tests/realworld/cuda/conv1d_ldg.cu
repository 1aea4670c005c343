// Valid 1-D correlation with the filter cached in shared memory (loaded cooperatively),
// __ldg for the signal, #pragma unroll over a fixed-size filter. Kernel-only.
#include <cuda_runtime.h>

#define KSIZE 5

__global__ void conv1d_kernel(const float* __restrict__ signal, const float* __restrict__ filter,
                              float* __restrict__ out, int out_len) {
  __shared__ float f[KSIZE];
  if (threadIdx.x < KSIZE) f[threadIdx.x] = filter[threadIdx.x];
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < out_len) {
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < KSIZE; ++k) acc = fmaf(__ldg(signal + i + k), f[k], acc);
    out[i] = acc;
  }
}
