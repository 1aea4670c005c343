#include <stdint.h>
#include <hip/hip_runtime.h>

// Multi-scale deformable attention forward (Deformable DETR), HIP port.
__device__ inline float bilinear_sample(const float* __restrict__ value, int height, int width, int heads, int channels,
                                        float h, float w, int m, int c) {
  const int h0 = (int)floorf(h);
  const int w0 = (int)floorf(w);
  const float lh = h - h0;
  const float lw = w - w0;
  const int stride_w = heads * channels;
  const int stride_h = width * stride_w;
  const int base = m * channels + c;
  float acc = 0.0f;
  for (int dy = 0; dy < 2; ++dy) {
    const int y = h0 + dy;
    if (y < 0 || y >= height) continue;
    const float wy = dy ? lh : 1.0f - lh;
    for (int dx = 0; dx < 2; ++dx) {
      const int x = w0 + dx;
      if (x < 0 || x >= width) continue;
      const float wx = dx ? lw : 1.0f - lw;
      acc += wy * wx * value[y * stride_h + x * stride_w + base];
    }
  }
  return acc;
}

// value [N, S, M, D]; sampling_loc [N, Lq, M, L, P, 2] (x, y in [0, 1]); attn_weight [N, Lq, M, L, P]
// out [N, Lq, M * D]; one thread per output element.
__global__ void ms_deform_attn_forward(const float* __restrict__ value, const int64_t* __restrict__ spatial_shapes,
                                       const int64_t* __restrict__ level_start_index,
                                       const float* __restrict__ sampling_loc, const float* __restrict__ attn_weight,
                                       float* __restrict__ out, int batch, int spatial_size, int heads, int channels,
                                       int levels, int queries, int points) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= batch * queries * heads * channels) return;
  const int c = idx % channels;
  const int m = (idx / channels) % heads;
  const int q = (idx / (channels * heads)) % queries;
  const int b = idx / (channels * heads * queries);
  const float* value_b = value + (size_t)b * spatial_size * heads * channels;
  const int wbase = ((b * queries + q) * heads + m) * levels * points;
  float acc = 0.0f;
  for (int l = 0; l < levels; ++l) {
    const int H = (int)spatial_shapes[2 * l];
    const int W = (int)spatial_shapes[2 * l + 1];
    const float* value_l = value_b + (size_t)level_start_index[l] * heads * channels;
    for (int p = 0; p < points; ++p) {
      const int wi = wbase + l * points + p;
      const float x = sampling_loc[2 * wi] * W - 0.5f;
      const float y = sampling_loc[2 * wi + 1] * H - 0.5f;
      if (y > -1.0f && x > -1.0f && y < (float)H && x < (float)W) {
        acc += attn_weight[wi] * bilinear_sample(value_l, H, W, heads, channels, y, x, m, c);
      }
    }
  }
  out[idx] = acc;
}

extern "C" void deformable_kernel(float* value, int64_t* spatial_shapes, int64_t* level_start_index, float* sampling_loc, float* attn_weight, float* out, int batch, int spatial_size, int heads, int channels, int levels, int queries, int points) {
  float* d_value;
  int64_t* d_spatial_shapes;
  int64_t* d_level_start_index;
  float* d_sampling_loc;
  float* d_attn_weight;
  float* d_out;
  hipMalloc((void**)&d_value, (batch * spatial_size * heads * channels) * sizeof(float));
  hipMalloc((void**)&d_spatial_shapes, (levels * 2) * sizeof(int64_t));
  hipMalloc((void**)&d_level_start_index, levels * sizeof(int64_t));
  hipMalloc((void**)&d_sampling_loc, (batch * queries * heads * levels * points * 2) * sizeof(float));
  hipMalloc((void**)&d_attn_weight, (batch * queries * heads * levels * points) * sizeof(float));
  hipMalloc((void**)&d_out, (batch * queries * heads * channels) * sizeof(float));
  hipMemcpy(d_value, value, (batch * spatial_size * heads * channels) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_spatial_shapes, spatial_shapes, (levels * 2) * sizeof(int64_t), hipMemcpyHostToDevice);
  hipMemcpy(d_level_start_index, level_start_index, levels * sizeof(int64_t), hipMemcpyHostToDevice);
  hipMemcpy(d_sampling_loc, sampling_loc, (batch * queries * heads * levels * points * 2) * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(d_attn_weight, attn_weight, (batch * queries * heads * levels * points) * sizeof(float), hipMemcpyHostToDevice);
  const int total = batch * queries * heads * channels;
  hipLaunchKernelGGL(ms_deform_attn_forward, dim3((total + 127) / 128), dim3(128), 0, 0,
                     d_value, d_spatial_shapes, d_level_start_index, d_sampling_loc, d_attn_weight, d_out,
                     batch, spatial_size, heads, channels, levels, queries, points);
  hipMemcpy(out, d_out, (batch * queries * heads * channels) * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_value);
  hipFree(d_spatial_shapes);
  hipFree(d_level_start_index);
  hipFree(d_sampling_loc);
  hipFree(d_attn_weight);
  hipFree(d_out);
}
