"""passes/lift/loop_recovery/__init__.py: CUDA/HIP -> C++ loops (golden structure, refusals, verified runs).

Each golden case lifts a small kernel, runs source (virtual device) and result (native) on the
same inputs and compares every pointer argument; the corpus sweep translates the project corpus
with ``xpiler translate`` (a representative subset by default, everything under ``-m slow``).
"""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

import platforms
from passes.lift import loop_recovery  # noqa: F401  (registers the pass)
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

CORPUS = Path(__file__).resolve().parents[2] / "xpiler" / "corpus"
SUFFIX = {"cuda": ".cu", "hip": ".hip"}


def _lift(src: str, platform: str = "cuda", **opts):
    prog = parse_source(src, platform, f"k{SUFFIX[platform]}")
    out = run_pass("loop_recovery", prog, **opts)
    return prog, out, platforms.module("vnni", "backend").emit(out)


def _check(tmp_path, src, args, platform="cuda", exact=True, **opts):
    """Lift, run both sides on copies of ``args``, compare; returns the lifted text."""
    prog, out, text = _lift(src, platform, **opts)
    sp = tmp_path / f"k{SUFFIX[platform]}"
    sp.write_text(src)
    tp = tmp_path / "k.cpp"
    tp.write_text(text)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(sp, args=want, program=prog)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(tp, args=got, source=text, strict=True)
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            if exact:
                np.testing.assert_array_equal(g, w)
            else:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    return text


def _host(kernel_call: str, params: str, allocs: list[tuple[str, str, str]], copy_back: list[str]) -> str:
    """A CUDA host entry: (name, type, count) allocations copied in, ``copy_back`` copied out."""
    lines = [f'extern "C" void entry({params}) {{']
    for name, t, n in allocs:
        lines.append(f"  {t}* d_{name}; cudaMalloc(&d_{name}, ({n}) * sizeof({t}));")
        lines.append(f"  cudaMemcpy(d_{name}, {name}, ({n}) * sizeof({t}), cudaMemcpyHostToDevice);")
    lines.append(f"  {kernel_call};")
    lines.append("  cudaDeviceSynchronize();")
    for name, t, n in allocs:
        if name in copy_back:
            lines.append(f"  cudaMemcpy({name}, d_{name}, ({n}) * sizeof({t}), cudaMemcpyDeviceToHost);")
    for name, _, _ in allocs:
        lines.append(f"  cudaFree(d_{name});")
    lines.append("}")
    return "\n".join(lines) + "\n"


RNG = np.random.default_rng(7)


def _f(n):
    return RNG.standard_normal(n).astype(np.float32)


# ----------------------------------------------------------------------------- golden cases
ELEMENTWISE = """#include <cuda_runtime.h>
__global__ void scale(float* __restrict__ y, const float* __restrict__ x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}
""" + _host("scale<<<(n + 127) / 128, 128>>>(d_y, d_x, n)", "float* x, float* y, int n",
            [("x", "float", "n"), ("y", "float", "n")], ["y"])


def test_elementwise_golden(tmp_path):
    text = _check(tmp_path, ELEMENTWISE, [_f(1000), np.zeros(1000, np.float32), 1000])
    assert "static void scale(float * __restrict__ y, const float * __restrict__ x, int n, dim3 xp_grid, " \
           "dim3 xp_block, unsigned long xp_shmem)" in text
    assert "#pragma omp parallel for collapse(3)" in text
    assert "#pragma omp simd" in text                      # barrier-free thread loop
    assert "int i = xp_bx * xp_block.x + xp_tx;" in text
    assert "scale(d_y, d_x, n, xp_dim3((n + 127) / 128, 1, 1), xp_dim3(128, 1, 1), 0);" in text
    assert "cudaMalloc" not in text and "xp_malloc((void **) (&d_x)" in text
    assert 'extern "C" void entry(float *x, float *y, int n)' in text
    assert "threadIdx" not in text and "__global__" not in text


def test_input_program_is_not_mutated():
    prog = parse_source(ELEMENTWISE, "cuda", "k.cu")
    before = platforms.module("cuda", "backend").emit(prog)
    run_pass("loop_recovery", prog)
    assert platforms.module("cuda", "backend").emit(prog) == before
    assert prog.platform == "cuda"


def test_no_openmp_option(tmp_path):
    text = _check(tmp_path, ELEMENTWISE, [_f(300), np.zeros(300, np.float32), 300], omp=False)
    assert "#pragma omp" not in text.split("static void scale")[1]


