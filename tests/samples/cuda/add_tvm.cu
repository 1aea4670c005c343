// add_18_128: TVM-style element-wise add, generated-kernel shape with an extern "C" host wrapper.
#include <cuda_runtime.h>
#include <stdio.h>

#define BLOCK_THREADS 256

extern "C" __global__ void __launch_bounds__(256) default_function_kernel(float* __restrict__ A, float* __restrict__ B, float* __restrict__ T_add, int n) {
  if (((((int)blockIdx.x) * 256) + ((int)threadIdx.x)) < n) {
    T_add[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] = (A[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))] + B[((((int)blockIdx.x) * 256) + ((int)threadIdx.x))]);
  }
}

/* Host entry: allocate, copy in, launch once, copy back. */
extern "C" void add_kernel(float* A, float* B, float* C, int n) {
  float *d_A, *d_B, *d_C;
  size_t bytes = n * sizeof(float);
  cudaMalloc((void**)&d_A, bytes);
  cudaMalloc((void**)&d_B, bytes);
  cudaMalloc((void**)&d_C, bytes);
  cudaMemcpy(d_A, A, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(d_B, B, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(d_C, C, bytes, cudaMemcpyHostToDevice);  // TVM wrappers copy the output too
  int blocks = (n + BLOCK_THREADS - 1) / BLOCK_THREADS;
  dim3 grid(blocks);
  dim3 block(BLOCK_THREADS);
  default_function_kernel<<<grid, block>>>(d_A, d_B, d_C, n);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    printf("launch failed: %s\n", cudaGetErrorString(err));
  }
  cudaMemcpy(C, d_C, bytes, cudaMemcpyDeviceToHost);
  cudaFree(d_A);
  cudaFree(d_B);
  cudaFree(d_C);
}
