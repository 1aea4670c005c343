#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ data, float* __restrict__ pool_min) {
  float pool_min_local[1];
  pool_min_local[0] = 3.402823e+38f;
  for (int rv0 = 0; rv0 < 2; ++rv0) {
    for (int rv1 = 0; rv1 < 2; ++rv1) {
      pool_min_local[0] = min(pool_min_local[0], data[(((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 2048) * 8192) + (((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 2048) / 256) * 2) + rv0) * 512)) + (((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 256) / 32) * 2) + rv1) * 32)) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 32))]);
    }
  }
  pool_min[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = pool_min_local[0];
}
