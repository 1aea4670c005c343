#include <stdint.h>
#include <cuda_runtime.h>

// Multi-scale deformable attention (Deformable DETR ms_deform_attn forward, im2col form).
__device__ float ms_deform_attn_im2col_bilinear(const float* bottom_data, const int height, const int width,
                                                const int nheads, const int channels, const float h, const float w,
                                                const int m, const int c) {
  const int h_low = floorf(h);
  const int w_low = floorf(w);
  const int h_high = h_low + 1;
  const int w_high = w_low + 1;
  const float lh = h - h_low;
  const float lw = w - w_low;
  const float hh = 1 - lh, hw = 1 - lw;
  const int w_stride = nheads * channels;
  const int h_stride = width * w_stride;
  const int h_low_ptr_offset = h_low * h_stride;
  const int h_high_ptr_offset = h_low_ptr_offset + h_stride;
  const int w_low_ptr_offset = w_low * w_stride;
  const int w_high_ptr_offset = w_low_ptr_offset + w_stride;
  const int base_ptr = m * channels + c;
  float v1 = 0;
  if (h_low >= 0 && w_low >= 0) v1 = bottom_data[h_low_ptr_offset + w_low_ptr_offset + base_ptr];
  float v2 = 0;
  if (h_low >= 0 && w_high <= width - 1) v2 = bottom_data[h_low_ptr_offset + w_high_ptr_offset + base_ptr];
  float v3 = 0;
  if (h_high <= height - 1 && w_low >= 0) v3 = bottom_data[h_high_ptr_offset + w_low_ptr_offset + base_ptr];
  float v4 = 0;
  if (h_high <= height - 1 && w_high <= width - 1) v4 = bottom_data[h_high_ptr_offset + w_high_ptr_offset + base_ptr];
  const float w1 = hh * hw, w2 = hh * lw, w3 = lh * hw, w4 = lh * lw;
  return (w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4);
}

// one thread per (batch, query, head, channel)
__global__ void ms_deformable_im2col_kernel(const int n, const float* data_value, const int64_t* data_spatial_shapes,
                                            const int64_t* data_level_start_index, const float* data_sampling_loc,
                                            const float* data_attn_weight, const int spatial_size, const int num_heads,
                                            const int channels, const int num_levels, const int num_query,
                                            const int num_point, float* data_col) {
  for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < n; index += blockDim.x * gridDim.x) {
    int _temp = index;
    const int c_col = _temp % channels;
    _temp /= channels;
    const int sampling_index = _temp;
    const int m_col = _temp % num_heads;
    _temp /= num_heads;
    _temp /= num_query;
    const int b_col = _temp;
    float* data_col_ptr = data_col + index;
    int data_weight_ptr = sampling_index * num_levels * num_point;
    int data_loc_w_ptr = data_weight_ptr << 1;
    const int qid_stride = num_heads * channels;
    const int data_value_ptr_init_offset = b_col * spatial_size * qid_stride;
    float col = 0;
    for (int l_col = 0; l_col < num_levels; ++l_col) {
      const int level_start_id = data_level_start_index[l_col];
      const int spatial_h_ptr = l_col << 1;
      const int spatial_h = data_spatial_shapes[spatial_h_ptr];
      const int spatial_w = data_spatial_shapes[spatial_h_ptr + 1];
      const float* data_value_ptr = data_value + (data_value_ptr_init_offset + level_start_id * qid_stride);
      for (int p_col = 0; p_col < num_point; ++p_col) {
        const float loc_w = data_sampling_loc[data_loc_w_ptr];
        const float loc_h = data_sampling_loc[data_loc_w_ptr + 1];
        const float weight = data_attn_weight[data_weight_ptr];
        const float h_im = loc_h * spatial_h - 0.5f;
        const float w_im = loc_w * spatial_w - 0.5f;
        if (h_im > -1 && w_im > -1 && h_im < spatial_h && w_im < spatial_w) {
          col += ms_deform_attn_im2col_bilinear(data_value_ptr, spatial_h, spatial_w, num_heads, channels, h_im, w_im,
                                                m_col, c_col) * weight;
        }
        data_weight_ptr += 1;
        data_loc_w_ptr += 2;
      }
    }
    *data_col_ptr = col;
  }
}

extern "C" void deformable_kernel(float* value, int64_t* spatial_shapes, int64_t* level_start_index, float* sampling_loc, float* attn_weight, float* output, int batch, int spatial_size, int num_heads, int channels, int num_levels, int num_query, int num_point) {
  float* d_value;
  int64_t* d_spatial_shapes;
  int64_t* d_level_start_index;
  float* d_sampling_loc;
  float* d_attn_weight;
  float* d_output;
  cudaMalloc(&d_value, (batch * spatial_size * num_heads * channels) * sizeof(float));
  cudaMalloc(&d_spatial_shapes, (num_levels * 2) * sizeof(int64_t));
  cudaMalloc(&d_level_start_index, num_levels * sizeof(int64_t));
  cudaMalloc(&d_sampling_loc, (batch * num_query * num_heads * num_levels * num_point * 2) * sizeof(float));
  cudaMalloc(&d_attn_weight, (batch * num_query * num_heads * num_levels * num_point) * sizeof(float));
  cudaMalloc(&d_output, (batch * num_query * num_heads * channels) * sizeof(float));
  cudaMemcpy(d_value, value, (batch * spatial_size * num_heads * channels) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_spatial_shapes, spatial_shapes, (num_levels * 2) * sizeof(int64_t), cudaMemcpyHostToDevice);
  cudaMemcpy(d_level_start_index, level_start_index, num_levels * sizeof(int64_t), cudaMemcpyHostToDevice);
  cudaMemcpy(d_sampling_loc, sampling_loc, (batch * num_query * num_heads * num_levels * num_point * 2) * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_attn_weight, attn_weight, (batch * num_query * num_heads * num_levels * num_point) * sizeof(float), cudaMemcpyHostToDevice);
  const int num_kernels = batch * num_query * num_heads * channels;
  const int num_threads = 256;
  ms_deformable_im2col_kernel<<<(num_kernels + num_threads - 1) / num_threads, num_threads>>>(
      num_kernels, d_value, d_spatial_shapes, d_level_start_index, d_sampling_loc, d_attn_weight,
      spatial_size, num_heads, channels, num_levels, num_query, num_point, d_output);
  cudaMemcpy(output, d_output, (batch * num_query * num_heads * channels) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_value);
  cudaFree(d_spatial_shapes);
  cudaFree(d_level_start_index);
  cudaFree(d_sampling_loc);
  cudaFree(d_attn_weight);
  cudaFree(d_output);
}
