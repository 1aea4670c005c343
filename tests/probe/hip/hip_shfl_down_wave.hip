#include <hip/hip_runtime.h>
__device__ inline float wave_sum(float v) {
  for (int off = warpSize / 2; off > 0; off >>= 1) v += __shfl_down(v, off);
  return v;
}
__global__ void __launch_bounds__(256) l2norm_rows(const float* x, float* y, int cols) {
  extern __shared__ float partial[];
  const float* row = x + blockIdx.x * cols;
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += row[c] * row[c];
  s = wave_sum(s);
  int lane = threadIdx.x % warpSize, wid = threadIdx.x / warpSize;
  if (lane == 0) partial[wid] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int w = 0; w < (blockDim.x + warpSize - 1) / warpSize; ++w) t += partial[w];
    partial[0] = rsqrtf(t + 1e-12f);
  }
  __syncthreads();
  float inv = partial[0];
  for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = row[c] * inv;
}
extern "C" void l2norm(const float* x, float* y, int rows, int cols) {
  float *dx, *dy;
  hipMalloc(&dx, sizeof(float) * rows * cols);
  hipMalloc(&dy, sizeof(float) * rows * cols);
  hipMemcpy(dx, x, sizeof(float) * rows * cols, hipMemcpyHostToDevice);
  hipLaunchKernelGGL(l2norm_rows, dim3(rows), dim3(256), 256 / 64 * sizeof(float), 0, dx, dy, cols);
  hipMemcpy(y, dy, sizeof(float) * rows * cols, hipMemcpyDeviceToHost);
  hipFree(dx); hipFree(dy);
}
