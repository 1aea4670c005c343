#include <hip/hip_runtime.h>

// copy one input [outer, len, inner] into out [outer, total_len, inner] at axis offset `offset`
__global__ void concat_slab(const float* __restrict__ in, float* __restrict__ out, int outer, int len, int inner,
                            int total_len, int offset) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= outer * len * inner) return;
  const int p = idx % inner;
  const int j = (idx / inner) % len;
  const int o = idx / (inner * len);
  out[((size_t)o * total_len + offset + j) * inner + p] = in[idx];
}

extern "C" void concat_kernel(float* x0, float* x1, float* out) {
  float* d_x0;
  float* d_x1;
  float* d_out;
  hipMalloc((void**)&d_x0, 240 * sizeof(float));
  hipMalloc((void**)&d_x1, 240 * sizeof(float));
  hipMalloc((void**)&d_out, 480 * sizeof(float));
  hipMemcpy(d_x0, x0, 240 * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_x1, x1, 240 * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(concat_slab, dim3(2), dim3(128), 0, 0, d_x0, d_out, 1, 6, 40, 12, 0);
  hipLaunchKernelGGL(concat_slab, dim3(2), dim3(128), 0, 0, d_x1, d_out, 1, 6, 40, 12, 6);
  hipDeviceSynchronize();
  hipMemcpy(out, d_out, 480 * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x0);
  hipFree(d_x1);
  hipFree(d_out);
}
