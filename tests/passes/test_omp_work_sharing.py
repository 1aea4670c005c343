"""OpenMP work-sharing regions with per-thread scratch (issue 16, session 26 probe: causal
attention with `#pragma omp parallel { float *p = malloc(...); #pragma omp for ... free(p); }`):
``omp_regions`` gives every iteration its own scratch, ``heap_locals`` drops the frees before a
``continue``, and ``loop_bind`` gives a kernel's iterations whose array length only the host
knows a slice per thread of a device buffer."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.base import run_pass
from passes.plans import load_passes
from xpiler.parse import parse_source
from xpiler.run import run_kernel

load_passes()

SCRATCH = r"""
#include <stdlib.h>
#include <math.h>
extern "C" void rows_softmax(const float* x, float* y, int rows, int cols) {
#pragma omp parallel
  {
    float* e = (float*)malloc(sizeof(float) * (cols > 0 ? cols : 1));
#pragma omp for schedule(static)
    for (int r = 0; r < rows; ++r) {
      const float* xr = x + (size_t)r * cols;
      if (cols <= 0) continue;
      float mx = xr[0];
      for (int c = 1; c < cols; ++c) mx = xr[c] > mx ? xr[c] : mx;
      float s = 0.f;
      for (int c = 0; c < cols; ++c) { e[c] = expf(xr[c] - mx); s += e[c]; }
      for (int c = 0; c < cols; ++c) y[(size_t)r * cols + c] = e[c] / s;
    }
    free(e);
  }
}
"""


def _emit(prog) -> str:
    return platforms.module(prog.platform, "backend").emit(prog)


def test_a_work_sharing_region_becomes_parallel_loops_with_scratch_per_iteration(tmp_path):
    prog = parse_source(SCRATCH, "vnni", "t.cpp")
    out = _emit(run_pass("omp_regions", prog))
    assert "#pragma omp parallel for schedule(static)" in out
    assert "#pragma omp parallel\n" not in out and "#pragma omp for" not in out
    loop = out.split("for (int r = 0; r < rows; ++r)")[1]
    assert "float *e = (float *) malloc(" in loop           # inside the loop: one per iteration
    assert "free(e);\n        continue;" in loop             # released on the early way out too
    x = np.random.default_rng(0).standard_normal(7 * 5).astype(np.float32)
    want, got = [x, np.zeros_like(x), 7, 5], [x, np.zeros_like(x), 7, 5]
    (tmp_path / "s.cpp").write_text(SCRATCH)
    (tmp_path / "o.cpp").write_text(out)
    run_kernel(tmp_path / "s.cpp", args=want, program=prog)
    run_kernel(tmp_path / "o.cpp", args=got, source=out)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


@pytest.mark.parametrize("change", [
    ("#pragma omp for schedule(static)", "#pragma omp single\n    e[0] = 0;\n#pragma omp for"),
    ("free(e);", "free(e);\n    y[0] = 1;"),
    ("float* e = (float*)malloc(", "float* e = (float*)my_alloc("),
])
def test_work_sharing_regions_that_need_the_team_are_left_alone(change):
    src = "static void* my_alloc(size_t n) { return malloc(n); }\n" + SCRATCH
    src = src.replace(*change)
    out = _emit(run_pass("omp_regions", parse_source(src, "vnni", "t.cpp")))   # nothing to do
    assert "#pragma omp parallel\n" in out and "#pragma omp parallel for" not in out


@pytest.mark.parametrize("to", ["cuda", "bang"])
def test_per_thread_scratch_of_a_symbolic_length_translates(tmp_path, to):
    from xpiler.translate import translate
    src = tmp_path / "rows_softmax.cpp"
    src.write_text(SCRATCH)
    out = tmp_path / f"rows_softmax.{to}"
    rep = translate(str(src), to, str(out))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    text = out.read_text()
    if to == "cuda":
        # each thread's slice of one device buffer, the grid capped by the slices' bytes
        assert "float *e = __xp_thr_e + __xp_slot * " in text
        assert "cudaMalloc((void **) (&__xp_thr_e)" in text and "cudaFree(__xp_thr_e);" in text


def _bind(body: str):
    from passes.lower.loop_bind import bind_plan
    src = f'extern "C" void k(const float* x, float* y, int n) {{\n{body}\n}}\n'
    return bind_plan(parse_source(src, "vnni", "t.cpp"), to="cuda")


def test_arrays_of_a_variable_length_never_reach_device_code_as_such():
    # a thread's slice: the length is an entry scalar
    got = _bind("  for (int i = 0; i < n; ++i) { float t[n];\n"
                "    for (int j = 0; j < n; ++j) t[j] = x[j] * i;\n"
                "    float s = 0; for (int j = 0; j < n; ++j) s += t[j]; y[i] = s; }")
    assert not isinstance(got, list), got
    (region,) = [r for r in got.schedule.regions if r.kind == "kernel"]
    assert [name for name, _, _ in region.thread_arrays] == ["t"] and region.stride
    # a length read from memory inside the loop: the host cannot size the slices
    got = _bind("  for (int i = 0; i < n; ++i) { int w = (int) x[i] & 7; float t[w + 1];\n"
                "    for (int j = 0; j <= w; ++j) t[j] = x[i] * j;\n"
                "    y[i] = t[w]; }")
    assert isinstance(got, list) and got[0].code == "XP-BIND-005"
    assert "does not know at the launch" in got[0].message
    # a sequential loop that runs as one thread: no variable-length array in device code
    got = _bind("  for (int i = 1; i < n; ++i) { float t[n]; t[0] = y[i - 1];\n"
                "    for (int j = 1; j < n; ++j) t[j] = t[j - 1] + x[j];\n"
                "    y[i] = t[n - 1]; }")
    assert isinstance(got, list) and got[0].code == "XP-BIND-005"
    assert "single-thread kernel" in got[0].message
