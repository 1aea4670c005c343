"""The C++ route of the front-end: clang reads what the subset reader refuses, and the lowering
(platforms/common/cxx/lower.py) spells it in the C the passes read.

Each source here was refused by the front-end before the C++ route existed (XP1100 / XP1120 /
XP1121 / XP1122); each now parses, and the lowered program computes what numpy says.
"""
import numpy as np
import pytest

from xpiler.ir.errors import SourceError
from xpiler.parse import parse_source
from xpiler.run import run_kernel

COOPERATIVE_ROWSUM = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void rowsum(const float *in, float *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  float s = 0.0f;
  for (int j = warp.thread_rank(); j < n; j += warp.size()) s += in[row * n + j];
  s = cg::reduce(warp, s, cg::plus<float>());
  float m = s;
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, warp.shfl_down(m, o));
  if (warp.thread_rank() == 0 and row >= 0) out[row] = s + 0.0f * m;
  cg::sync(block);
}
extern "C" void entry(const float *in, float *out, int rows, int n) {
  float *d_in, *d_out;
  cudaMalloc(&d_in, rows * n * sizeof(float));
  cudaMalloc(&d_out, rows * sizeof(float));
  cudaMemcpy(d_in, in, rows * n * sizeof(float), cudaMemcpyHostToDevice);
  rowsum<<<rows / 4, 128>>>(d_in, d_out, n);
  cudaMemcpy(out, d_out, rows * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_in); cudaFree(d_out);
}
"""

DEFAULT_ARGS_AND_MACROS = r"""
#include <cuda_runtime.h>
#define THREADS_PER_BLOCK 128
#define KERNEL_INLINE __device__ __forceinline__
#define ARCH_FAST_PATH (__CUDA_ARCH__ >= SOME_LIBRARY_ARCH_CONSTANT)
#ifndef SOME_LIBRARY_ARCH_CONSTANT
#define SOME_LIBRARY_ARCH_CONSTANT 700
#endif
inline int GET_BLOCKS(const int N, const int num_threads = THREADS_PER_BLOCK) {
  return (N + num_threads - 1) / num_threads;
}
KERNEL_INLINE float twice(float x) { return 2.0f * x; }
__global__ void scale(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if ARCH_FAST_PATH
  if (i < n and not (i < 0)) y[i] = twice(x[i]);
#else
  if (i < n) y[i] = -1.0f;
#endif
}
extern "C" void entry(const float *x, float *y, int n) {
  float *dx, *dy;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<GET_BLOCKS(n), THREADS_PER_BLOCK>>>(dx, dy, n);
  cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dy);
}
"""

VNNI_SPECIFIER_MACROS = r"""
#include <immintrin.h>
#define MY_INTERNAL inline static
#define ALIGN64 __attribute__((aligned(64)))
MY_INTERNAL float hsum(__m512 v) { return _mm512_reduce_add_ps(v); }
extern "C" void dot(const float *a, const float *b, float *out, int n) {
  float ALIGN64 tmp[16];
  __m512 acc = _mm512_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc);
  _mm512_store_ps(tmp, acc);
  float s = hsum(acc);
  for (; i < n; ++i) s += a[i] * b[i];
  out[0] = s + 0.0f * tmp[0];
}
"""


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def _lowered(path, platform):
    program = parse_source(path.read_text(), platform, str(path))
    assert program.facts.get("cxx_lowered"), "parsed without the C++ route"
    return program


def test_cooperative_groups_are_lowered_to_warp_builtins(tmp_path):
    path = _write(tmp_path, "rowsum.cu", COOPERATIVE_ROWSUM)
    program = _lowered(path, "cuda")
    assert program.facts["cxx_lowered"] == ["alternative_tokens", "cooperative_groups"]
    assert {"__shfl_xor_sync", "__shfl_down_sync"} <= set(program.summary()["intrinsics"])
    assert "cg::" not in program.source and "cooperative_groups" not in program.source
    assert program.source.count("\n") == COOPERATIVE_ROWSUM.count("\n")  # lines kept
    rows, n = 8, 100
    a = np.random.default_rng(0).random((rows, n), dtype=np.float32)
    out = np.zeros(rows, np.float32)
    run_kernel(path, args=[a, out, rows, n], program=program, source=program.source, strict=True)
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-5)


def test_default_arguments_conditionals_specifiers_and_alternative_tokens(tmp_path):
    path = _write(tmp_path, "scale.cu", DEFAULT_ARGS_AND_MACROS)
    program = _lowered(path, "cuda")
    assert set(program.facts["cxx_lowered"]) == {"preprocessor_conditionals", "specifier_macros",
                                                 "alternative_tokens", "default_arguments"}
    assert "GET_BLOCKS(n, THREADS_PER_BLOCK)" in program.source
    x = np.arange(300, dtype=np.float32)
    y = np.zeros(300, np.float32)
    run_kernel(path, args=[x, y, 300], program=program, source=program.source)
    np.testing.assert_array_equal(y, 2 * x)   # the branch clang took (__CUDA_ARCH__ 800 >= 700)
    y2 = np.zeros(300, np.float32)
    run_kernel(path, args=[x, y2, 300], program=program)   # the original builds and agrees
    np.testing.assert_array_equal(y2, y)


def test_vnni_specifier_macros(tmp_path):
    path = _write(tmp_path, "dot.cpp", VNNI_SPECIFIER_MACROS)
    program = _lowered(path, "vnni")
    assert program.facts["cxx_lowered"] == ["specifier_macros"]
    a = np.linspace(-1, 1, 77, dtype=np.float32)
    b = np.linspace(2, 0, 77, dtype=np.float32)
    out = np.zeros(1, np.float32)
    run_kernel(path, args=[a, b, out, 77], program=program, source=program.source)
    np.testing.assert_allclose(out[0], np.dot(a, b), rtol=1e-5)


def test_real_cxx_errors_are_reported_by_clang(tmp_path):
    text = ("template <class T> struct Box { T v; };\n"
            "__global__ void k(float *out) { Box<float> b; out[0] = b.missing; }\n")
    path = _write(tmp_path, "bad.cu", text)
    with pytest.raises(SourceError) as err:
        parse_source(text, "cuda", str(path))
    clang = [d for d in err.value.diagnostics if d.code == "XP1300"]
    assert [(d.coord.line, "missing" in d.message) for d in clang] == [(2, True)]


def test_a_group_parameter_is_refused_with_its_position(tmp_path):
    text = ("#include <cooperative_groups.h>\n"
            "namespace cg = cooperative_groups;\n"
            "__device__ float f(cg::thread_block_tile<32> t, float v) { return t.shfl_down(v, 1); }\n"
            "__global__ void k(float *out) {\n"
            "  auto t = cg::tiled_partition<32>(cg::this_thread_block());\n"
            "  out[threadIdx.x] = f(t, 1.0f);\n}\n")
    path = _write(tmp_path, "param.cu", text)
    with pytest.raises(SourceError) as err:
        parse_source(text, "cuda", str(path))
    d = err.value.diagnostics[0]
    assert (d.code, d.coord.line) == ("XP1310", 3) and "parameter" in d.message


HOST_THROW_AND_BRACED = r"""
#include <hip/hip_runtime.h>
#include <stdexcept>
#include <string>
__global__ void fill(float2 *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = {1.0f * i, -1.0f};
}
extern "C" void entry(float *out, int n) {
  float2 *d;
  hipMalloc(&d, n * sizeof(float2));
  hipLaunchKernelGGL(fill, dim3((n + 63) / 64), dim3(64), 0, 0, d, n);
  hipError_t err = hipGetLastError();
  if (err != hipSuccess) throw std::runtime_error("kernel failed: " + std::to_string(err));
  hipMemcpy(out, d, n * sizeof(float2), hipMemcpyDeviceToHost);
  hipFree(d);
}
"""


def test_uncaught_throw_and_braced_values(tmp_path):
    path = _write(tmp_path, "fill.hip", HOST_THROW_AND_BRACED)
    program = _lowered(path, "hip")
    assert {"uncaught_throw", "braced_values"} <= set(program.facts["cxx_lowered"])
    assert "abort()" in program.source and "(float2){" in program.source
    out = np.zeros(2 * 100, np.float32)
    run_kernel(path, args=[out, 100], program=program, source=program.source)
    np.testing.assert_array_equal(out.reshape(100, 2), np.stack([np.arange(100), -np.ones(100)], 1))


TEMPLATE_BRACED = r"""
#include <hip/hip_runtime.h>
template <int N>
__global__ void pairs(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float2 v[N];
  for (int k = 0; k < N; ++k) v[k] = {(float) i, (float) k};
  out[2 * i] = v[N - 1].x;
  out[2 * i + 1] = v[N - 1].y;
}
extern "C" void run(float *out, int n) {
  hipLaunchKernelGGL(pairs<3>, dim3((n + 63) / 64), dim3(64), 0, 0, out, n);
}
"""


def test_braced_value_in_a_template_takes_the_assigned_type(tmp_path):
    # clang leaves a braced list in a template pattern untyped ("void"); the type comes from the
    # assigned array's declaration
    path = _write(tmp_path, "pairs.hip", TEMPLATE_BRACED)
    program = _lowered(path, "hip")
    assert "(float2){" in program.source and "(void){" not in program.source
    out = np.zeros(2 * 100, np.float32)
    run_kernel(path, args=[out, 100], program=program, source=program.source)
    np.testing.assert_array_equal(out.reshape(100, 2), np.stack([np.arange(100), 2 * np.ones(100)], 1))


FUNCTOR_TEMPORARIES = r"""
#include <cuda_runtime.h>
struct Relu6 {
  __device__ float operator()(float x) const { return fminf(fmaxf(x, 0.0f), 6.0f); }
};
struct Scale {
  float s;
  __device__ float operator()(float x) const { return x * s; }
};
template <typename Op>
__global__ void unary(const float *x, float *y, int n, Op op) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = op(x[i]);
}
extern "C" void entry(const float *x, float *y, int n, float s) {
  unary<<<(n + 63) / 64, 64>>>(x, y, n, Relu6{});
  unary<<<(n + 63) / 64, 64>>>(y, y, n, Scale{s});
}
"""


def test_functor_temporaries_written_with_braces(tmp_path):
    # `Relu6{}` / `Scale{s}` handed to a template kernel: a temporary naming its type (not a
    # braced value to type), read as a compound literal and printed back as written
    path = _write(tmp_path, "functors.cu", FUNCTOR_TEMPORARIES)
    program = _lowered(path, "cuda")
    assert "Relu6{}" in program.source and "(Relu6)" not in program.source
    n = 100
    x = np.linspace(-4, 12, n).astype(np.float32)
    y = np.zeros(n, np.float32)
    run_kernel(path, args=[x, y, n, np.float32(0.5)], program=program, source=program.source)
    np.testing.assert_allclose(y, np.clip(x, 0, 6) * 0.5)
    import platforms
    text = platforms.module("cuda", "backend").emit(program)
    assert "Relu6{}" in text and "Scale{s}" in text


def test_brace_temporary_of_a_struct_in_c_subset(tmp_path):
    # no template, no member function: the subset reader alone reads `Pair{a, b}` as an operand
    src = r"""
