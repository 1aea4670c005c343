"""Input inference (xpiler.infer): smallest safe scalars, sizes from host allocations / access
analysis / guarded runs, honest failure; and the translate driver using it."""
import json

import numpy as np
import pytest

from xpiler.cli import main
from xpiler.infer import infer_inputs
from xpiler.parse import parse_file

SCALE_CU = r"""
__global__ void scale(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
"""
# a VNNI C function over an m x n int8 matrix: the extents come from the affine analysis
ROWSUM_VNNI = r"""
#include <immintrin.h>
#include <stdint.h>
extern "C" void rowsum(const int8_t* a, int32_t* out, int m, int n) {
  for (int i = 0; i < m; ++i) {
    int32_t s = 0;
    for (int j = 0; j < n; ++j) s += a[i * n + j];
    out[i] = s;
  }
}
"""
# a host wrapper allocating n floats for y while the launch always has threads writing
# y[n .. n + 15]: every value overruns a device allocation (the guard pages catch it), so nothing
# can be established
OVER_CU = r"""
#include <cuda_runtime.h>
__global__ void over_kernel(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n + 16) y[i] = 2.0f * x[i < n ? i : 0];
}
extern "C" void over(const float* x, float* y, int n) {
  float *dx, *dy;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
  over_kernel<<<(n + 255) / 256 + 1, 256>>>(dx, dy, n);
  cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
}
"""
# the same with an affine subscript: the analysis sizes x exactly
OFFSET_CU = r"""
__global__ void offset(const float* x, float* y, int n) {
  int i = threadIdx.x;
  if (i < n) y[i] = x[i + 5000];
}
"""
# nothing is written for small n (work starts at 64): the smallest useful value is 128
LATE_VNNI = r"""
extern "C" void late(const float* x, float* y, int n) {
  for (int i = 64; i < n; ++i) y[i] = 2.0f * x[i];
}
"""
# the work is guarded by a mode scalar the kernel only handles as 1; for any other value the host
# wrapper still copies the (never written) device buffer back: y "changes" to all zeros
MODE_CU = r"""
#include <cuda_runtime.h>
__global__ void mode_kernel(const float* x, float* y, int mode, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && mode % 4 == 1) y[i] = 2.0f * x[i];   // arithmetic on mode: no case selector
}
extern "C" void moded(const float* x, float* y, int mode, int n) {
  float *dx, *dy;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
  mode_kernel<<<(n + 255) / 256, 256>>>(dx, dy, mode, n);
  cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
}
"""
# a host wrapper whose allocation is smaller than what the kernel touches for n < 64
SHORT_ALLOC_VNNI = r"""
extern "C" void tail(const float* x, float* y, int n) {
  for (int i = 0; i < n + 8; ++i) y[i] = x[i];
}
"""


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_cuda_kernel_gets_smallest_n_and_guarded_run(tmp_path):
    src = _write(tmp_path, "scale.cu", SCALE_CU)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok, inf.reason
    assert inf.scalars == {"a": 0.5, "n": 16}
    assert inf.sizes == {"x": 16, "y": 16}
    assert [t["outcome"] for t in inf.tried] == ["ok"]
    x, y, a, n = inf.args
    assert x.dtype == np.float32 and x.shape == (16,) and n == 16


def test_vnni_extents_come_from_the_affine_analysis(tmp_path):
    src = _write(tmp_path, "rowsum.cpp", ROWSUM_VNNI)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok, inf.reason
    # 16 works for both; distinct values (16, 32) run too and are preferred: a square shape
    # would hide a translation that swaps m and n
    assert inf.scalars == {"m": 16, "n": 32}
    assert [t["outcome"].split(" (")[0] for t in inf.tried] == ["ok", "ok [distinct values, doubling]"]
    rules = {r.pointer: r for r in inf.rules}
    assert rules["a"].extent == "m * n" and rules["out"].extent == "m" and not rules["a"].fallback
    assert inf.sizes == {"a": 512, "out": 16}


