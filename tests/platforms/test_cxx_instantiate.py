"""C++ route, templates and classes (platforms/common/cxx/instantiate.py): each source is refused
by the subset reader (class templates, packs, member functions, constructors, if constexpr),
read by clang, monomorphised from clang's own instantiations, and the lowered program computes
what numpy says; what cannot be expressed is refused with its position (XP1310)."""
import numpy as np
import pytest

from xpiler.ir.errors import SourceError
from xpiler.parse import parse_source
from xpiler.run import run_kernel

POLICY_REDUCTION = r"""
#include <cuda_runtime.h>
#include <type_traits>
enum class op_kind { SUM, MAX };
template <op_kind K, typename T> struct combine;
template <typename T, typename... Ts> inline constexpr bool one_of = (std::is_same_v<T, Ts> || ...);
template <typename T> struct combine<op_kind::SUM, T> {
    static constexpr int tag = 7;
    static __device__ T apply(T a, T b) { return a + b; }
    static __device__ T identity() {
        if constexpr (std::is_same_v<T, float>) { return 0.0f; } else { return 0; }
    }
};
template <typename T> struct combine<op_kind::MAX, T> {
    static __device__ T apply(T a, T b) {
        static_assert(one_of<T, float, int>, "unsupported");
        return a > b ? a : b;
    }
    static __device__ T identity() { return -1000000; }
};
template <op_kind K, int width = 32, typename T>
__device__ T warp_reduce(T v) {
#pragma unroll
    for (int o = width / 2; o > 0; o >>= 1) v = combine<K, T>::apply(v, __shfl_xor_sync(0xffffffff, v, o, width));
    return v;
}
template <op_kind K, typename T>
__global__ void rows(const T *x, T *out, int n, [[maybe_unused]] int unused) {
    T acc = combine<K, T>::identity();
    for (int j = threadIdx.x; j < n; j += 32) acc = combine<K, T>::apply(acc, x[blockIdx.x * n + j]);
    acc = warp_reduce<K>(acc);
    if (threadIdx.x == 0) out[blockIdx.x] = acc + (combine<op_kind::SUM, T>::tag - 7);
}
extern "C" void entry(const float *x, float *sums, int *maxes, const int *xi, int rows_, int n) {
    float *dx, *ds; int *dxi, *dm;
    cudaMalloc(&dx, rows_ * n * sizeof(float)); cudaMalloc(&ds, rows_ * sizeof(float));
    cudaMalloc(&dxi, rows_ * n * sizeof(int)); cudaMalloc(&dm, rows_ * sizeof(int));
    cudaMemcpy(dx, x, rows_ * n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(dxi, xi, rows_ * n * sizeof(int), cudaMemcpyHostToDevice);
    rows<op_kind::SUM><<<rows_, 32>>>(dx, ds, n, 0);
    rows<op_kind::MAX><<<rows_, 32>>>(dxi, dm, n, 0);
    cudaMemcpy(sums, ds, rows_ * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(maxes, dm, rows_ * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(dx); cudaFree(ds); cudaFree(dxi); cudaFree(dm);
}
"""

STRUCTS_AND_LAUNCHER = r"""
#include <hip/hip_runtime.h>
#include <utility>
struct launch_config {
    dim3 grid; dim3 block; size_t shmem;
    launch_config(const dim3 &g, const dim3 &b, int shmem_) : grid(g), block(b), shmem((size_t)shmem_) {}
};
template <typename T> struct accum {
    T total; int count;
    __device__ void add(T v) { total += v; count += 1; }
    __device__ T mean() const { return count ? total / count : T(0); }
};
__device__ void bump(float &dst, float v) { dst += v; }
template <typename T> __device__ T scaled(T v);
template <typename T>
__global__ void means(const T *x, T *out, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    accum<T> a{0, 0};
    for (int j = 0; j < k; ++j) a.add(x[i * k + j]);
    T m = a.mean();
    bump(m, scaled(m));
    out[i] = m;
}
template <typename T> __device__ T scaled(T v) { return v * 2; }
template <typename Kernel, typename... Args>
static void launch(Kernel kernel, const launch_config &cfg, Args &&...args) {
    hipLaunchKernelGGL(kernel, cfg.grid, cfg.block, cfg.shmem, 0, std::forward<Args>(args)...);
}
extern "C" void entry(const float *x, float *out, int n, int k) {
    float *dx, *dout;
    hipMalloc(&dx, n * k * sizeof(float)); hipMalloc(&dout, n * sizeof(float));
    hipMemcpy(dx, x, n * k * sizeof(float), hipMemcpyHostToDevice);
    const launch_config cfg = launch_config((n + 63) / 64, 64, 0);
    launch(means<float>, cfg, dx, dout, n, k);
    hipMemcpy(out, dout, n * sizeof(float), hipMemcpyDeviceToHost);
    hipFree(dx); hipFree(dout);
}
"""


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def _lowered(path, platform):
    program = parse_source(path.read_text(), platform, str(path))
    assert "templates_and_classes" in program.facts.get("cxx_lowered", [])
    return program


