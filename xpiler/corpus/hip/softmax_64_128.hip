#include <cfloat>
#include <hip/hip_runtime.h>

__global__ void __launch_bounds__(256) softmax_rows_wave(const float* __restrict__ x, float* __restrict__ y,
                                                         int rows, int cols) {
  const int waves_per_block = blockDim.x / warpSize;
  const int row = blockIdx.x * waves_per_block + threadIdx.x / warpSize;
  const int lane = threadIdx.x % warpSize;
  if (row >= rows) return;
  const float* xr = x + (size_t)row * cols;
  float* yr = y + (size_t)row * cols;
  float m = -FLT_MAX;
  for (int j = lane; j < cols; j += warpSize) m = fmaxf(m, xr[j]);
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) m = fmaxf(m, __shfl_xor(m, mask));
  float s = 0.0f;
  for (int j = lane; j < cols; j += warpSize) s += expf(xr[j] - m);
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) s += __shfl_xor(s, mask);
  const float inv = 1.0f / s;
  for (int j = lane; j < cols; j += warpSize) yr[j] = expf(xr[j] - m) * inv;
}

extern "C" void softmax_kernel(float* x, float* out, int rows, int cols) {
  float* d_x;
  float* d_out;
  hipMalloc((void**)&d_x, (rows * cols) * sizeof(float));
  hipMalloc((void**)&d_out, (rows * cols) * sizeof(float));
  hipMemcpy(d_x, x, (rows * cols) * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(softmax_rows_wave, dim3((rows + 3) / 4), dim3(256), 0, 0, d_x, d_out, rows, cols);
  hipMemcpy(out, d_out, (rows * cols) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_out);
}