TREE_REDUCE = """#include <cuda_runtime.h>
__global__ void rowsum(const float* x, float* out, int n) {
  __shared__ float sdata[256];
  unsigned int tid = threadIdx.x;
  float acc = 0.0f;
  for (int j = tid; j < n; j += blockDim.x) acc += x[blockIdx.x * n + j];
  sdata[tid] = acc;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
""" + _host("rowsum<<<rows, 256>>>(d_x, d_out, n)", "float* x, float* out, int rows, int n",
            [("x", "float", "rows * n"), ("out", "float", "rows")], ["out"])


def test_shared_memory_tree_reduction_with_barriers(tmp_path):
    rows, n = 6, 700
    text = _check(tmp_path, TREE_REDUCE, [_f(rows * n), np.zeros(rows, np.float32), rows, n])
    body = text.split("static void rowsum")[1]
    assert "float sdata[256];" in body                     # per-block array
    assert "unsigned int tid[xp_np];" in body              # live across barriers: expanded
    assert "for (unsigned int s = xp_block.x / 2; s > 0; s >>= 1)" in body   # uniform loop kept
    assert body.count("for (unsigned int xp_tx = 0;") == 3  # fission: before, inside and after the loop


TILED_GEMM = """#include <cuda_runtime.h>
#define T 8
__global__ void gemm(const float* A, const float* B, float* C, int M, int N, int K) {
  __shared__ float As[T][T];
  __shared__ float Bs[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += T) {
    As[threadIdx.y][threadIdx.x] = A[row * K + k0 + threadIdx.x];
    Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * N + col];
    __syncthreads();
    for (int kk = 0; kk < T; ++kk) acc += As[threadIdx.y][kk] * Bs[kk][threadIdx.x];
    __syncthreads();
  }
  C[row * N + col] = acc;
}
""" + _host("gemm<<<dim3(N / T, M / T), dim3(T, T)>>>(d_A, d_B, d_C, M, N, K)",
            "float* A, float* B, float* C, int M, int N, int K",
            [("A", "float", "M * K"), ("B", "float", "K * N"), ("C", "float", "M * N")], ["C"])


def test_barrier_inside_uniform_loop_tiled_gemm(tmp_path):
    M, N, K = 16, 24, 32
    text = _check(tmp_path, TILED_GEMM, [_f(M * K), _f(K * N), np.zeros(M * N, np.float32), M, N, K])
    body = text.split("static void gemm")[1]
    assert "for (int k0 = 0; k0 < K; k0 += T)" in body
    assert "float acc[xp_np];" in body and "acc[xp_tid] +=" in body
    assert "xp_dim3(N / T, M / T, 1), xp_dim3(T, T, 1)" in text


SHUFFLE = """#include <cuda_runtime.h>
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  return v;
}
__global__ void shf(const float* x, float* out, float* bcast, float* xr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.0f;
  float s = warp_sum(v);
  if ((threadIdx.x & 31) == 0) out[i / 32] = s;
  bcast[i] = __shfl_sync(0xffffffff, v, 3, 8);            // width 8: lane 3 of each group of 8
  xr[i] = __shfl_xor_sync(0xffffffff, v, 5, 16) + __shfl_up_sync(0xffffffff, v, 2, 16);
}
""" + _host("shf<<<2, 96>>>(d_x, d_out, d_bcast, d_xr, n)", "float* x, float* out, float* bcast, float* xr, int n",
            [("x", "float", "192"), ("out", "float", "6"), ("bcast", "float", "192"), ("xr", "float", "192")],
            ["out", "bcast", "xr"])


def test_shuffles_are_exchange_points(tmp_path):
    text = _check(tmp_path, SHUFFLE, [_f(192), np.zeros(6, np.float32), np.zeros(192, np.float32),
                                      np.zeros(192, np.float32), 150])
    assert "xp_shfl_down(xp_tid, xp_nt" in text
    assert "static int xp_shfl_src_xor(long long laneId" in text   # generated from warp.toml
    assert "warp_sum" not in text                          # synchronising device function inlined


HIP_SHUFFLE = """#include <hip/hip_runtime.h>
__global__ void wsum(const float* x, float* out) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int m = warpSize / 2; m > 0; m >>= 1) v += __shfl_xor(v, m);
  if (threadIdx.x % warpSize == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / warpSize] = v;
}
extern "C" void entry(float* x, float* out) {
  float *d_x, *d_out;
  hipMalloc((void**)&d_x, 256 * sizeof(float));
  hipMalloc((void**)&d_out, 4 * sizeof(float));
  hipMemcpy(d_x, x, 256 * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(wsum, dim3(2), dim3(128), 0, 0, d_x, d_out);
  hipMemcpy(out, d_out, 4 * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(d_x); hipFree(d_out);
}
"""


