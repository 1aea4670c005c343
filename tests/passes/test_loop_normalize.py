"""passes/cleanup/loop_normalize.py: grid-stride nests of lifted GPU code -> one counted loop, checked
against the source on the virtual device; one refusal per Requires line."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

import platforms
from passes.cleanup import loop_normalize  # noqa: F401
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel


def _prog(text):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _body(p):
    return _emit(p).split('extern "C"')[1]


def _same(src_prog, out_prog, args):
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.cpp", args=want, source=_emit(src_prog), program=src_prog)
    run_kernel("b.cpp", args=got, source=_emit(out_prog), program=out_prog)
    for a, b in zip(want, got):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


def _refused(prog, code):
    with pytest.raises(PassRefused) as exc:
        run_pass("loop_normalize", prog)
    assert exc.value.diagnostics[0].code == code, exc.value.diagnostics[0].message


def _unchanged(prog, code):
    """No nest of the pass's exact shape: nothing to do (issue 15), the input comes back
    unchanged with the not-applicable code."""
    from passes.base import apply_pass

    out = apply_pass("loop_normalize", prog)
    assert not out.changed and out.program is prog and out.reason.code == code, out.reason


# what loop_recovery leaves of ``for (i = blockIdx.x*blockDim.x + threadIdx.x; i < n;
# i += blockDim.x*gridDim.x)`` launched <<<3, 8>>>
GRID_STRIDE = r"""
extern "C" void k(const float *x, float *out, int n) {
  for (unsigned int xp_bx = 0; xp_bx < 3u; ++xp_bx) {
    for (unsigned int xp_tx = 0; xp_tx < 8u; ++xp_tx) {
      for (int i = xp_bx * 8u + xp_tx; i < ((int) n); i += 8u * 3u) {
        out[i] = x[i] * 2.0f + 1.0f;
      }
    }
  }
}
"""


def _args(n, extra=0):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(n + extra).astype(np.float32),
            np.zeros(n + extra, np.float32), n]


@pytest.mark.parametrize("n", [5, 24, 61])   # fewer, exactly, more elements than threads
def test_grid_stride_nest_becomes_one_counted_loop(n):
    src = _prog(GRID_STRIDE)
    out = run_pass("loop_normalize", src)
    body = _body(out)
    assert "xp_bx" not in body and "xp_tx" not in body
    assert "for (int i = 0; i < ((int) n); ++i)" in body
    _same(src, out, _args(n))


def test_two_dimensional_block_with_thread_id_declaration():
    # a block-stride loop over a 2-D block: tid = ty * 4 + tx declared before the loop
    src = _prog(r"""
