"""passes/cleanup/rematerialize.py: per-thread arrays of lifted GPU code (x[tid] = e kept across a
barrier) replaced by e at their reads; checked against the source on the virtual device, one
refusal per Requires line."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

import platforms
from passes.analysis import affine
from passes.cleanup import rematerialize  # noqa: F401
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
        run_pass("rematerialize", prog)
    assert exc.value.diagnostics[0].code == code, exc.value.diagnostics[0].message


def _unchanged(prog, code):
    """Nothing to do (issue 15): the input comes back unchanged with the not-applicable code."""
    from passes.base import apply_pass

    out = apply_pass("rematerialize", prog)
    assert not out.changed and out.program is prog and out.reason.code == code, out.reason


# the shape the lift gives a tiled transpose (a 4x4 tile, one barrier): per-thread x, y kept
# in arrays indexed by the thread id; phase 2 rewrites them before reading
TRANSPOSE = r"""
extern "C" void k(const float *a, float *out, int rows, int cols) {
  for (unsigned int by = 0; by < 2u; ++by) {
    for (unsigned int bx = 0; bx < 3u; ++bx) {
      float tile[4][5];
      int x[16];
      int y[16];
      for (unsigned int ty = 0; ty < 4u; ++ty) {
        for (unsigned int tx = 0; tx < 4u; ++tx) {
          const unsigned int tid = tx + 4u * ty;
          x[tid] = bx * 4u + tx;
          y[tid] = by * 4u + ty;
          if (x[tid] < cols && y[tid] < rows)
            tile[ty][tx] = a[y[tid] * cols + x[tid]];
        }
      }
      for (unsigned int ty = 0; ty < 4u; ++ty) {
        for (unsigned int tx = 0; tx < 4u; ++tx) {
          const unsigned int tid = tx + 4u * ty;
          x[tid] = by * 4u + tx;
          y[tid] = bx * 4u + ty;
          if (x[tid] < rows && y[tid] < cols)
            out[y[tid] * rows + x[tid]] = tile[tx][ty];
        }
      }
    }
  }
}
"""


def test_transpose_arrays_become_recomputed_values_and_the_block_loop_parallel():
    src = _prog(TRANSPOSE)
    out = run_pass("rematerialize", src)
    body = _body(out)
    assert "x[" not in body and "y[" not in body and "int x[16]" not in body
    rng = np.random.default_rng(0)
    _same(src, out, [rng.standard_normal(8 * 12).astype(np.float32),
                     np.zeros(8 * 12, np.float32), 8, 12])
    info = affine.analyze(out)
    assert affine.parallel(info, info.top[0]).parallel            # the block loop 'by'
    info0 = affine.analyze(src)
    assert not affine.parallel(info0, info0.top[0]).parallel      # before: refused


def test_value_from_an_earlier_phase_is_recomputed():
    src = _prog(r"""
extern "C" void k(const float *a, float *out, int n) {
  for (unsigned int b = 0; b < 3u; ++b) {
    int lane[8];
    float s[8];
    for (unsigned int t = 0; t < 8u; ++t) {
      const unsigned int tid = t;
      lane[tid] = t & 3;
      s[tid] = a[b * 8u + t];
    }
    for (unsigned int t = 0; t < 8u; ++t) {
      const unsigned int tid = t;
      out[b * 8u + lane[tid] * 2 + (tid >> 2)] = s[tid] + 1.0f;
    }
  }
}
""")
    out = run_pass("rematerialize", src)
    body = _body(out)
    assert "lane[" not in body and "s[tid]" in body     # s holds a load: it stays an array
    rng = np.random.default_rng(1)
    _same(src, out, [rng.standard_normal(24).astype(np.float32), np.zeros(24, np.float32), 24])


def test_nests_with_their_own_names_and_a_folded_thread_id_are_matched_by_position():
    # after inlining each phase declares its own loop variable (t__i1, t__i1_2) and the
    # clean-up folds the lift's tid into the subscripts; nbt is the block size (never written)
    src = _prog(r"""
extern "C" void k(const float *a, float *out, int n, unsigned int nbt) {
  for (unsigned int b = 0; b < 3u; ++b) {
    int lane[8];
    float s[8];
    for (unsigned int t__i1 = 0; t__i1 < nbt; ++t__i1) {
      lane[(unsigned int) (t__i1 + nbt * 0u)] = t__i1 & 3;
      s[(unsigned int) (t__i1 + nbt * 0u)] = a[b * 8u + t__i1];
    }
    for (unsigned int t__i1_2 = 0; t__i1_2 < nbt; ++t__i1_2) {
      if (lane[(unsigned int) (t__i1_2 + nbt * 0u)] == 1)
        continue;
      out[b * 8u + lane[(unsigned int) (t__i1_2 + nbt * 0u)] * 2 + (t__i1_2 >> 2)] =
          s[(unsigned int) (t__i1_2 + nbt * 0u)] + 1.0f;
    }
  }
}
""")
    out = run_pass("rematerialize", src)
    body = _body(out)
    assert "lane[" not in body and "int lane" not in body and "s[(unsigned int) (t__i1_2" in body
    assert "__xp_tid" not in body                        # the named id is folded back
    assert "(t__i1_2 & 3)" in body.replace("(int) ", "")  # recomputed in the reading nest's names
    rng = np.random.default_rng(2)
    _same(src, out, [rng.standard_normal(24).astype(np.float32), np.zeros(24, np.float32), 24, 8])


def test_two_subscripts_of_loop_variables_in_one_nest_name_no_thread_id():
    # x[t] and x[t + 1]: no single thread id; the array is not per-thread
    _unchanged(_prog(r"""
