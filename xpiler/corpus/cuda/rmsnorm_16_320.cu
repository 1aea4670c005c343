#include <cuda_runtime.h>

// out[r][j] = x[r][j] * rsqrt(mean_j(x[r][j]^2) + eps) * weight[j]   (R = 16, C = 320)
__global__ void __launch_bounds__(128) rmsnorm_kernel_dev(const float* __restrict__ x, const float* __restrict__ weight,
                                                         float* __restrict__ out) {
  __shared__ float warp_sums[4];
  __shared__ float inv_rms;
  const float* xr = x + blockIdx.x * 320;
  float ss = 0.0f;
  for (int j = threadIdx.x; j < 320; j += 128) {
    const float v = xr[j];
    ss += v * v;
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    ss += __shfl_down_sync(0xffffffff, ss, offset);
  }
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < 4; ++w) total += warp_sums[w];
    inv_rms = rsqrtf(total / 320.0f + 1e-5f);
  }
  __syncthreads();
  for (int j = threadIdx.x; j < 320; j += 128) {
    out[blockIdx.x * 320 + j] = xr[j] * inv_rms * weight[j];
  }
}

extern "C" void rmsnorm_kernel(float* x, float* weight, float* out) {
  float* d_x;
  float* d_weight;
  float* d_out;
  cudaMalloc(&d_x, 5120 * sizeof(float));
  cudaMalloc(&d_weight, 320 * sizeof(float));
  cudaMalloc(&d_out, 5120 * sizeof(float));
  cudaMemcpy(d_x, x, 5120 * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_weight, weight, 320 * sizeof(float), cudaMemcpyHostToDevice);
  rmsnorm_kernel_dev<<<16, 128>>>(d_x, d_weight, d_out);
  cudaMemcpy(out, d_out, 5120 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_weight);
  cudaFree(d_out);
}
