#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ data, float* __restrict__ pool_sum) {
  float pool_sum_local[1];
  if (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) < 384) {
    pool_sum_local[0] = 0.000000e+00f;
    for (int rv0 = 0; rv0 < 3; ++rv0) {
      for (int rv1 = 0; rv1 < 3; ++rv1) {
        pool_sum_local[0] = (pool_sum_local[0] + data[(((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 384) * 1944) + (((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 384) / 96) * 2) + rv0) * 216)) + (((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 96) / 24) * 2) + rv1) * 24)) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 24))]);
      }
    }
    pool_sum[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = pool_sum_local[0];
  }
}

extern "C" void sumpool_kernel(float* x, float* out) {
  float* d_x;
  float* d_out;
  cudaMalloc(&d_x, 1944 * sizeof(float));
  cudaMalloc(&d_out, 384 * sizeof(float));
  cudaMemcpy(d_x, x, 1944 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<2, 256>>>(d_x, d_out);
  cudaMemcpy(out, d_out, 384 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_out);
}
