#include <hip/hip_runtime.h>

typedef float floatx4 __attribute__((ext_vector_type(4)));

// C[M, N] = A[M, K] * B[K, N], row-major float. Block dim3(16, 4) = one wavefront:
// lane (x, y) feeds A[row0 + x][k + y] and B[k + y][col0 + x]; it receives C[row0 + 4y + i][col0 + x].
__global__ void __launch_bounds__(64) gemm_mfma_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                       float* __restrict__ C, int M, int N, int K) {
  const int row0 = blockIdx.y * 16;
  const int col0 = blockIdx.x * 16;
  floatx4 acc = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < K; k += 4) {
    const float a = A[(row0 + threadIdx.x) * K + k + threadIdx.y];
    const float b = B[(k + threadIdx.y) * N + col0 + threadIdx.x];
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, acc, 0, 0, 0);
  }
  for (int i = 0; i < 4; ++i) {
    C[(row0 + 4 * threadIdx.y + i) * N + col0 + threadIdx.x] = acc[i];
  }
}

extern "C" void gemm_kernel(float* A, float* B, float* C, int M, int K, int N) {
  float* d_A;
  float* d_B;
  float* d_C;
  hipMalloc((void**)&d_A, (M * K) * sizeof(float));
  hipMalloc((void**)&d_B, (K * N) * sizeof(float));
  hipMalloc((void**)&d_C, (M * N) * sizeof(float));
  hipMemcpy(d_A, A, (M * K) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_B, B, (K * N) * sizeof(float), hipMemcpyHostToDevice);
  dim3 grid(N / 16, M / 16);
  dim3 block(16, 4);
  hipLaunchKernelGGL(gemm_mfma_kernel, grid, block, 0, 0, d_A, d_B, d_C, M, N, K);
  hipMemcpy(C, d_C, (M * N) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_A);
  hipFree(d_B);
  hipFree(d_C);
}