extern "C" void k(float *out) {
  int x[9];
  for (unsigned int t = 0; t < 8u; ++t) {
    x[t] = t;
    x[t + 1] = t;
  }
  for (unsigned int t = 0; t < 8u; ++t)
    out[t] = x[t];
}
"""), "XP-REMAT-002")


def test_no_entry_or_no_per_thread_array_is_not_applicable():
    p = _prog(TRANSPOSE)
    _unchanged(dataclasses.replace(p, entry=dataclasses.replace(p.entry, name="missing")),
               "XP-REMAT-001")
    _unchanged(_prog('extern "C" void k(float *o) { o[0] = 1.0f; }\n'), "XP-REMAT-002")


@pytest.mark.parametrize("change", [
    ("x[tid] = bx * 4u + tx;", "x[tid] += bx * 4u + tx;"),          # not a plain store
    ("x[tid] = bx * 4u + tx;", "x[tid] = (int) a[tx];"),            # value reads memory
    ("out[y[tid] * rows + x[tid]]", "out[y[tid] * rows + x[0]]"),   # not indexed by tid
])
def test_arrays_that_cannot_be_recomputed_are_refused(change):
    # only x is changed; y alone still qualifies unless x's reads block it: check x survives
    src = _prog(TRANSPOSE.replace(*change))
    try:
        out = run_pass("rematerialize", src)
    except PassRefused:
        return
    assert "x[" in _body(out)


def test_phase_value_depending_on_a_changing_name_is_refused():
    src = _prog(r"""
extern "C" void k(const float *a, float *out, int n) {
  for (unsigned int b = 0; b < 2u; ++b) {
    int idx[4];
    int r = 0;
    for (unsigned int t = 0; t < 4u; ++t) {
      const unsigned int tid = t;
      idx[tid] = r + t;
    }
    r = 4;
    for (unsigned int t = 0; t < 4u; ++t) {
      const unsigned int tid = t;
      out[b * 8u + idx[tid]] = a[t];
    }
  }
}
""")
    _refused(src, "XP-REMAT-003")


def test_pointer_array_set_from_a_phase_declaration_is_recomputed():
    # lifted ``const float *xr = x + row * cols;`` (one row per 4 threads, early exit aside)
    src = _prog(r"""
extern "C" void k(const float *x, float *out, int rows, int cols) {
  for (unsigned int b = 0; b < 2u; ++b) {
    const float *xr[8];
    float m[8];
    for (unsigned int t = 0; t < 8u; ++t) {
      const unsigned int tid = t;
      const int row = b * 2u + t / 4;
      xr[tid] = x + row * cols;
      m[tid] = xr[tid][t % 4];
    }
    for (unsigned int t = 0; t < 8u; ++t) {
      const unsigned int tid = t;
      out[(b * 2u + t / 4) * cols + t % 4] = xr[tid][(t + 1) % 4] + m[tid];
    }
  }
}
""")
    out = run_pass("rematerialize", src)
    body = _body(out)
    assert "xr" not in body and "m[tid]" in body
    rng = np.random.default_rng(2)
    _same(src, out, [rng.standard_normal(16).astype(np.float32), np.zeros(16, np.float32), 4, 4])


# the shape the lift gives a warp-level kernel (wmma): 2 x 8 threads, warps of 4; the per-thread
# row is written in a thread nest and read by lane 0 of each warp (tid = w * 4)
WARPS = r"""
extern "C" void k(const float *a, float *out, int n) {
  for (unsigned int bx = 0; bx < 2u; ++bx) {
    int row[16];
    for (unsigned int ty = 0; ty < 2u; ++ty) {
      for (unsigned int tx = 0; tx < 8u; ++tx) {
        const unsigned int tid = tx + 8u * (ty + 2u * 0u);
        row[tid] = (int) ((bx * 8u + tx) / 4u) * 3 + (int) ty;
      }
    }
    for (unsigned int w = 0; w < 4u; ++w) {
      const unsigned int tid = w * 4;
      const unsigned int wid = w;
      if (row[tid] < n)
        out[bx * 4u + wid] = a[row[tid]];
    }
  }
}
"""


def test_reads_in_warp_nests_recompute_the_thread_coordinates_from_tid():
    src = _prog(WARPS)
    out = run_pass("rematerialize", src)
    body = _body(out)
    assert "row[" not in body
    assert "((unsigned int) tid) % 8u" in body and "((unsigned int) tid) / 8u" in body
    rng = np.random.default_rng(0)
    _same(src, out, [rng.standard_normal(16).astype(np.float32), np.zeros(8, np.float32), 16])


@pytest.mark.parametrize("change", [
    # the reading nest's tid leaves the threads the writes cover (w * 8 reaches 24 >= 16)
    ("const unsigned int tid = w * 4;", "const unsigned int tid = w * 8;"),
    # the writing nest's tid is not the mixed-radix number of its loops
    ("const unsigned int tid = tx + 8u * (ty + 2u * 0u);",
     "const unsigned int tid = ty + 2u * tx;"),
])
def test_warp_reads_without_a_proven_thread_mapping_are_refused(change):
    _refused(_prog(WARPS.replace(*change)), "XP-REMAT-003")
