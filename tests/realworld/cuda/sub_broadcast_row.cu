// out = x - y with a 2-D block (threadIdx.y rows, threadIdx.x columns) and unsigned indices,
// host launcher using cudaMallocManaged-free explicit copies and a stream.
#include <cuda_runtime.h>

__global__ void sub2d_kernel(const float* x, const float* y, float* out, unsigned rows, unsigned cols) {
  unsigned c = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) {
    unsigned idx = r * cols + c;
    out[idx] = x[idx] - y[idx];
  }
}

extern "C" void sub2d(const float* x, const float* y, float* out, int rows, int cols) {
  float *dx = nullptr, *dy = nullptr, *dout = nullptr;
  const size_t n = (size_t)rows * cols;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMalloc(&dout, n * sizeof(float));
  cudaMemcpyAsync(dx, x, n * sizeof(float), cudaMemcpyHostToDevice, stream);
  cudaMemcpyAsync(dy, y, n * sizeof(float), cudaMemcpyHostToDevice, stream);
  dim3 block(16, 16);
  dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
  sub2d_kernel<<<grid, block, 0, stream>>>(dx, dy, dout, rows, cols);
  cudaMemcpyAsync(out, dout, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  cudaFree(dx);
  cudaFree(dy);
  cudaFree(dout);
}
