#include <hip/hip_runtime.h>
__global__ void block_sum(const float* x, float* partial, int n) {
  HIP_DYNAMIC_SHARED(float, buf)
  int tid = hipThreadIdx_x;
  int i = hipBlockIdx_x * hipBlockDim_x + tid;
  buf[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = hipBlockDim_x / 2; s > 0; s >>= 1) {
    if (tid < s) buf[tid] += buf[tid + s];
    __syncthreads();
  }
  if (tid == 0) partial[hipBlockIdx_x] = buf[0];
}
extern "C" void block_sums(const float* x, float* partial, int n) {
  float *dx, *dp;
  int blocks = (n + 255) / 256;
  hipMalloc(&dx, n * sizeof(float)); hipMalloc(&dp, blocks * sizeof(float));
  hipMemcpy(dx, x, n * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(block_sum, dim3(blocks), dim3(256), 256 * sizeof(float), 0, dx, dp, n);
  hipMemcpy(partial, dp, blocks * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dx); hipFree(dp);
}
