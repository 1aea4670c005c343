"""The VNNI -> CUDA/HIP lift cleanup (localize, indvar counters, memops byte counts) and
corpus kernels that translate only with them; the cuda<->hip lift-and-lower fallback."""
from __future__ import annotations

from pathlib import Path

import pytest

import platforms
from passes.cleanup import indvar  # noqa: F401  (register the passes)
from passes.cleanup import localize
from passes.cleanup import memops
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source

CORPUS = Path(__file__).resolve().parents[2] / "xpiler" / "corpus"


def _emit(prog) -> str:
    return platforms.module(prog.platform, "backend").emit(prog)


def _prog(src: str):
    return parse_source(src, "vnni", "<t>.cpp")


# -- localize --------------------------------------------------------------------------------
def test_localize_moves_file_scope_scratch_into_the_entry():
    src = ('#include <stdint.h>\nstatic const int N = 8;\nalignas(64) static int8_t W[N * 4];\n'
           'static int32_t keep[4];\nstatic int helper(int i) { return keep[i]; }\n'
           'extern "C" void k(const float* x, float* o) {\n'
           '  for (int i = 0; i < N * 4; ++i) W[i] = (int8_t) x[i];\n'
           '  for (int i = 0; i < N; ++i) o[i] = W[4 * i] + helper(0);\n}\n')
    out = _emit(run_pass("localize", _prog(src)))
    entry = out.split('extern "C"')[1]
    assert "static int8_t W[N * 4];" in entry and "alignas(64)" in entry
    assert "W[" not in out.split('extern "C"')[0]          # no longer at file scope
    assert "static int32_t keep[4];" in out.split('extern "C"')[0]   # a helper uses it


def test_localize_refuses_shared_or_shadowed_arrays():
    src = ('static float t[4];\nstatic float g(int i) { return t[i]; }\n'
           'extern "C" void k(float* o) { for (int i = 0; i < 4; ++i) o[i] = t[i] + g(i); }\n')
    with pytest.raises(PassRefused) as exc:
        run_pass("localize", _prog(src))
    d = exc.value.diagnostics[0]
    assert d.code == "XP-LOCALIZE-003" and "outside the entry" in d.message


# -- indvar: running counters ----------------------------------------------------------------
def test_running_counter_of_a_rectangular_nest_gets_a_closed_form():
    src = ('extern "C" void k(const float* x, float* o, int A, int B) { int p = 0;\n'
           '  for (int a = 0; a < A; ++a) for (int b = 1; b < B; ++b) o[p++] = x[b * A + a];\n}\n')
    out = _emit(run_pass("indvar", _prog(src)))
    assert "o[p + (a * (B - 1) + (b - 1))] = x[b * A + a];" in out
    assert "p +=" not in out                                # p is dead after the nest
    used_after = src.replace("x[b * A + a];\n}", "x[b * A + a];\n  o[0] = p;\n}")
    out = _emit(run_pass("indvar", _prog(used_after)))
    assert "p += ((A > 0) ? A : 0) * ((B > 1) ? (B - 1) : 0);" in out


def test_conditional_counter_is_left_alone():
    src = ('extern "C" void k(const float* x, float* o, int n) { int p = 0;\n'
           '  for (int i = 0; i < n; ++i) if (x[i] > 0) o[p++] = x[i];\n}\n')
    with pytest.raises(PassRefused) as exc:             # a counter, not provably running
        run_pass("indvar", _prog(src))
    assert exc.value.diagnostics[0].code == "XP-INDVAR-003"


# -- memops: byte counts ---------------------------------------------------------------------
def test_memops_byte_count_products_and_constant_dimensions():
    src = ('#include <string.h>\nstatic const int D0 = 10, INNER = 1, M = 7, NP = 32;\n'
           'extern "C" void k(const float* x, float* o) { short t[M * NP];\n'
           '  memset(t, 0, sizeof(t));\n'
           '  memcpy(o, x, sizeof(float) * D0 * INNER);\n  o[0] += t[3];\n}\n')
    out = _emit(run_pass("memops", _prog(src)))
    assert "memset" not in out and "memcpy" not in out
    assert "< 224;" in out and "< 10;" in out


# -- corpus kernels that need the cleanup, verified end to end -------------------------------
def _translate(rel: str, to: str, tmp_path):
    from xpiler.translate import translate
    src = CORPUS / rel
    suffix = {"cuda": ".cu", "hip": ".hip"}[to]
    return translate(str(src), to, str(tmp_path / (src.stem + suffix)))


def test_vnni_concat_to_cuda_verified(tmp_path):
    rep = _translate("vnni/concat_4_6_10.cpp", "cuda", tmp_path)
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    last = [s for s in rep.steps if s.name != "host_heap"][-1]        # host_heap: the finish stage
    assert last.name == "loop_bind" and last.status == "verified"


@pytest.mark.slow
@pytest.mark.parametrize("rel", ["vnni/gemv_77_100.cpp", "vnni/transpose_2_8_16_4.cpp",
                                 "vnni/conv2d_2_9_9_8_12_3_3_8_2_0.cpp"])
def test_previously_refused_vnni_kernels_verified_on_cuda(rel, tmp_path):
    rep = _translate(rel, "cuda", tmp_path)
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    text = (tmp_path / (Path(rel).stem + ".cu")).read_text()
    assert "<<<dim3((unsigned) __xp_g" in text          # at least one multi-thread launch


