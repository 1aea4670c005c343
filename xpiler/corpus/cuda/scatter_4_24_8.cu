#include <cuda_runtime.h>

__global__ void copy_kernel(const float* __restrict__ src, float* __restrict__ dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

// out[o][indices[i]][p] = updates[o][i][p]
__global__ void scatter_rows_kernel(const int* __restrict__ indices, const float* __restrict__ updates,
                                    float* __restrict__ out, int outer, int dim, int num, int inner) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= outer * num * inner) return;
  int p = i % inner;
  int j = (i / inner) % num;
  int o = i / (inner * num);
  out[(o * dim + indices[j]) * inner + p] = updates[i];
}

extern "C" void scatter_kernel(float* data, int* indices, float* updates, float* out, int outer, int dim, int num, int inner) {
  float* d_data;
  int* d_indices;
  float* d_updates;
  float* d_out;
  cudaMalloc(&d_data, (outer * dim * inner) * sizeof(float));
  cudaMalloc(&d_indices, num * sizeof(int));
  cudaMalloc(&d_updates, (outer * num * inner) * sizeof(float));
  cudaMalloc(&d_out, (outer * dim * inner) * sizeof(float));
  cudaMemcpy(d_data, data, (outer * dim * inner) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_indices, indices, num * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(d_updates, updates, (outer * num * inner) * sizeof(float), cudaMemcpyHostToDevice);
  int n = outer * dim * inner;
  copy_kernel<<<(n + 255) / 256, 256>>>(d_data, d_out, n);
  int m = outer * num * inner;
  scatter_rows_kernel<<<(m + 127) / 128, 128>>>(d_indices, d_updates, d_out, outer, dim, num, inner);
  cudaDeviceSynchronize();
  cudaMemcpy(out, d_out, (outer * dim * inner) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_data);
  cudaFree(d_indices);
  cudaFree(d_updates);
  cudaFree(d_out);
}
