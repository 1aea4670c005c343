#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ data, float* __restrict__ pool_max) {
  float pool_max_local[1];
  pool_max_local[0] = -3.402823e+38f;
  for (int rv0 = 0; rv0 < 2; ++rv0) {
    for (int rv1 = 0; rv1 < 2; ++rv1) {
      pool_max_local[0] = max(pool_max_local[0], data[(((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 2048) * 8192) + (((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 2048) / 256) * 2) + rv0) * 512)) + (((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 256) / 32) * 2) + rv1) * 32)) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 32))]);
    }
  }
  pool_max[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = pool_max_local[0];
}

extern "C" void maxpool_kernel(float* x, float* out) {
  float* d_x;
  float* d_out;
  cudaMalloc(&d_x, 8192 * sizeof(float));
  cudaMalloc(&d_out, 2048 * sizeof(float));
  cudaMemcpy(d_x, x, 8192 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<8, 256>>>(d_x, d_out);
  cudaMemcpy(out, d_out, 2048 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_out);
}