HALF2_CU = r"""
#include <cuda_fp16.h>
__global__ void add2(const __half2 *a, __half2 *out, int n2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2) out[i] = __hadd2(a[i], a[i]);
}
"""


def test_extents_of_packed_pairs_count_their_lanes(tmp_path):
    # a __half2 pointer is passed as float16 elements: n2 pairs are 2 * n2 of them
    src = _write(tmp_path, "add2.cu", HALF2_CU)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok, inf.reason
    n2 = inf.scalars["n2"]
    assert inf.sizes == {"a": 2 * n2, "out": 2 * n2}
    assert inf.args[0].dtype == np.float16


def test_analysed_extent_beyond_the_loop_bound(tmp_path):
    src = _write(tmp_path, "tail.cpp", SHORT_ALLOC_VNNI)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.sizes == {"x": 24, "y": 24}   # n + 8 elements at n = 16


def test_affine_offset_is_sized_by_the_analysis(tmp_path):
    src = _write(tmp_path, "offset.cu", OFFSET_CU)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.sizes == {"x": 5016, "y": 16}


def test_degenerate_values_are_passed_over(tmp_path):
    src = _write(tmp_path, "late.cpp", LATE_VNNI)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.scalars == {"n": 128}
    assert [t["value"] for t in inf.tried] == [16, 32, 64, 128]
    assert "degenerate" in inf.tried[0]["outcome"]


def test_output_of_one_repeated_value_is_degenerate(tmp_path):
    # mode = 16, 32, ..., 8, 4, 2 run in bounds and y comes back as one repeated value (the fresh device
    # buffer): passed over; mode = 1 does the work, and distinct values (mode 1, n 2) are kept
    src = _write(tmp_path, "moded.cu", MODE_CU)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.scalars == {"mode": 1, "n": 2}, inf.tried
    assert [t["value"] for t in inf.tried] == [16, 32, 64, 128, 256, 512, 1024, 8, 4, 2, 1, 1]
    assert all("one repeated value (degenerate)" in t["outcome"] for t in inf.tried[:10])
    x, y, mode, n = inf.args
    assert y.shape == (2,)


def test_out_of_bounds_everywhere_is_not_established(tmp_path):
    src = _write(tmp_path, "over.cu", OVER_CU)
    inf = infer_inputs(parse_file(src), src, candidates=(16, 32))
    assert not inf.ok and inf.args is None
    assert all(t["outcome"].startswith("OutOfBoundsAccess") for t in inf.tried)
    # the analysis saw it too: y's extent n + 16 exceeds the allocation n
    assert all("not proved by analysis: y (extent" in t["outcome"] for t in inf.tried)
    assert "keep every access inside" in inf.reason


def test_translate_uses_inferred_inputs(tmp_path, capsys):
    src = _write(tmp_path, "rowsum.cpp", ROWSUM_VNNI)
    out, rep = tmp_path / "rowsum.cu", tmp_path / "r.json"
    assert main(["translate", str(src), "--to", "cuda", "-o", str(out), "--report", str(rep)]) == 0, \
        capsys.readouterr().err
    report = json.loads(rep.read_text())
    assert report["status"] == "verified" and report["inputs"].startswith("inferred inputs: m=16, n=32")
    assert report["inference"]["ok"] and report["inference"]["sizes"] == {"a": 512, "out": 16}


def test_translate_without_any_inputs_is_unverified_and_says_why(tmp_path, capsys):
    src = _write(tmp_path, "over.cu", OVER_CU)
    out, rep = tmp_path / "over.hip", tmp_path / "r.json"
    assert main(["translate", str(src), "--to", "hip", "-o", str(out), "--report", str(rep)]) == 3
    err = capsys.readouterr().err
    assert "unverified" in err and "no verification inputs" in err and not out.exists()
    report = json.loads(rep.read_text())
    assert report["status"] == "unverified" and not report["inference"]["ok"]
    assert "keep every access inside" in report["inference"]["reason"]


