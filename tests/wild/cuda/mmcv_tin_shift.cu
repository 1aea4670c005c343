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
// xpiler wild set: cuda/mmcv_tin_shift.cu
// origin: mmcv 1.7.2 (PyPI sdist), licence Apache-2.0
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/common_cuda_helper.hpp lines 6-26 (verbatim)
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/tin_shift_cuda_kernel.cuh lines 11-34 (verbatim)
// launch geometry of TINShiftForwardCUDAKernelLauncher (pytorch/cuda/tin_shift_cuda.cu); output zeroed
// as the framework's caller does (torch::zeros_like)
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

template <typename T>
__global__ void tin_shift_forward_cuda_kernel(
    const int nthreads, const T* input, const int* shift, T* output,
    const int batch_size, const int channels, const int t_size,
    const int hw_size, const int group_size, const int group_channel) {
  CUDA_1D_KERNEL_LOOP(index, nthreads) {
    const int hw_index = index % hw_size;
    const int j = (index / hw_size) % channels;

    const int n_index = (index / hw_size / channels) % batch_size;
    int group_id = j / group_channel;
    int t_shift = shift[n_index * group_size + group_id];
    int offset = n_index * t_size * hw_size * channels + hw_size * j + hw_index;
    for (int i = 0; i < t_size; i++) {
      int now_t = i + t_shift;
      int data_id = i * hw_size * channels + offset;
      if (now_t < 0 || now_t >= t_size) {
        continue;
      }
      int out_id = now_t * hw_size * channels + offset;
      output[out_id] = input[data_id];
    }
  }
}

// ---- wild: added: entry ----
extern "C" void mmcv_tin_shift(const float * input, const int * shift, float * output, int batch_size, int t_size, int channels, int hw_size, int group_size) {
    float * d_input;
    cudaMalloc(&d_input, (size_t)(batch_size * t_size * channels * hw_size) * sizeof(float));
    int * d_shift;
    cudaMalloc(&d_shift, (size_t)(batch_size * group_size) * sizeof(int));
    float * d_output;
    cudaMalloc(&d_output, (size_t)(batch_size * t_size * channels * hw_size) * sizeof(float));
    cudaMemcpy(d_input, input, (size_t)(batch_size * t_size * channels * hw_size) * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_shift, shift, (size_t)(batch_size * group_size) * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(d_output, 0, (size_t)(batch_size * t_size * channels * hw_size) * sizeof(float));
    int group_channel = channels / group_size;
    int num_kernels = batch_size * hw_size * channels;
    tin_shift_forward_cuda_kernel<float>
        <<<GET_BLOCKS(num_kernels), THREADS_PER_BLOCK, 0, 0>>>(
            num_kernels, d_input, d_shift, d_output, batch_size, channels, t_size,
            hw_size, group_size, group_channel);
    cudaMemcpy(output, d_output, (size_t)(batch_size * t_size * channels * hw_size) * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d_input);
    cudaFree(d_shift);
    cudaFree(d_output);
}
// ---- wild: end added ----
