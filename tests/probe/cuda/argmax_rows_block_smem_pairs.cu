// Row-wise max + argmax (torch.max(x, dim=1)): x[rows, cols] -> values[rows], indices[rows] (int32).
// One 256-thread block per row. Each thread scans a strided subset keeping (value, index);
// pairs are then combined by a shared-memory tree reduction. Ties resolve to the smallest index
// and NaN counts as the maximum (first NaN wins), matching PyTorch, so the result is unique.
#include <cuda_runtime.h>
#include <math.h>

#define AM_THREADS 256

__device__ __forceinline__ bool better(float v, int i, float bv, int bi) {
  const bool vn = isnan(v), bn = isnan(bv);
  if (vn || bn) {
    if (vn && bn) return i < bi;
    return vn;
  }
  return v > bv || (v == bv && i < bi);
}

__global__ void argmax_rows_kernel(const float* __restrict__ x, float* __restrict__ values,
                                   int* __restrict__ indices, int cols) {
  __shared__ float sv[AM_THREADS];
  __shared__ int si[AM_THREADS];
  const int t = threadIdx.x;
  const float* xr = x + (size_t)blockIdx.x * cols;
  float bv = -INFINITY;
  int bi = 0x7fffffff;
  for (int c = t; c < cols; c += AM_THREADS) {
    const float v = xr[c];
    if (better(v, c, bv, bi)) { bv = v; bi = c; }
  }
  sv[t] = bv;
  si[t] = bi;
  __syncthreads();
  for (int s = AM_THREADS / 2; s > 0; s >>= 1) {
    if (t < s && better(sv[t + s], si[t + s], sv[t], si[t])) {
      sv[t] = sv[t + s];
      si[t] = si[t + s];
    }
    __syncthreads();
  }
  if (t == 0) {
    values[blockIdx.x] = sv[0];
    indices[blockIdx.x] = si[0] == 0x7fffffff ? 0 : si[0];
  }
}

extern "C" void argmax_rows(const float* x, float* values, int* indices, int rows, int cols) {
  float *dx, *dv;
  int* di;
  cudaMalloc(&dx, (size_t)rows * cols * sizeof(float));
  cudaMalloc(&dv, (size_t)rows * sizeof(float));
  cudaMalloc(&di, (size_t)rows * sizeof(int));
  cudaMemcpy(dx, x, (size_t)rows * cols * sizeof(float), cudaMemcpyHostToDevice);
  argmax_rows_kernel<<<rows, AM_THREADS>>>(dx, dv, di, cols);
  cudaMemcpy(values, dv, (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(indices, di, (size_t)rows * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dv);
  cudaFree(di);
}