@pytest.mark.parametrize("flag", ["--no-infer"])
def test_inference_can_be_disabled(tmp_path, capsys, flag):
    src = _write(tmp_path, "scale.cu", SCALE_CU)
    out = tmp_path / "scale.hip"
    assert main(["translate", str(src), "--to", "hip", "-o", str(out), flag]) == 3
    assert "inference disabled" in capsys.readouterr().err and not out.exists()


def test_host_allocation_with_analysed_extent_is_proved(tmp_path):
    """A HIP host wrapper allocates n elements; the lifted kernel's extent is n: proved in bounds."""
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "xpiler" / "corpus" / "hip" / "add_18_128.hip"
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.scalars == {"n": 16} and inf.sizes == {"x": 16, "y": 16, "out": 16}
    assert {r.pointer: (r.host, r.extent) for r in inf.rules} == {p: ("n", "n") for p in ("x", "y", "out")}
    assert inf.tried[0]["outcome"] == "ok (in bounds by analysis: x, y, out)"


def test_extent_larger_than_allocation_is_no_proof_the_run_decides(tmp_path):
    """The extent is an upper bound: a CUDA wrapper whose grid follows `size` but whose kernel
    guards with a fixed bound gets 'not proved' notes, and the guarded runs find the smallest
    size that stays inside the allocations."""
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "xpiler" / "corpus" / "cuda" / "add_18_128.cu"
    inf = infer_inputs(parse_file(src), src, candidates=(512, 1024))
    assert inf.ok and inf.scalars == {"size": 1024}
    assert inf.tried[0]["outcome"].startswith("OutOfBoundsAccess") and "not proved" in inf.tried[0]["outcome"]


def test_given_scalars_are_kept_and_the_rest_inferred(tmp_path, capsys):
    src = _write(tmp_path, "rowsum.cpp", ROWSUM_VNNI)
    inf = infer_inputs(parse_file(src), src, fixed={"n": 40})
    assert inf.ok and inf.scalars == {"m": 16, "n": 40} and inf.sizes == {"a": 640, "out": 16}
    out, rep = tmp_path / "rowsum.cu", tmp_path / "r.json"
    assert main(["translate", str(src), "--to", "cuda", "-o", str(out), "--arg", "n=40",
                 "--report", str(rep)]) == 0, capsys.readouterr().err
    report = json.loads(rep.read_text())
    assert report["inputs"].startswith("command-line --arg with inferred inputs: m=16, n=40")


GATHER_VNNI = r"""
#include <stdint.h>
extern "C" void gather(const float* x, const int32_t* idx, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = x[idx[i]];
}
"""


def test_index_tensors_get_valid_indices(tmp_path):
    src = _write(tmp_path, "gather.cpp", GATHER_VNNI)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.scalars == {"n": 16} and inf.sizes == {"x": 16, "idx": 16, "y": 16}
    x, idx, y, n = inf.args
    assert idx.dtype == np.int32 and idx.min() >= 0 and idx.max() < 16
    assert "as indices in [0, 16)" in inf.tried[0]["outcome"]


SQUARE_VNNI = r"""
extern "C" void square_index(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = x[i * i];
}
"""


def test_a_guessed_size_grows_to_cover_the_access(tmp_path):
    """x[i * i] is beyond the analysis; the guessed size n is overrun at every candidate, so the
    guess grows (doubling, then to the reported offset) until the source runs in bounds at the
    first candidate, and the footprint cut takes it back to what the source reads (i * i <= 225:
    226 floats, to the 16-float granule)."""
    src = _write(tmp_path, "square.cpp", SQUARE_VNNI)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.scalars == {"n": 16} and inf.sizes == {"x": 240, "y": 16}
    outcomes = [t["outcome"] for t in inf.tried]
    assert all(t["value"] == 16 for t in inf.tried) and outcomes[-1] == "ok"
    assert all("x[" in o and "grown to" in o for o in outcomes[:-1]) and len(outcomes) > 1


