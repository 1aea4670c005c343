#include <cfloat>
#include <hip/hip_runtime.h>

__device__ inline float wave_reduce(float v) {
  for (int offset = warpSize / 2; offset > 0; offset >>= 1) {
    const float other = __shfl_down(v, offset);
    v += other;
  }
  return v;  // lane 0 of the wavefront holds the result
}

// sum over the last axis: out[row] = sum(in[row, 0:cols]); one block per row.
__global__ void sum_rows(const float* __restrict__ in, float* __restrict__ out, int cols) {
  __shared__ float partial[32];  // one slot per wavefront (>= 1024 / warpSize)
  const float* row = in + (size_t)blockIdx.x * cols;
  float acc = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    acc += row[j];
  }
  acc = wave_reduce(acc);
  const int lane = threadIdx.x % warpSize;
  const int wave = threadIdx.x / warpSize;
  if (lane == 0) partial[wave] = acc;
  __syncthreads();
  if (wave == 0) {
    const int waves = blockDim.x / warpSize;
    acc = (lane < waves) ? partial[lane] : 0.0f;
    acc = wave_reduce(acc);
    if (lane == 0) out[blockIdx.x] = acc;
  }
}

extern "C" void sum_kernel(float* x, float* out, int rows, int cols) {
  float* d_x;
  float* d_out;
  hipMalloc((void**)&d_x, (rows * cols) * sizeof(float));
  hipMalloc((void**)&d_out, rows * sizeof(float));
  hipMemcpy(d_x, x, (rows * cols) * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(sum_rows, dim3(rows), dim3(256), 0, 0, d_x, d_out, cols);
  hipMemcpy(out, d_out, rows * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_out);
}
