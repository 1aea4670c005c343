#include <cfloat>
#include <hip/hip_runtime.h>

// in: [outer, len, inner] -> out: [outer, inner], reducing the middle axis
__global__ void max_axis(const float* __restrict__ in, float* __restrict__ out, int outer, int len, int inner) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= outer * inner) return;
  const int o = idx / inner;
  const int i = idx % inner;
  const float* p = in + (size_t)o * len * inner + i;
  float acc = -FLT_MAX;
  for (int k = 0; k < len; ++k) {
    acc = fmaxf(acc, p[k * inner]);
  }
  out[idx] = acc;
}

extern "C" void max_kernel(float* x, float* out, int outer, int len, int inner) {
  float* d_x;
  float* d_out;
  hipMalloc((void**)&d_x, (outer * len * inner) * sizeof(float));
  hipMalloc((void**)&d_out, (outer * inner) * sizeof(float));
  hipMemcpy(d_x, x, (outer * len * inner) * sizeof(float), hipMemcpyHostToDevice);
  const int total = outer * inner;
  max_axis<<<(total + 127) / 128, 128>>>(d_x, d_out, outer, len, inner);
  hipMemcpy(out, d_out, (outer * inner) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_out);
}
