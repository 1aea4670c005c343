"""indvar / simplify / affine on loops and tail masks spelled with file-scope named constants
(``constexpr int MR = 4;``, the BLIS / MLAS micro-kernel style of sgemm_packed.cpp)."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import platforms
from passes.analysis import affine
from passes.cleanup import indvar
from passes.cleanup import simplify
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

REGISTERED = (indvar, simplify)   # importing them registers the passes


def _prog(text):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _same(a_prog, b_prog, args):
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.cpp", args=want, source=_emit(a_prog), program=a_prog)
    run_kernel("b.cpp", args=got, source=_emit(b_prog), program=b_prog)
    for a, b in zip(want, got):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


ROWS = r"""
constexpr int MR = 4;
extern "C" void k(const float *x, float *out, int M) {
  int i = 0;
  for (; i + MR <= M; i += MR)
    for (int r = 0; r < MR; ++r) out[i + r] = 2.0f * x[i + r];
  for (; i < M; ++i) out[i] = x[i] + 1.0f;
}
"""


def test_named_constant_step_and_offset_are_canonicalised():
    prog = _prog(ROWS)
    out = run_pass("indvar", prog)
    text = _emit(out)
    assert "i__v1 + MR <= M; i__v1 += 4" in text
    assert "for (int i__v2 = i__e1; i__v2 < M; i__v2 += 1)" in text
    info = affine.analyze(out)
    assert all(lp.canonical for lp in info.loops)
    assert affine.extents(info) == {"x": "M", "out": "M"}
    for m in (0, 3, 4, 9):
        x = np.arange(max(m, 1), dtype=np.float32)
        _same(prog, out, [x, np.zeros_like(x), m])


def test_a_local_shadowing_the_constant_is_not_taken_for_it():
    # the entry's own MR may differ from the file's: the step is not a known constant
    src = ROWS.replace("int i = 0;", "int MR = M > 8 ? 8 : 4; int i = 0;")
    with pytest.raises(PassRefused):
        run_pass("indvar", _prog(src.replace("for (; i < M; ++i)", "for (int q = 0; q < 0; ++q)")))


MASKED = r"""
constexpr int NR = 16;
extern "C" void k(const float *B, float *C, int K, int N) {
  for (int j0 = 0; j0 < N; j0 += NR) {
    const int cols = N - j0 < NR ? N - j0 : NR;
    for (int k = 0; k < K; ++k) {
      const unsigned short m = ((int) cols >= NR) ? (unsigned short) 0xFFFF
                                                  : (unsigned short) ((1u << (int) cols) - 1u);
      for (int j = 0; j < 16; ++j)
        if (m >> j & 1) C[k * N + j0 + j] = B[k * N + j0 + j] * 3.0f;
    }
  }
}
"""


def test_tail_mask_with_a_named_width_becomes_a_guard_and_bounds_the_extent():
    prog = _prog(MASKED)
    assert affine.extents(affine.analyze(prog))["C"] != "K * N"      # the bit test is opaque
    out = run_pass("simplify", prog)
    assert "j < ((int) cols)" in _emit(out)
    # the guard j < min(N - j0, 16) bounds the column tail: no lane past the row end
    assert affine.extents(affine.analyze(out)) == {"B": "K * N", "C": "K * N"}
    B = np.arange(3 * 21, dtype=np.float32)
    _same(prog, out, [B, np.zeros_like(B), 3, 21])
