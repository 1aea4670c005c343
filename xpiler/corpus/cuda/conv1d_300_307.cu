#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(128) default_function_kernel(float* __restrict__ conv1d, float* __restrict__ data, float* __restrict__ kernel) {
  float conv1d_local[1];
  __shared__ float data_shared[135];
  __shared__ float kernel_shared[8];
  for (int ax0_outer = 0; ax0_outer < 2; ++ax0_outer) {
    if (((ax0_outer * 128) + ((int)threadIdx.x)) < 135) {
      if ((((((int)blockIdx.x) * 128) + (ax0_outer * 128)) + ((int)threadIdx.x)) < 307) {
        data_shared[((ax0_outer * 128) + ((int)threadIdx.x))] = data[(((((int)blockIdx.x) * 128) + (ax0_outer * 128)) + ((int)threadIdx.x))];
      }
    }
  }
  if (((int)threadIdx.x) < 8) {
    kernel_shared[((int)threadIdx.x)] = kernel[((int)threadIdx.x)];
  }
  __syncthreads();
  conv1d_local[0] = 0.000000e+00f;
  for (int rk = 0; rk < 8; ++rk) {
    conv1d_local[0] = (conv1d_local[0] + (data_shared[(((int)threadIdx.x) + rk)] * kernel_shared[rk]));
  }
  if (((((int)blockIdx.x) * 128) + ((int)threadIdx.x)) < 300) {
    conv1d[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] = conv1d_local[0];
  }
}

extern "C" void conv1d_kernel(float* x, float* w, float* out, int out_len, int in_len) {
  float* d_x;
  float* d_w;
  float* d_out;
  cudaMalloc(&d_x, in_len * sizeof(float));
  cudaMalloc(&d_w, (in_len - out_len + 1) * sizeof(float));
  cudaMalloc(&d_out, out_len * sizeof(float));
  cudaMemcpy(d_x, x, in_len * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_w, w, (in_len - out_len + 1) * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<3, 128>>>(d_out, d_x, d_w);
  cudaMemcpy(out, d_out, out_len * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_w);
  cudaFree(d_out);
}
