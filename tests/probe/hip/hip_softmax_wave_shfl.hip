// Row softmax, one 256-thread block per row. Wave-level butterfly with
// __shfl_xor (no mask, width = warpSize: 64 on CDNA, 32 elsewhere), then a
// cross-wave pass through shared memory.
#include <hip/hip_runtime.h>
#include <cfloat>
#include <cstdio>

#define HIP_CHECK(expr)                                                          \
  do {                                                                           \
    hipError_t status_ = (expr);                                                 \
    if (status_ != hipSuccess)                                                   \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, hipGetErrorString(status_)); \
  } while (0)

template <bool IS_MAX>
__device__ inline float block_allreduce(float v, float* shared) {
  const int lane = threadIdx.x % warpSize;
  const int wid = threadIdx.x / warpSize;
  const int nwaves = (blockDim.x + warpSize - 1) / warpSize;
  for (int m = warpSize / 2; m > 0; m >>= 1) {
    float o = __shfl_xor(v, m);
    v = IS_MAX ? fmaxf(v, o) : v + o;
  }
  if (lane == 0) shared[wid] = v;
  __syncthreads();
  if (wid == 0) {
    v = lane < nwaves ? shared[lane] : (IS_MAX ? -FLT_MAX : 0.0f);
    for (int m = warpSize / 2; m > 0; m >>= 1) {
      float o = __shfl_xor(v, m);
      v = IS_MAX ? fmaxf(v, o) : v + o;
    }
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  float r = shared[0];
  __syncthreads();  // shared is reused by the next call
  return r;
}

__global__ void __launch_bounds__(256) softmax_rows_kernel(const float* __restrict__ x,
                                                           float* __restrict__ y, int cols) {
  __shared__ float red[64];
  const float* xr = x + (size_t)hipBlockIdx_x * cols;
  float* yr = y + (size_t)hipBlockIdx_x * cols;
  float m = -FLT_MAX;
  for (int i = hipThreadIdx_x; i < cols; i += hipBlockDim_x) m = fmaxf(m, xr[i]);
  m = block_allreduce<true>(m, red);
  float s = 0.0f;
  for (int i = hipThreadIdx_x; i < cols; i += hipBlockDim_x) s += expf(xr[i] - m);
  s = block_allreduce<false>(s, red);
  const float inv = 1.0f / s;
  for (int i = hipThreadIdx_x; i < cols; i += hipBlockDim_x) yr[i] = expf(xr[i] - m) * inv;
}

extern "C" void softmax_forward(const float* in, float* out, int rows, int cols) {
  size_t bytes = (size_t)rows * cols * sizeof(float);
  hipStream_t stream;
  HIP_CHECK(hipStreamCreate(&stream));
  float *d_x, *d_y;
  HIP_CHECK(hipMalloc(&d_x, bytes));
  HIP_CHECK(hipMalloc(&d_y, bytes));
  HIP_CHECK(hipMemcpyAsync(d_x, in, bytes, hipMemcpyHostToDevice, stream));
  hipLaunchKernelGGL(softmax_rows_kernel, dim3(rows), dim3(256), 0, stream, d_x, d_y, cols);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpyAsync(out, d_y, bytes, hipMemcpyDeviceToHost, stream));
  HIP_CHECK(hipStreamSynchronize(stream));
  HIP_CHECK(hipFree(d_x));
  HIP_CHECK(hipFree(d_y));
  HIP_CHECK(hipStreamDestroy(stream));
}
