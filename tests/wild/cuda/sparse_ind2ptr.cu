// Copyright (c) 2020 Matthias Fey <matthias.fey@tu-dortmund.de>
// (torch-sparse; the original file has no header: this is the project's LICENSE)
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
// xpiler wild set: cuda/sparse_ind2ptr.cu
// origin: torch-sparse 0.6.18 (PyPI sdist), licence MIT
//   torch_sparse-0.6.18/csrc/cuda/convert_cuda.cu lines 7-24 (verbatim)
// launch geometry of ind2ptr_cuda (csrc/cuda/convert_cuda.cu lines 26-41)
// Lines between 'wild: added' markers are not from the original (includes and macros the
// original gets from its framework headers, and the extern "C" entry replacing the
// framework's tensor plumbing); everything else is copied verbatim.

// ---- wild: added ----
#include <cuda_runtime.h>
#include <cstdint>
// ---- wild: end added ----

#define THREADS 256

__global__ void ind2ptr_kernel(const int64_t *ind_data, int64_t *out_data,
                               int64_t M, int64_t numel) {

  int64_t thread_idx = blockDim.x * blockIdx.x + threadIdx.x;

  if (thread_idx == 0) {
    for (int64_t i = 0; i <= ind_data[0]; i++)
      out_data[i] = 0;
  } else if (thread_idx < numel) {
    for (int64_t i = ind_data[thread_idx - 1]; i < ind_data[thread_idx]; i++)
      out_data[i + 1] = thread_idx;
  } else if (thread_idx == numel) {
    for (int64_t i = ind_data[numel - 1] + 1; i < M + 1; i++)
      out_data[i] = numel;
  }
}

// ---- wild: added: entry ----
extern "C" void sparse_ind2ptr(const int64_t * ind, int64_t * out, int numel, int M) {
    int64_t * d_ind;
    cudaMalloc(&d_ind, (size_t)(numel) * sizeof(int64_t));
    int64_t * d_out;
    cudaMalloc(&d_out, (size_t)(M + 1) * sizeof(int64_t));
    cudaMemcpy(d_ind, ind, (size_t)(numel) * sizeof(int64_t), cudaMemcpyHostToDevice);
    ind2ptr_kernel<<<(numel + 2 + THREADS - 1) / THREADS, THREADS, 0, 0>>>(d_ind, d_out, M, numel);
    cudaMemcpy(out, d_out, (size_t)(M + 1) * sizeof(int64_t), cudaMemcpyDeviceToHost);
    cudaFree(d_ind);
    cudaFree(d_out);
}
// ---- wild: end added ----
