#include <stdint.h>
#include <hip/hip_runtime.h>

__global__ void gather_rows(const float* __restrict__ data, const int64_t* __restrict__ indices, float* __restrict__ out,
                            int outer, int dim, int num, int inner) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= outer * num * inner) return;
  const int p = idx % inner;
  const int i = (idx / inner) % num;
  const int o = idx / (inner * num);
  const int64_t src_row = indices[i];
  out[idx] = data[((size_t)o * dim + src_row) * inner + p];
}

extern "C" void gather_kernel(float* data, int64_t* indices, float* out, int outer, int dim, int num, int inner) {
  float* d_data;
  int64_t* d_indices;
  float* d_out;
  hipMalloc((void**)&d_data, (outer * dim * inner) * sizeof(float));
  hipMalloc((void**)&d_indices, num * sizeof(int64_t));
  hipMalloc((void**)&d_out, (outer * num * inner) * sizeof(float));
  hipMemcpy(d_data, data, (outer * dim * inner) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_indices, indices, num * sizeof(int64_t), hipMemcpyHostToDevice);
  const int total = outer * num * inner;
  hipLaunchKernelGGL(gather_rows, dim3((total + 255) / 256), dim3(256), 0, 0, d_data, d_indices, d_out, outer, dim, num, inner);
  hipMemcpy(out, d_out, (outer * num * inner) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_data);
  hipFree(d_indices);
  hipFree(d_out);
}
