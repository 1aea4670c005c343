// NHWC max pooling, one thread per output element with the flat index decomposed by
// division and modulo (Caffe/PyTorch MaxPoolForward style), CUDA_KERNEL_LOOP macro.
#include <cuda_runtime.h>
#include <float.h>

#define CUDA_KERNEL_LOOP(i, n) \
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

__global__ void maxpool_nhwc_kernel(const int nthreads, const float* __restrict__ bottom, const int H,
                                    const int W, const int C, const int OH, const int OW, const int KH,
                                    const int KW, const int SH, const int SW, float* __restrict__ top) {
  CUDA_KERNEL_LOOP(index, nthreads) {
    const int c = index % C;
    const int ow = (index / C) % OW;
    const int oh = (index / C / OW) % OH;
    const int n = index / C / OW / OH;
    const int hstart = oh * SH, wstart = ow * SW;
    float m = -FLT_MAX;
    for (int h = hstart; h < hstart + KH; ++h)
      for (int w = wstart; w < wstart + KW; ++w) m = fmaxf(m, bottom[((n * H + h) * W + w) * C + c]);
    top[index] = m;
  }
}

extern "C" void maxpool(const float* x, float* out, int N, int H, int W, int C, int KH, int KW, int SH, int SW) {
  const int OH = (H - KH) / SH + 1, OW = (W - KW) / SW + 1;
  const int count = N * OH * OW * C;
  float *dx, *dout;
  cudaMalloc(&dx, sizeof(float) * N * H * W * C);
  cudaMalloc(&dout, sizeof(float) * count);
  cudaMemcpy(dx, x, sizeof(float) * N * H * W * C, cudaMemcpyHostToDevice);
  const int kThreads = 512;
  maxpool_nhwc_kernel<<<(count + kThreads - 1) / kThreads, kThreads>>>(count, dx, H, W, C, OH, OW, KH, KW, SH, SW, dout);
  cudaMemcpy(out, dout, sizeof(float) * count, cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dout);
}
