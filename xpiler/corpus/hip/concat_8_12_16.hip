#include <hip/hip_runtime.h>

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ T_concat, float* __restrict__ x0, float* __restrict__ x1, float* __restrict__ x2) {
  T_concat[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = ((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 384) / 16) < 12) ? x0[(((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 384) * 192) + (((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 384) / 16) - 0) * 16) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 16)))] : ((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 384) / 16) < 16) ? x1[(((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 384) * 64) + (((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 384) / 16) - 12) * 16) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 16)))] : x2[(((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) / 384) * 128) + (((((((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 384) / 16) - 16) * 16) + (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) % 16)))]));
}

extern "C" void concat_kernel(float* x0, float* x1, float* x2, float* out) {
  float* d_x0;
  float* d_x1;
  float* d_x2;
  float* d_out;
  hipMalloc((void**)&d_x0, 1536 * sizeof(float));
  hipMalloc((void**)&d_x1, 512 * sizeof(float));
  hipMalloc((void**)&d_x2, 1024 * sizeof(float));
  hipMalloc((void**)&d_out, 3072 * sizeof(float));
  hipMemcpy(d_x0, x0, 1536 * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_x1, x1, 512 * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_x2, x2, 1024 * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(default_function_kernel, dim3(12), dim3(256), 0, 0, d_out, d_x0, d_x1, d_x2);
  hipMemcpy(out, d_out, 3072 * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x0);
  hipFree(d_x1);
  hipFree(d_x2);
  hipFree(d_out);
}
