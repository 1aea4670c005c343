#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_add, float* __restrict__ data, float* __restrict__ moving_mean, float* __restrict__ moving_var, float* __restrict__ gamma, float* __restrict__ beta) {
  T_add[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = ((((data[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] - moving_mean[((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 1024) / 64)]) / sqrtf((moving_var[((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 1024) / 64)] + 1.000000e-05f))) * gamma[((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 1024) / 64)]) + beta[((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 1024) / 64)]);
}

extern "C" void batchnorm_kernel(float* x, float* mean, float* var, float* gamma, float* beta, float* out, int N, int C, int H, int W) {
  float* d_x;
  float* d_mean;
  float* d_var;
  float* d_gamma;
  float* d_beta;
  float* d_out;
  cudaMalloc(&d_x, (N * C * H * W) * sizeof(float));
  cudaMalloc(&d_mean, C * sizeof(float));
  cudaMalloc(&d_var, C * sizeof(float));
  cudaMalloc(&d_gamma, C * sizeof(float));
  cudaMalloc(&d_beta, C * sizeof(float));
  cudaMalloc(&d_out, (N * C * H * W) * sizeof(float));
  cudaMemcpy(d_x, x, (N * C * H * W) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_mean, mean, C * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_var, var, C * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_gamma, gamma, C * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_beta, beta, C * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<(N * C * H * W) / 256, 256>>>(d_out, d_x, d_mean, d_var, d_gamma, d_beta);
  cudaMemcpy(out, d_out, (N * C * H * W) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_mean);
  cudaFree(d_var);
  cudaFree(d_gamma);
  cudaFree(d_beta);
  cudaFree(d_out);
}
