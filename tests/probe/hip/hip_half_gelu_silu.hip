// fp16 activation path: float -> __half, GELU(tanh approx) or SiLU in half storage
// with float math, __half -> float. Mirrors mixed-precision inference kernels.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

__global__ void float_to_half_kernel(const float* __restrict__ in, __half* __restrict__ out,
                                     int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __float2half(in[i]);
}

template <bool USE_GELU>
__global__ void __launch_bounds__(256)
    half_act_kernel(const __half* __restrict__ x, const __half* __restrict__ bias,
                    __half* __restrict__ y, int n, int hidden) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = __half2float(x[i]) + __half2float(bias[i % hidden]);
  float r;
  if (USE_GELU) {
    const float k0 = 0.7978845608028654f, k1 = 0.044715f;
    r = 0.5f * v * (1.0f + tanhf(k0 * (v + k1 * v * v * v)));
  } else {
    r = v / (1.0f + expf(-v));
  }
  y[i] = __float2half(r);
}

__global__ void half_to_float_kernel(const __half* __restrict__ in, float* __restrict__ out,
                                     int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __half2float(in[i]);
}

extern "C" void half_bias_act(const float* in, const float* bias, float* out, int n,
                              int hidden, int use_gelu) {
  float *d_f, *d_bf;
  __half *d_h, *d_bh, *d_y;
  hipMalloc(&d_f, n * sizeof(float));
  hipMalloc(&d_bf, hidden * sizeof(float));
  hipMalloc(&d_h, n * sizeof(__half));
  hipMalloc(&d_bh, hidden * sizeof(__half));
  hipMalloc(&d_y, n * sizeof(__half));
  hipMemcpy(d_f, in, n * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_bf, bias, hidden * sizeof(float), hipMemcpyHostToDevice);
  const int tb = 256;
  hipLaunchKernelGGL(float_to_half_kernel, dim3((n + tb - 1) / tb), dim3(tb), 0, 0, d_f, d_h, n);
  hipLaunchKernelGGL(float_to_half_kernel, dim3((hidden + tb - 1) / tb), dim3(tb), 0, 0, d_bf,
                     d_bh, hidden);
  if (use_gelu)
    hipLaunchKernelGGL(half_act_kernel<true>, dim3((n + tb - 1) / tb), dim3(tb), 0, 0, d_h,
                       d_bh, d_y, n, hidden);
  else
    hipLaunchKernelGGL(half_act_kernel<false>, dim3((n + tb - 1) / tb), dim3(tb), 0, 0, d_h,
                       d_bh, d_y, n, hidden);
  hipLaunchKernelGGL(half_to_float_kernel, dim3((n + tb - 1) / tb), dim3(tb), 0, 0, d_y, d_f, n);
  hipMemcpy(out, d_f, n * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_f);
  hipFree(d_bf);
  hipFree(d_h);
  hipFree(d_bh);
  hipFree(d_y);
}
