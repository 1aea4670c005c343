#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_take, float* __restrict__ data, int* __restrict__ indices) {
  T_take[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = data[((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 192) * 512) + (min(max(0, indices[((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 192) / 32)]), 15) * 32)) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 32))];
}

extern "C" void gather_kernel(float* data, int* indices, float* out) {
  float* d_data;
  int* d_indices;
  float* d_out;
  cudaMalloc(&d_data, 4096 * sizeof(float));
  cudaMalloc(&d_indices, 6 * sizeof(int));
  cudaMalloc(&d_out, 1536 * sizeof(float));
  cudaMemcpy(d_data, data, 4096 * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_indices, indices, 6 * sizeof(int), cudaMemcpyHostToDevice);
  default_function_kernel<<<6, 256>>>(d_out, d_data, d_indices);
  cudaMemcpy(out, d_out, 1536 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_data);
  cudaFree(d_indices);
  cudaFree(d_out);
}
