// LayerNorm over the last dim: y = (x - mean) / sqrt(var + eps) * gamma + beta, x[rows, D].
// One block per row; blockDim.x (a power of two, host uses 256) threads stride over D.
// Mean and (biased) variance use two separate passes, each finished by a blockDim-wide
// shared-memory tree reduction (dynamic shared memory sized to blockDim.x floats).
#include <cuda_runtime.h>
#include <math.h>

__device__ float block_reduce_sum(float v, float* sh) {
  const unsigned t = threadIdx.x;
  sh[t] = v;
  __syncthreads();
  for (unsigned s = blockDim.x >> 1; s > 0; s >>= 1) {
    if (t < s) sh[t] += sh[t + s];
    __syncthreads();
  }
  const float r = sh[0];
  __syncthreads();  // sh is reused by the next reduction
  return r;
}

__global__ void layernorm_rows_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                      const float* __restrict__ beta, float* __restrict__ y,
                                      int D, float eps) {
  extern __shared__ float sh[];
  const float* xr = x + (size_t)blockIdx.x * D;
  float* yr = y + (size_t)blockIdx.x * D;
  float s = 0.0f;
  for (int i = threadIdx.x; i < D; i += blockDim.x) s += xr[i];
  const float mean = block_reduce_sum(s, sh) / (float)D;
  float q = 0.0f;
  for (int i = threadIdx.x; i < D; i += blockDim.x) {
    const float d = xr[i] - mean;
    q += d * d;
  }
  const float var = block_reduce_sum(q, sh) / (float)D;
  const float rstd = rsqrtf(var + eps);
  for (int i = threadIdx.x; i < D; i += blockDim.x) yr[i] = (xr[i] - mean) * rstd * gamma[i] + beta[i];
}

extern "C" void layernorm_rows(const float* x, const float* gamma, const float* beta, float* y,
                               int rows, int D, float eps) {
  const size_t bx = (size_t)rows * D * sizeof(float), bp = (size_t)D * sizeof(float);
  float *dx, *dg, *db, *dy;
  cudaMalloc(&dx, bx);
  cudaMalloc(&dg, bp);
  cudaMalloc(&db, bp);
  cudaMalloc(&dy, bx);
  cudaMemcpy(dx, x, bx, cudaMemcpyHostToDevice);
  cudaMemcpy(dg, gamma, bp, cudaMemcpyHostToDevice);
  cudaMemcpy(db, beta, bp, cudaMemcpyHostToDevice);
  const int threads = 256;
  layernorm_rows_kernel<<<rows, threads, threads * sizeof(float)>>>(dx, dg, db, dy, D, eps);
  cudaMemcpy(y, dy, bx, cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dg);
  cudaFree(db);
  cudaFree(dy);
}
