// gemm with half inputs: 16x16x16 f16 MFMA, <<<>>> launch with four configuration arguments.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

using half4 = _Float16 __attribute__((ext_vector_type(4)));
using float4_ = float __attribute__((ext_vector_type(4)));

__device__ inline half4 load_a(const _Float16* A, int row, int k0, int K) {
  half4 v;
  for (int i = 0; i < 4; ++i) v[i] = A[row * K + k0 + i];
  return v;
}

__global__ void gemm_f16_kernel(const _Float16* A, const _Float16* B, float* C, int M, int N, int K) {
  const int lane = threadIdx.x;
  const int row0 = blockIdx.y * 16, col0 = blockIdx.x * 16;
  float4_ acc = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < K; k += 16) {
    half4 a = load_a(A, row0 + lane % 16, k + 4 * (lane / 16), K);
    half4 b;
    for (int i = 0; i < 4; ++i) b[i] = B[(k + 4 * (lane / 16) + i) * N + col0 + lane % 16];
    acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, acc, 0, 0, 0);
  }
  for (int r = 0; r < 4; ++r) {
    C[(row0 + 4 * (lane / 16) + r) * N + col0 + lane % 16] = acc[r];
  }
}

extern "C" void gemm_kernel(const _Float16* A, const _Float16* B, float* C, int M, int K, int N) {
  _Float16 *dA, *dB;
  float* dC;
  hipMalloc(&dA, sizeof(_Float16) * M * K);
  hipMalloc(&dB, sizeof(_Float16) * K * N);
  hipMalloc(&dC, sizeof(float) * M * N);
  hipMemcpy(dA, A, sizeof(_Float16) * M * K, hipMemcpyHostToDevice);
  hipMemcpy(dB, B, sizeof(_Float16) * K * N, hipMemcpyHostToDevice);
  hipStream_t stream;
  hipStreamCreate(&stream);
  gemm_f16_kernel<<<dim3(N / 16, M / 16), dim3(64), 0, stream>>>(dA, dB, dC, M, N, K);
  hipStreamSynchronize(stream);
  hipMemcpy(C, dC, sizeof(float) * M * N, hipMemcpyDeviceToHost);
  hipStreamDestroy(stream);
  hipFree(dA);
  hipFree(dB);
  hipFree(dC);
}
