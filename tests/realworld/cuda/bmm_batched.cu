// Batched matmul C[b] = A[b] B[b]: blockIdx.z is the batch, long long batch strides
// (the cuBLAS strided-batched convention), 2-D thread tile per block.
#include <cuda_runtime.h>

__global__ void bmm_kernel(const float* A, const float* B, float* C, int I, int J, int K,
                           long long strideA, long long strideB, long long strideC) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  const int b = blockIdx.z;
  if (i < I && k < K) {
    const float* a = A + b * strideA + (long long)i * J;
    const float* bb = B + b * strideB + k;
    float s = 0;
    for (int j = 0; j < J; j++) s += a[j] * bb[(long long)j * K];
    C[b * strideC + (long long)i * K + k] = s;
  }
}

extern "C" void bmm(const float* A, const float* B, float* C, int batch, int I, int J, int K) {
  float *dA, *dB, *dC;
  cudaMalloc(&dA, sizeof(float) * batch * I * J);
  cudaMalloc(&dB, sizeof(float) * batch * J * K);
  cudaMalloc(&dC, sizeof(float) * batch * I * K);
  cudaMemcpy(dA, A, sizeof(float) * batch * I * J, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B, sizeof(float) * batch * J * K, cudaMemcpyHostToDevice);
  dim3 block(16, 8);
  dim3 grid((K + 15) / 16, (I + 7) / 8, batch);
  bmm_kernel<<<grid, block>>>(dA, dB, dC, I, J, K, (long long)I * J, (long long)J * K, (long long)I * K);
  cudaMemcpy(C, dC, sizeof(float) * batch * I * K, cudaMemcpyDeviceToHost);
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
}
