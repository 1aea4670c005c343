// sum over a vector: wavefront shuffles (64 lanes, no mask), shared memory and atomicAdd.
#include <hip/hip_runtime.h>
#include <algorithm>

#define WAVE 64

__device__ float wave_sum(float v) {
  for (int off = WAVE / 2; off > 0; off >>= 1) v += __shfl_down(v, off);
  return v;
}

__global__ void __launch_bounds__(256, 2) reduce_kernel(const float* __restrict__ x, float* __restrict__ total, int n) {
  __shared__ float waves[256 / WAVE];
  float acc = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += x[i];
  acc = wave_sum(acc);
  if (threadIdx.x % WAVE == 0) waves[threadIdx.x / WAVE] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0.0f;
#pragma unroll
    for (int w = 0; w < 256 / WAVE; ++w) s += waves[w];
    atomicAdd(total, s);
  }
}

extern "C" void sum_kernel(const float* x, float* total, int n) {
  float *d_x, *d_total;
  hipMalloc((void**)&d_x, n * sizeof(float));
  hipMalloc((void**)&d_total, sizeof(float));
  hipMemcpy(d_x, x, n * sizeof(float), hipMemcpyHostToDevice);
  hipMemset(d_total, 0, sizeof(float));
  int blocks = std::min((n + 255) / 256, 1024);
  hipLaunchKernelGGL(reduce_kernel, dim3(blocks), dim3(256), 0, 0, d_x, d_total, n);
  hipMemcpy(total, d_total, sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_total);
}
