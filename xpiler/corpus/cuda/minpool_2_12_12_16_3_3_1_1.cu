#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ data, float* __restrict__ pool_min) {
  float pool_min_local[1];
  if (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) < 3200) {
    pool_min_local[0] = 3.402823e+38f;
    for (int rv0 = 0; rv0 < 3; ++rv0) {
      for (int rv1 = 0; rv1 < 3; ++rv1) {
        pool_min_local[0] = min(pool_min_local[0], data[(((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 1600) * 2304) + ((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 1600) / 160) + rv0) * 192)) + ((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 160) / 16) + rv1) * 16)) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 16))]);
      }
    }
    pool_min[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = pool_min_local[0];
  }
}

extern "C" void minpool_kernel(float* x, float* out) {
  float* d_x;
  float* d_out;
  cudaMalloc(&d_x, 4608 * sizeof(float));
  cudaMalloc(&d_out, 3200 * sizeof(float));
  cudaMemcpy(d_x, x, 4608 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<13, 256>>>(d_x, d_out);
  cudaMemcpy(out, d_out, 3200 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_out);
}
