"""passes/cleanup/loop_normalize.py: the strided loop's variable declared just before it
(``size_t i = start; for (; i < n; i += stride)``, the HIP grid-stride spelling)."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import platforms
from passes.cleanup import loop_normalize
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

PASSES = (loop_normalize,)   # imported to register it


def _prog(text):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _body(p):
    return _emit(p).split('extern "C"')[1]


def _args(n):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(n).astype(np.float32), np.zeros(n, np.float32), n]


def _same(src_prog, out_prog, args):
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.cpp", args=want, source=_emit(src_prog), program=src_prog)
    run_kernel("b.cpp", args=got, source=_emit(out_prog), program=out_prog)
    for a, b in zip(want, got):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)

DECL_BEFORE = r"""
extern "C" void k(const float *x, float *out, int n) {
  for (unsigned int xp_bx = 0; xp_bx < 3u; ++xp_bx) {
    for (unsigned int xp_tx = 0; xp_tx < 8u; ++xp_tx) {
      size_t i = xp_bx * 8u + xp_tx;
      for (; i < ((size_t) n); i += (size_t) (8u * 3u))
        out[i] = x[i] * 2.0f + 1.0f;
    }
  }
}
"""


@pytest.mark.parametrize("n", [5, 24, 61])
def test_variable_declared_before_the_loop(n):
    src = _prog(DECL_BEFORE)
    out = run_pass("loop_normalize", src)
    body = _body(out)
    assert "xp_bx" not in body and "xp_tx" not in body
    assert "for (size_t i = 0; i < ((size_t) n); ++i)" in body, body
    _same(src, out, _args(n))


@pytest.mark.parametrize("change", [
    # the loop steps another variable than the one declared before it
    ("size_t i = xp_bx * 8u + xp_tx;", "size_t i = xp_bx * 8u + xp_tx; size_t j = 0;"),
    # the declared start is not a bijection onto the threads
    ("size_t i = xp_bx * 8u + xp_tx;", "size_t i = xp_bx * 4u + xp_tx;"),
])
def test_other_shapes_are_still_left_unchanged(change):
    from passes.base import apply_pass

    prog = _prog(DECL_BEFORE.replace(*change))
    out = apply_pass("loop_normalize", prog)            # not the pass's shape: nothing to do
    assert not out.changed and out.program is prog and out.reason.code == "XP-LOOP-NORMALIZE-002"