def test_hip_wavefront_of_64(tmp_path):
    text = _check(tmp_path, HIP_SHUFFLE, [_f(256), np.zeros(4, np.float32)], platform="hip")
    assert "for (int m = 64 / 2; m > 0; m >>= 1)" in text
    assert "& 63" in text                                  # HIP source-lane rule


ATOMICS = """#include <cuda_runtime.h>
__global__ void hist(const int* v, int* bins, float* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&bins[v[i] & 7], 1);
    atomicMax(&bins[8], v[i]);
    atomicAdd(total, (float)v[i] * 0.5f);
  }
}
""" + _host("hist<<<(n + 63) / 64, 64>>>(d_v, d_bins, d_total, n)", "int* v, int* bins, float* total, int n",
            [("v", "int", "n"), ("bins", "int", "9"), ("total", "float", "1")], ["bins", "total"])


def test_atomics(tmp_path):
    n = 1000
    v = RNG.integers(0, 1000, n).astype(np.int32)
    text = _check(tmp_path, ATOMICS, [v, np.zeros(9, np.int32), np.zeros(1, np.float32), n])
    assert "#pragma omp atomic capture" in text
    # floating-point atomics: blocks in order (bit-identical sums), no parallel block loop
    assert "#pragma omp parallel for" not in text.split("static void hist")[1]


def test_integer_atomics_keep_parallel_blocks():
    src = ATOMICS.replace("    atomicAdd(total, (float)v[i] * 0.5f);\n", "")
    _, _, text = _lift(src)
    assert "#pragma omp parallel for collapse(3)" in text.split("static void hist")[1]


EARLY_RETURN = """#include <cuda_runtime.h>
__global__ void shift(const float* x, float* y, int n) {
  extern __shared__ float buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  buf[threadIdx.x] = x[i];
  __syncthreads();
  float left = threadIdx.x > 0 ? buf[threadIdx.x - 1] : 0.0f;
  y[i] = buf[threadIdx.x] - left;
}
""" + _host("shift<<<(n + 31) / 32, 32, 32 * sizeof(float)>>>(d_x, d_y, n)", "float* x, float* y, int n",
            [("x", "float", "n"), ("y", "float", "n")], ["y"])


def test_early_return_and_dynamic_shared_memory(tmp_path):
    n = 100                                   # the last block has exited threads at the barrier
    text = _check(tmp_path, EARLY_RETURN, [_f(n), np.zeros(n, np.float32), n])
    body = text.split("static void shift")[1]
    assert "xp_done[xp_tid] = 1;" in body and "if (xp_done[xp_tid])" in body
    assert "float *buf = (float *) xp_dyn;" in body
    assert "32 * sizeof(float)" in text


LATE_RETURN = """#include <cuda_runtime.h>
__global__ void scale(const float* w, const float* x, float* y, int n) {
  __shared__ float ws[32];
  ws[threadIdx.x] = w[threadIdx.x];
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = x[i] * ws[(threadIdx.x + 1) % 32];
}
""" + _host("scale<<<(n + 31) / 32, 32>>>(d_w, d_x, d_y, n)", "float* w, float* x, float* y, int n",
            [("w", "float", "32"), ("x", "float", "n"), ("y", "float", "n")], ["y"])


def test_regions_before_any_return_skip_the_exited_thread_test(tmp_path):
    # the only return is in the last region: the first region runs before any thread can have
    # exited, so it has no ``if (xp_done[xp_tid]) continue;``; the result is unchanged
    n = 100
    text = _check(tmp_path, LATE_RETURN, [_f(32), _f(n), np.zeros(n, np.float32), n])
    body = text.split("static void scale")[1]
    assert "xp_done[xp_tid] = 1;" in body and "if (xp_done[xp_tid])" not in body
    # a return in the first region keeps the test in the regions after it
    assert "if (xp_done[xp_tid])" in _lift(EARLY_RETURN)[2].split("static void shift")[1]


