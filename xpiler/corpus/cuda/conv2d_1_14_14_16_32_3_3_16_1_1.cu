#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(64) default_function_kernel(float* __restrict__ conv2d_nhwc, float* __restrict__ data, float* __restrict__ kernel) {
  float conv2d_nhwc_local[1];
  conv2d_nhwc_local[0] = 0.000000e+00f;
  for (int ry = 0; ry < 3; ++ry) {
    for (int rx = 0; rx < 3; ++rx) {
      for (int rc = 0; rc < 16; ++rc) {
        conv2d_nhwc_local[0] = (conv2d_nhwc_local[0] + ((((((1 <= (((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 6272) / 448) + ry)) && ((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 6272) / 448) + ry) < 15)) && (1 <= (((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 448) / 32) + rx))) && ((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 448) / 32) + rx) < 15)) ? data[(((((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) / 6272) * 3136) + ((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 6272) / 448) + ry) * 224)) + ((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 448) / 32) + rx) * 16)) + rc) - 240))] : 0.000000e+00f) * kernel[(((((((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) % 32) * 144) + (ry * 48)) + (rx * 16)) + rc)]));
      }
    }
  }
  conv2d_nhwc[((((int)blockIdx.x) * 64) + ((int)threadIdx.x))] = conv2d_nhwc_local[0];
}

extern "C" void conv2d_kernel(float* input, float* weight, float* output) {
  float* d_input;
  float* d_weight;
  float* d_output;
  cudaMalloc(&d_input, 3136 * sizeof(float));
  cudaMalloc(&d_weight, 4608 * sizeof(float));
  cudaMalloc(&d_output, 6272 * sizeof(float));
  cudaMemcpy(d_input, input, 3136 * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_weight, weight, 4608 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<98, 64>>>(d_output, d_input, d_weight);
  cudaMemcpy(output, d_output, 6272 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_input);
  cudaFree(d_weight);
  cudaFree(d_output);
}
