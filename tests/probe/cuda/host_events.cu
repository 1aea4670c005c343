#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
  fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)
__constant__ float c_coeffs[4];
__global__ void poly3(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = ((c_coeffs[3] * v + c_coeffs[2]) * v + c_coeffs[1]) * v + c_coeffs[0];
  }
}
extern "C" void poly3_host(const float* x, float* y, const float* coeffs, int n) {
  float *dx = nullptr, *dy = nullptr;
  CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CHECK(cudaMalloc(&dy, n * sizeof(float)));
  CHECK(cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyToSymbol(c_coeffs, coeffs, 4 * sizeof(float)));
  cudaEvent_t start, stop;
  cudaEventCreate(&start); cudaEventCreate(&stop);
  cudaEventRecord(start);
  poly3<<<(n + 255) / 256, 256>>>(dx, dy, n);
  CHECK(cudaGetLastError());
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0.f;
  cudaEventElapsedTime(&ms, start, stop);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  cudaEventDestroy(start); cudaEventDestroy(stop);
  cudaFree(dx); cudaFree(dy);
}
