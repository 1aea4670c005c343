// Constructs common in hand-written CUDA: macros standing for qualifiers, C++ struct tags,
// auto, local references, vector loads, 64-bit literals, #pragma unroll N, __device__ globals.
#pragma once
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cstdio>

#define CUDA_CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { printf("err %d\n", (int)e); } } while (0)
#define WARP 32
#define HOST_DEVICE __host__ __device__

struct Pair { float a; int b; };
enum Mode { MODE_A = 0, MODE_B = 1 };
__device__ float g_table[WARP];

HOST_DEVICE inline float sq(float v) { return v * v; }

static __device__ __forceinline__ float warp_max(float v) {
  #pragma unroll 4
  for (int o = WARP / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
  return v;
}

__global__ void k(const float* __restrict__ in, float* out, Pair* pairs, const int n, unsigned long long seed) {
  const int tid = threadIdx.x + blockIdx.x * blockDim.x;
  auto lane = tid % WARP;
  int& ref = pairs[0].b;
  float4 v = *(const float4*)&in[tid * 4];
  half2 h = __floats2half2_rn(v.x, v.y);
  __syncwarp();
  long long big = (long long)seed * 3LL;
  unsigned int u = 0u;
  if (tid < n) {
    out[tid] = sq(v.x + v.y + v.z + v.w) + warp_max(__low2float(h)) + (float)lane + g_table[lane] + (float)big + (float)u;
    ref = tid;
  }
  float arr[4] = {0};
  out[0] += sizeof(arr) / sizeof(arr[0]);
}

extern "C" int launch(const float* in, float* out, int n) {
  float *d_in = NULL, *d_out = NULL;
  Pair* d_p;
  CUDA_CHECK(cudaMalloc((void**)&d_in, n * 4 * sizeof(float)));
  CUDA_CHECK(cudaMalloc((void**)&d_out, n * sizeof(float)));
  cudaMalloc((void**)&d_p, sizeof(Pair));
  CUDA_CHECK(cudaMemcpy(d_in, in, n * 4 * sizeof(float), cudaMemcpyHostToDevice));
  cudaStream_t s;
  cudaStreamCreate(&s);
  k<<<(n + 255) / 256, 256, 0, s>>>(d_in, d_out, d_p, n, 42ULL);
  CUDA_CHECK(cudaMemcpy(out, d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  return 0;
}
