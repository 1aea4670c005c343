#include <hip/hip_runtime.h>

struct PermuteArgs {
  int rank;
  int out_dims[4];
  int in_strides[4];  // input stride of the axis that becomes output axis i
};

__global__ void permute_kernel(const float* __restrict__ in, float* __restrict__ out, int total, PermuteArgs a) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= total) return;
  int rem = idx;
  int src = 0;
  for (int d = a.rank - 1; d >= 0; --d) {
    const int coord = rem % a.out_dims[d];
    rem /= a.out_dims[d];
    src += coord * a.in_strides[d];
  }
  out[idx] = in[src];
}

extern "C" void transpose_kernel(float* x, float* out) {
  float* d_x;
  float* d_out;
  hipMalloc((void**)&d_x, 4096 * sizeof(float));
  hipMalloc((void**)&d_out, 4096 * sizeof(float));
  hipMemcpy(d_x, x, 4096 * sizeof(float), hipMemcpyHostToDevice);
  PermuteArgs a;
  a.rank = 4;
  a.out_dims[0] = 4; a.in_strides[0] = 1024;
  a.out_dims[1] = 16; a.in_strides[1] = 8;
  a.out_dims[2] = 8; a.in_strides[2] = 128;
  a.out_dims[3] = 8; a.in_strides[3] = 1;
  permute_kernel<<<16, 256>>>(d_x, d_out, 4096, a);
  hipMemcpy(out, d_out, 4096 * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_out);
}
