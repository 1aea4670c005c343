#include <hip/hip_runtime.h>

typedef float floatx4 __attribute__((ext_vector_type(4)));

// C[b] = A[b] (I x J) * B[b] (J x K)
__global__ void __launch_bounds__(64) bmm_mfma_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                      float* __restrict__ C, int I, int J, int K) {
  const int lane = threadIdx.x;
  const float* a_base = A + (size_t)blockIdx.z * I * J + (blockIdx.y * 16 + lane % 16) * J;
  const float* b_base = B + (size_t)blockIdx.z * J * K + blockIdx.x * 16 + lane % 16;
  floatx4 acc = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k = 0; k < J; k += 4) {
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(a_base[k + lane / 16], b_base[(k + lane / 16) * K], acc, 0, 0, 0);
  }
  float* c_base = C + (size_t)blockIdx.z * I * K + (blockIdx.y * 16 + 4 * (lane / 16)) * K + blockIdx.x * 16 + lane % 16;
  for (int i = 0; i < 4; ++i) c_base[i * K] = acc[i];
}

extern "C" void bmm_kernel(float* A, float* B, float* C, int batch, int I, int J, int K) {
  float* d_A;
  float* d_B;
  float* d_C;
  hipMalloc((void**)&d_A, (batch * I * J) * sizeof(float));
  hipMalloc((void**)&d_B, (batch * J * K) * sizeof(float));
  hipMalloc((void**)&d_C, (batch * I * K) * sizeof(float));
  hipMemcpy(d_A, A, (batch * I * J) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_B, B, (batch * J * K) * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(bmm_mfma_kernel, dim3(K / 16, I / 16, batch), dim3(64), 0, 0,
                     d_A, d_B, d_C, I, J, K);
  hipMemcpy(C, d_C, (batch * I * K) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_A);
  hipFree(d_B);
  hipFree(d_C);
}
