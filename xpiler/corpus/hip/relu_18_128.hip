#include <hip/hip_runtime.h>

// 2-D launch over [rows, cols]: dim3 block(64, 4), one wavefront per row segment.
__global__ void relu_forward(const float* __restrict__ x, float* __restrict__ out, int rows, int cols) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < rows && col < cols) {
    const int idx = row * cols + col;
    out[idx] = fmaxf(x[idx], 0.0f);
  }
}

extern "C" void relu_kernel(float* x, float* out, int rows, int cols) {
  float* d_x;
  float* d_out;
  hipMalloc((void**)&d_x, (rows * cols) * sizeof(float));
  hipMalloc((void**)&d_out, (rows * cols) * sizeof(float));
  hipMemcpy(d_x, x, (rows * cols) * sizeof(float), hipMemcpyHostToDevice);
  dim3 block(64, 4);
  dim3 grid((cols + 63) / 64, (rows + 3) / 4);
  hipLaunchKernelGGL(relu_forward, grid, block, 0, 0, d_x, d_out, rows, cols);
  hipMemcpy(out, d_out, (rows * cols) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_out);
}
