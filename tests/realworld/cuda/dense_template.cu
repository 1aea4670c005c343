// Fully-connected layer out = X W^T + bias, a typed template with an explicit instantiation
// (the ATen "AT_DISPATCH" pattern reduced to float), one thread per output, 2-D grid.
#include <cuda_runtime.h>

template <typename scalar_t>
__global__ void linear_forward_kernel(const scalar_t* __restrict__ input, const scalar_t* __restrict__ weight,
                                      const scalar_t* __restrict__ bias, scalar_t* __restrict__ output,
                                      int batch, int in_features, int out_features) {
  const int o = blockIdx.x * blockDim.x + threadIdx.x;
  const int b = blockIdx.y * blockDim.y + threadIdx.y;
  if (b >= batch || o >= out_features) return;
  scalar_t acc = bias != nullptr ? bias[o] : scalar_t(0);
  const scalar_t* xrow = input + (size_t)b * in_features;
  const scalar_t* wrow = weight + (size_t)o * in_features;
#pragma unroll 4
  for (int k = 0; k < in_features; ++k) acc += xrow[k] * wrow[k];
  output[(size_t)b * out_features + o] = acc;
}

template __global__ void linear_forward_kernel<float>(const float*, const float*, const float*, float*, int, int, int);

extern "C" void linear_forward(const float* X, const float* W, const float* bias, float* out, int M, int K, int N) {
  float *dX, *dW, *dbias, *dout;
  cudaMalloc(&dX, sizeof(float) * M * K);
  cudaMalloc(&dW, sizeof(float) * N * K);
  cudaMalloc(&dbias, sizeof(float) * N);
  cudaMalloc(&dout, sizeof(float) * M * N);
  cudaMemcpy(dX, X, sizeof(float) * M * K, cudaMemcpyHostToDevice);
  cudaMemcpy(dW, W, sizeof(float) * N * K, cudaMemcpyHostToDevice);
  cudaMemcpy(dbias, bias, sizeof(float) * N, cudaMemcpyHostToDevice);
  dim3 block(32, 4);
  dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
  linear_forward_kernel<float><<<grid, block>>>(dX, dW, dbias, dout, M, K, N);
  cudaMemcpy(out, dout, sizeof(float) * M * N, cudaMemcpyDeviceToHost);
  cudaFree(dX); cudaFree(dW); cudaFree(dbias); cudaFree(dout);
}