SLOW_VNNI = r"""
extern "C" void slow(const float* x, float* y, int n) {
  long long spin = 1;
  for (long long k = 0; k < (long long)n * n * n * n * n; ++k) spin = spin * 3 + (long long)k;
  for (int i = 0; i < n; ++i) y[i] = x[i] + (float)(spin & 1);
}
"""


def test_a_timeout_skips_larger_values(tmp_path):
    src = _write(tmp_path, "slow.cpp", SLOW_VNNI)
    inf = infer_inputs(parse_file(src), src, timeout=1.0, candidates=(16, 64, 128, 8))
    outcomes = [t["outcome"] for t in inf.tried]
    assert inf.ok and inf.scalars == {"n": 16}, outcomes     # 16^5 iterations: fast
    inf = infer_inputs(parse_file(src), src, timeout=1.0, candidates=(512, 1024, 8))
    outcomes = [(t["value"], t["outcome"].split(":")[0]) for t in inf.tried]
    assert outcomes == [(512, "KernelTimeout"), (1024, "skipped"), (8, "ok")]
    assert inf.scalars == {"n": 8}


FIXED_FOOTPRINT_VNNI = r"""
#include <stdlib.h>
extern "C" void scale_12x384(const float* x, float* y) {
  for (int t = 0; t < 12; ++t)
    for (int k = 0; k < 384; ++k) {
      int i = abs(t * 384 + k);             // beyond the analysis: the size is guessed
      y[i] = 0.5f * x[i];
    }
}
"""


def test_guessed_sizes_are_cut_to_the_sources_footprint(tmp_path):
    """Issue 16 point 2: a guess that holds (8192 elements) is larger than what the source
    touches (12 x 384 = 4608); verified there, a translation reading past 4608 would pass.
    The guarded runs find the footprint and the buffers end at it."""
    src = _write(tmp_path, "fixed.cpp", FIXED_FOOTPRINT_VNNI)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.sizes == {"x": 4608, "y": 4608}, inf.to_json()
    assert [len(a) for a in inf.args] == [4608, 4608]
    assert "shrunk to the source's footprint" in inf.analysis
    kept = infer_inputs(parse_file(src), src, shrink_budget=0)
    assert kept.ok and kept.sizes["x"] > 4608


GELU_BANG = r"""#include <bang.h>
#define N 4608
#define PER_CORE (N / 16)
__mlu_global__ void gelu_kernel(float *input, float *output) {
    __nram__ float buf[PER_CORE];
    int offset = (clusterId * 4 + coreId) * PER_CORE;
    __memcpy(buf, input + offset, PER_CORE * sizeof(float), GDRAM2NRAM);
    for (int i = 0; i < PER_CORE; ++i) buf[i] = 0.5f * buf[i] * (1.0f + tanhf(buf[i]));
    __memcpy(output + offset, buf, PER_CORE * sizeof(float), NRAM2GDRAM);
}
"""


def test_kernel_only_bang_gets_its_footprint(tmp_path):
    """Issue 16: a kernel-only BANG source whose windows are fixed by clusterId, coreId and byte
    counts (12 x 384 floats over 16 tasks): the guessed sizes are cut to 4608 elements, so the
    translation is verified where its reads end."""
    src = _write(tmp_path, "gelu.mlu", GELU_BANG)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.sizes == {"input": 4608, "output": 4608}, inf.to_json()


EMPTY_GRID_CUDA = r"""
__global__ void twice(float *y, int n) {
  int i = blockIdx.x * 32 + threadIdx.x;
  if (i < n) y[i] *= 2.0f;
}
extern "C" void run(const float *x, float *y, int n) {
  float *d;
  cudaMalloc(&d, n * sizeof(float));
  cudaMemcpy(d, x, n * sizeof(float), cudaMemcpyHostToDevice);
  twice<<<n / 64, 32>>>(d, n);            // an empty grid below n = 64
  cudaMemcpy(y, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
}
"""


