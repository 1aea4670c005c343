#include <cuda_runtime.h>

extern "C" __global__ void __launch_bounds__(128) default_function_kernel(float* __restrict__ A, float* __restrict__ T_softmax_maxelem) {
  T_softmax_maxelem[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] = -3.402823e+38f;
  for (int k = 0; k < 100; ++k) {
    T_softmax_maxelem[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] = max(T_softmax_maxelem[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))], A[((((((int)blockIdx.x) * 128) + ((int)threadIdx.x)) * 100) + k)]);
  }
}

extern "C" __global__ void __launch_bounds__(1024) default_function_kernel_1(float* __restrict__ A, float* __restrict__ T_softmax_exp, float* __restrict__ T_softmax_maxelem) {
  if (((((int)blockIdx.x) * 1024) + ((int)threadIdx.x)) < 12800) {
    T_softmax_exp[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] = __expf((A[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] - T_softmax_maxelem[(((((int)blockIdx.x) * 1024) + ((int)threadIdx.x)) / 100)]));
  }
}

extern "C" __global__ void __launch_bounds__(128) default_function_kernel_2(float* __restrict__ T_softmax_exp, float* __restrict__ T_softmax_expsum) {
  T_softmax_expsum[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] = 0.000000e+00f;
  for (int k = 0; k < 100; ++k) {
    T_softmax_expsum[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] = (T_softmax_expsum[((((int)blockIdx.x) * 128) + ((int)threadIdx.x))] + T_softmax_exp[((((((int)blockIdx.x) * 128) + ((int)threadIdx.x)) * 100) + k)]);
  }
}

extern "C" __global__ void __launch_bounds__(1024) default_function_kernel_3(float* __restrict__ T_softmax_exp, float* __restrict__ T_softmax_expsum, float* __restrict__ T_softmax_norm) {
  if (((((int)blockIdx.x) * 1024) + ((int)threadIdx.x)) < 12800) {
    T_softmax_norm[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] = (T_softmax_exp[((((int)blockIdx.x) * 1024) + ((int)threadIdx.x))] / T_softmax_expsum[(((((int)blockIdx.x) * 1024) + ((int)threadIdx.x)) / 100)]);
  }
}

extern "C" void softmax_kernel(float* x, float* out) {
  float* d_x;
  float* d_out;
  float* d_maxelem;
  float* d_expv;
  float* d_expsum;
  cudaMalloc(&d_x, 12800 * sizeof(float));
  cudaMalloc(&d_out, 12800 * sizeof(float));
  cudaMalloc(&d_maxelem, 128 * sizeof(float));
  cudaMalloc(&d_expv, 12800 * sizeof(float));
  cudaMalloc(&d_expsum, 128 * sizeof(float));
  cudaMemcpy(d_x, x, 12800 * sizeof(float), cudaMemcpyHostToDevice);
  default_function_kernel<<<1, 128>>>(d_x, d_maxelem);
  default_function_kernel_1<<<13, 1024>>>(d_x, d_expv, d_maxelem);
  default_function_kernel_2<<<1, 128>>>(d_expv, d_expsum);
  default_function_kernel_3<<<13, 1024>>>(d_expv, d_expsum, d_out);
  cudaMemcpy(out, d_out, 12800 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_out);
  cudaFree(d_maxelem);
  cudaFree(d_expv);
  cudaFree(d_expsum);
}
