// Kernel-only: RGB/RGBA -> grayscale (BT.601 luma), interleaved 8-bit pixels.
#include <cuda_runtime.h>

__host__ __device__ inline unsigned char luma_u8(unsigned char r, unsigned char g,
                                                 unsigned char b) {
  float y = 0.299f * r + 0.587f * g + 0.114f * b;
  y = y < 0.f ? 0.f : (y > 255.f ? 255.f : y);
  return static_cast<unsigned char>(y + 0.5f);
}

__global__ void rgb_to_gray_u8(const uchar3* __restrict__ rgb,
                               unsigned char* __restrict__ gray, int width, int height,
                               int src_pitch_px) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= width || y >= height) return;
  uchar3 p = rgb[y * src_pitch_px + x];
  gray[y * width + x] = luma_u8(p.x, p.y, p.z);
}

// RGBA input; alpha premultiplied into the output, also writes a float [0,1] plane.
__global__ void rgba_to_gray_u8_f32(const uchar4* __restrict__ rgba,
                                    unsigned char* __restrict__ gray,
                                    float* __restrict__ gray_f, int num_pixels) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= num_pixels) return;
  uchar4 p = rgba[i];
  unsigned char l = luma_u8(p.x, p.y, p.z);
  unsigned char v = (unsigned char)((l * (unsigned int)p.w + 127u) / 255u);
  gray[i] = v;
  gray_f[i] = v * (1.0f / 255.0f);
}
