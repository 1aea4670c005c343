#include <cuda_runtime.h>

// y[M] = A[M, N] * x[N]; one warp per row.
__global__ void __launch_bounds__(128) gemv_warp_kernel(const float* __restrict__ A, const float* __restrict__ x,
                                                        float* __restrict__ y, int M, int N) {
  const int row = blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= M) return;  // whole warps leave together
  float sum = 0.0f;
  for (int j = lane; j < N; j += 32) {
    sum += A[row * N + j] * x[j];
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    sum += __shfl_xor_sync(0xffffffff, sum, offset);
  }
  if (lane == 0) y[row] = sum;
}

extern "C" void gemv_kernel(float* A, float* x, float* y, int M, int N) {
  float* d_A;
  float* d_x;
  float* d_y;
  cudaMalloc(&d_A, (M * N) * sizeof(float));
  cudaMalloc(&d_x, N * sizeof(float));
  cudaMalloc(&d_y, M * sizeof(float));
  cudaMemcpy(d_A, A, (M * N) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_x, x, N * sizeof(float), cudaMemcpyHostToDevice);
  gemv_warp_kernel<<<(M + 3) / 4, 128>>>(d_A, d_x, d_y, M, N);
  cudaMemcpy(y, d_y, M * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_x);
  cudaFree(d_y);
}
