"""The GPU lift's grid assertion (``#pragma omp parallel for collapse(n)`` over the block
loops: CUDA/HIP blocks are independent) through the GPU -> BANG clean-up: unit_loops keeps it
on the surviving grid loops, loop_normalize drops it when it rewrites the nest, and task_bind
uses it where the dependence test cannot prove independence (per-thread row counters)."""
from __future__ import annotations

import copy

import numpy as np
import platforms
from passes.cleanup import loop_normalize
from passes.lower import task_bind
from passes.cleanup import unit_loops  # noqa: F401
from passes.base import run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel


def _prog(text):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _body(p):
    return _emit(p).split('extern "C"')[1]


def _same(src_prog, out_prog, args, strict=False):
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.cpp", args=want, source=_emit(src_prog), program=src_prog)
    run_kernel("b.mlu" if out_prog.platform == "bang" else "b.cpp", args=got,
               source=_emit(out_prog), program=out_prog, strict=strict)
    for a, b in zip(want, got):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


# grid (n, 1, 2) x block (4, 1, 1): by is a one-trip loop, bz and bx survive; the thread loop
# of a one-thread block dimension (ty) carries an ``omp simd`` that must go with it
GRID = r"""
extern "C" void k(const float *x, float *out, int n) {
  #pragma omp parallel for collapse(3) schedule(static)
  for (unsigned int bz = 0; bz < 2u; ++bz)
    for (unsigned int by = 0; by < 1u; ++by)
      for (unsigned int bx = 0; bx < ((unsigned int) n); ++bx) {
        #pragma omp simd
        for (unsigned int ty = 0; ty < 1u; ++ty)
          for (unsigned int tx = 0; tx < 4u; ++tx) {
            out[(bz * n + bx) * 4u + tx] = x[(bz * n + bx) * 4u + tx] * 2.0f + (float) by;
          }
      }
}
"""


def test_unit_loops_moves_the_grid_assertion_to_surviving_loops():
    prog = _prog(GRID)
    out = run_pass("unit_loops", prog)
    body = _body(out)
    assert "for (unsigned int by" not in body and "for (unsigned int ty" not in body
    assert "#pragma omp parallel for collapse(2) schedule(static)" in body
    assert body.index("collapse(2)") < body.index("for (unsigned int bz")
    assert "omp simd" not in body          # its loop is gone
    n = 5
    _same(prog, out, [np.arange(2 * n * 4, dtype=np.float32), np.zeros(2 * n * 4, np.float32), n])


def test_unit_loops_drops_the_assertion_when_no_grid_loop_survives():
    text = GRID.replace("bz < 2u", "bz < 1u").replace("bx < ((unsigned int) n)", "bx < 1u")
    body = _body(run_pass("unit_loops", _prog(text)))
    assert "omp parallel" not in body and "for (unsigned int tx" in body


# loop_recovery of ``for (i = blockIdx.x*8 + threadIdx.x; i < n; i += 24)`` <<<3, 8>>>
STRIDED = r"""
extern "C" void k(const float *x, float *out, int n) {
  #pragma omp parallel for schedule(static)
  for (unsigned int xp_bx = 0; xp_bx < 3u; ++xp_bx) {
    for (unsigned int xp_tx = 0; xp_tx < 8u; ++xp_tx) {
      for (int i = xp_bx * 8u + xp_tx; i < ((int) n); i += 8u * 3u) {
        out[i] = x[i] * 2.0f + 1.0f;
      }
    }
  }
}
"""


def test_loop_normalize_drops_the_assertion_of_the_nest_it_rewrites():
    out = run_pass("loop_normalize", _prog(STRIDED))
    body = _body(out)
    # one thread's strided iterations are not declared independent by the GPU model
    assert "omp parallel" not in body and "xp_bx" not in body


# what the lift leaves of a warp-per-row kernel with a grid-stride row loop: each thread keeps
# its row in a per-thread counter, so the dependence test cannot bound the rows a block writes
ROWS = r"""
extern "C" void k(const float *A, float *y, int M, int N) {
  PRAGMA
  for (unsigned int xp_bx = 0; xp_bx < 4u; ++xp_bx) {
    int row[8];
    for (unsigned int xp_tx = 0; xp_tx < 8u; ++xp_tx)
      row[xp_tx] = xp_bx * 8 + xp_tx;
    for (unsigned int xp_tx = 0; xp_tx < 8u; ++xp_tx) {
      while (row[xp_tx] < M) {
        float s = 0.0f;
        for (int j = 0; j < N; ++j)
          s += A[row[xp_tx] * N + j];
        y[row[xp_tx]] = s;
        row[xp_tx] += 32;
      }
    }
  }
}
"""


def _host_entry(p):
    return _emit(p).split('extern "C" void k(')[1]


def test_task_bind_binds_asserted_grid_loop_and_not_without_it():
    M, N = 70, 5
    args = [np.random.default_rng(0).random(M * N, dtype=np.float32), np.zeros(M, np.float32), M, N]
    ext = f"A:{M * N} y:{M}"
    # unproved: the grid loop stays on the host, its row loop runs in task 0
    plain = run_pass("task_bind", _prog(ROWS.replace("PRAGMA", "")), extents=ext)
    assert "for (unsigned int xp_bx" in _host_entry(plain)
    prog = _prog(ROWS.replace("PRAGMA", "#pragma omp parallel for schedule(static)"))
    out = run_pass("task_bind", prog, extents=ext)
    assert "xp_bx" not in _host_entry(out) and "taskId != 0" not in _emit(out)
    _same(prog, out, args, strict=True)


def test_task_bind_ignores_the_assertion_over_atomic_updates():
    text = ROWS.replace("PRAGMA", "#pragma omp parallel for schedule(static)").replace(
        "y[row[xp_tx]] = s;", "#pragma omp atomic\n        y[0] += s;")
    out = run_pass("task_bind", _prog(text), extents="A:350 y:70")
    assert "for (unsigned int xp_bx" in _host_entry(out)
