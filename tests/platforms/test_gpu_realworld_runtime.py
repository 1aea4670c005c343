"""CUDA/HIP virtual device and front-end behaviour that real-world kernels rely on: static
``__shared__`` bounds, mask-less HIP collectives under divergence, template kernels as entries,
the ROCm device library, template instantiation in the front-end."""
from __future__ import annotations

import numpy as np
import pytest

from xpiler.ir.errors import OutOfBoundsAccess, SourceError
from xpiler.parse import parse_source
from xpiler.run import run_kernel

SHARED_OOB = r'''
__global__ void shift(float* out, int n) {
  __shared__ float buf[64];
  __shared__ float neighbour[64];
  neighbour[threadIdx.x] = 0.0f;
  buf[threadIdx.x] = (float)threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = buf[threadIdx.x + n];
}
'''


def _run(tmp_path, name, src, args, **kw):
    p = tmp_path / name
    p.write_text(src)
    return run_kernel(p, args=args, **kw)


def test_static_shared_read_past_the_end_is_caught(tmp_path):
    out = np.zeros(64, np.float32)
    with pytest.raises(OutOfBoundsAccess, match="__shared__ buf"):
        _run(tmp_path, "oob.cu", SHARED_OOB, [out, 1], launch={"grid": [1, 1, 1], "block": [64, 1, 1]})


def test_static_shared_in_bounds_unchanged(tmp_path):
    out = np.zeros(64, np.float32)
    _run(tmp_path, "ok.cu", SHARED_OOB, [out, 0], launch={"grid": [1, 1, 1], "block": [64, 1, 1]})
    np.testing.assert_array_equal(out, np.arange(64, dtype=np.float32))


HIP_DIVERGENT = r'''
#include <hip/hip_runtime.h>
__global__ void half_wave_sum(const float* x, float* y) {
  float v = x[threadIdx.x];
  if (threadIdx.x < 32) {            // half of wavefront 0 shuffles (width 32), the rest waits
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor(v, off, 32);
  }
  __syncthreads();
  y[threadIdx.x] = v;
}
'''


def test_hip_maskless_shuffle_completes_with_the_active_lanes(tmp_path):
    x = np.arange(128, dtype=np.float32)
    y = np.zeros(128, np.float32)
    _run(tmp_path, "div.hip", HIP_DIVERGENT, [x, y], launch={"grid": [1, 1, 1], "block": [128, 1, 1]},
         strict=True)
    want = x.copy()
    want[:32] = x[:32].sum()
    np.testing.assert_array_equal(y, want)


TEMPLATE_KERNEL = r'''
#include <cuda_runtime.h>
template <typename T, int SCALE>
__global__ void scale(const T* __restrict__ x, T* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * (T)SCALE;
}
template __global__ void scale<float, 3>(const float* __restrict__, float* __restrict__, int);
'''


def test_template_kernel_entry_gets_a_launcher_stub(tmp_path):
    prog = parse_source(TEMPLATE_KERNEL, "cuda", "t.cu")
    assert prog.entry.name == "scale_float_3" and prog.entry.kind == "kernel"
    x = np.arange(100, dtype=np.float32)
    y = np.zeros(100, np.float32)
    _run(tmp_path, "t.cu", TEMPLATE_KERNEL, [x, y, 100], launch={"grid": [1, 1, 1], "block": [128, 1, 1]})
    np.testing.assert_array_equal(y, 3 * x)


def test_hip_ocml_functions(tmp_path):
    src = ("#include <hip/hip_runtime.h>\n__global__ void k(const float* x, float* y) {\n"
           "  y[threadIdx.x] = __ocml_erf_f32(x[threadIdx.x]) + __ocml_pow_f32(x[threadIdx.x], 2.0f);\n}\n")
    x = np.linspace(-1, 1, 64).astype(np.float32)
    y = np.zeros(64, np.float32)
    _run(tmp_path, "o.hip", src, [x, y], launch={"grid": [1, 1, 1], "block": [64, 1, 1]})
    from math import erf
    np.testing.assert_allclose(y, [erf(v) + v * v for v in x], rtol=1e-5, atol=1e-6)


def test_front_end_instantiates_transitively_and_deduces():
    src = r'''
template <typename T> __device__ __forceinline__ T sq(T v) { return v * v; }
template <int N> __device__ float sum_sq(const float* p) {
  float s = 0.f;
  for (int i = 0; i < N; ++i) s += sq(p[i]);
  return s;
}
template <int N> __global__ void k(const float* x, float* y) { y[0] = sum_sq<N>(x); }
extern "C" void run(const float* x, float* y) { k<4><<<1, 1>>>(x, y); }
'''
    prog = parse_source(src, "cuda", "t.cu")
    names = [e.decl.name for e in prog.ast.ext if hasattr(e, "body")]
    assert names == ["sq_float", "sum_sq_4", "k_4", "run"]


def test_unused_templates_are_dropped_and_class_templates_lowered():
    prog = parse_source("template <int N> __device__ int f() { return N; }\n"
                        "__global__ void k(int* a) { a[0] = 1; }\n", "cuda", "t.cu")
    assert [e.decl.name for e in prog.ast.ext if hasattr(e, "body")] == ["k"]
    # a class template: the C++ route (clang) instantiates what is used; an unused one goes
    prog = parse_source("template <typename T> struct Pair { T a, b; };\n"
                        "__global__ void k(int* a) { Pair<int> p{1, 2}; a[0] = p.a + p.b; }\n", "cuda", "t.cu")
    assert "templates_and_classes" in prog.facts["cxx_lowered"]
    assert "typedef struct Pair_int { int a; int b; } Pair_int;" in prog.source
    prog = parse_source("template <typename T> struct Pair { T a, b; };\n__global__ void k(int* a) {}\n",
                        "cuda", "t.cu")
    assert [e.decl.name for e in prog.ast.ext if hasattr(e, "body")] == ["k"]


def test_own_namespaces_are_unwrapped():
    src = r'''
namespace mylib { namespace kernels {
__host__ __device__ inline float square(float v) { return v * v; }
__global__ void sq(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = square(x[i]);
}
} }
namespace { constexpr int kThreads = 128; }
using namespace mylib;
extern "C" void run(const float* x, float* y, int n) { kernels::sq<<<(n + kThreads - 1) / kThreads, kThreads>>>(x, y, n); }
'''
    prog = parse_source(src, "cuda", "t.cu")
    assert [k.name for k in prog.kernels] == ["sq"] and prog.launches[0].kernel == "sq"
    assert not any("mylib" in line for line in prog.facts["preamble"])
    with pytest.raises(SourceError) as err:       # a namespace of a library stays unsupported
        parse_source("namespace other = mylib;\n__global__ void k(int* a) {}\n", "cuda", "t.cu")
    assert err.value.diagnostics[0].code == "XP1120"
