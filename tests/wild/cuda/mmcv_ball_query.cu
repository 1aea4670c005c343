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
// xpiler wild set: cuda/mmcv_ball_query.cu
// origin: mmcv 1.7.2 (PyPI sdist), licence Apache-2.0
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/common_cuda_helper.hpp lines 6-26 (verbatim)
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/ball_query_cuda_kernel.cuh lines 13-56 (verbatim)
// launch geometry of BallQueryForwardCUDAKernelLauncher (pytorch/cuda/ball_query_cuda.cu); idx zeroed as
// the framework's caller does
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
__global__ void ball_query_forward_cuda_kernel(int b, int n, int m,
                                               float min_radius,
                                               float max_radius, int nsample,
                                               const T* new_xyz, const T* xyz,
                                               int* idx) {
  // new_xyz: (B, M, 3)
  // xyz: (B, N, 3)
  // output:
  //      idx: (B, M, nsample)
  int bs_idx = blockIdx.y;
  CUDA_1D_KERNEL_LOOP(pt_idx, m) {
    if (bs_idx >= b) return;

    new_xyz += bs_idx * m * 3 + pt_idx * 3;
    xyz += bs_idx * n * 3;
    idx += bs_idx * m * nsample + pt_idx * nsample;

    float max_radius2 = max_radius * max_radius;
    float min_radius2 = min_radius * min_radius;
    T new_x = new_xyz[0];
    T new_y = new_xyz[1];
    T new_z = new_xyz[2];

    int cnt = 0;
    for (int k = 0; k < n; ++k) {
      T x = xyz[k * 3 + 0];
      T y = xyz[k * 3 + 1];
      T z = xyz[k * 3 + 2];
      T d2 = (new_x - x) * (new_x - x) + (new_y - y) * (new_y - y) +
             (new_z - z) * (new_z - z);
      if (d2 == 0 || (d2 >= min_radius2 && d2 < max_radius2)) {
        if (cnt == 0) {
          for (int l = 0; l < nsample; ++l) {
            idx[l] = k;
          }
        }
        idx[cnt] = k;
        ++cnt;
        if (cnt >= nsample) break;
      }
    }
  }
}

// ---- wild: added: entry ----
extern "C" void mmcv_ball_query(const float * new_xyz, const float * xyz, int * idx, int b, int n, int m, float min_radius, float max_radius, int nsample) {
    float * d_new_xyz;
    cudaMalloc(&d_new_xyz, (size_t)(b * m * 3) * sizeof(float));
    float * d_xyz;
    cudaMalloc(&d_xyz, (size_t)(b * n * 3) * sizeof(float));
    int * d_idx;
    cudaMalloc(&d_idx, (size_t)(b * m * nsample) * sizeof(int));
    cudaMemcpy(d_new_xyz, new_xyz, (size_t)(b * m * 3) * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_xyz, xyz, (size_t)(b * n * 3) * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_idx, 0, (size_t)(b * m * nsample) * sizeof(int));
    dim3 blocks(GET_BLOCKS(m, THREADS_PER_BLOCK), b);
    dim3 threads(THREADS_PER_BLOCK);
    ball_query_forward_cuda_kernel<float>
        <<<blocks, threads, 0, 0>>>(b, n, m, min_radius, max_radius, nsample, d_new_xyz, d_xyz, d_idx);
    cudaMemcpy(idx, d_idx, (size_t)(b * m * nsample) * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d_new_xyz);
    cudaFree(d_xyz);
    cudaFree(d_idx);
}
// ---- wild: end added ----
