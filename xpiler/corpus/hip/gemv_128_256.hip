#include <hip/hip_runtime.h>

// y[M] = A[M, N] * x[N]; blockDim.x / warpSize rows per block.
__global__ void gemv_wave_kernel(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y,
                                 int M, int N) {
  const int lane = threadIdx.x % warpSize;
  const int row = blockIdx.x * (blockDim.x / warpSize) + threadIdx.x / warpSize;
  if (row >= M) return;
  float sum = 0.0f;
  for (int j = lane; j < N; j += warpSize) sum += A[(size_t)row * N + j] * x[j];
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) sum += __shfl_xor(sum, mask);
  if (lane == 0) y[row] = sum;
}

extern "C" void gemv_kernel(float* A, float* x, float* y, int M, int N) {
  float* d_A;
  float* d_x;
  float* d_y;
  hipMalloc((void**)&d_A, (M * N) * sizeof(float));
  hipMalloc((void**)&d_x, N * sizeof(float));
  hipMalloc((void**)&d_y, M * sizeof(float));
  hipMemcpy(d_A, A, (M * N) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_x, x, N * sizeof(float), hipMemcpyHostToDevice);
  const int rows_per_block = 4;
  hipLaunchKernelGGL(gemv_wave_kernel, dim3((M + rows_per_block - 1) / rows_per_block), dim3(256), 0, 0, d_A, d_x, d_y, M, N);
  hipMemcpy(y, d_y, M * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_A);
  hipFree(d_x);
  hipFree(d_y);
}
