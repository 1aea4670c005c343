// softmax rows, kernel only, dynamic shared memory.
#include <hip/hip_runtime.h>

__global__ void softmax_rows(const float* __restrict__ in, float* __restrict__ out, int cols) {
  extern __shared__ float buf[];
  const float* row = in + blockIdx.x * cols;
  float m = -3.402823466e+38f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    buf[c] = row[c];
    m = fmaxf(m, buf[c]);
  }
  __syncthreads();
  float s = 0.0f;
  for (int c = 0; c < cols; ++c) s += __expf(buf[c] - m);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    out[blockIdx.x * cols + c] = __expf(buf[c] - m) / s;
  }
}
