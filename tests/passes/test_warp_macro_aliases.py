"""Warp intrinsics called through an object-like macro (``#define SHFL_SYNC __shfl_sync``, as
torch-sparse writes them): the front-end resolves the alias at the call (as the preprocessor
does), so api_map maps the shuffle to a 32-wide HIP shuffle and the lift to C gives it its
per-lane meaning; a host ``auto grid = dim3(...)`` is a dim3 for the lift. CUDA 11 warp
reductions with the full mask become width-32 shuffle-xor butterflies on HIP."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.base import PassRefused, run_pass
from passes.lift import loop_recovery  # noqa: F401  (registers the pass)
from passes.map import api_map  # noqa: F401  (registers the pass)
from xpiler.argspec import parse_arg_specs
from xpiler.parse import parse_source
from xpiler.run import run_kernel
from xpiler.translate import translate

ALIASED = r"""
#include <cuda_runtime.h>
#define SHFL_SYNC __shfl_sync
#define BROADCAST SHFL_SYNC
#define FULL_MASK 0xffffffff

__global__ void bcast(const float *x, float *y, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = t & 31;
  float v = t < n ? x[t] : 0.0f;
  float acc = 0.0f;
  for (int i = 0; i < 32; i++)
    acc += BROADCAST(FULL_MASK, v, i) * (float)(i + lane);
  if (t < n) y[t] = acc;
}

extern "C" void entry(const float *x, float *y, int n) {
  float *dx, *dy;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
  auto grid = dim3((n + 127) / 128, 1);
  bcast<<<grid, 128>>>(dx, dy, n);
  cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
}
"""


def _expected(x: np.ndarray) -> np.ndarray:
    n = len(x)
    pad = np.zeros((n + 31) // 32 * 32, np.float64)
    pad[:n] = x
    out = np.zeros(n)
    for t in range(n):
        lane, base = t % 32, t - t % 32
        out[t] = sum(pad[base + i] * (i + lane) for i in range(32))
    return out


def test_front_end_resolves_the_alias_at_the_call():
    prog = parse_source(ALIASED, "cuda", "k.cu")
    assert prog.facts["call_aliases"] == {"BROADCAST": "__shfl_sync"}
    assert "__shfl_sync" in prog.intrinsics
    text = platforms.module("cuda", "backend").emit(prog)
    assert "acc += __shfl_sync(FULL_MASK, v, i)" in text
    assert "#define SHFL_SYNC __shfl_sync" in text            # the macros stay printed


def test_a_macro_below_the_call_or_naming_a_user_function_is_not_resolved():
    src = ALIASED.replace("#define BROADCAST SHFL_SYNC\n", "") \
        .replace("BROADCAST(FULL_MASK, v, i)", "PICK(FULL_MASK, v, i)") \
        + "#define PICK __shfl_sync\n"
    assert "call_aliases" not in parse_source(src, "cuda", "k.cu").facts
    user = "#define SCALE my_scale\n__device__ float my_scale(float v) { return 2 * v; }\n" \
        "__global__ void k(float *y) { y[threadIdx.x] = SCALE(y[threadIdx.x]); }\n"
    assert "call_aliases" not in parse_source(user, "cuda", "u.cu").facts


def test_aliased_shuffle_maps_to_a_32_wide_hip_shuffle():
    out = run_pass("api_map", parse_source(ALIASED, "cuda", "k.cu"), to="hip")
    text = platforms.module("hip", "backend").emit(out)
    assert "acc += __shfl(v, i, 32)" in text


def _translate(tmp_path, to, suffix):
    src = tmp_path / "k.cu"
    src.write_text(ALIASED)
    out = tmp_path / f"k{suffix}"
    report = translate(str(src), to, str(out), arg_specs=parse_arg_specs(["n=200"]))
    assert report.status == "verified", [(s.name, s.status, s.message) for s in report.steps]
    x = np.random.default_rng(0).standard_normal(200).astype(np.float32)
    y = np.zeros(200, np.float32)
    run_kernel(out, args=[x, y, 200])
    np.testing.assert_allclose(y, _expected(x), rtol=1e-4, atol=1e-4)


def test_aliased_shuffle_verifies_on_hip(tmp_path):
    _translate(tmp_path, "hip", ".hip")


def test_aliased_shuffle_and_auto_dim3_lift_to_c(tmp_path):
    _translate(tmp_path, "vnni", ".cpp")


# ------------------------------------------------------------ CUDA 11 warp reductions -> HIP
REDUCE = r"""
#include <cuda_runtime.h>
__global__ void wred(const int *x, int *sums, unsigned *maxes, int *mins, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int v = t < n ? x[t] : 0;
  int s = __reduce_add_sync(0xffffffff, v);
  unsigned m = __reduce_max_sync(0xffffffffu, (unsigned)v);
  int lo = __reduce_min_sync(0xffffffff, v);
  if (t % 32 == 0) {
    sums[t / 32] = s;
    maxes[t / 32] = m;
    mins[t / 32] = lo;
  }
}
"""


def test_full_mask_warp_reductions_become_width_32_butterflies():
    out = run_pass("api_map", parse_source(REDUCE, "cuda", "r.cu"), to="hip")
    text = platforms.module("hip", "backend").emit(out)
    assert "__reduce_" not in text
    assert "int s = xp_reduce_add_sync_int(v);" in text
    assert "unsigned m = xp_reduce_max_sync_unsigned((unsigned) v);" in text
    assert "xp_reduce_min_sync_int(v)" in text
    assert "__shfl_xor(a, o, 32)" in text and "for (int o = 16; o > 0; o >>= 1)" in text


def test_full_mask_warp_reductions_verify_on_hip(tmp_path):
    src = tmp_path / "r.cu"
    src.write_text(REDUCE)
    report = translate(str(src), "hip", str(tmp_path / "r.hip"), entry="wred",
                       arg_specs=parse_arg_specs(["x=random:256", "sums=zeros:8", "maxes=zeros:8",
                                                  "mins=zeros:8", "n=250"]))
    assert report.status == "verified", [(s.name, s.status, s.message) for s in report.steps]


def test_warp_reduction_of_an_unknown_type_stays_refused():
    src = REDUCE.replace("__reduce_add_sync(0xffffffff, v)", "__reduce_add_sync(0xffffffff, v + 1.0f)")
    with pytest.raises(PassRefused) as exc:
        run_pass("api_map", parse_source(src, "cuda", "r.cu"), to="hip")
    assert exc.value.diagnostics[0].code == "XP-APIMAP-002" and "type is not established" in str(exc.value)
