"""Issue 16, item 5: a verified output that lost structure its source has is reported
(``xpiler.resources.structure_notes``, the report's ``structure``, a CLI warning)."""
from __future__ import annotations

from xpiler.resources import structure_notes


def _gpu(platform, launches, chip=None, special=()):
    return {"platform": platform, "parallel": {"kind": "gpu", "max_threads": max(l["threads"] for l in launches),
                                               "launches": launches},
            "on_chip_bytes": chip or {}, "special_instructions": list(special)}


def _bang(launches, chip=None, special=()):
    return {"platform": "bang", "parallel": {"kind": "bang", "units_used": max(l["task_dim"] for l in launches),
                                             "launches": launches},
            "on_chip_bytes": chip or {}, "special_instructions": list(special)}


TILED = _gpu("cuda", [{"kernel": "transpose", "threads": 4096}], {"shared": 4224}, ["__shfl_xor_sync"])


def test_nothing_lost_nothing_said():
    same = _gpu("hip", [{"kernel": "transpose", "threads": 4096}], {"shared": 4224}, ["__shfl_xor"])
    assert structure_notes(TILED, same) == []
    assert structure_notes(TILED, {"error": "x"}) == [] and structure_notes(None, same) == []


def test_single_thread_kernels_and_dropped_tiles_are_said():
    """The issue's degenerate transpose: copies as single-thread kernels, no shared memory."""
    flat = _gpu("hip", [{"kernel": "copy_in", "threads": 1}, {"kernel": "transpose", "threads": 64},
                        {"kernel": "copy_in", "threads": 1}])
    notes = structure_notes(TILED, flat)
    assert notes[0] == "kernel copy_in runs on a single thread where the source runs 4096"
    assert notes[1] == "the source keeps data on chip (shared 4224 B); the output keeps none"
    assert notes[2] == "the source uses special instructions (__shfl_xor_sync); the output none"


def test_bang_scalar_task_loops_and_single_tasks():
    plain = _gpu("cuda", [{"kernel": "add", "threads": 1024}])
    scalar = _bang([{"kernel": "add_k0", "task_dim": 16}])
    assert structure_notes(plain, scalar) == ["the BANG output is scalar code in a task loop: no __bang_* "
                                              "vector instruction, no NRAM buffer"]
    vector = _bang([{"kernel": "add_k0", "task_dim": 16}], {"nram": 4096}, ["__bang_add"])
    assert structure_notes(plain, vector) == []
    one = _bang([{"kernel": "add_k0", "task_dim": 1}], {"nram": 4096}, ["__bang_add"])
    assert structure_notes(plain, one) == ["kernel add_k0 runs as a single task where the source runs 1024"]


def test_a_serial_cpu_output_of_a_parallel_source():
    cpu = {"platform": "vnni", "parallel": {"kind": "cpu", "omp_parallel_loops": 0, "vectorised": False},
           "on_chip_bytes": {}, "special_instructions": []}
    assert structure_notes(_gpu("cuda", [{"kernel": "k", "threads": 256}]), cpu) == [
        "the output runs serially (no OpenMP parallel or simd loop) where the source runs 256 threads"]
    parallel = dict(cpu, parallel={"kind": "cpu", "omp_parallel_loops": 1, "vectorised": True})
    assert structure_notes(_gpu("cuda", [{"kernel": "k", "threads": 256}]), parallel) == []


def test_many_single_thread_kernels_are_counted_not_listed():
    many = _gpu("cuda", [{"kernel": f"k{i}", "threads": 1} for i in range(7)] + [{"kernel": "big", "threads": 64}])
    assert structure_notes(_gpu("hip", [{"kernel": "k", "threads": 256}]), many)[0] == \
        "7 kernels (k0, k1, k2 and 4 more) run on a single thread where the source runs 256"


def test_a_single_thread_kernel_of_constant_work_loses_nothing():
    store = _gpu("cuda", [{"kernel": "lanes", "threads": 16},
                          {"kernel": "store", "threads": 1, "constant_work": True}])
    assert structure_notes(_gpu("hip", [{"kernel": "k", "threads": 256}]), store) == []
    one = _bang([{"kernel": "sum8", "task_dim": 1, "constant_work": True}], {"nram": 64}, ["__bang_add"])
    assert structure_notes(_gpu("cuda", [{"kernel": "k", "threads": 256}]), one) == []


