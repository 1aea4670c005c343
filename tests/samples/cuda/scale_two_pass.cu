// Two kernels launched by a plain (not extern "C") host function: the entry is the launcher.
#include <cuda_runtime.h>

__global__ void scale_kernel(float* data, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * alpha;
}

__global__ void shift_kernel(float* data, float beta, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += beta;
}

void scale_shift(float* data, float alpha, float beta, int n) {
  float* d_data;
  cudaMalloc((void**)&d_data, n * sizeof(float));
  cudaMemcpy(d_data, data, n * sizeof(float), cudaMemcpyHostToDevice);
  dim3 block{128};
  dim3 grid{(n + 127) / 128};
  scale_kernel<<<grid, block>>>(d_data, alpha, n);
  shift_kernel<<<grid, block>>>(d_data, beta, n);
  cudaMemcpy(data, d_data, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_data);
}
