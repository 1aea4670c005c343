// Copyright (c) OpenMMLab. All rights reserved.
// (mmcv; the project's licence, LICENSE of the sdist:)
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.
//
// xpiler wild set: cuda/mmcv_masked_im2col.cu
// origin: mmcv 1.7.2 (PyPI sdist), licence Apache-2.0
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/common_cuda_helper.hpp lines 6-26 (verbatim)
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/masked_conv2d_cuda_kernel.cuh lines 11-43 (verbatim)
// launch geometry of MaskedIm2colForwardCUDAKernelLauncher (pytorch/cuda/masked_conv2d_cuda.cu); one image
// Lines between 'wild: added' markers are not from the original (includes and macros the
// original gets from its framework headers, and the extern "C" entry replacing the
// framework's tensor plumbing); everything else is copied verbatim.

// ---- wild: added ----
#include <cuda_runtime.h>
#include <cfloat>
#include <cstdint>
#include <cmath>
// ---- wild: end added ----

#define CUDA_1D_KERNEL_LOOP(i, n)                              \
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); \
       i += blockDim.x * gridDim.x)

#define CUDA_2D_KERNEL_LOOP(i, n, j, m)                             \
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (n);   \
       i += blockDim.x * gridDim.x)                                 \
    for (size_t j = blockIdx.y * blockDim.y + threadIdx.y; j < (m); \
         j += blockDim.y * gridDim.y)

#define CUDA_2D_KERNEL_BLOCK_LOOP(i, n, j, m)          \
  for (size_t i = blockIdx.x; i < (n); i += gridDim.x) \
    for (size_t j = blockIdx.y; j < (m); j += gridDim.y)

#define THREADS_PER_BLOCK 512

inline int GET_BLOCKS(const int N, const int num_threads = THREADS_PER_BLOCK) {
  int optimal_block_num = (N + num_threads - 1) / num_threads;
  int max_block_num = 4096;
  return min(optimal_block_num, max_block_num);
}

template <typename scalar_t>
__global__ void MaskedIm2colForward(const int n, const scalar_t *data_im,
                                    const int height, const int width,
                                    const int kernel_h, const int kernel_w,
                                    const int pad_h, const int pad_w,
                                    const int64_t *mask_h_idx,
                                    const int64_t *mask_w_idx,
                                    const int mask_cnt, scalar_t *data_col) {
  // mask_cnt * channels
  CUDA_1D_KERNEL_LOOP(index, n) {
    const int m_index = index % mask_cnt;
    const int h_col = mask_h_idx[m_index];
    const int w_col = mask_w_idx[m_index];
    const int c_im = index / mask_cnt;
    const int c_col = c_im * kernel_h * kernel_w;
    const int h_offset = h_col - pad_h;
    const int w_offset = w_col - pad_w;
    scalar_t *data_col_ptr = data_col + c_col * mask_cnt + m_index;
    for (int i = 0; i < kernel_h; ++i) {
      int h_im = h_offset + i;
      for (int j = 0; j < kernel_w; ++j) {
        int w_im = w_offset + j;
        if (h_im >= 0 && w_im >= 0 && h_im < height && w_im < width) {
          *data_col_ptr =
              (scalar_t)data_im[(c_im * height + h_im) * width + w_im];
        } else {
          *data_col_ptr = 0.0;
        }
        data_col_ptr += mask_cnt;
      }
    }
  }
}

// ---- wild: added: entry ----
extern "C" void mmcv_masked_im2col(const float * bottom_data, const int64_t * mask_h_idx, const int64_t * mask_w_idx, float * top_data, int channels, int height, int width, int mask_cnt, int kernel_h, int kernel_w, int pad_h, int pad_w) {
    float * d_bottom_data;
    cudaMalloc(&d_bottom_data, (size_t)(channels * height * width) * sizeof(float));
    int64_t * d_mask_h_idx;
    cudaMalloc(&d_mask_h_idx, (size_t)(mask_cnt) * sizeof(int64_t));
    int64_t * d_mask_w_idx;
    cudaMalloc(&d_mask_w_idx, (size_t)(mask_cnt) * sizeof(int64_t));
    float * d_top_data;
    cudaMalloc(&d_top_data, (size_t)(channels * kernel_h * kernel_w * mask_cnt) * sizeof(float));
    cudaMemcpy(d_bottom_data, bottom_data, (size_t)(channels * height * width) * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_mask_h_idx, mask_h_idx, (size_t)(mask_cnt) * sizeof(int64_t), cudaMemcpyHostToDevice);
    cudaMemcpy(d_mask_w_idx, mask_w_idx, (size_t)(mask_cnt) * sizeof(int64_t), cudaMemcpyHostToDevice);
    int output_size = mask_cnt * channels;
    MaskedIm2colForward<float>
        <<<GET_BLOCKS(output_size), THREADS_PER_BLOCK, 0, 0>>>(
            output_size, d_bottom_data, height, width, kernel_h, kernel_w,
            pad_h, pad_w, d_mask_h_idx, d_mask_w_idx, mask_cnt, d_top_data);
    cudaMemcpy(top_data, d_top_data, (size_t)(channels * kernel_h * kernel_w * mask_cnt) * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d_bottom_data);
    cudaFree(d_mask_h_idx);
    cudaFree(d_mask_w_idx);
    cudaFree(d_top_data);
}
// ---- wild: end added ----