extern "C" void k(const float *x, float *out, int n) {
  for (unsigned int ty = 0; ty < 2u; ++ty)
    for (unsigned int tx = 0; tx < 4u; ++tx) {
      const int tid = ty * 4u + tx;
      for (int i = tid; i < n; i += 4u * 2u)
        out[i] = x[i] - 3.0f;
    }
}
""")
    out = run_pass("loop_normalize", src)
    body = _body(out)
    assert "tid" not in body and "for (int i = 0; i < n; ++i)" in body
    _same(src, out, _args(19))


def test_no_entry_is_not_applicable():
    p = _prog(GRID_STRIDE)
    _unchanged(dataclasses.replace(p, entry=dataclasses.replace(p.entry, name="missing")),
               "XP-LOOP-NORMALIZE-001")


@pytest.mark.parametrize("inner", [
    "for (int i = xp_bx * 8u + xp_tx; i < n; i += 8u * 2u)",   # stride is not the thread count
    "for (int i = xp_bx * 4u + xp_tx; i < n; i += 8u * 3u)",   # start is not a bijection
    "for (int i = xp_tx; i < n; i += 8u * 3u)",                # a nest variable is not used
])
def test_nests_that_do_not_cover_each_index_once_are_left_unchanged(inner):
    src = GRID_STRIDE.replace(
        "for (int i = xp_bx * 8u + xp_tx; i < ((int) n); i += 8u * 3u)", inner)
    _unchanged(_prog(src), "XP-LOOP-NORMALIZE-002")           # not the pass's shape


def test_body_using_the_thread_index_is_left_unchanged():
    src = GRID_STRIDE.replace("out[i] = x[i] * 2.0f + 1.0f;", "out[i] = x[i] + xp_tx;")
    _unchanged(_prog(src), "XP-LOOP-NORMALIZE-002")


def test_reordering_that_is_not_proved_is_refused():
    # each thread accumulates a running value along its own stride: the order matters
    src = GRID_STRIDE.replace("out[i] = x[i] * 2.0f + 1.0f;",
                              "out[i] = (i >= 24 ? out[i - 24] : 0.0f) + x[i];")
    _refused(_prog(src), "XP-LOOP-NORMALIZE-003")


SYMBOLIC_GRID = r"""
extern "C" void k(const float *x, float *out, int n) {
  for (unsigned int bx = 0; bx < ((unsigned int) ((n + 8 - 1) / 8)); ++bx)
    for (unsigned int tx = 0; tx < 8u; ++tx)
      for (int i = bx * 8u + tx; i < n; i += 8u * ((unsigned int) ((n + 8 - 1) / 8)))
        out[i] = x[i] + 1.0f;
}
"""


@pytest.mark.parametrize("n", [1, 8, 29])
def test_symbolic_grid_extent_proved_positive(n):
    # gridDim.x = ceil(n / 8): Z3 proves it is at least 1 whenever the loop runs (n > 0)
    src = _prog(SYMBOLIC_GRID)
    out = run_pass("loop_normalize", src)
    assert "bx" not in _body(out) and "for (int i = 0; i < n; ++i)" in _body(out)
    _same(src, out, _args(n))


@pytest.mark.parametrize("g", [0, 1, 3])
def test_symbolic_extent_that_may_be_zero_guards_the_loop(g):
    # a grid size unrelated to n may be 0 while n > 0: the nest then runs nothing, so the
    # counted loop runs only when the nest loop's own first test holds (its bound becomes
    # `first ? n : 0`, which the binders still see as one counted loop)
    src = _prog(SYMBOLIC_GRID.replace("int n)", "int n, int g)").replace(
        "((unsigned int) ((n + 8 - 1) / 8))", "((unsigned int) g)"))
    out = run_pass("loop_normalize", src)
    body = _body(out)
    assert "bx" not in body and "(((unsigned int) 0) < ((unsigned int) g)) ? n : 0" in body, body
    _same(src, out, _args(29) + [g])


def test_fixed_width_integer_casts_are_read_as_their_value():
    """ggml's ``int64_t tid = (int64_t) blockIdx.x * (int64_t) blockDim.x + (int64_t)
    threadIdx.x`` with a stride over a symbolic grid: the int64_t casts are read through, as
    the (int) / (unsigned) ones are, and the nest becomes one counted loop."""
    src = _prog(r"""
#include <stdint.h>
extern "C" void k(const float *x, float *out, int n) {
  for (unsigned int xp_bx = 0; xp_bx < ((unsigned int) ((n + 255) / 256)); ++xp_bx)
    for (unsigned int xp_tx = 0; xp_tx < 256u; ++xp_tx)
      for (int64_t i = (int64_t) (((int64_t) xp_bx) * ((int64_t) 256u) + ((int64_t) xp_tx));
           i < ((int64_t) n);
           i += (int64_t) (((int64_t) 256u) * ((int64_t) ((unsigned int) ((n + 255) / 256)))))
        out[i] = x[i] * 2.0f;
}
""")
    out = run_pass("loop_normalize", src)
    body = _body(out)
    assert "xp_bx" not in body and "xp_tx" not in body and "++i" in body
    for n in (1, 300, 600):
        _same(src, out, _args(n))
