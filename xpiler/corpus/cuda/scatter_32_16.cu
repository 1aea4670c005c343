#include <cuda_runtime.h>

// out = data; out[.., indices[i], ..] = updates[.., i, ..] along axis 0.
__global__ void scatter_lookup_kernel(const float* __restrict__ data, const int* __restrict__ indices,
                                      const float* __restrict__ updates, float* __restrict__ out) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= 512) return;
  const int inner = idx % 16;
  const int pos = (idx / 16) % 32;
  const int outer = idx / (32 * 16);
  float v = data[idx];
  for (int i = 0; i < 8; ++i) {
    if (indices[i] == pos) {
      v = updates[(outer * 8 + i) * 16 + inner];
    }
  }
  out[idx] = v;
}

extern "C" void scatter_kernel(float* data, int* indices, float* updates, float* out) {
  float* d_data;
  int* d_indices;
  float* d_updates;
  float* d_out;
  cudaMalloc(&d_data, 512 * sizeof(float));
  cudaMalloc(&d_indices, 8 * sizeof(int));
  cudaMalloc(&d_updates, 128 * sizeof(float));
  cudaMalloc(&d_out, 512 * sizeof(float));
  cudaMemcpy(d_data, data, 512 * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_indices, indices, 8 * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(d_updates, updates, 128 * sizeof(float), cudaMemcpyHostToDevice);
  scatter_lookup_kernel<<<4, 128>>>(d_data, d_indices, d_updates, d_out);
  cudaMemcpy(out, d_out, 512 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_data);
  cudaFree(d_indices);
  cudaFree(d_updates);
  cudaFree(d_out);
}