def test_an_empty_grid_is_a_degenerate_input(tmp_path):
    """Issue 16 point 1: at n = 16 and 32 the launch has no block: y receives x unchanged, which
    looks informative, but nothing ran. The first value under which the kernel runs is kept."""
    src = _write(tmp_path, "grid.cu", EMPTY_GRID_CUDA)
    inf = infer_inputs(parse_file(src), src)
    outcomes = [(t["value"], t["outcome"].split(":")[0]) for t in inf.tried]
    assert inf.ok and inf.scalars == {"n": 64}, outcomes
    assert outcomes[:2] == [(16, "degenerate"), (32, "degenerate")]


UNINITIALISED_CUDA = r"""
__global__ void add(const float *x, const float *junk, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + junk[i];
}
extern "C" void run(const float *x, float *y, int n) {
  float *dx, *dj, *dy;
  cudaMalloc(&dx, n * sizeof(float)); cudaMalloc(&dj, n * sizeof(float)); cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);     // dj is never written
  add<<<(n + 31) / 32, 32>>>(dx, dj, dy, n);
  cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dj); cudaFree(dy);
}
"""


def test_outputs_made_of_uninitialised_memory_are_degenerate(tmp_path):
    """Issue 16 point 1: y = x + junk with junk never written: the output changes and is not
    one repeated value (fresh memory holds zeros: y = x), but a second run with another fill
    of fresh memory changes every element: nothing in it is defined."""
    src = _write(tmp_path, "junk.cu", UNINITIALISED_CUDA)
    inf = infer_inputs(parse_file(src), src, candidates=(16,))
    assert any("uninitialised memory" in t["outcome"] for t in inf.tried), inf.tried


def test_the_inference_budget_stops_the_search_with_a_clear_reason(tmp_path):
    """Issue 16 point 1: inference has a time budget; past it no further value is tried."""
    src = _write(tmp_path, "slow.cpp", SLOW_VNNI)
    inf = infer_inputs(parse_file(src), src, timeout=30, candidates=(1024, 512, 8), budget=0.5)
    assert not inf.ok
    assert inf.tried[-1]["outcome"].startswith("skipped: the inference budget of 0.5 s is spent")
    assert "--infer-budget" in inf.reason


def test_infer_budget_option(tmp_path, capsys):
    src = _write(tmp_path, "slow.cpp", SLOW_VNNI)
    assert main(["translate", str(src), "--to", "cuda", "-o", str(tmp_path / "o.cu"), "--infer-budget", "-1"]) == 2
    assert "--infer-budget" in capsys.readouterr().err


ENUM_SELECT_CU = r"""
#include <assert.h>
enum reduce_op { OP_SUM, OP_MAX, OP_COUNT };
__global__ void rows(const float* x, float* y, int n, enum reduce_op op) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  float acc = 0.0f;
  switch (op) {
    case OP_SUM: for (int j = 0; j < n; ++j) acc += x[r * n + j]; break;
    case OP_MAX: acc = x[r * n]; for (int j = 1; j < n; ++j) acc = fmaxf(acc, x[r * n + j]); break;
    default: assert(0);
  }
  y[r] = acc;
}
extern "C" void rows_host(const float* x, float* y, int n, int op) {
  float *dx, *dy;
  cudaMalloc(&dx, n * n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x, n * n * sizeof(float), cudaMemcpyHostToDevice);
  rows<<<(n + 63) / 64, 64>>>(dx, dy, n, (enum reduce_op) op);
  cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
}
"""


def test_a_scalar_converted_to_an_enum_selects_a_case_not_a_size(tmp_path):
    """`op` is converted to an enum: a size candidate (16, ...) reaches `default: assert(0)`,
    so it gets the first enumerator and only `n` is a size (also at the second size)."""
    from xpiler.infer import mode_scalars, second_size_inputs

    src = tmp_path / "rows.cu"
    src.write_text(ENUM_SELECT_CU)
    program = parse_file(src)
    assert mode_scalars(program) == {"op": (0, "converted to enum reduce_op")}
    inf = infer_inputs(program, src, seed=0)
    assert inf.ok and inf.scalars["op"] == 0 and inf.scalars["n"] >= 16, inf.tried
    assert "a case the source handles" in inf.analysis
    second = second_size_inputs(program, src, inf.scalars)
    assert second.ok and second.scalars["op"] == 0 and second.scalars["n"] != inf.scalars["n"]


