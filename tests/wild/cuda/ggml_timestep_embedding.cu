// Copyright (c) 2023-2026 The ggml authors
// (llama.cpp / ggml, vendored in llama-cpp-python; the original file has no header:
// this is the project's LICENSE)
//
// MIT License
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
// xpiler wild set: cuda/ggml_timestep_embedding.cu
// origin: llama-cpp-python 0.3.36 (PyPI sdist), licence MIT
//   llama_cpp_python-0.3.36/vendor/llama.cpp/ggml/src/ggml-cuda/tsembd.cuh lines 3-3 (verbatim)
//   llama_cpp_python-0.3.36/vendor/llama.cpp/ggml/src/ggml-cuda/tsembd.cu lines 3-33 (verbatim)
// Lines between 'wild: added' markers are not from the original (includes and macros the
// original gets from its framework headers, and the extern "C" entry replacing the
// framework's tensor plumbing); everything else is copied verbatim.

// ---- wild: added ----
#include <cuda_runtime.h>
#include <cstdint>
#include <cfloat>
#include <cassert>
#include <algorithm>
#define CUDA_CHECK(err) (void)(err)
#define WARP_SIZE 32
#include <cuda_fp16.h>
// ---- wild: end added ----

#define CUDA_TIMESTEP_EMBEDDING_BLOCK_SIZE 256

static __global__ void timestep_embedding_f32(const float * timesteps, float * dst, const int nb1, const int dim, const int max_period) {
    // blockIDx.y: idx of timesteps->ne[0]
    // blockIDx.x: idx of ((dim + 1) / 2) / BLOCK_SIZE
    int i = blockIdx.y;
    int j = threadIdx.x + blockIdx.x * blockDim.x;
    float * embed_data = (float *)((char *)dst +  i*nb1);

    int half = dim / 2;
    if (dim % 2 != 0 && j == half) {
        embed_data[2 * half] = 0.f;
    }

    if (j >= half) {
        return;
    }

    float timestep = timesteps[i];
    float freq = (float)expf(-logf(max_period) * j / half);
    float arg = timestep * freq;
    embed_data[j] = cosf(arg);
    embed_data[j + half] = sinf(arg);
}

static void timestep_embedding_f32_cuda(const float * x, float * dst, const int ne00, const int nb1,
                                        const int dim, const int max_period, cudaStream_t stream) {
    int half_ceil = (dim + 1) / 2;
    int num_blocks = (half_ceil + CUDA_TIMESTEP_EMBEDDING_BLOCK_SIZE - 1) / CUDA_TIMESTEP_EMBEDDING_BLOCK_SIZE;
    dim3 gridDim(num_blocks, ne00, 1);
    timestep_embedding_f32<<<gridDim, CUDA_TIMESTEP_EMBEDDING_BLOCK_SIZE, 0, stream>>>(x, dst, nb1, dim, max_period);
}


// ---- wild: added: entry ----
// dst has ne00 rows of (dim rounded up to even) floats: ggml's dst->ne[0] = dim + dim % 2
extern "C" void ggml_timestep_embedding(const float * timesteps, float * dst, int ne00, int dim, int max_period) {
    const int ne0 = dim + dim % 2;
    float *d_t, *d_dst;
    cudaMalloc(&d_t, ne00 * sizeof(float));
    cudaMalloc(&d_dst, (size_t)ne00 * ne0 * sizeof(float));
    cudaMemcpy(d_t, timesteps, ne00 * sizeof(float), cudaMemcpyHostToDevice);
    timestep_embedding_f32_cuda(d_t, d_dst, ne00, ne0 * sizeof(float), dim, max_period, 0);
    cudaMemcpy(dst, d_dst, (size_t)ne00 * ne0 * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d_t);
    cudaFree(d_dst);
}
// ---- wild: end added ----