WARP_LOOP = """#include <cuda_runtime.h>
__global__ void rows(const float* x, float* out, int nrows) {
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int r = blockIdx.x * 2 + warp; r < nrows; r += 2 * gridDim.x) {
    float v = x[r * 32 + lane];
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    __syncwarp();
    if (lane == 0) out[r] = v;
  }
  if (threadIdx.x < 32) {
    float w = x[lane];
    w += __shfl_down_sync(0xffffffff, w, 1);
    if (blockIdx.x == 0) out[nrows + lane] = w;
  }
}
""" + _host("rows<<<2, 64>>>(d_x, d_out, nrows)", "float* x, float* out, int nrows",
            [("x", "float", "nrows * 32"), ("out", "float", "nrows + 32")], ["out"])


def test_collectives_under_warp_uniform_control_flow(tmp_path):
    nrows = 7
    text = _check(tmp_path, WARP_LOOP, [_f(nrows * 32), np.zeros(nrows + 32, np.float32), nrows])
    assert "while (1)" in text                            # per-thread predicated loop


def test_half_storage_round_trips(tmp_path):
    src = """#include <cuda_runtime.h>
#include <cuda_fp16.h>
__global__ void h(const half* a, half* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { c[i] = __half2float(a[i]) * 3.0f; b[i] = __float2half(c[i] + 0.1f); }
}
""" + _host("h<<<(n + 63) / 64, 64>>>(d_a, d_b, d_c, n)", "half* a, half* b, float* c, int n",
            [("a", "half", "n"), ("b", "half", "n"), ("c", "float", "n")], ["b", "c"])
    n = 200
    text = _check(tmp_path, src, [_f(n).astype(np.float16), np.zeros(n, np.float16), np.zeros(n, np.float32), n])
    assert "typedef _Float16 half;" in text


# ----------------------------------------------------------------------------- refusals
def _refusal(src, platform="cuda"):
    prog = parse_source(src, platform, f"k{SUFFIX[platform]}")
    with pytest.raises(PassRefused) as e:
        run_pass("loop_recovery", prog)
    return e.value.diagnostics[0]


def test_refuses_barrier_under_thread_dependent_condition():
    src = TREE_REDUCE.replace("    __syncthreads();\n  }\n  if (tid == 0)", "  }\n  if (tid < 4) __syncthreads();\n  if (tid == 0)")
    d = _refusal(src)
    assert d.code == "XP-RECOVER-001" and d.coord.line > 0


def test_refuses_barrier_in_thread_dependent_loop():
    src = TREE_REDUCE.replace("for (unsigned int s = blockDim.x / 2;", "for (unsigned int s = tid + 1;")
    assert _refusal(src).code == "XP-RECOVER-001"


def test_refuses_unsupported_construct():
    src = ELEMENTWISE.replace("if (i < n) y[i]", "unsigned m = __match_any_sync(0xffffffff, i);\n  if (m) y[i]")
    d = _refusal(src)
    assert d.code == "XP-RECOVER-002" and d.construct == "__match_any_sync"


VOTES = """#include <cuda_runtime.h>
__global__ void votes(const int* v, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;                          // exited lanes do not vote
  unsigned b = __ballot_sync(0xffffffff, v[i] > 0);
  int any = __any_sync(0xffffffff, v[i] > 90);
  int all = __all_sync(0xffffffff, v[i] > -90);
  out[i] = __popc(b) * 4 + any * 2 + all;
}
""" + _host("votes<<<(n + 63) / 64, 64>>>(d_v, d_out, n)", "int* v, int* out, int n",
            [("v", "int", "n"), ("out", "int", "n")], ["out"])


def test_warp_votes_are_exchange_points(tmp_path):
    n = 150                                      # a partial last warp and exited lanes
    v = RNG.integers(-100, 100, n).astype(np.int32)
    text = _check(tmp_path, VOTES, [v, np.zeros(n, np.int32), n])
    assert "xp_vote_mask(" in text and "__ballot_sync" not in text


HIP_VOTES = """#include <hip/hip_runtime.h>
__global__ void votes(const int* v, unsigned long long* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long b = __ballot(v[i] > 0);
  if (threadIdx.x % warpSize == 0) out[i / warpSize] = b + (unsigned long long)__any(v[i] > 95);
}
extern "C" void entry(int* v, unsigned long long* out) {
  int* d_v; unsigned long long* d_out;
  hipMalloc((void**)&d_v, 256 * sizeof(int));
  hipMalloc((void**)&d_out, 4 * sizeof(unsigned long long));
  hipMemcpy(d_v, v, 256 * sizeof(int), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(votes, dim3(2), dim3(128), 0, 0, d_v, d_out);
  hipMemcpy(out, d_out, 4 * sizeof(unsigned long long), hipMemcpyDeviceToHost);
  hipFree(d_v); hipFree(d_out);
}
"""