MODE_FLAG_CU = r"""
#include <assert.h>
__device__ float pick(const float* x, int n, int r, int how) {
  float acc = x[r * n];
  if (how == 0) { for (int j = 1; j < n; ++j) acc = fmaxf(acc, x[r * n + j]); }
  else if (how == 1) { for (int j = 1; j < n; ++j) acc += x[r * n + j]; }
  else { assert(0); }
  return acc;
}
__global__ void rows(const float* x, float* y, int n, int mode) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  y[r] = pick(x, n, r, mode);
}
extern "C" void rows_host(const float* x, float* y, int n, int mode) {
  float *dx, *dy;
  cudaMalloc(&dx, n * n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x, n * n * sizeof(float), cudaMemcpyHostToDevice);
  rows<<<(n + 63) / 64, 64>>>(dx, dy, n, mode);
  cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dy);
}
"""


def test_a_scalar_only_compared_with_constants_in_a_callee_is_a_mode(tmp_path):
    """`mode` reaches `pick` through the launch and is only compared with 0 and 1 there (mmcv
    roi_align's pool_mode): a size candidate would take the `assert(0)` branch, so it gets the
    first constant; `n`, used as a size, is no mode."""
    from xpiler.infer import mode_scalars

    src = tmp_path / "rows.cu"
    src.write_text(MODE_FLAG_CU)
    program = parse_file(src)
    assert mode_scalars(program) == {"mode": (0, "compared with 0, 1 only")}
    inf = infer_inputs(program, src, seed=0)
    assert inf.ok and inf.scalars["mode"] == 0 and inf.scalars["n"] >= 16, inf.tried
    used_as_size = MODE_FLAG_CU.replace("if (r >= n) return;", "if (r >= n || r >= mode * n) return;")
    src.write_text(used_as_size)
    assert mode_scalars(parse_file(src)) == {}


GATHER_CU = r"""
#include <stdint.h>
__global__ void rows(const float* data, const int64_t* idx, float* out, int dim, int num, int inner) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= num * inner) return;
  out[t] = data[idx[t / inner] * inner + t % inner];
}
extern "C" void gather(const float* data, const int64_t* idx, float* out, int dim, int num, int inner) {
  float *dd, *dout; int64_t* di;
  cudaMalloc(&dd, dim * inner * sizeof(float));
  cudaMalloc(&di, num * sizeof(int64_t));
  cudaMalloc(&dout, num * inner * sizeof(float));
  cudaMemcpy(dd, data, dim * inner * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(di, idx, num * sizeof(int64_t), cudaMemcpyHostToDevice);
  rows<<<(num * inner + 63) / 64, 64>>>(dd, di, dout, dim, num, inner);
  cudaMemcpy(out, dout, num * inner * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dd); cudaFree(di); cudaFree(dout);
}
"""


def test_second_size_index_inputs_stay_inside_the_smallest_scaled_size(tmp_path):
    """At a second size the scalars differ (dim 8, num 3, inner 16): integer index inputs are
    drawn below the smallest of them, so they index inside every dimension (drawn below the
    largest, row indices reached past `data` into memory the guard pages do not cover)."""
    from xpiler.infer import second_size_inputs

    src = _write(tmp_path, "gather.cu", GATHER_CU)
    program = parse_file(src)
    second = second_size_inputs(program, src, {"dim": 16, "num": 6, "inner": 32})
    assert second.ok, second.reason
    idx = second.args[1]
    assert idx.max() < min(second.scalars.values()), (second.scalars, idx)


