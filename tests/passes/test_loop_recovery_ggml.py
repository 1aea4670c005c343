"""loop_recovery on the shapes of ggml's kernels (issue 16, wild set): an early return of a
synchronising device function under a block-uniform condition (``block_reduce`` returns when the
block is one warp), CUDA 11 warp reductions (``__reduce_add_sync`` & co.), and locals of one
barrier phase used in a later one."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.base import PassRefused, run_pass
from passes.lift import loop_recovery  # noqa: F401  (registers the pass)
from xpiler.parse import parse_source
from xpiler.run import run_kernel

SUFFIX = {"cuda": ".cu", "hip": ".hip"}
RNG = np.random.default_rng(16)


def _lift(src: str, platform: str = "cuda"):
    prog = parse_source(src, platform, f"k{SUFFIX[platform]}")
    return prog, platforms.module("vnni", "backend").emit(run_pass("loop_recovery", prog))


def _check(tmp_path, src: str, args: list, platform: str = "cuda", exact: bool = False) -> str:
    prog, text = _lift(src, platform)
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


def _refusal(src: str, platform: str = "cuda"):
    prog = parse_source(src, platform, f"k{SUFFIX[platform]}")
    with pytest.raises(PassRefused) as e:
        run_pass("loop_recovery", prog)
    return e.value.diagnostics[0]


# ----------------------------------------------------------------------------- early return
BLOCK_REDUCE = """#include <cuda_runtime.h>
#define WARP_SIZE 32
__device__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o, 32);
  return v;
}
__device__ float block_sum(float v, float *sh) {
  v = warp_sum(v);
  if (COND) return v;
  int w = threadIdx.x / WARP_SIZE, l = threadIdx.x % WARP_SIZE;
  if (l == 0) sh[w] = v;
  __syncthreads();
  v = l < blockDim.x / WARP_SIZE ? sh[l] : 0.0f;
  return warp_sum(v);
}
__global__ void rowsum(const float *x, float *y, int n) {
  __shared__ float sh[32];
  float s = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += x[blockIdx.x * n + i];
  s = block_sum(s, sh);
  if (threadIdx.x == 0) y[blockIdx.x] = s;
}
extern "C" void entry(float *x, float *y, int n, int nt) {
  float *dx, *dy;
  cudaMalloc(&dx, 4 * n * sizeof(float)); cudaMalloc(&dy, 4 * sizeof(float));
  cudaMemcpy(dx, x, 4 * n * sizeof(float), cudaMemcpyHostToDevice);
  rowsum<<<4, nt>>>(dx, dy, n);
  cudaDeviceSynchronize();
  cudaMemcpy(y, dy, 4 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dy);
}
"""


@pytest.mark.parametrize("nt", [32, 128])
def test_block_uniform_early_return_of_a_synchronising_device_function(tmp_path, nt):
    # ggml's block_reduce: one warp returns the warp sum, more warps go through shared memory
    src = BLOCK_REDUCE.replace("COND", "blockDim.x == WARP_SIZE")
    n = 200
    text = _check(tmp_path, src, [RNG.standard_normal(4 * n).astype(np.float32), np.zeros(4, np.float32), n, nt])
    assert "== 32" in text or "== WARP_SIZE" in text


def test_early_return_in_the_taken_branch_keeps_the_rest_in_the_other(tmp_path):
    # if (c) { ...; return r; } return v;  (the form ggml's templates instantiate)
    src = BLOCK_REDUCE.replace("  if (COND) return v;\n  int w", "  if (blockDim.x > WARP_SIZE) {\n  int w") \
        .replace("  return warp_sum(v);\n}\n__global__", "  return warp_sum(v);\n  }\n  return v;\n}\n__global__")
    n = 100
    _check(tmp_path, src, [RNG.standard_normal(4 * n).astype(np.float32), np.zeros(4, np.float32), n, 96])


def test_thread_dependent_early_return_before_a_barrier_is_refused():
    d = _refusal(BLOCK_REDUCE.replace("COND", "threadIdx.x >= 64"))
    assert d.code == "XP-RECOVER-001" and "early return" in d.message and "block_sum" in d.message


# ----------------------------------------------------------------------------- warp reductions
WARP_REDUCE = """#include <cuda_runtime.h>
__global__ void red(const int *x, const unsigned *u, int *out, unsigned *uout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? x[i] : 0;
  unsigned w = i < n ? u[i] : 0u;
  int s = __reduce_add_sync(0xffffffff, v);
  int mn = __reduce_min_sync(0xffffffff, v);
  int mx = __reduce_max_sync(0xffffffff, v);
  unsigned umn = __reduce_min_sync(0xffffffff, w);
  unsigned umx = __reduce_max_sync(0xffffffff, w);
  unsigned a = __reduce_and_sync(0xffffffff, w);
  unsigned o = __reduce_or_sync(0xffffffff, w);
  unsigned xo = __reduce_xor_sync(0xffffffff, w);
  unsigned half = 0;
  if ((threadIdx.x & 1) == 0) half = __reduce_add_sync(0x55555555, w);
  if (i < n) {
    out[3 * i] = s; out[3 * i + 1] = mn; out[3 * i + 2] = mx;
    uout[6 * i] = umn; uout[6 * i + 1] = umx; uout[6 * i + 2] = a; uout[6 * i + 3] = o;
    uout[6 * i + 4] = xo; uout[6 * i + 5] = half;
  }
}
extern "C" void entry(int *x, unsigned *u, int *out, unsigned *uout, int n) {
  int *dx, *dout; unsigned *du, *duout;
  cudaMalloc(&dx, n * sizeof(int)); cudaMalloc(&du, n * sizeof(unsigned));
  cudaMalloc(&dout, 3 * n * sizeof(int)); cudaMalloc(&duout, 6 * n * sizeof(unsigned));
  cudaMemcpy(dx, x, n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(du, u, n * sizeof(unsigned), cudaMemcpyHostToDevice);
  red<<<(n + 63) / 64, 64>>>(dx, du, dout, duout, n);
  cudaDeviceSynchronize();
  cudaMemcpy(out, dout, 3 * n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaMemcpy(uout, duout, 6 * n * sizeof(unsigned), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(du); cudaFree(dout); cudaFree(duout);
}
"""


def test_cuda11_warp_reductions_are_lifted_with_their_semantics(tmp_path):
    # signed and unsigned overloads, sums that wrap, a partial mask under a condition
    n = 100
    x = RNG.integers(-2**31, 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    u = RNG.integers(0, 2**32 - 1, n, dtype=np.uint64).astype(np.uint32)
    text = _check(tmp_path, WARP_REDUCE, [x, u, np.zeros(3 * n, np.int32), np.zeros(6 * n, np.uint32), n],
                  exact=True)
    assert "xp_wreduce_add_int" in text and "xp_wreduce_min_unsigned" in text


# ----------------------------------------------------------------------------- hoisted shared arrays
ARGMAX = """#include <cuda_runtime.h>
#include <float.h>
#define WARP_SIZE 32
__global__ void amax(const float *x, int *dst, int ncols) {
  const float *rowx = x + blockIdx.x * ncols;
  float maxval = -FLT_MAX;
  int arg = -1;
  for (int col = threadIdx.x; col < ncols; col += blockDim.x)
    if (rowx[col] > maxval) { maxval = rowx[col]; arg = col; }
  for (int o = WARP_SIZE / 2; o > 0; o >>= 1) {
    const float v = __shfl_xor_sync(0xFFFFFFFF, maxval, o, WARP_SIZE);
    const int c = __shfl_xor_sync(0xFFFFFFFF, arg, o, WARP_SIZE);
    if (v > maxval || (v == maxval && c < arg)) { maxval = v; arg = c; }
  }
  const int n_warps = blockDim.x / WARP_SIZE;
  const int lane = threadIdx.x % WARP_SIZE, warp = threadIdx.x / WARP_SIZE;
  if (n_warps > 1) {
    constexpr int max_warps = 1024 / WARP_SIZE;
    __shared__ float smax[max_warps];
    __shared__ int sarg[max_warps];
    if (lane == 0) { smax[warp] = maxval; sarg[warp] = arg; }
    __syncthreads();
    if (warp == 0) {
      if (lane < n_warps) { maxval = smax[lane]; arg = sarg[lane]; }
      for (int o = WARP_SIZE / 2; o > 0; o >>= 1) {
        const float v = __shfl_xor_sync(0xFFFFFFFF, maxval, o, WARP_SIZE);
        const int c = __shfl_xor_sync(0xFFFFFFFF, arg, o, WARP_SIZE);
        if (v > maxval || (v == maxval && c < arg)) { maxval = v; arg = c; }
      }
    }
  }
  if (threadIdx.x == 0) dst[blockIdx.x] = arg;
}
extern "C" void entry(float *x, int *dst, int ncols) {
  float *dx; int *dd;
  cudaMalloc(&dx, 3 * ncols * sizeof(float)); cudaMalloc(&dd, 3 * sizeof(int));
  cudaMemcpy(dx, x, 3 * ncols * sizeof(float), cudaMemcpyHostToDevice);
  amax<<<3, 128>>>(dx, dd, ncols);
  cudaDeviceSynchronize();
  cudaMemcpy(dst, dd, 3 * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dd);
}
"""


def test_shared_array_sized_by_a_scoped_constexpr_local(tmp_path):
    # the __shared__ arrays move to the top of the block body, out of the scope of max_warps
    n = 300
    text = _check(tmp_path, ARGMAX, [RNG.standard_normal(3 * n).astype(np.float32), np.zeros(3, np.int32), n],
                  exact=True)
    assert "float smax[1024 / WARP_SIZE];" in text and "max_warps]" not in text


FLOAT2_SUM = """#include <cuda_runtime.h>
__device__ float2 warp_sum2(float2 a) {
  for (int o = 16; o > 0; o >>= 1) {
    a.x += __shfl_xor_sync(0xffffffff, a.x, o, 32);
    a.y += __shfl_xor_sync(0xffffffff, a.y, o, 32);
  }
  return a;
}
__global__ void meanvar(const float *x, float *y, int n) {
  float2 mv = make_float2(0.0f, 0.0f);
  for (int i = threadIdx.x; i < n; i += 32) { float v = x[blockIdx.x * n + i]; mv.x += v; mv.y += v * v; }
  mv = warp_sum2(mv);
  if (threadIdx.x == 0) { y[2 * blockIdx.x] = mv.x; y[2 * blockIdx.x + 1] = mv.y; }
}
extern "C" void entry(float *x, float *y, int n) {
  float *dx, *dy;
  cudaMalloc(&dx, 2 * n * sizeof(float)); cudaMalloc(&dy, 4 * sizeof(float));
  cudaMemcpy(dx, x, 2 * n * sizeof(float), cudaMemcpyHostToDevice);
  meanvar<<<2, 32>>>(dx, dy, n);
  cudaDeviceSynchronize();
  cudaMemcpy(y, dy, 4 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dy);
}
"""


def test_shuffled_component_of_a_vector_type(tmp_path):
    # ggml's warp_reduce_sum(float2): the shuffled value a.x has the vector's element type
    n = 70
    _check(tmp_path, FLOAT2_SUM, [RNG.standard_normal(2 * n).astype(np.float32), np.zeros(4, np.float32), n])


VOID_RETURNS = """#include <cuda_runtime.h>
__device__ void put(float *sh, float *y, float v) {
  if (blockDim.x == 32) { y[blockIdx.x * 32 + threadIdx.x] = v; return; }
  if (threadIdx.x % 2) v = -v;
  sh[threadIdx.x] = v;
  __syncthreads();
  y[blockIdx.x * blockDim.x + threadIdx.x] = sh[blockDim.x - 1 - threadIdx.x];
}
__global__ void k(const float *x, float *y) {
  __shared__ float sh[128];
  put(sh, y, x[blockIdx.x * blockDim.x + threadIdx.x]);
}
extern "C" void entry(float *x, float *y, int nt) {
  float *dx, *dy;
  cudaMalloc(&dx, 2 * nt * sizeof(float)); cudaMalloc(&dy, 2 * nt * sizeof(float));
  cudaMemcpy(dx, x, 2 * nt * sizeof(float), cudaMemcpyHostToDevice);
  k<<<2, nt>>>(dx, dy);
  cudaDeviceSynchronize();
  cudaMemcpy(y, dy, 2 * nt * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dy);
}
"""


@pytest.mark.parametrize("nt", [32, 128])
def test_void_device_function_with_a_uniform_early_return(tmp_path, nt):
    _check(tmp_path, VOID_RETURNS, [RNG.standard_normal(2 * nt).astype(np.float32), np.zeros(2 * nt, np.float32), nt],
           exact=True)
