#include <hip/hip_runtime.h>

constexpr int N_ = 2, C_ = 4, H_ = 12, W_ = 12, OC_ = 8, KH_ = 3, KW_ = 3;
constexpr int STRIDE = 2, PAD = 1, OH_ = 6, OW_ = 6;

__global__ void __launch_bounds__(256) conv2d_nchw_tiled(const float* __restrict__ input, const float* __restrict__ weight,
                                                         float* __restrict__ output) {
  __shared__ float w_lds[C_ * KH_ * KW_];
  const int n = blockIdx.z / OC_;
  const int oc = blockIdx.z % OC_;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  for (int i = tid; i < C_ * KH_ * KW_; i += blockDim.x * blockDim.y) w_lds[i] = weight[oc * C_ * KH_ * KW_ + i];
  __syncthreads();
  const int ow = blockIdx.x * blockDim.x + threadIdx.x;
  const int oh = blockIdx.y * blockDim.y + threadIdx.y;
  if (oh >= OH_ || ow >= OW_) return;
  float acc = 0.0f;
  for (int ic = 0; ic < C_; ++ic) {
    for (int kh = 0; kh < KH_; ++kh) {
      const int ih = oh * STRIDE - PAD + kh;
      for (int kw = 0; kw < KW_; ++kw) {
        const int iw = ow * STRIDE - PAD + kw;
        const bool inside = ih >= 0 && ih < H_ && iw >= 0 && iw < W_;
        const float v = inside ? input[((n * C_ + ic) * H_ + ih) * W_ + iw] : 0.0f;
        acc += v * w_lds[(ic * KH_ + kh) * KW_ + kw];
      }
    }
  }
  output[((n * OC_ + oc) * OH_ + oh) * OW_ + ow] = acc;
}

extern "C" void conv2dnchw_kernel(float* input, float* weight, float* output) {
  float* d_input;
  float* d_weight;
  float* d_output;
  hipMalloc((void**)&d_input, (N_ * C_ * H_ * W_) * sizeof(float));
  hipMalloc((void**)&d_weight, (OC_ * C_ * KH_ * KW_) * sizeof(float));
  hipMalloc((void**)&d_output, (N_ * OC_ * OH_ * OW_) * sizeof(float));
  hipMemcpy(d_input, input, (N_ * C_ * H_ * W_) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_weight, weight, (OC_ * C_ * KH_ * KW_) * sizeof(float), hipMemcpyHostToDevice);
  dim3 block(16, 16);
  dim3 grid((OW_ + 15) / 16, (OH_ + 15) / 16, N_ * OC_);
  hipLaunchKernelGGL(conv2d_nchw_tiled, grid, block, 0, 0, d_input, d_weight, d_output);
  hipMemcpy(output, d_output, (N_ * OC_ * OH_ * OW_) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_input);
  hipFree(d_weight);
  hipFree(d_output);
}
