// Element-wise add launched with hipLaunchKernelGGL, grid-stride with the HIP built-ins
// (hipBlockIdx_x / hipBlockDim_x / hipGridDim_x are the older HIP spellings, still seen in ROCm code).
#include <hip/hip_runtime.h>

#define HIP_CHECK(cmd) do { hipError_t e = (cmd); if (e != hipSuccess) { return; } } while (0)

__global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                           size_t n) {
  size_t i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  const size_t stride = hipBlockDim_x * hipGridDim_x;
  for (; i < n; i += stride) c[i] = a[i] + b[i];
}

extern "C" void vec_add(const float* a, const float* b, float* c, int n) {
  float *da, *db, *dc;
  HIP_CHECK(hipMalloc(&da, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&db, n * sizeof(float)));
  HIP_CHECK(hipMalloc(&dc, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(da, a, n * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(db, b, n * sizeof(float), hipMemcpyHostToDevice));
  const unsigned blocks = 4, threads = 256;
  hipLaunchKernelGGL(vector_add, dim3(blocks), dim3(threads), 0, 0, da, db, dc, (size_t)n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipMemcpy(c, dc, n * sizeof(float), hipMemcpyDeviceToHost));
  hipFree(da);
  hipFree(db);
  hipFree(dc);
}
