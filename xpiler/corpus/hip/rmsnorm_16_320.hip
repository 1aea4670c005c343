#include <hip/hip_runtime.h>

__device__ inline float wave_sum(float v) {
  for (int mask = warpSize / 2; mask > 0; mask >>= 1) v += __shfl_xor(v, mask);
  return v;  // every lane holds the wavefront total
}

// block-wide sum, result in every thread; `lds` needs one float per wavefront
__device__ float block_sum(float v, float* lds) {
  const int lane = threadIdx.x % warpSize;
  const int wave = threadIdx.x / warpSize;
  const int waves = (blockDim.x + warpSize - 1) / warpSize;
  v = wave_sum(v);
  if (lane == 0) lds[wave] = v;
  __syncthreads();
  float total = 0.0f;
  for (int i = 0; i < waves; ++i) total += lds[i];
  __syncthreads();
  return total;
}

__global__ void rmsnorm_rows(const float* __restrict__ x, const float* __restrict__ weight, float* __restrict__ y,
                             int cols, float eps) {
  extern __shared__ float row_lds[];          // cols floats, then 32 partials
  float* partial = row_lds + cols;
  const float* xr = x + (size_t)blockIdx.x * cols;
  float ss = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float v = xr[j];
    row_lds[j] = v;
    ss += v * v;
  }
  const float inv = rsqrtf(block_sum(ss, partial) / cols + eps);
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    y[(size_t)blockIdx.x * cols + j] = row_lds[j] * inv * weight[j];
  }
}

extern "C" void rmsnorm_kernel(float* x, float* weight, float* out, int rows, int cols) {
  float* d_x;
  float* d_weight;
  float* d_out;
  hipMalloc((void**)&d_x, (rows * cols) * sizeof(float));
  hipMalloc((void**)&d_weight, cols * sizeof(float));
  hipMalloc((void**)&d_out, (rows * cols) * sizeof(float));
  hipMemcpy(d_x, x, (rows * cols) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_weight, weight, cols * sizeof(float), hipMemcpyHostToDevice);
  const size_t lds_bytes = (cols + 32) * sizeof(float);
  hipLaunchKernelGGL(rmsnorm_rows, dim3(rows), dim3(256), lds_bytes, 0, d_x, d_weight, d_out, cols, 1e-5f);
  hipMemcpy(out, d_out, (rows * cols) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x);
  hipFree(d_weight);
  hipFree(d_out);
}
