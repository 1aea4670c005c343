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
// xpiler wild set: cuda/mmcv_sigmoid_focal_loss.cu
// origin: mmcv 1.7.2 (PyPI sdist), licence Apache-2.0
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/common_cuda_helper.hpp lines 6-26 (verbatim)
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/sigmoid_focal_loss_cuda_kernel.cuh lines 11-38 (verbatim)
// launch geometry of SigmoidFocalLossForwardCUDAKernelLauncher (pytorch/cuda/focal_loss_cuda.cu)
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
__global__ void sigmoid_focal_loss_forward_cuda_kernel(
    const int nthreads, const T* input, const int64_t* target, const T* weight,
    T* output, const T gamma, const T alpha, const int num_classes) {
  CUDA_1D_KERNEL_LOOP(index, nthreads) {
    int n = index / num_classes;
    int c = index % num_classes;

    int64_t t = target[n];
    T flag_p = (t == c);
    T flag_n = (t != c);

    // p = sigmoid(x) = 1. / 1. + expf(-x)
    T p = (T)1. / ((T)1. + expf(-input[index]));

    // (1 - p)**gamma * log(p)
    T term_p = pow(((T)1. - p), gamma) * log(max(p, (T)FLT_MIN));
    // p**gamma * log(1 - p)
    T term_n = pow(p, gamma) * log(max((T)1. - p, (T)FLT_MIN));

    output[index] = (T)0.;
    output[index] += -flag_p * alpha * term_p;
    output[index] += -flag_n * ((T)1. - alpha) * term_n;
    if (weight != NULL) {
      output[index] *= weight[t];
    }
  }
}

// ---- wild: added: entry ----
extern "C" void mmcv_sigmoid_focal_loss(const float * input, const int64_t * target, const float * weight, float * output, int num_samples, int num_classes, float gamma, float alpha) {
    float * d_input;
    cudaMalloc(&d_input, (size_t)(num_samples * num_classes) * sizeof(float));
    int64_t * d_target;
    cudaMalloc(&d_target, (size_t)(num_samples) * sizeof(int64_t));
    float * d_weight;
    cudaMalloc(&d_weight, (size_t)(num_classes) * sizeof(float));
    float * d_output;
    cudaMalloc(&d_output, (size_t)(num_samples * num_classes) * sizeof(float));
    cudaMemcpy(d_input, input, (size_t)(num_samples * num_classes) * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_target, target, (size_t)(num_samples) * sizeof(int64_t), cudaMemcpyHostToDevice);
    cudaMemcpy(d_weight, weight, (size_t)(num_classes) * sizeof(float), cudaMemcpyHostToDevice);
    int output_size = num_samples * num_classes;
    sigmoid_focal_loss_forward_cuda_kernel<float>
        <<<GET_BLOCKS(output_size), THREADS_PER_BLOCK, 0, 0>>>(
            output_size, d_input, d_target, d_weight, d_output, gamma, alpha, num_classes);
    cudaMemcpy(output, d_output, (size_t)(num_samples * num_classes) * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d_input);
    cudaFree(d_target);
    cudaFree(d_weight);
    cudaFree(d_output);
}
// ---- wild: end added ----