def test_class_templates_partial_specialisations_if_constexpr_and_packs(tmp_path):
    path = _write(tmp_path, "rows.cu", POLICY_REDUCTION)
    program = _lowered(path, "cuda")
    src = program.source
    assert "template" not in src and "constexpr" not in src and "static_assert" not in src
    assert src.count("\n") == POLICY_REDUCTION.count("\n")   # lines kept
    assert "op_kind__SUM" in src   # scoped enum constants
    rows_, n = 6, 70
    rng = np.random.default_rng(1)
    x = rng.random((rows_, n), dtype=np.float32)
    xi = rng.integers(-50, 50, (rows_, n)).astype(np.int32)
    sums = np.zeros(rows_, np.float32)
    maxes = np.zeros(rows_, np.int32)
    run_kernel(path, args=[x, sums, maxes, xi, rows_, n], program=program, source=program.source, strict=True)
    np.testing.assert_allclose(sums, x.sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(maxes, xi.max(axis=1))


def test_member_functions_constructors_references_and_a_variadic_launcher(tmp_path):
    path = _write(tmp_path, "means.hip", STRUCTS_AND_LAUNCHER)
    program = _lowered(path, "hip")
    src = program.source
    assert "this_->total += v" in src and "launch_config__ctor(" in src
    n, k = 100, 5
    x = np.random.default_rng(2).random((n, k), dtype=np.float32)
    out = np.zeros(n, np.float32)
    run_kernel(path, args=[x, out, n, k], program=program, source=program.source, strict=True)
    np.testing.assert_allclose(out, 3 * x.mean(axis=1), rtol=1e-5)


@pytest.mark.parametrize("body, line, what", [
    ("float s = 2;\n  out[0] = apply([&](float v) { return v * s; });", 7,
     "lambda capturing by reference"),
    ("vec2 a{1, 2}, b{3, 4};\n  out[0] = (a - b).x;", 7, "free function"),
])
def test_what_cannot_be_expressed_is_refused_with_its_position(tmp_path, body, line, what):
    # (a lambda capturing by value passed to a function is lowered: test_lambda_functor_arguments,
    # test_lambda_functor_arguments_capturing_values)
    text = ("template <class T> struct box { T v; };\n"
            "struct vec2 { float x, y; };\n"
            "template <class F> __device__ float apply(F f) { return f(1.0f); }\n"
            "__device__ vec2 operator-(vec2 a, vec2 b) { return {a.x - b.x, a.y - b.y}; }\n"
            "__global__ void k(float *out) {\n"
            f"  {body}\n}}\n")
    path = _write(tmp_path, "bad.cu", text)
    with pytest.raises(SourceError) as err:
        parse_source(text, "cuda", str(path))
    d = err.value.diagnostics[0]
    assert d.code == "XP1310" and d.coord.line == line and what in d.message


ACCESSORS_AND_OPERATORS = r"""
#include <cuda_runtime.h>
template <class T> struct SharedMemory {
  __device__ inline operator T *() { extern __shared__ int __smem[]; return (T *)__smem; }
};
template <class T> struct alignas(16) Packed4 {
  T v[4];
  __device__ T &operator[](int i) { return v[i]; }
  __device__ const T &operator[](int i) const { return v[i]; }
  __device__ Packed4 operator+(const Packed4 &o) const { Packed4 r; for (int i = 0; i < 4; i++) r.v[i] = v[i] + o.v[i]; return r; }
};
template <class T>
__global__ void add4(const Packed4<T> *a, const Packed4<T> *b, T *out, int n) {
  T *sdata = SharedMemory<T>();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Packed4<T> c = a[i] + b[i];
    c[3] = c[3] * 2;
    sdata[threadIdx.x] = c[0] + c[1] + c[2] + c[3];
    out[i] = sdata[threadIdx.x];
  }
}
extern "C" void entry(const float *a, const float *b, float *out, int n) {
  Packed4<float> *da, *db; float *dout;
  cudaMalloc(&da, n * sizeof(Packed4<float>)); cudaMalloc(&db, n * sizeof(Packed4<float>));
  cudaMalloc(&dout, n * sizeof(float));
  cudaMemcpy(da, a, n * 16, cudaMemcpyHostToDevice); cudaMemcpy(db, b, n * 16, cudaMemcpyHostToDevice);
  add4<float><<<(n + 63) / 64, 64, 64 * sizeof(float)>>>(da, db, dout, n);
  cudaMemcpy(out, dout, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(da); cudaFree(db); cudaFree(dout);
}
"""


def test_shared_memory_accessor_and_vector_operators(tmp_path):
    path = _write(tmp_path, "add4.cu", ACCESSORS_AND_OPERATORS)
    program = _lowered(path, "cuda")
    assert "Packed4_float__op_index(&(c), 3)" in program.source   # T &operator[] -> pointer
    n = 100
    rng = np.random.default_rng(3)
    a = rng.random((n, 4), dtype=np.float32)
    b = rng.random((n, 4), dtype=np.float32)
    out = np.zeros(n, np.float32)
    run_kernel(path, args=[a, b, out, n], program=program, source=program.source, strict=True)
    np.testing.assert_allclose(out, ((a + b) * np.array([1, 1, 1, 2], np.float32)).sum(axis=1), rtol=1e-5)


LAMBDAS_ALIASES_AND_NAMESPACES = r"""
#include <cuda_runtime.h>
#include <cassert>
#include <cstdio>
namespace mylib {
template <typename T> __device__ __forceinline__ T sq(T v) { return v * v; }
template <typename T> struct Acc { T s; __device__ void add(T v) { s += v; } };
}
using real = float;
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) sumsq(const real *__restrict__ x, real *__restrict__ out, int n) {
  assert(blockDim.x == BLOCK);
  using acc_t = mylib::Acc<real>;
  acc_t acc{0};
  for (int i = threadIdx.x; i < n; i += BLOCK) acc.add(mylib::sq(x[i]));
  real scale = 0.5f;
  auto twice = [](real v) { return 2 * v; };
  auto scaled = [&](real v) { return v * scale; };
  __shared__ real part[BLOCK];
  part[threadIdx.x] = scaled(twice(acc.s));
  [&] { scale = 1.0f; }();
  __syncthreads();
  if (threadIdx.x == 0) {
    real t = 0;
#pragma unroll 4
    for (int j = 0; j < BLOCK; ++j) t += part[j];
    if (n < 0) printf("bad n %d\\n", n);
    out[0] = t * scale;
  }
}
extern "C" void entry(const real *x, real *out, int n) {
  real *dx, *dout;
  cudaMalloc(&dx, n * sizeof(real)); cudaMalloc(&dout, sizeof(real));
  cudaMemcpy(dx, x, n * sizeof(real), cudaMemcpyHostToDevice);
  sumsq<64><<<1, 64>>>(dx, dout, n);
  cudaMemcpy(out, dout, sizeof(real), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dout);
}
"""


def test_lambdas_type_aliases_namespaces_assert_and_printf(tmp_path):
    path = _write(tmp_path, "sumsq.cu", LAMBDAS_ALIASES_AND_NAMESPACES)
    program = _lowered(path, "cuda")
    src = program.source
    assert "static __device__ float __xp_lambda_" in src and "typedef float real;" in src
    x = np.arange(100, dtype=np.float32)
    out = np.zeros(1, np.float32)
    # scale is captured by reference: the in-place lambda's write is seen after it (1.0)
    run_kernel(path, args=[x, out, 100], program=program, source=program.source, strict=True)
    np.testing.assert_allclose(out[0], (x.astype(np.float64) ** 2).sum(), rtol=1e-5)


EXPLICIT_SPECIALISATIONS = r"""
#include <cuda_runtime.h>
template <typename T> struct traits { static __device__ T one() { return 1; } };
template <> struct traits<float> { static __device__ float one() { return 1.5f; } };
template <typename T> __device__ T twice(T v) { return 2 * v; }
template <> __device__ float twice<float>(float v) { return 3 * v; }
__global__ void k(float *a, int *b) {
  a[threadIdx.x] = twice(traits<float>::one());
  b[threadIdx.x] = twice(traits<int>::one());
}
"""


def test_explicit_specialisations_are_the_ones_called(tmp_path):
    path = _write(tmp_path, "spec.cu", EXPLICIT_SPECIALISATIONS)
    program = _lowered(path, "cuda")
    a = np.zeros(2, np.float32)
    b = np.zeros(2, np.int32)
    run_kernel(path, args=[a, b], launch={"grid": (1, 1, 1), "block": (2, 1, 1)}, program=program,
               source=program.source, strict=True)
    np.testing.assert_array_equal(a, [4.5, 4.5])   # twice<float> is 3 * v, traits<float>::one 1.5
    np.testing.assert_array_equal(b, [2, 2])


FUNCTOR_LAMBDAS = r"""
#include <cuda_runtime.h>
template <typename F>
__device__ float apply2(F f, float v) { return f(f(v)); }
template <typename T, typename Op>
__global__ void map(const T *x, T *y, int n, Op op) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = op(x[i]);
}
__global__ void k(float *out) {
  out[threadIdx.x] = apply2([](float v) { return v * 3.0f; }, 1.0f + threadIdx.x);
}
extern "C" void entry(const float *x, float *y, float *out, int n) {
  float *dx, *dy, *dout;
  cudaMalloc(&dx, n * sizeof(float)); cudaMalloc(&dy, n * sizeof(float)); cudaMalloc(&dout, 4 * sizeof(float));
  cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
  map<<<(n + 31) / 32, 32>>>(dx, dy, n, [] __device__ (float v) { return v + 1.0f; });
  k<<<1, 4>>>(dout);
  cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(out, dout, 4 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dy); cudaFree(dout);
}
"""


def test_lambda_functor_arguments(tmp_path):
    path = _write(tmp_path, "map.cu", FUNCTOR_LAMBDAS)
    program = _lowered(path, "cuda")
    assert "(lambda" not in program.source and str(tmp_path) not in program.source
    x = np.arange(40, dtype=np.float32)
    y = np.zeros(40, np.float32)
    out = np.zeros(4, np.float32)
    run_kernel(path, args=[x, y, out, 40], program=program, source=program.source, strict=True)
    np.testing.assert_array_equal(y, x + 1)
    np.testing.assert_array_equal(out, 9 * np.arange(1, 5, dtype=np.float32))


CAPTURING_LAMBDAS = r"""
#include <cuda_runtime.h>
template <typename F>
__global__ void map_kernel(float *data, int n, F f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = f(data[i], i);
}
extern "C" void entry(float *data, int n, float slope, int shift) {
  float *d;
  cudaMalloc(&d, n * sizeof(float));
  cudaMemcpy(d, data, n * sizeof(float), cudaMemcpyHostToDevice);
  auto ramp = [slope] __device__ (float v, int i) { return v + slope * i; };
  map_kernel<<<(n + 31) / 32, 32>>>(d, n, ramp);
  map_kernel<<<(n + 31) / 32, 32>>>(d, n, [=] __device__ (float v, int i) { return v * (i < shift ? 2.0f : 1.0f); });
  cudaMemcpy(data, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
}
"""


def test_lambda_functor_arguments_capturing_values(tmp_path):
    """A lambda capturing by value, handed to a template kernel directly or through a local
    variable: the instance takes the captured values as parameters after its own, and the
    launch passes them."""
    path = _write(tmp_path, "ramp.cu", CAPTURING_LAMBDAS)
    program = _lowered(path, "cuda")
    src = program.source
    assert "(lambda" not in src and "float __xp_cap_slope" in src and "int __xp_cap_shift" in src
    n = 50
    data = np.arange(n, dtype=np.float32)
    run_kernel(path, args=[data, n, np.float32(0.5), 7], program=program, source=src, strict=True)
    want = np.arange(n, dtype=np.float32) * 1.5
    want[:7] *= 2
    np.testing.assert_allclose(data, want)


KERNEL_TEMPLATE_LAUNCHED_FROM_A_TEMPLATE = r"""
#include <cuda_runtime.h>
template <class T>
static __device__ T twice(T v) { return v + v; }
template <class T>
static __global__ void twice_kernel(const T * x, T * dst, const int n) {
    const int i = blockDim.x*blockIdx.x + threadIdx.x;
    if (i >= n) return;
    dst[i] = twice(x[i]);
}
template <class T>
static void twice_cuda(const T * x, T * dst, const int n, cudaStream_t stream) {
    twice_kernel<<<(n + 255) / 256, 256, 0, stream>>>(x, dst, n);
}
extern "C" void run(const float * x, float * dst, int n) {
    float *dx, *dd;
    cudaMalloc(&dx, n * sizeof(float)); cudaMalloc(&dd, n * sizeof(float));
    cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
    twice_cuda(dx, dd, n, 0);
    cudaMemcpy(dst, dd, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(dx); cudaFree(dd);
}
"""


def test_a_kernel_template_launched_from_a_template_is_deduced_from_the_launch(tmp_path):
    """ggml's launchers: ``k<<<g, b, 0, s>>>(x, ...)`` inside a host template, the kernel's
    template arguments deduced from the launch's arguments (the kernel used to be dropped and
    the launch left naming the template)."""
    path = _write(tmp_path, "twice.cu", KERNEL_TEMPLATE_LAUNCHED_FROM_A_TEMPLATE)
    import platforms

    program = parse_source(path.read_text(), "cuda", str(path))
    assert "twice_kernel_float<<<" in platforms.module("cuda", "backend").emit(program)
    n = 300
    x = np.random.default_rng(2).random(n, dtype=np.float32)
    y = np.zeros(n, np.float32)
    run_kernel(path, args=[x, y, n], program=program, strict=True)
    np.testing.assert_array_equal(y, x + x)
