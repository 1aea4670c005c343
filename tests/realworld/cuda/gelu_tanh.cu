// GELU (tanh approximation) as in llm.c's gelu_forward_kernel: constexpr constants, a
// forceinline device helper, a launcher computing the grid with a ceil-div helper.
#include <cuda_runtime.h>
#include <math.h>

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCoeff = 0.044715f;

__device__ __forceinline__ float gelu_fwd(float x) {
  float cube = kGeluCoeff * x * x * x;
  return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * (x + cube)));
}

__global__ void gelu_forward_kernel(float* out, const float* inp, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) {
    float xi = inp[i];
    out[i] = gelu_fwd(xi);
  }
}

static inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

extern "C" void gelu_forward(const float* inp, float* out, int N) {
  float *d_inp, *d_out;
  cudaMalloc(&d_inp, N * sizeof(float));
  cudaMalloc(&d_out, N * sizeof(float));
  cudaMemcpy(d_inp, inp, N * sizeof(float), cudaMemcpyHostToDevice);
  const int block_size = 128;
  const int grid_size = ceil_div(N, block_size);
  gelu_forward_kernel<<<grid_size, block_size>>>(d_out, d_inp, N);
  cudaMemcpy(out, d_out, N * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_inp);
  cudaFree(d_out);
}
