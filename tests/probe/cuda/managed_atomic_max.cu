#include <cuda_runtime.h>
__device__ float atomicMaxFloat(float* addr, float val) {
  int* ai = (int*)addr;
  int old = *ai, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= val) break;
    old = atomicCAS(ai, assumed, __float_as_int(val));
  } while (assumed != old);
  return __int_as_float(old);
}
__global__ void global_max(const float* x, int n, float* out) {
  __shared__ float smax[256];
  int tid = threadIdx.x;
  float m = -3.4e38f;
  for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x) m = fmaxf(m, x[i]);
  smax[tid] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) smax[tid] = fmaxf(smax[tid], smax[tid + s]);
    __syncthreads();
  }
  if (tid == 0) atomicMaxFloat(out, smax[0]);
}
extern "C" void max_all(const float* x, int n, float* out) {
  float *dx, *dout;
  cudaMallocManaged(&dx, n * sizeof(float));
  cudaMallocManaged(&dout, sizeof(float));
  for (int i = 0; i < n; ++i) dx[i] = x[i];
  *dout = -3.4e38f;
  global_max<<<4, 256>>>(dx, n, dout);
  cudaDeviceSynchronize();
  *out = *dout;
  cudaFree(dx); cudaFree(dout);
}
