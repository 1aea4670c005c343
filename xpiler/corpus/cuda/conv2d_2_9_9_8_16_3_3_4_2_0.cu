#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(64) default_function_kernel(float* __restrict__ conv2d_nhwc, float* __restrict__ data, float* __restrict__ kernel) {
  float conv2d_nhwc_local[1];
  conv2d_nhwc_local[0] = 0.000000e+00f;
  for (int ry = 0; ry < 3; ++ry) {
    for (int rx = 0; rx < 3; ++rx) {
      for (int rc = 0; rc < 4; ++rc) {
        conv2d_nhwc_local[0] = (conv2d_nhwc_local[0] + (data[(((((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) / 256) * 648) + (((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 256) / 64) * 2) + ry) * 72)) + (((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 64) / 16) * 2) + rx) * 8)) + ((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 16) / 8) * 4) + rc)) - 0))] * kernel[(((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 16) * 36) + (ry * 12)) + (rx * 4)) + rc)]));
      }
    }
  }
  conv2d_nhwc[((((int)blockIdx.x) * 64) + ((int)threadIdx.x))] = conv2d_nhwc_local[0];
}

extern "C" void conv2d_kernel(float* input, float* weight, float* output) {
  float* d_input;
  float* d_weight;
  float* d_output;
  cudaMalloc(&d_input, 1296 * sizeof(float));
  cudaMalloc(&d_weight, 576 * sizeof(float));
  cudaMalloc(&d_output, 512 * sizeof(float));
  cudaMemcpy(d_input, input, 1296 * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_weight, weight, 576 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<8, 64>>>(d_output, d_input, d_weight);
  cudaMemcpy(output, d_output, 512 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_input);
  cudaFree(d_weight);
  cudaFree(d_output);
}