@pytest.mark.slow
def test_cuda_wmma_kernel_to_hip_through_the_fallback(tmp_path, monkeypatch):
    from xpiler.translate import PLANS

    # the fallback itself: matrix_core_map (tried first) maps this kernel structurally
    monkeypatch.setitem(PLANS, ("cuda", "hip"), [p for p in PLANS[("cuda", "hip")]
                                                 if not p.startswith("matrix_core_map")])
    rep = _translate("cuda/gemm_32_128_128.cu", "hip", tmp_path)
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    # blocks x threads with shared tiles first (levels=2), one level if that is refused
    assert rep.pipeline.startswith("loop_recovery") and (
        rep.pipeline.endswith("loop_bind{levels=2;to=hip},host_heap") or
        rep.pipeline.endswith("loop_bind{to=hip},host_heap"))
    assert any(s.name == "api_map" and s.status == "refused" for s in rep.steps)


OMP_REDUCTION_HELPER = r"""
#include <cmath>
static double sum_squares(const float *x, int n) {
  double sum = 0.0;
#pragma omp parallel for reduction(+:sum)
  for (int i = 0; i < n; ++i) sum += (double)x[i] * x[i];
  return sum;
}
extern "C" void normalize(const float *x, float *y, int n) {
  double nrm = std::sqrt(sum_squares(x, n));
  float inv = nrm > 0 ? (float)(1.0 / nrm) : 0.f;
  for (int i = 0; i < n; ++i) y[i] = x[i] * inv;
}
"""


def test_an_omp_reduction_in_an_inlined_helper(tmp_path):
    """The inlined helper's `sum` is renamed in its `reduction(+:sum)` clause too (the output
    builds), and a loop with a reduction clause is not taken as asserted parallel: its
    iterations combine into one scalar, which loop_bind promotes to a device element."""
    from passes.cleanup import inline  # noqa: F401
    from xpiler.translate import translate
    prog = parse_source(OMP_REDUCTION_HELPER, "vnni", "t.cpp")
    out = run_pass("inline", prog)
    text = platforms.module("vnni", "backend").emit(out)
    assert "reduction(+:sum__i" in text
    src = tmp_path / "norm.cpp"
    src.write_text(OMP_REDUCTION_HELPER)
    rep = translate(str(src), "cuda", str(tmp_path / "norm.cu"))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]


MASK_TAIL = r"""
#include <immintrin.h>
#include <cstddef>
extern "C" void scale_add(const float* a, const float* b, float* c, float s, size_t n) {
  size_t i = 0;
  const __m512 vs = _mm512_set1_ps(s);
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(c + i, _mm512_fmadd_ps(_mm512_loadu_ps(a + i), vs, _mm512_loadu_ps(b + i)));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
    __m512 va = _mm512_maskz_loadu_ps(m, a + i);
    __m512 vb = _mm512_maskz_loadu_ps(m, b + i);
    _mm512_mask_storeu_ps(c + i, m, _mm512_fmadd_ps(va, vs, vb));
  }
}
"""


def test_a_main_loop_after_a_vector_constant_and_its_masked_tail(tmp_path):
    """`size_t i = 0;` then the set-up of `vs`, then the main loop: the entry value of `i` is
    still known (indvar), so the masked tail gets a never-assigned start and binds."""
    from xpiler.translate import translate
    src = tmp_path / "scale_add.cpp"
    src.write_text(MASK_TAIL)
    rep = translate(str(src), "cuda", str(tmp_path / "scale_add.cu"))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert {s.name: s.status for s in rep.steps}["indvar"] == "verified"


POINTER_WALK = r"""
#include <immintrin.h>
extern "C" void add_rows(const float* src, float* dst, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* s = src + r * cols;
    float* d = dst;
    int c = cols;
    while (c >= 16) {
      _mm512_storeu_ps(d, _mm512_add_ps(_mm512_loadu_ps(d), _mm512_loadu_ps(s)));
      s += 16; d += 16; c -= 16;
    }
    while (c-- > 0) *d++ += *s++;
  }
}
"""


def test_local_pointers_walked_by_steps_and_post_increments(tmp_path):
    """`*d++ += *s++;` steps both pointers inside the statement: pointer_offsets takes the
    steps out (`*d += *s; d += 1; s += 1;`) and reads the pointers at offsets; counted_while
    counts `while (c >= 16) { ...; c -= 16; }` down to its bound."""
    from xpiler.translate import translate, load_passes
    load_passes()
    prog = _prog(POINTER_WALK)
    out = run_pass("pointer_offsets", run_pass("inline", run_pass("detensorize_vnni", prog)))
    text = _emit(out)
    assert "__xp_off_d += 1" in text and "__xp_off_s += 1" in text and "d++" not in text
    walked = run_pass("counted_while", out)
    assert "while" not in _emit(walked).split('extern "C"')[1]
    src = tmp_path / "add_rows.cpp"
    src.write_text(POINTER_WALK)
    for to in ("cuda", "bang"):
        rep = translate(str(src), to, str(tmp_path / f"add_rows.{to}"))
        assert rep.status == "verified", [s.to_json() for s in rep.steps]