#include <cuda_runtime.h>
struct Pair { float a; float b; };
__device__ float sum(Pair p) { return p.a + p.b; }
__global__ void k(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = sum(Pair{x[i], 1.0f});
}
"""
    program = parse_source(src, "cuda", "pair.cu")
    assert not program.facts.get("cxx_lowered")
    import platforms
    assert "sum(Pair{x[i], 1.0f})" in platforms.module("cuda", "backend").emit(program)


STD_ARRAY_RANGE_FOR = r"""
#include <array>
#include <algorithm>
extern "C" void part_max(const float* x, float* y, int n) {
  std::array<float, 4> part;
  part.fill(-1.0f);
  for (int i = 0; i < n; ++i) part[i & 3] = std::max(part[i & 3], x[i]);
  float m = -1.0f;
  for (float p : part) m = std::max(m, p);
  float c[3] = {1, 2, 3};
  for (float& v : c) v *= 2.0f;
  for (const float& v : c) m += v;
  y[0] = m + part.size();
}
"""


def test_std_array_and_range_for_become_c_arrays_and_counted_loops(tmp_path):
    # session 24 probe: plain C++ CPU code (a std::array of partial maxima, range-for)
    path = _write(tmp_path, "part.cpp", STD_ARRAY_RANGE_FOR)
    program = _lowered(path, "vnni")
    src = program.source
    assert "float part[4];" in src and "std::array" not in src.split("#include <algorithm>")[1]
    assert " : part)" not in src and "(c)[__xp_range" in src and "((size_t) 4)" in src
    x = np.random.default_rng(1).standard_normal(37).astype(np.float32)
    want = [x, np.zeros(1, np.float32), 37]
    run_kernel(path, args=want, program=program)
    assert want[1][0] == pytest.approx(max(-1.0, float(x.max())) + 12.0 + 4.0)