def test_constant_work_is_read_from_the_kernel():
    from xpiler.parse import parse_source
    from xpiler.resources import constant_work

    src = """
__device__ float twice(float v) { return v * 2.0f; }
__global__ void lanes(float *d, const float *s) {
  d[0] = s[0];
  for (int i = 1; i < 8; ++i) d[0] = d[0] + twice(s[i]);
  memcpy(d + 8, s + 8, 8 * sizeof(float));
}
__global__ void rows(float *d, const float *s, int n) {
  for (int i = 0; i < n; ++i) d[i] = s[i];
}
__global__ void copies(float *d, const float *s, int n) { memcpy(d, s, n * sizeof(float)); }
__global__ void spins(float *d) { int k = 0; while (d[k] != 0.0f) ++k; }
"""
    prog = parse_source(src, "cuda", "<t>.cu", entry="lanes")
    assert constant_work(prog, "lanes")
    assert not any(constant_work(prog, k) for k in ("rows", "copies", "spins", "missing"))


def test_only_what_the_entry_reaches_is_the_programs_structure():
    # a helper header's unused functions (mmcv's common_mlu_helper) are not structure an
    # output must keep
    from xpiler.parse import parse_source
    from xpiler.resources import resources

    src = """
#include <bang.h>
__mlu_func__ void unused(float *d, float *a, int n) {
  __nram__ float t[64];
  __bang_add(t, a, a, 64);
}
__mlu_func__ void scale(float *d, float *a) { __bang_mul_scalar(d, a, 2.0f, 64); }
__mlu_global__ void k(float *x, float *y) {
  __nram__ float buf[64];
  __memcpy(buf, x, 64 * sizeof(float), GDRAM2NRAM);
  scale(buf, buf);
  __memcpy(y, buf, 64 * sizeof(float), NRAM2GDRAM);
}
"""
    res = resources(parse_source(src, "bang", "<t>.mlu", entry="k"))
    assert res["special_instructions"] == ["__bang_mul_scalar"]
    assert [b["name"] for b in res["buffers"]] == ["buf"]


def test_simd_lane_instructions_have_no_gpu_kind_to_keep():
    vec = _bang([{"kernel": "k", "task_dim": 16}], {"nram": 4096}, ["__bang_add", "__bang_float2half_rn"])
    gpu = _gpu("cuda", [{"kernel": "k0", "threads": 4096}], {"shared": 4096})
    assert structure_notes(vec, gpu) == []
    mat = _bang([{"kernel": "k", "task_dim": 16}], {"nram": 4096}, ["__bang_add", "__bang_conv"])
    assert structure_notes(mat, gpu) == ["the source uses special instructions (__bang_conv); "
                                         "the output none"]
    shfl = _gpu("cuda", [{"kernel": "k", "threads": 4096}], special=["__shfl_down_sync"])
    assert structure_notes(shfl, _gpu("hip", [{"kernel": "k0", "threads": 4096}])) == [
        "the source uses special instructions (__shfl_down_sync); the output none"]


def test_qualified_intrinsic_calls_are_reached():
    from xpiler.parse import parse_file
    from xpiler.resources import resources
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    prog = parse_file(root / "xpiler" / "corpus" / "cuda" / "bmm_2_32_64_32.cu")   # nvcuda::wmma::
    assert "wmma::mma_sync" in resources(prog)["special_instructions"]


def test_launch_dimensions_with_std_min_are_evaluated():
    """``<<<(n + std::min(128, n) - 1) / std::min(128, n), std::min(128, n)>>>``: the launch's
    threads are known, so the output counts as parallel."""
    from xpiler.parse import parse_source
    from xpiler.resources import resources

    src = r"""
#include <cuda_runtime.h>
#include <algorithm>
__global__ void k(float *y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 1.0f; }
extern "C" void run(float *y, int n) {
  int block = std::min(128, n);
  k<<<(n + block - 1) / block, block>>>(y, n);
}
"""
    prog = parse_source(src, "cuda", "t.cu")
    (launch,) = resources(prog, {"n": 300})["parallel"]["launches"]
    assert launch["grid"] == [3, 1, 1] and launch["block"] == [128, 1, 1]
    (launch,) = resources(prog, {"n": 16})["parallel"]["launches"]
    assert launch["grid"] == [1, 1, 1] and launch["block"] == [16, 1, 1]
