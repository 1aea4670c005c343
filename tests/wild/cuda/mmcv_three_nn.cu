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
// xpiler wild set: cuda/mmcv_three_nn.cu
// origin: mmcv 1.7.2 (PyPI sdist), licence Apache-2.0
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/common_cuda_helper.hpp lines 6-26 (verbatim)
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/three_nn_cuda_kernel.cuh lines 11-65 (verbatim)
// launch geometry of ThreeNNForwardCUDAKernelLauncher (pytorch/cuda/three_nn_cuda.cu)
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
__global__ void three_nn_forward_cuda_kernel(int b, int n, int m,
                                             const T *unknown, const T *known,
                                             T *dist2, int *__restrict__ idx) {
  // unknown: (B, N, 3)
  // known: (B, M, 3)
  // output:
  //      dist2: (B, N, 3)
  //      idx: (B, N, 3)

  int bs_idx = blockIdx.y;
  CUDA_1D_KERNEL_LOOP(pt_idx, n) {
    if (bs_idx >= b) return;

    unknown += bs_idx * n * 3 + pt_idx * 3;
    known += bs_idx * m * 3;
    dist2 += bs_idx * n * 3 + pt_idx * 3;
    idx += bs_idx * n * 3 + pt_idx * 3;

    T ux = unknown[0];
    T uy = unknown[1];
    T uz = unknown[2];

    double best1 = 1e40, best2 = 1e40, best3 = 1e40;
    int besti1 = 0, besti2 = 0, besti3 = 0;
    for (int k = 0; k < m; ++k) {
      T x = known[k * 3 + 0];
      T y = known[k * 3 + 1];
      T z = known[k * 3 + 2];
      T d = (ux - x) * (ux - x) + (uy - y) * (uy - y) + (uz - z) * (uz - z);
      if (d < best1) {
        best3 = best2;
        besti3 = besti2;
        best2 = best1;
        besti2 = besti1;
        best1 = d;
        besti1 = k;
      } else if (d < best2) {
        best3 = best2;
        besti3 = besti2;
        best2 = d;
        besti2 = k;
      } else if (d < best3) {
        best3 = d;
        besti3 = k;
      }
    }
    dist2[0] = best1;
    dist2[1] = best2;
    dist2[2] = best3;
    idx[0] = besti1;
    idx[1] = besti2;
    idx[2] = besti3;
  }
}

// ---- wild: added: entry ----
extern "C" void mmcv_three_nn(const float * unknown, const float * known, float * dist2, int * idx, int b, int n, int m) {
    float * d_unknown;
    cudaMalloc(&d_unknown, (size_t)(b * n * 3) * sizeof(float));
    float * d_known;
    cudaMalloc(&d_known, (size_t)(b * m * 3) * sizeof(float));
    float * d_dist2;
    cudaMalloc(&d_dist2, (size_t)(b * n * 3) * sizeof(float));
    int * d_idx;
    cudaMalloc(&d_idx, (size_t)(b * n * 3) * sizeof(int));
    cudaMemcpy(d_unknown, unknown, (size_t)(b * n * 3) * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_known, known, (size_t)(b * m * 3) * sizeof(float), cudaMemcpyHostToDevice);
    dim3 blocks(GET_BLOCKS(n, THREADS_PER_BLOCK), b);
    dim3 threads(THREADS_PER_BLOCK);
    three_nn_forward_cuda_kernel<float><<<blocks, threads, 0, 0>>>(
        b, n, m, d_unknown, d_known, d_dist2, d_idx);
    cudaMemcpy(dist2, d_dist2, (size_t)(b * n * 3) * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(idx, d_idx, (size_t)(b * n * 3) * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d_unknown);
    cudaFree(d_known);
    cudaFree(d_dist2);
    cudaFree(d_idx);
}
// ---- wild: end added ----