PTR2IND_CU = r"""
#include <stdint.h>
__global__ void expand(const int64_t* ptr, int64_t* out, int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows)
    for (int64_t i = ptr[r]; i < ptr[r + 1]; i++) out[i] = r;
}
extern "C" void ptr2ind(const int64_t* ptr, int64_t* out, int rows, int nnz) {
  int64_t *dp, *dout;
  cudaMalloc(&dp, (rows + 1) * sizeof(int64_t));
  cudaMalloc(&dout, nnz * sizeof(int64_t));
  cudaMemcpy(dp, ptr, (rows + 1) * sizeof(int64_t), cudaMemcpyHostToDevice);
  expand<<<(rows + 63) / 64, 64>>>(dp, dout, rows);
  cudaMemcpy(out, dout, nnz * sizeof(int64_t), cudaMemcpyDeviceToHost);
  cudaFree(dp); cudaFree(dout);
}
"""


def test_row_pointers_get_sorted_offsets_when_indices_leave_most_outputs_undefined(tmp_path):
    """A CSR row-pointer array drawn as random indices makes rows overlap (several threads write
    one element, in an order the platform does not fix) and leaves gaps: when most output
    elements are undefined that way, the integer inputs are drawn again as sorted offsets."""
    import numpy as np

    src = tmp_path / "p2i.cu"
    src.write_text(PTR2IND_CU)
    inf = infer_inputs(parse_file(src), src, seed=0)
    assert inf.ok, inf.tried
    assert any("degenerate" in t["outcome"] and "undefined" in t["outcome"] for t in inf.tried), inf.tried
    assert "sorted offsets" in inf.tried[-1]["outcome"], inf.tried
    ptr = inf.args[0]
    assert (np.diff(ptr) >= 0).all()


ROW_PER_WARP_CU = r"""
__global__ void rowmax(const float* in, float* out, int rows, int cols) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row >= rows) return;
  float m = -1e30f;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, in[row * cols + c]);
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  if (lane == 0) out[row] = m;
}
"""


def test_a_kernel_entry_gets_a_grid_covering_its_rows(tmp_path, capsys):
    """One row per warp: the default launch (one block of 256 threads) covers 8 of the 16 rows
    the scalars describe. The grid grows while the source writes more (2 blocks: all 16 rows;
    4 blocks write no more), and that launch is the verification launch."""
    src = _write(tmp_path, "rowmax.cu", ROW_PER_WARP_CU)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.scalars == {"rows": 16, "cols": 32}, inf.to_json()   # distinct values
    assert inf.launch == {"grid": [2, 1, 1], "block": [256, 1, 1]}
    assert "grid grown from 1 to 2 blocks" in inf.analysis and "grid 2 x block 256" in inf.describe()
    # a kernel whose one block already covers the problem keeps the default launch
    plain = _write(tmp_path, "scale.cu", SCALE_CU)
    assert infer_inputs(parse_file(plain), plain).launch is None
    out = tmp_path / "rowmax.hip"
    assert main(["translate", str(src), "--to", "hip", "-o", str(out),
                 "--report", str(tmp_path / "r.json")]) == 0
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["status"] == "verified" and "grid 2 x block 256" in rep["inputs"]


FIXED_TILE_STENCIL_CU = r"""
#define BS 128
__global__ void stencil3(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float s[BS + 2];
  int g = blockIdx.x * BS + threadIdx.x;
  int l = threadIdx.x + 1;
  s[l] = g < n ? in[g] : 0.f;
  if (threadIdx.x == 0) s[0] = (g > 0 && g - 1 < n) ? in[g - 1] : 0.f;
  if (threadIdx.x == BS - 1) s[BS + 1] = (g + 1 < n) ? in[g + 1] : 0.f;
  __syncthreads();
  if (g < n) out[g] = 0.25f * s[l - 1] + 0.5f * s[l] + 0.25f * s[l + 1];
}
"""


