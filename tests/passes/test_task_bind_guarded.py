"""task_bind stages guarded or sparse outputs whose per-iteration windows never overlap (load,
write part, copy back); the affine analysis reads a flat index split into coordinates and put
back together as the index; dce removes a local array only a memset and stores fill."""
from __future__ import annotations

import copy

import numpy as np

import platforms
from passes.analysis import affine
from passes.base import run_pass
from passes.cleanup import dce  # noqa: F401  (registers the pass)
from passes.lower import task_bind  # noqa: F401  (registers the pass)
from xpiler.parse import parse_source
from xpiler.run import run_kernel

# the shape of a lifted CUDA kernel: one block per iteration, a guard on the flat index
ARANGE = r"""
extern "C" void arange(float *dst, int n, float start, float step) {
  for (unsigned int bx = 0; bx < (unsigned int) ((n + 255) / 256); ++bx) {
    for (unsigned int tx = 0; tx < 256u; ++tx) {
      if ((int) (tx + bx * 256u) >= n) {
      } else {
        dst[(int) (tx + bx * 256u)] = start + step * (int) (tx + bx * 256u);
      }
    }
  }
}
"""

# every other element, under a data-dependent guard: sparse, but iterations stay apart
SPARSE = r"""
extern "C" void evens(const float *x, float *out, int n) {
  for (int b = 0; b < n; ++b)
    for (int t = 0; t < 64; ++t)
      if (x[b * 64 + t] > 0.0f) out[2 * (b * 64 + t)] = x[b * 64 + t];
}
"""

# one column per iteration: the windows of two iterations overlap
COLUMNS = r"""
extern "C" void cols(const float *x, float *out, int m) {
  for (int b = 0; b < m; ++b)
    for (int t = 0; t < 32; ++t)
      if (x[t * m + b] > 0.0f) out[t * m + b] = x[t * m + b];
}
"""


def _bind(text: str):
    prog = parse_source(text, "vnni", "t.cpp")
    out = run_pass("task_bind", prog)
    return prog, out, platforms.module("bang", "backend").emit(out)


def _same(prog, out, args):
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.cpp", args=want, source=platforms.module("vnni", "backend").emit(prog),
               program=prog)
    run_kernel("b.mlu", args=got, source=platforms.module("bang", "backend").emit(out),
               program=out)
    for a, b in zip(want, got):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


def test_guarded_output_is_staged_and_matches():
    prog, out, text = _bind(ARANGE)
    facts = out.facts["task_bind"]
    assert facts["staged"] == ["arange_k0:dst"] and not facts["direct"]
    assert "__memcpy(dst + __xp_w0_dst, __xp_dst_n" in text
    # n not a multiple of the block: the last window is clamped to the buffer
    _same(prog, out, [np.full(1000, -7.0, np.float32), 1000, 0.5, 0.25])


def test_sparse_output_with_disjoint_iterations_is_staged_and_keeps_unwritten_elements():
    prog, out, text = _bind(SPARSE)
    assert "evens_k0:out" in out.facts["task_bind"]["staged"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal(40 * 64).astype(np.float32)
    _same(prog, out, [x, np.full(2 * 40 * 64, 3.0, np.float32), 40])


def test_overlapping_windows_keep_gdram_writes():
    _, out, text = _bind(COLUMNS)
    direct = out.facts["task_bind"]["direct"]
    assert any(d.startswith("cols_k0:out") for d in direct), direct
    assert "__memcpy(out" not in text


def test_flat_index_split_into_coordinates_reads_as_the_index():
    src = r"""
extern "C" void k(const float *x, float *out, int c, int h, int w) {
  for (int i = 0; i < c * h * w; ++i)
    out[(i / (h * w)) * (h * w) + (i % (h * w) / w) * w + i % (h * w) % w] = x[i];
}
"""
    info = affine.analyze(parse_source(src, "vnni", "t.cpp"))
    (store,) = [a for a in info.accesses if a.buffer == "out"]
    (loop,) = info.loops
    assert affine.to_poly(store.index).t == affine.Poly.sym("v:" + loop.uid).t
    assert affine.parallel(info, loop).parallel


def test_shifted_remainder_does_not_recombine():
    src = r"""
extern "C" void k(const float *x, float *out, int w) {
  for (int i = 0; i < 4 * w; ++i)
    out[(i / w) * w + (i + 1) % w] = x[i];
}
"""
    info = affine.analyze(parse_source(src, "vnni", "t.cpp"))
    (store,) = [a for a in info.accesses if a.buffer == "out"]
    assert affine.to_poly(store.index) is None


def test_dce_removes_an_array_only_memset_and_stores_fill():
    src = r"""
#include <string.h>
extern "C" void k(const float *x, float *out, int n) {
  for (int b = 0; b < n; ++b) {
    unsigned char done[64];
    memset(done, 0, 64);
    for (int t = 0; t < 64; ++t) {
      if (b * 64 + t >= 100) {
        done[t] = 1;
      } else {
        out[b * 64 + t] = x[b * 64 + t];
      }
    }
  }
}
"""
    prog = parse_source(src, "vnni", "t.cpp")
    out = run_pass("dce", prog)
    text = platforms.module("vnni", "backend").emit(out)
    assert "done" not in text and "memset" not in text
    assert "else" not in text and "!(" in text       # if (c) {} else S -> if (!(c)) S
