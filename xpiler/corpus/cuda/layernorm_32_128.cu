#include <cuda_runtime.h>

__device__ __forceinline__ float warp_reduce_sum(float val) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    val += __shfl_xor_sync(0xffffffff, val, offset);
  }
  return val;
}

// Sum over the block; every thread gets the result. `shared` holds one float per warp.
__device__ float block_reduce_sum(float val, float* shared) {
  const int lane = threadIdx.x & 31;
  const int wid = threadIdx.x >> 5;
  val = warp_reduce_sum(val);
  if (lane == 0) shared[wid] = val;
  __syncthreads();
  val = (lane < (blockDim.x >> 5)) ? shared[lane] : 0.0f;
  val = warp_reduce_sum(val);
  __syncthreads();  // `shared` may be reused right away
  return val;
}

// y = (x - mean) / sqrt(var + eps) * gamma + beta over each row of length `cols`.
// Dynamic shared memory: cols floats (row cache) + 32 floats (warp partials).
__global__ void layernorm_kernel_dev(const float* __restrict__ x, const float* __restrict__ gamma,
                                     const float* __restrict__ beta, float* __restrict__ y, int cols, float eps) {
  extern __shared__ float smem[];
  float* row_cache = smem;
  float* partial = smem + cols;
  const float* xr = x + (size_t)blockIdx.x * cols;
  float* yr = y + (size_t)blockIdx.x * cols;

  float sum = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float v = xr[j];
    row_cache[j] = v;
    sum += v;
  }
  const float mean = block_reduce_sum(sum, partial) / cols;

  float sq = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float d = row_cache[j] - mean;
    sq += d * d;
  }
  const float var = block_reduce_sum(sq, partial) / cols;
  const float inv_std = rsqrtf(var + eps);

  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    yr[j] = (row_cache[j] - mean) * inv_std * gamma[j] + beta[j];
  }
}

extern "C" void layernorm_kernel(float* x, float* gamma, float* beta, float* out, int rows, int cols) {
  float* d_x;
  float* d_gamma;
  float* d_beta;
  float* d_out;
  cudaMalloc(&d_x, (rows * cols) * sizeof(float));
  cudaMalloc(&d_gamma, cols * sizeof(float));
  cudaMalloc(&d_beta, cols * sizeof(float));
  cudaMalloc(&d_out, (rows * cols) * sizeof(float));
  cudaMemcpy(d_x, x, (rows * cols) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_gamma, gamma, cols * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_beta, beta, cols * sizeof(float), cudaMemcpyHostToDevice);
  size_t smem = (cols + 32) * sizeof(float);
  layernorm_kernel_dev<<<rows, 128, smem>>>(d_x, d_gamma, d_beta, d_out, cols, 1e-5f);
  cudaMemcpy(out, d_out, (rows * cols) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_gamma);
  cudaFree(d_beta);
  cudaFree(d_out);
}
