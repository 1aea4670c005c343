// gemm_16_64_16 on CDNA matrix cores: one 64-lane wave per 16x16 tile, 16x16x4 f32 MFMA.
#include <hip/hip_runtime.h>

typedef float floatx4 __attribute__((ext_vector_type(4)));

__global__ void __launch_bounds__(64) gemm_mfma_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
  const int lane_m = threadIdx.x;        // 0..15
  const int lane_k = threadIdx.y;        // 0..3
  const int row0 = blockIdx.y * 16;
  const int col0 = blockIdx.x * 16;
  floatx4 acc = {0.0f, 0.0f, 0.0f, 0.0f};
#if __gfx90a__ || __gfx908__
  for (int k = 0; k < K; k += 4) {
    float a = A[(row0 + lane_m) * K + k + lane_k];
    float b = B[(k + lane_k) * N + col0 + lane_m];
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, acc, 0, 0, 0);
  }
#endif
  for (int r = 0; r < 4; ++r) {
    C[(row0 + 4 * lane_k + r) * N + col0 + lane_m] = acc[r];
  }
}

extern "C" void gemm_kernel(const float* A, const float* B, float* C, int M, int K, int N) {
  float *dA, *dB, *dC;
  hipMalloc((void**)&dA, M * K * sizeof(float));
  hipMalloc((void**)&dB, K * N * sizeof(float));
  hipMalloc((void**)&dC, M * N * sizeof(float));
  hipMemcpy(dA, A, M * K * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(dB, B, K * N * sizeof(float), hipMemcpyHostToDevice);
  dim3 grid(N / 16, M / 16);
  dim3 block(16, 4);
  hipLaunchKernelGGL(gemm_mfma_kernel, grid, block, 0, 0, dA, dB, dC, M, N, K);
  hipMemcpy(C, dC, M * N * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dA);
  hipFree(dB);
  hipFree(dC);
}