def test_hip_wavefront_ballot_is_64_bits(tmp_path):
    v = RNG.integers(-100, 100, 256).astype(np.int32)
    text = _check(tmp_path, HIP_VOTES, [v, np.zeros(4, np.uint64)], platform="hip")
    assert "unsigned long long xp_vote_mask(" in text


def test_kernel_entry_gets_the_virtual_device_default_launch(tmp_path):
    src = "#include <cuda_runtime.h>\nextern \"C\" __global__ void k(float* y) { y[threadIdx.x] = 1.0f + threadIdx.x; }\n"
    text = _check(tmp_path, src, [np.zeros(256, np.float32)])
    assert 'extern "C" void k(float *y)' in text and "k_xp_body(y, xp_dim3(" in text


def test_refuses_other_platforms():
    prog = parse_source("extern \"C\" void f(float* x) { x[0] = 1.0f; }\n", "vnni", "f.cpp")
    with pytest.raises(PassRefused) as e:
        run_pass("loop_recovery", prog)
    assert e.value.diagnostics[0].code == "XP-RECOVER-003"


# ----------------------------------------------------------------------------- corpus sweep
def _corpus(platform):
    return sorted(p for p in (CORPUS / platform).glob(f"*{SUFFIX[platform]}") if p.with_suffix(".json").exists())


SUBSET = {"cuda": {"add_18_128", "softmax_4_6_200", "layernorm_32_128", "gemm_32_128_128", "sum_64_256"},
          "hip": {"gemm_32_128_128", "batchnorm_4_8_6_6", "softmax_64_128"}}
CASES = [pytest.param(p, id=f"{plat}-{p.stem}",
                      marks=() if p.stem in SUBSET[plat] else pytest.mark.slow)
         for plat in ("cuda", "hip") for p in _corpus(plat)]


@pytest.mark.parametrize("src", CASES)
def test_corpus_translates_to_vnni_verified(src, tmp_path):
    from xpiler.translate import translate

    rep = translate(str(src), "vnni", str(tmp_path / (src.stem + ".cpp")))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    lift = ["vector_struct_ops"] if src.suffix == ".hip" else []   # HIP: vector-struct arithmetic first
    assert [s.name for s in rep.steps] == lift + ["loop_recovery", "host_heap"]   # host_heap: the finish stage


BLOCK_VOTES = """#include <cuda_runtime.h>
__global__ void bvotes(const float* x, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.f;
  int c = __syncthreads_count(v > 0.5f);
  int a = __syncthreads_and(v > -2.f);
  int o = __syncthreads_or(v > 0.99f);
  if (i < n) out[i] = c * 4 + a * 2 + o;
}
""" + _host("bvotes<<<(n + 127) / 128, 128>>>(d_x, d_out, n)", "float* x, int* out, int n",
            [("x", "float", "n"), ("out", "int", "n")], ["out"])


def test_block_votes_are_exchange_points(tmp_path):
    n = 300
    text = _check(tmp_path, BLOCK_VOTES, [RNG.uniform(-1, 1, n).astype(np.float32), np.zeros(n, np.int32), n])
    assert "xp_block_vote(" in text and "__syncthreads_count" not in text


REFERENCE_PARAMS = """#include <cuda_runtime.h>
__device__ __forceinline__ void warp_reduce(float& val) {
  for (int o = 16; o > 0; o >>= 1) val += __shfl_down_sync(0xffffffff, val, o);
}
__device__ inline void accum(float& acc, const float* const __restrict__ p, int k) { acc += p[k]; }
__global__ void rs(const float* const __restrict__ x, float* __restrict__ y, int cols) {
  float acc = 0.f;
  for (int c = threadIdx.x; c < cols; c += 32) accum(acc, x + blockIdx.x * cols, c);
  warp_reduce(acc);
  if (threadIdx.x == 0) y[blockIdx.x] = acc;
}
""" + _host("rs<<<8, 32>>>(d_x, d_y, cols)", "float* x, float* y, int cols",
            [("x", "float", "8 * cols"), ("y", "float", "8")], ["y"])


def test_reference_parameters_of_inlined_device_functions(tmp_path):
    text = _check(tmp_path, REFERENCE_PARAMS, [_f(800), np.zeros(8, np.float32), 100], exact=False)
    assert "warp_reduce" not in text                 # inlined: val is acc


