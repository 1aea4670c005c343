#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(128) default_function_kernel(float* __restrict__ A, float* __restrict__ A_red) {
  float normal_reduce_temp0[1];
  __shared__ float red_buf_staging[4];
  float red_buf0[1];
  unsigned mask[1];
  float t0[1];
  normal_reduce_temp0[0] = -3.402823e+38f;
  for (int k1_outer = 0; k1_outer < 2; ++k1_outer) {
    normal_reduce_temp0[0] = max(normal_reduce_temp0[0], A[(((((int)blockIdx.x) * 256) + (k1_outer * 128)) + ((int)threadIdx.x))]);
  }
  red_buf0[0] = normal_reduce_temp0[0];
  mask[0] = 0xffffffffu;
  t0[0] = __shfl_xor_sync(mask[0], red_buf0[0], 16, 32);
  red_buf0[0] = max(red_buf0[0], t0[0]);
  t0[0] = __shfl_xor_sync(mask[0], red_buf0[0], 8, 32);
  red_buf0[0] = max(red_buf0[0], t0[0]);
  t0[0] = __shfl_xor_sync(mask[0], red_buf0[0], 4, 32);
  red_buf0[0] = max(red_buf0[0], t0[0]);
  t0[0] = __shfl_xor_sync(mask[0], red_buf0[0], 2, 32);
  red_buf0[0] = max(red_buf0[0], t0[0]);
  t0[0] = __shfl_xor_sync(mask[0], red_buf0[0], 1, 32);
  red_buf0[0] = max(red_buf0[0], t0[0]);
  if ((((int)threadIdx.x) & 31) == 0) {
    red_buf_staging[(((int)threadIdx.x) >> 5)] = red_buf0[0];
  }
  __syncthreads();
  if (((int)threadIdx.x) < 32) {
    red_buf0[0] = ((((int)threadIdx.x) < 4) ? red_buf_staging[((int)threadIdx.x)] : -3.402823e+38f);
    t0[0] = __shfl_down_sync(0xffffffffu, red_buf0[0], 2, 32);
    red_buf0[0] = max(red_buf0[0], t0[0]);
    t0[0] = __shfl_down_sync(0xffffffffu, red_buf0[0], 1, 32);
    red_buf0[0] = max(red_buf0[0], t0[0]);
    if (((int)threadIdx.x) == 0) {
      A_red[((int)blockIdx.x)] = red_buf0[0];
    }
  }
}

extern "C" void max_kernel(float* A, float* A_red, int rows, int cols) {
  float* d_A;
  float* d_A_red;
  cudaMalloc(&d_A, (rows * cols) * sizeof(float));
  cudaMalloc(&d_A_red, rows * sizeof(float));
  cudaMemcpy(d_A, A, (rows * cols) * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<rows, 128>>>(d_A, d_A_red);
  cudaMemcpy(A_red, d_A_red, rows * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_A_red);
}
