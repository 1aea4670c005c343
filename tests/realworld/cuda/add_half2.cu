// Element-wise add on half2 pairs (FasterTransformer-style packed half math): two values per
// thread through __half22float2 / __floats2half2_rn; kernel-only, launch in the case file.
#include <cuda_fp16.h>

__global__ void add_bias_half2_kernel(const __half2* __restrict__ a, const __half2* __restrict__ b,
                                      __half2* __restrict__ out, int n2) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += blockDim.x * gridDim.x) {
    const float2 fa = __half22float2(a[i]);
    const float2 fb = __half22float2(b[i]);
    out[i] = __floats2half2_rn(fa.x + fb.x, fa.y + fb.y);
  }
}
