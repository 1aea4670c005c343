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
// xpiler wild set: cuda/sparse_ptr2ind.cu
// origin: torch-sparse 0.6.18 (PyPI sdist), licence MIT
//   torch_sparse-0.6.18/csrc/cuda/convert_cuda.cu lines 7-7 (verbatim)
//   torch_sparse-0.6.18/csrc/cuda/convert_cuda.cu lines 43-54 (verbatim)
// launch geometry of ptr2ind_cuda (csrc/cuda/convert_cuda.cu lines 56-67); rows = ptr.numel() - 1
// Lines between 'wild: added' markers are not from the original (includes and macros the
// original gets from its framework headers, and the extern "C" entry replacing the
// framework's tensor plumbing); everything else is copied verbatim.

// ---- wild: added ----
#include <cuda_runtime.h>
#include <cstdint>
// ---- wild: end added ----

#define THREADS 256

__global__ void ptr2ind_kernel(const int64_t *ptr_data, int64_t *out_data,
                               int64_t E, int64_t numel) {

  int64_t thread_idx = blockDim.x * blockIdx.x + threadIdx.x;

  if (thread_idx < numel) {
    int64_t idx = ptr_data[thread_idx], next_idx = ptr_data[thread_idx + 1];
    for (int64_t i = idx; i < next_idx; i++) {
      out_data[i] = thread_idx;
    }
  }
}

// ---- wild: added: entry ----
extern "C" void sparse_ptr2ind(const int64_t * ptr, int64_t * out, int rows, int E) {
    int64_t * d_ptr;
    cudaMalloc(&d_ptr, (size_t)(rows + 1) * sizeof(int64_t));
    int64_t * d_out;
    cudaMalloc(&d_out, (size_t)(E) * sizeof(int64_t));
    cudaMemcpy(d_ptr, ptr, (size_t)(rows + 1) * sizeof(int64_t), cudaMemcpyHostToDevice);
    ptr2ind_kernel<<<(rows + THREADS - 1) / THREADS, THREADS, 0, 0>>>(d_ptr, d_out, E, rows);
    cudaMemcpy(out, d_out, (size_t)(E) * sizeof(int64_t), cudaMemcpyDeviceToHost);
    cudaFree(d_ptr);
    cudaFree(d_out);
}
// ---- wild: end added ----
