// Copyright (c) 2020 Matthias Fey <matthias.fey@tu-dortmund.de>
// (torch-cluster; the original file has no header: this is the project's LICENSE)
//
// Permission is hereby granted, free of charge, to any person obtaining a copy
// of this software and associated documentation files (the "Software"), to deal
// in the Software without restriction, including without limitation the rights
// to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
// copies of the Software, and to permit persons to whom the Software is
// furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.
//
// xpiler wild set: cuda/cluster_grid.cu
// origin: torch-cluster 1.6.3 (PyPI sdist), licence MIT
//   torch_cluster-1.6.3/csrc/cuda/grid_cuda.cu lines 7-25 (verbatim)
// launch geometry of grid_cuda (csrc/cuda/grid_cuda.cu lines 63-69), start and end given
// Lines between 'wild: added' markers are not from the original (includes and macros the
// original gets from its framework headers, and the extern "C" entry replacing the
// framework's tensor plumbing); everything else is copied verbatim.

// ---- wild: added ----
#include <cuda_runtime.h>
#include <cstdint>
// ---- wild: end added ----

#define THREADS 1024
#define BLOCKS(N) (N + THREADS - 1) / THREADS

template <typename scalar_t>
__global__ void grid_kernel(const scalar_t *pos, const scalar_t *size,
                            const scalar_t *start, const scalar_t *end,
                            int64_t *out, int64_t D, int64_t numel) {
  const int64_t thread_idx = blockIdx.x * blockDim.x + threadIdx.x;

  if (thread_idx < numel) {
    int64_t c = 0, k = 1;
    for (int64_t d = 0; d < D; d++) {
      scalar_t p = pos[thread_idx * D + d] - start[d];
      c += (int64_t)(p / size[d]) * k;
      k *= (int64_t)((end[d] - start[d]) / size[d]) + 1;
    }
    out[thread_idx] = c;
  }
}

// ---- wild: added: entry ----
extern "C" void cluster_grid(const float * pos, const float * size, const float * start, const float * end, int64_t * out, int numel, int D) {
    float * d_pos;
    cudaMalloc(&d_pos, (size_t)(numel * D) * sizeof(float));
    float * d_size;
    cudaMalloc(&d_size, (size_t)(D) * sizeof(float));
    float * d_start;
    cudaMalloc(&d_start, (size_t)(D) * sizeof(float));
    float * d_end;
    cudaMalloc(&d_end, (size_t)(D) * sizeof(float));
    int64_t * d_out;
    cudaMalloc(&d_out, (size_t)(numel) * sizeof(int64_t));
    cudaMemcpy(d_pos, pos, (size_t)(numel * D) * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_size, size, (size_t)(D) * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_start, start, (size_t)(D) * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_end, end, (size_t)(D) * sizeof(float), cudaMemcpyHostToDevice);
    grid_kernel<float><<<BLOCKS(numel), THREADS, 0, 0>>>(
        d_pos, d_size, d_start, d_end, d_out, D, numel);
    cudaMemcpy(out, d_out, (size_t)(numel) * sizeof(int64_t), cudaMemcpyDeviceToHost);
    cudaFree(d_pos);
    cudaFree(d_size);
    cudaFree(d_start);
    cudaFree(d_end);
    cudaFree(d_out);
}
// ---- wild: end added ----
