"""VNNI sources from the second probe batch (issue 16, session 24): an OpenMP parallel region
partitioned by thread number (``omp_regions``), a main loop inside ``if (n >= 16)`` with the
tail after it (``indvar``), steps written ``2 * kVec``, ``std::numeric_limits``, an inlined
``_mm_prefetch`` (``dce``), byte copies of a symbolic count (``memops``), a scalar that shadows
a vector of an earlier loop (``detensorize_vnni``), and local lambdas / classes read through
clang (the C++ route)."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel
from xpiler.translate import load_passes

load_passes()


def _emit(prog) -> str:
    return platforms.module(prog.platform, "backend").emit(prog)


def _prog(src: str):
    return parse_source(src, "vnni", "t.cpp")


REGION = """
#include <omp.h>
#include <algorithm>
extern "C" void rows_twice(const float* x, float* y, int rows, int cols) {
#pragma omp parallel
  {
    const int nt = omp_get_num_threads(), t = omp_get_thread_num();
    const int per = (rows + nt - 1) / nt;
    for (int r = t * per; r < std::min(rows, (t + 1) * per); ++r)
      for (int c = 0; c < cols; ++c) y[r * cols + c] = 2.0f * x[r * cols + c];
  }
}
"""


def test_omp_region_becomes_a_loop_over_the_team(tmp_path):
    prog = _prog(REGION)
    out = _emit(run_pass("omp_regions", prog, threads=8))
    assert "for (int __xp_omp_t = 0; __xp_omp_t < 8; __xp_omp_t++)" in out
    assert "omp_get_thread_num" not in out and "#pragma omp parallel\n" not in out
    x = np.arange(35 * 3, dtype=np.float32)
    want, got = [x, np.zeros_like(x), 35, 3], [x, np.zeros_like(x), 35, 3]
    (tmp_path / "s.cpp").write_text(REGION)
    (tmp_path / "o.cpp").write_text(out)
    run_kernel(tmp_path / "s.cpp", args=want, program=prog)
    run_kernel(tmp_path / "o.cpp", args=got, source=out)
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("inside", ["#pragma omp barrier", "#pragma omp single\n    y[0] = 0;"])
def test_omp_regions_that_need_the_team_are_left_alone(inside):
    src = REGION.replace("    const int per", f"    {inside}\n    const int per")
    out = _emit(run_pass("omp_regions", _prog(src)))          # nothing to do: unchanged
    assert "__xp_omp_t" not in out and "omp_get_thread_num()" in out


def test_main_loop_under_an_if_and_its_tail_get_closed_starts():
    src = ("constexpr int kVec = 16;\n"
           'extern "C" void k(const float* x, float* y, int n) {\n'
           "  int i = 0;\n"
           "  if (n >= 2 * kVec) {\n"
           "    for (; i + 2 * kVec <= n; i += 2 * kVec) y[i] = x[i];\n"
           "  }\n"
           "  for (; i < n; ++i) y[i] = -x[i];\n}\n")
    out = _emit(run_pass("indvar", _prog(src)))
    # the tail starts where the main loop ended, or at 0 when the branch did not run
    assert "for (int i__v2 = (n >= 2 * kVec) ? (n / 32 * 32) : 0; i__v2 < n; i__v2 += 1)" in out, out
    assert "i__v1 += 32)" in out
    # a branch that writes a name of its condition: the value after it is not known
    bad = src.replace("  if (n >= 2 * kVec) {", "  int m = n;\n  if (m >= 2 * kVec) {\n    m = 0;")
    assert "i__v2" not in _emit(run_pass("indvar", _prog(bad)))


def test_numeric_limits_become_c_constants():
    src = ('#include <limits>\n#include <cstdint>\nextern "C" void k(float* y, int32_t* z, double* d) {\n'
           "  y[0] = std::numeric_limits<float>::lowest();\n"
           "  y[1] = std::numeric_limits<float>::infinity();\n"
           "  z[0] = std::numeric_limits<int32_t>::max();\n"
           "  d[0] = std::numeric_limits<double>::epsilon();\n}\n")
    out = _emit(run_pass("std_calls", _prog(src)))
    body = out.split('extern "C"')[1]
    for want in ("y[0] = -FLT_MAX;", "y[1] = INFINITY;", "z[0] = INT_MAX;", "d[0] = DBL_EPSILON;"):
        assert want in body, body


def test_dce_drops_what_an_inlined_prefetch_left():
    src = ('extern "C" void k(const float* x, float* y, int n) {\n'
           "  for (int i = 0; i < n; ++i) {\n"
           "    (void) ((void *) (x + i + 64));\n    (void) 3;\n    y[i] = x[i];\n  }\n}\n")
    out = _emit(run_pass("dce", _prog(src)))
    assert "(void)" not in out and "y[i] = x[i];" in out


def test_memops_copies_any_count_of_bytes():
    src = ('#include <stdint.h>\n#include <string.h>\n'
           'extern "C" void k(const uint8_t* a, uint8_t* b, int m, int K, int Kp) {\n'
           "  for (int r = 0; r < m; ++r) memcpy(b + r * Kp, a + r * K, K);\n}\n")
    out = _emit(run_pass("memops", _prog(src)))
    assert "memcpy" not in out.split('extern "C"')[1]
    assert "< K;" in out


def test_a_scalar_shadowing_a_vector_of_an_earlier_loop_is_not_a_vector():
    src = ("#include <immintrin.h>\n"
           'extern "C" void k(const float* x, float* s, int n) {\n'
           "  __m512 acc = _mm512_setzero_ps();\n  int i = 0;\n"
           "  for (; i + 16 <= n; i += 16) { const __m512 d = _mm512_loadu_ps(x + i); "
           "acc = _mm512_fmadd_ps(d, d, acc); }\n"
           "  float t = _mm512_reduce_add_ps(acc);\n"
           "  for (; i < n; ++i) { const float d = x[i]; t += d * d; }\n  s[0] = t;\n}\n")
    run_pass("detensorize_vnni", _prog(src), rules=False)          # no XP-DETENSOR-VNNI-003
    vec = src.replace("const float d = x[i]; t += d * d;", "t += x[i];").replace(
        "s[0] = t;", "__m512 d = acc; s[0] = t + (d * d)[0];")
    with pytest.raises(PassRefused) as err:
        run_pass("detensorize_vnni", _prog(vec), rules=False)
    assert any(d.code == "XP-DETENSOR-VNNI-003" for d in err.value.diagnostics)


def test_local_lambda_and_a_class_of_static_methods_in_a_parallel_region():
    src = ("#include <omp.h>\n#include <cmath>\n"
           "class Act {\n public:\n  static inline float twice(float v) { return 2.0f * v; }\n};\n"
           'extern "C" void k(const float* x, float* y, int n) {\n'
           "  auto sq = [](float v) { return v * v; };\n"
           "#pragma omp parallel\n  {\n    const int t = omp_get_thread_num(), nt = omp_get_num_threads();\n"
           "    for (int i = t; i < n; i += nt) y[i] = Act::twice(sq(x[i]));\n  }\n}\n")
    prog = _prog(src)
    text = prog.source
    assert "Act__twice(" in text and "auto sq" not in text and "#pragma omp parallel" in text


def test_a_host_error_message_is_no_unknown_effect():
    # the lift of `if (err != cudaSuccess) fprintf(stderr, ...)` after a kernel launch: an
    # output call only reads its operands (session 24: online softmax -> BANG was refused)
    import passes.analysis.affine as affine

    src = ('#include <stdio.h>\nextern "C" void k(const float* x, float* y, int n, int err) {\n'
           "  for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];\n"
           '  if (err != 0) fprintf(stderr, "failed: %d\\n", err);\n}\n')
    info = affine.analyze(_prog(src))
    assert not [p for p in info.problems if "effects are unknown" in p[1]]


def test_heap_scratch_of_the_entry_becomes_an_array():
    src = ('#include <stdlib.h>\nextern "C" void k(const float* g, const float* x, float* y, int C, int HW) {\n'
           "  float* a = (float*)malloc(sizeof(float) * (C > 0 ? C : 1));\n"
           "  for (int c = 0; c < C; ++c) a[c] = 2.0f * g[c];\n"
           "  for (int c = 0; c < C; ++c) for (int i = 0; i < HW; ++i) y[c * HW + i] = a[c] * x[c * HW + i];\n"
           "  free(a);\n}\n")
    out = _emit(run_pass("heap_arrays", _prog(src)))
    assert "malloc" not in out and "free(" not in out and "float a[" in out
    kept = src.replace("  free(a);\n", "  float* b = a;\n  free(b);\n")       # passed on: left alone
    assert "malloc" in _emit(run_pass("heap_arrays", _prog(kept)))
