#include <hip/hip_runtime.h>

typedef float floatx4 __attribute__((ext_vector_type(4)));

#define M_SIZE 64
#define N_SIZE 64
#define K_SIZE 256
#define TILE 32
#define KT 16

__global__ void __launch_bounds__(256) gemm_lds_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                                       float* __restrict__ C) {
  __shared__ float a_lds[TILE][KT + 1];
  __shared__ float b_lds[KT][TILE + 1];
  const int tid = threadIdx.x;
  const int wave = tid / 64;
  const int lane = tid % 64;
  const int wm = (wave / 2) * 16;  // quadrant of the 32x32 tile
  const int wn = (wave % 2) * 16;
  const int row0 = blockIdx.y * TILE;
  const int col0 = blockIdx.x * TILE;
  floatx4 acc = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k0 = 0; k0 < K_SIZE; k0 += KT) {
    for (int e = tid; e < TILE * KT; e += 256) {
      a_lds[e / KT][e % KT] = A[(row0 + e / KT) * K_SIZE + k0 + e % KT];
      b_lds[e / TILE][e % TILE] = B[(k0 + e / TILE) * N_SIZE + col0 + e % TILE];
    }
    __syncthreads();
    for (int kk = 0; kk < KT; kk += 4) {
      const float a = a_lds[wm + lane % 16][kk + lane / 16];
      const float b = b_lds[kk + lane / 16][wn + lane % 16];
      acc = __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, acc, 0, 0, 0);
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    C[(row0 + wm + 4 * (lane / 16) + i) * N_SIZE + col0 + wn + lane % 16] = acc[i];
  }
}

extern "C" void gemm_kernel(float* A, float* B, float* C) {
  float* d_A;
  float* d_B;
  float* d_C;
  hipMalloc((void**)&d_A, (M_SIZE * K_SIZE) * sizeof(float));
  hipMalloc((void**)&d_B, (K_SIZE * N_SIZE) * sizeof(float));
  hipMalloc((void**)&d_C, (M_SIZE * N_SIZE) * sizeof(float));
  hipMemcpy(d_A, A, (M_SIZE * K_SIZE) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_B, B, (K_SIZE * N_SIZE) * sizeof(float), hipMemcpyHostToDevice);
  dim3 grid(N_SIZE / TILE, M_SIZE / TILE);
  gemm_lds_kernel<<<grid, 256>>>(d_A, d_B, d_C);
  hipDeviceSynchronize();
  hipMemcpy(C, d_C, (M_SIZE * N_SIZE) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_A);
  hipFree(d_B);
  hipFree(d_C);
}