def test_a_kernel_entry_sized_for_a_smaller_block_gets_it(tmp_path, capsys):
    """A tile of BS + 2 floats indexed by threadIdx.x: the default block of 256 threads writes
    past it, so the inference tries smaller blocks (128 runs in bounds); with
    __launch_bounds__ the kernel says its block itself."""
    src = _write(tmp_path, "stencil.cu", FIXED_TILE_STENCIL_CU)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.launch["block"] == [128, 1, 1], inf.to_json()
    assert "overflowed a __shared__ array" in inf.analysis
    bounded = _write(tmp_path, "bounded.cu", FIXED_TILE_STENCIL_CU.replace(
        "__global__ void", "__global__ void __launch_bounds__(BS)"))
    inf = infer_inputs(parse_file(bounded), bounded)
    assert inf.ok and inf.launch["block"] == [128, 1, 1]
    assert "__launch_bounds__" in inf.analysis and "OutOfBounds" not in str(inf.tried)
    out = tmp_path / "stencil.hip"
    assert main(["translate", str(src), "--to", "hip", "-o", str(out)]) == 0


PIXELS_CUDA = r"""
#include <cuda_runtime.h>
__global__ void alpha_gray(const uchar4* __restrict__ rgba, unsigned char* __restrict__ gray, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uchar4 p = rgba[i];
  gray[i] = (unsigned char)(((unsigned)p.x + p.y + p.z) * p.w / 765u);
}
"""


def test_a_grown_guess_covers_a_whole_granule(tmp_path):
    # rgba is read as 4-byte pixels through a 1-byte element type: the guess grows past the
    # faulting offset to the 64-byte granule (a size inside it left reads of the slack after
    # the device copy unnoticed, and the output, allocated tighter, failed on them)
    src = _write(tmp_path, "gray.cu", PIXELS_CUDA)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok and inf.sizes["rgba"] % 64 == 0
    assert any("grown to" in t["outcome"] for t in inf.tried)


CSR_VNNI = r"""
#include <string.h>
#include <stdlib.h>
extern "C" void bag_sum(const float* w, const int* idx, const int* offsets, float* out, int B, int D) {
  int nnz = offsets[B];
  int* copy = (int*) malloc((size_t) (nnz > 0 ? nnz : 1) * sizeof(int));
  memcpy(copy, idx, (size_t) nnz * sizeof(int));
  for (int b = 0; b < B; ++b)
    for (int d = 0; d < D; ++d) {
      float acc = 0.f;
      for (int j = offsets[b]; j < offsets[b + 1]; ++j) acc += w[copy[j] * D + d];
      out[b * D + d] = acc;
    }
  free(copy);
}
"""


def test_a_size_the_host_reads_from_the_data_is_guessed(tmp_path):
    from xpiler.infer import _reads_memory

    assert _reads_memory("(size_t) offsets[B]") and not _reads_memory("(size_t) N * K")
    src = _write(tmp_path, "bag.cpp", CSR_VNNI)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok, inf.reason


ROWS_OF_1000_BANG = r"""
#include <bang.h>
#define COLS 1000
__nram__ float buf[1024];
__mlu_global__ void row_max(const float *x, float *out, int rows) {
  const int per = rows / taskDim, rem = rows % taskDim;
  const int r0 = taskId * per + (taskId < rem ? taskId : rem);
  const int cnt = per + (taskId < rem ? 1 : 0);
  for (int r = r0; r < r0 + cnt; ++r) {
    __memcpy(buf, x + (size_t) r * COLS, COLS * sizeof(float), GDRAM2NRAM);
    float m = buf[0];
    for (int c = 1; c < COLS; ++c) m = buf[c] > m ? buf[c] : m;
    out[r] = m;
  }
}
"""


def test_a_streaming_overrun_grows_the_guess_fast_enough(tmp_path):
    # each guarded run faults right at the end of x (a whole-row copy): the guess grows by 8
    # per overrun, so rows * 1000 floats are reached within the overruns a value may take
    src = _write(tmp_path, "rows.mlu", ROWS_OF_1000_BANG)
    inf = infer_inputs(parse_file(src), src)
    assert inf.ok, inf.reason
    assert inf.sizes["x"] >= 1000 * inf.scalars["rows"]
