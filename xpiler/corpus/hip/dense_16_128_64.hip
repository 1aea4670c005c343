#include <hip/hip_runtime.h>

typedef float floatx4 __attribute__((ext_vector_type(4)));

// out[M, N] = X[M, K] * W[N, K]^T + bias[N]; 2 wavefronts per block (128 threads), one 16x16 tile each.
__global__ void __launch_bounds__(128) dense_mfma_kernel(const float* __restrict__ X, const float* __restrict__ W,
                                                         const float* __restrict__ bias, float* __restrict__ out,
                                                         int M, int N, int K) {
  const int wave = threadIdx.x / 64;
  const int lane = threadIdx.x % 64;
  const int row0 = blockIdx.y * 16;
  const int col0 = (blockIdx.x * 2 + wave) * 16;
  if (col0 >= N) return;  // the whole wavefront leaves
  const float bv = bias[col0 + lane % 16];
  floatx4 acc = {bv, bv, bv, bv};
  const float* x_row = X + (row0 + lane % 16) * K;
  const float* w_row = W + (col0 + lane % 16) * K;
  for (int k = 0; k < K; k += 4) {
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(x_row[k + lane / 16], w_row[k + lane / 16], acc, 0, 0, 0);
  }
  for (int i = 0; i < 4; ++i) {
    out[(row0 + 4 * (lane / 16) + i) * N + col0 + lane % 16] = acc[i];
  }
}

extern "C" void dense_kernel(float* X, float* W, float* bias, float* out, int M, int K, int N) {
  float* d_X;
  float* d_W;
  float* d_bias;
  float* d_out;
  hipMalloc((void**)&d_X, (M * K) * sizeof(float));
  hipMalloc((void**)&d_W, (N * K) * sizeof(float));
  hipMalloc((void**)&d_bias, N * sizeof(float));
  hipMalloc((void**)&d_out, (M * N) * sizeof(float));
  hipMemcpy(d_X, X, (M * K) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_W, W, (N * K) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_bias, bias, N * sizeof(float), hipMemcpyHostToDevice);
  dim3 grid((N / 16 + 1) / 2, M / 16);
  hipLaunchKernelGGL(dense_mfma_kernel, grid, dim3(128), 0, 0, d_X, d_W, d_bias, d_out, M, N, K);
  hipMemcpy(out, d_out, (M * N) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_X);
  hipFree(d_W);
  hipFree(d_bias);
  hipFree(d_out);
}