def test_reference_bound_to_a_computed_expression_is_refused():
    src = REFERENCE_PARAMS.replace("warp_reduce(acc);", "warp_reduce(*(&acc + 0));")
    d = _refusal(src)
    assert d.code == "XP-RECOVER-002" and "computed expression" in d.message


# ----------------------------------------------------------------------------- device functions
DEVICE_FUNCTIONS = """__global__ void k(const int *a, const int *b, int *c, float *f, int n) {
  int i = __mul24(blockIdx.x, blockDim.x) + threadIdx.x;
  if (i < n) {
    c[i] = __mul24(a[i], b[i]) + (int) __umulhi((unsigned) a[i], 3u) + __brev(i) % 7;
    f[i] = saturatef((float) a[i] / 100.0f);
  }
}
""" + _host("k<<<(n + 63) / 64, 64>>>(d_a, d_b, d_c, d_f, n)", "int* a, int* b, int* c, float* f, int n",
            [("a", "int", "n"), ("b", "int", "n"), ("c", "int", "n"), ("f", "float", "n")], ["c", "f"])


def test_device_functions_are_defined_from_the_runtime_header(tmp_path):
    """Issue 16 point 3: the host definitions of device functions come from one table, the
    virtual device's own header (platforms.device_functions); a definition that calls another
    (saturatef -> __saturatef) brings it along."""
    from passes.lift.loop_recovery import support

    defs = platforms.device_functions("cuda")
    assert {"__mul24", "__umulhi", "__brev", "saturatef", "erfinvf"} <= set(defs)
    assert "__shfl_sync" not in defs and "atomicAdd" not in defs       # thread or memory state
    assert support.math_closure({"saturatef"}) == ["__saturatef", "saturatef"]
    a = RNG.integers(-5000, 5000, 300).astype(np.int32)
    b = RNG.integers(-5000, 5000, 300).astype(np.int32)
    text = _check(tmp_path, DEVICE_FUNCTIONS, [a, b, np.zeros(300, np.int32), np.zeros(300, np.float32), 300])
    assert "inline int __mul24(int x, int y)" in text


CHECKED = """#include <cstdio>
#include <cstdlib>
void cudaCheck(cudaError_t error, const char *file, int line) {
  if (error != cudaSuccess) {
    printf("[CUDA ERROR] at file %s:%d: %s\\n", file, line, cudaGetErrorString(error));
    exit(EXIT_FAILURE);
  }
}
#define CHECK(x) cudaCheck(x, __FILE__, __LINE__)
__global__ void scale(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
extern "C" void entry(float *x, float *y, int n) {
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, n * sizeof(float)));
  cudaCheck(cudaMalloc(&dy, n * sizeof(float)), __FILE__, __LINE__);
  CHECK(cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice));
  scale<<<(n + 255) / 256, 256>>>(dx, dy, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  cudaFree(dx); cudaFree(dy);
}
"""


def test_an_error_check_helper_named_like_the_runtime_is_the_programs(tmp_path):
    """Issue 16 point 3: ``cudaCheck(...)`` written as a function of the program is lifted as a
    host function (its runtime calls inside are mapped), not refused as a runtime call."""
    text = _check(tmp_path, CHECKED, [_f(500), np.zeros(500, np.float32), 500])
    assert "cudaCheck(" in text and "cudaMalloc" not in text


ADVANCED_POINTERS = """__global__ void rowsum(const float *A, float *out, int K) {
  A += blockIdx.x * K;          // each thread's own copy of the parameter, advanced per block
  out += blockIdx.x;
  __shared__ float s[64];
  float acc = 0.0f;
  for (int k = threadIdx.x; k < K; k += blockDim.x) acc += A[k];
  s[threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0.0f;
    for (int i = 0; i < blockDim.x; ++i) t += s[i];
    *out = t;
  }
}
""" + _host("rowsum<<<M, 64>>>(d_A, d_out, K)", "float* A, float* out, int M, int K",
            [("A", "float", "M * K"), ("out", "float", "M")], ["out"])


def test_parameters_advanced_per_thread_are_per_thread(tmp_path):
    """Issue 16 point 3: a kernel that advances its pointer parameters (``A += row * K``) gives
    every thread its own copy; the lifted threads must not share one."""
    text = _check(tmp_path, ADVANCED_POINTERS, [_f(6 * 100), np.zeros(6, np.float32), 6, 100], exact=False)
    assert "*A = xp_param_A" in text.replace("const float ", "")
