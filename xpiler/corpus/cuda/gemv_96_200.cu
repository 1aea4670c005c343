#include <cuda_runtime.h>

// y[M] = A[M, N] * x[N]; x staged in dynamic shared memory, one warp per row.
__global__ void __launch_bounds__(256) gemv_smem_kernel(const float* __restrict__ A, const float* __restrict__ x,
                                                        float* __restrict__ y, int M, int N) {
  extern __shared__ float x_shared[];
  for (int j = threadIdx.x; j < N; j += blockDim.x) {
    x_shared[j] = x[j];
  }
  __syncthreads();
  const int warps = blockDim.x / warpSize;
  const int lane = threadIdx.x % warpSize;
  for (int row = blockIdx.x * warps + threadIdx.x / warpSize; row < M; row += gridDim.x * warps) {
    const float* a_row = A + (size_t)row * N;
    float sum = 0.0f;
    for (int j = lane; j < N; j += warpSize) {
      sum = fmaf(a_row[j], x_shared[j], sum);
    }
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
      sum += __shfl_down_sync(0xffffffff, sum, offset);
    }
    if (lane == 0) y[row] = sum;
  }
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
  const int threads = 256;
  const int blocks = 8;
  gemv_smem_kernel<<<blocks, threads, N * sizeof(float)>>>(d_A, d_x, d_y, M, N);
  cudaDeviceSynchronize();
  cudaMemcpy(y, d_y, M * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_x);
  cudaFree(d_y);
}
