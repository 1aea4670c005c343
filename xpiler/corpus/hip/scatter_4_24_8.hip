#include <hip/hip_runtime.h>

// out[o][indices[i]][p] = updates[o][i][p]  (out already holds data)
__global__ void scatter_updates(const int* __restrict__ indices, const float* __restrict__ updates,
                                float* __restrict__ out, int outer, int dim, int num, int inner) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= outer * num * inner) return;
  const int p = idx % inner;
  const int i = (idx / inner) % num;
  const int o = idx / (inner * num);
  out[((size_t)o * dim + indices[i]) * inner + p] = updates[idx];
}

extern "C" void scatter_kernel(float* data, int* indices, float* updates, float* out, int outer, int dim, int num, int inner) {
  float* d_data;
  int* d_indices;
  float* d_updates;
  float* d_out;
  hipMalloc((void**)&d_data, (outer * dim * inner) * sizeof(float));
  hipMalloc((void**)&d_indices, num * sizeof(int));
  hipMalloc((void**)&d_updates, (outer * num * inner) * sizeof(float));
  hipMalloc((void**)&d_out, (outer * dim * inner) * sizeof(float));
  hipMemcpy(d_data, data, (outer * dim * inner) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_indices, indices, num * sizeof(int), hipMemcpyHostToDevice);
  hipMemcpy(d_updates, updates, (outer * num * inner) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_out, d_data, outer * dim * inner * sizeof(float), hipMemcpyDeviceToDevice);
  const int total = outer * num * inner;
  hipLaunchKernelGGL(scatter_updates, dim3((total + 127) / 128), dim3(128), 0, 0, d_indices, d_updates, d_out, outer, dim, num, inner);
  hipMemcpy(out, d_out, (outer * dim * inner) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_data);
  hipFree(d_indices);
  hipFree(d_updates);
  hipFree(d_out);
}
