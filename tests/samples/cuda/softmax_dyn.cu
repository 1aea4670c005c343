// softmax_64_1024: one block per row, dynamic shared memory for the row.
#include <cuda_runtime.h>
#include <limits>
#include <math.h>

__global__ void softmax_kernel(const float* __restrict__ in, float* __restrict__ out, int cols, float lowest) {
  extern __shared__ float row_buf[];
  __shared__ float red[2];
  const float* src = in + blockIdx.x * cols;
  float* dst = out + blockIdx.x * cols;
  float m = lowest;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    row_buf[c] = src[c];
    m = fmaxf(m, row_buf[c]);
  }
  if (threadIdx.x == 0) red[0] = lowest;
  __syncthreads();
  atomicMax((int*)&red[0], __float_as_int(m));  // valid for non-negative maxima only
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    row_buf[c] = expf(row_buf[c] - red[0]);
    s += row_buf[c];
  }
  if (threadIdx.x == 0) red[1] = 0.0f;
  __syncthreads();
  atomicAdd(&red[1], s);
  __syncthreads();
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    dst[c] = row_buf[c] / red[1];
  }
}

extern "C" void softmax(const float* in, float* out, int rows, int cols) {
  float* d_in = nullptr;
  float* d_out = nullptr;
  const size_t n = static_cast<size_t>(rows) * cols;
  cudaMalloc(reinterpret_cast<void**>(&d_in), n * sizeof(float));
  cudaMalloc(reinterpret_cast<void**>(&d_out), n * sizeof(float));
  cudaMemcpy(d_in, in, n * sizeof(float), cudaMemcpyHostToDevice);
  const float lowest = std::numeric_limits<float>::lowest();
  softmax_kernel<<<rows, 128, cols * sizeof(float)>>>(d_in, d_out, cols, lowest);
  cudaMemcpy(out, d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
}
