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
// xpiler wild set: cuda/mmcv_gather_points.cu
// origin: mmcv 1.7.2 (PyPI sdist), licence Apache-2.0
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/common_cuda_helper.hpp lines 6-26 (verbatim)
//   mmcv-1.7.2/mmcv/ops/csrc/common/cuda/gather_points_cuda_kernel.cuh lines 13-33 (verbatim)
// launch geometry of GatherPointsForwardCUDAKernelLauncher (pytorch/cuda/gather_points_cuda.cu)
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
__global__ void gather_points_forward_cuda_kernel(int b, int c, int n, int m,
                                                  const T *points,
                                                  const int *__restrict__ idx,
                                                  T *out) {
  // points: (B, C, N)
  // idx: (B, M)
  // output:
  //      out: (B, C, M)

  int bs_idx = blockIdx.z;
  int c_idx = blockIdx.y;
  CUDA_1D_KERNEL_LOOP(pt_idx, m) {
    if (bs_idx >= b || c_idx >= c) return;

    out += bs_idx * c * m + c_idx * m + pt_idx;
    idx += bs_idx * m + pt_idx;
    points += bs_idx * c * n + c_idx * n;
    out[0] = points[idx[0]];
  }
}

// ---- wild: added: entry ----
extern "C" void mmcv_gather_points(const float * points, const int * idx, float * out, int b, int c, int n, int npoints) {
    float * d_points;
    cudaMalloc(&d_points, (size_t)(b * c * n) * sizeof(float));
    int * d_idx;
    cudaMalloc(&d_idx, (size_t)(b * npoints) * sizeof(int));
    float * d_out;
    cudaMalloc(&d_out, (size_t)(b * c * npoints) * sizeof(float));
    cudaMemcpy(d_points, points, (size_t)(b * c * n) * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_idx, idx, (size_t)(b * npoints) * sizeof(int), cudaMemcpyHostToDevice);
    dim3 blocks(GET_BLOCKS(npoints, THREADS_PER_BLOCK), c, b);
    dim3 threads(THREADS_PER_BLOCK);
    gather_points_forward_cuda_kernel<float>
        <<<blocks, threads, 0, 0>>>(b, c, n, npoints, d_points, d_idx, d_out);
    cudaMemcpy(out, d_out, (size_t)(b * c * npoints) * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d_points);
    cudaFree(d_idx);
    cudaFree(d_out);
}
// ---- wild: end added ----
