#include <hip/hip_runtime.h>
#include <stdint.h>
// each thread: dot product of 4 packed int8 pairs, accumulate int32
__global__ void dot4_kernel(const int32_t* __restrict__ a, const int32_t* __restrict__ b, int32_t* __restrict__ c, int n) {
  int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  if (i >= n) return;
  int32_t va = a[i], vb = b[i], acc = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    int8_t xa = (int8_t)((va >> (8 * k)) & 0xff);
    int8_t xb = (int8_t)((vb >> (8 * k)) & 0xff);
    acc += (int32_t)xa * (int32_t)xb;
  }
  c[i] = acc;
}
extern "C" void dot4(const int32_t* a, const int32_t* b, int32_t* c, int n) {
  int32_t *da, *db, *dc;
  hipMalloc((void**)&da, n * sizeof(int32_t)); hipMalloc((void**)&db, n * sizeof(int32_t)); hipMalloc((void**)&dc, n * sizeof(int32_t));
  hipMemcpy(da, a, n * sizeof(int32_t), hipMemcpyHostToDevice);
  hipMemcpy(db, b, n * sizeof(int32_t), hipMemcpyHostToDevice);
  dot4_kernel<<<dim3((n + 127) / 128), dim3(128), 0, 0>>>(da, db, dc, n);
  hipMemcpy(c, dc, n * sizeof(int32_t), hipMemcpyDeviceToHost);
  hipFree(da); hipFree(db); hipFree(dc);
}
