#include <hip/hip_runtime.h>

typedef float floatx4 __attribute__((ext_vector_type(4)));

__global__ void gatemlp_mfma_kernel(const float* __restrict__ X, const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ out, int K, int N) {
  const int wave = threadIdx.x / 64;
  const int lane = threadIdx.x % 64;
  const int row0 = blockIdx.y * 16;
  const int col0 = (blockIdx.x * (blockDim.x / 64) + wave) * 16;
  floatx4 gate = {0.0f, 0.0f, 0.0f, 0.0f};
  floatx4 up = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < K; k += 4) {
    const float x = X[(row0 + lane % 16) * K + k + lane / 16];
    const float a = A[(k + lane / 16) * N + col0 + lane % 16];
    const float b = B[(k + lane / 16) * N + col0 + lane % 16];
    gate = __builtin_amdgcn_mfma_f32_16x16x4f32(x, a, gate, 0, 0, 0);
    up = __builtin_amdgcn_mfma_f32_16x16x4f32(x, b, up, 0, 0, 0);
  }
  for (int i = 0; i < 4; ++i) {
    const float g = gate[i];
    out[(row0 + 4 * (lane / 16) + i) * N + col0 + lane % 16] = g / (1.0f + expf(-g)) * up[i];
  }
}

extern "C" void gatemlp_kernel(float* X, float* A, float* B, float* out, int batch, int K, int N) {
  float* d_X;
  float* d_A;
  float* d_B;
  float* d_out;
  hipMalloc((void**)&d_X, (batch * K) * sizeof(float));
  hipMalloc((void**)&d_A, (K * N) * sizeof(float));
  hipMalloc((void**)&d_B, (K * N) * sizeof(float));
  hipMalloc((void**)&d_out, (batch * N) * sizeof(float));
  hipMemcpy(d_X, X, (batch * K) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_A, A, (K * N) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_B, B, (K * N) * sizeof(float), hipMemcpyHostToDevice);
  const int waves = 4;
  dim3 grid(N / (16 * waves), batch / 16);
  gatemlp_mfma_kernel<<<grid, dim3(64 * waves)>>>(d_X, d_A, d_B, d_out, K, N);
  hipMemcpy(out, d_out, (batch * N) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_X);
  hipFree(d_A);
  hipFree(d_B);
  hipFree(d_out);
}
