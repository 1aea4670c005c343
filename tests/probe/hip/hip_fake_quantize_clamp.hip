// Kernel-only: per-tensor and per-channel fake quantization (quantize -> clamp ->
// dequantize), plus a plain clamp, in the style of QAT observers.
#include <hip/hip_runtime.h>
#include <cstdint>

__device__ __forceinline__ float fake_quant(float x, float inv_scale, float scale,
                                            int zero_point, int qmin, int qmax) {
  int q = static_cast<int>(nearbyintf(x * inv_scale)) + zero_point;
  q = q < qmin ? qmin : (q > qmax ? qmax : q);
  return (q - zero_point) * scale;
}

__global__ void __launch_bounds__(256)
    fake_quant_per_tensor(const float* __restrict__ x, float* __restrict__ y, int n,
                          float scale, int zero_point, int qmin, int qmax) {
  const float inv = 1.0f / scale;
  for (int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x; i < n;
       i += hipBlockDim_x * hipGridDim_x)
    y[i] = fake_quant(x[i], inv, scale, zero_point, qmin, qmax);
}

// x is [outer, channels, inner]; one (scale, zp) per channel.
__global__ void __launch_bounds__(256)
    fake_quant_per_channel(const float* __restrict__ x, const float* __restrict__ scales,
                           const int32_t* __restrict__ zero_points, float* __restrict__ y,
                           int channels, int inner, int n, int qmin, int qmax) {
  int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  if (i >= n) return;
  int c = (i / inner) % channels;
  float s = scales[c];
  y[i] = fake_quant(x[i], 1.0f / s, s, zero_points[c], qmin, qmax);
}

// Quantize to int8 storage with saturation.
__global__ void quantize_to_int8(const float* __restrict__ x, int8_t* __restrict__ q, int n,
                                 float scale, int zero_point) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = nearbyintf(x[i] / scale) + zero_point;
    v = fminf(fmaxf(v, -128.0f), 127.0f);
    q[i] = static_cast<int8_t>(v);
  }
}

__global__ void clamp_kernel(const float* __restrict__ x, float* __restrict__ y, int n,
                             float lo, float hi) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fminf(fmaxf(x[i], lo), hi);
}
