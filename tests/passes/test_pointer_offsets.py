"""pointer_offsets: pointers advanced by steps -> the pointer at an integer offset."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.base import apply_pass, run_pass
from passes.cleanup import goto_loop, pointer_offsets  # noqa: F401  (register the passes)
from xpiler.parse import parse_source
from xpiler.run import run_kernel

WALK = """
static float part(const float *p, int k) { float s = 0.0f; for (int i = 0; i < k; ++i) s += p[i]; return s; }
extern "C" void sums(const float *x, float *out, int blocks) {
  for (int b = 0; b < blocks; ++b) {
    *out = part(x, 4) + *x;
    x += 4, out++;
  }
}
"""


def test_advanced_pointers_become_offsets_and_run_the_same(tmp_path):
    prog = parse_source(WALK, "vnni", "w.cpp")
    out = apply_pass("pointer_offsets", prog)
    assert out.changed
    text = platforms.module("vnni", "backend").emit(out.program)
    assert "__xp_off_x += 4, __xp_off_out += 1;" in text and "part(x + __xp_off_x, 4)" in text
    assert "out[__xp_off_out] = " in text
    src, dst = tmp_path / "w.cpp", tmp_path / "d.cpp"
    src.write_text(WALK)
    dst.write_text(text)
    x = np.random.default_rng(3).standard_normal(40).astype(np.float32)
    want, got = np.zeros(10, np.float32), np.zeros(10, np.float32)
    run_kernel(src, args=[x.copy(), want, 10])
    run_kernel(dst, args=[x.copy(), got, 10], source=text)
    np.testing.assert_array_equal(got, want)


def test_an_inlined_helpers_pointer_local_is_rewritten_too():
    text = ('extern "C" void f(const float *x, float *y, int n) {\n'
            '  const float *p = x;\n  for (int i = 0; i < n; ++i) { y[i] = *p; p += 2; }\n}\n')
    out = run_pass("pointer_offsets", parse_source(text, "vnni", "f.cpp"))
    emitted = platforms.module("vnni", "backend").emit(out)
    assert "long long __xp_off_p = 0;" in emitted and "y[i] = p[__xp_off_p];" in emitted


@pytest.mark.parametrize("body", [
    "float **q = &x; y[0] = **q; x += 1;",          # the address escapes
    "x = y; y[0] = x[0];",                           # reassigned, not stepped
    "y[0] = *(x += 1);",                             # the step's value is used
    "y[0] = x[0];",                                  # never changed: nothing to do
])
def test_what_is_left_alone(body):
    text = f'extern "C" void f(float *x, float *y) {{ {body} }}\n'
    out = apply_pass("pointer_offsets", parse_source(text, "vnni", "f.cpp"))
    assert not out.changed and out.reason.code == "XP-POINTER-OFFSETS-002"


PER_THREAD = """
extern "C" void rows(const float *x, float *y, int ncols, int nrows) {
  for (int r = 0; r < nrows; ++r) {
    const float *xs[4];
    float *ys[4];
    float acc[4];
    for (int t = 0; t < 4; ++t) {
      xs[t] = (const float *) x;
      ys[t] = y;
      xs[t] += r * ncols;
      ys[t] = ys[t] + r * ncols;
      acc[t] = 0.0f;
      for (int c = t; c < ncols; c += 4) acc[t] += xs[t][c];
    }
    for (int t = 0; t < 4; ++t)
      for (int c = t; c < ncols; c += 4) ys[t][c] = *xs[t] + acc[t];
  }
}
"""


def test_per_thread_pointer_arrays_become_offset_arrays(tmp_path):
    """The GPU lift keeps a kernel's advanced pointer parameter per simulated thread
    (ggml norm: ``x[tid] = x_param; x[tid] += row * stride;`` across a barrier): an array of
    pointers holding one base becomes an array of offsets into that base."""
    prog = parse_source(PER_THREAD, "vnni", "p.cpp")
    out = apply_pass("pointer_offsets", prog)
    assert out.changed
    text = platforms.module("vnni", "backend").emit(out.program)
    assert "long long __xp_off_xs[4];" in text and "x[__xp_off_xs[t] + c]" in text
    assert "y[__xp_off_ys[t] + c] = x[__xp_off_xs[t]] + acc[t];" in text
    assert "*xs" not in text and "*ys" not in text
    src, dst = tmp_path / "p.cpp", tmp_path / "d.cpp"
    src.write_text(PER_THREAD)
    dst.write_text(text)
    x = np.random.default_rng(5).standard_normal(48).astype(np.float32)
    want, got = np.zeros(48, np.float32), np.zeros(48, np.float32)
    run_kernel(src, args=[x.copy(), want, 16, 3])
    run_kernel(dst, args=[x.copy(), got, 16, 3], source=text)
    np.testing.assert_array_equal(got, want)


def test_a_pointer_array_with_two_bases_is_left_alone():
    text = PER_THREAD.replace("ys[t] = y;", "ys[t] = (t & 1) ? y : y;").replace(
        "xs[t] = (const float *) x;", "xs[t] = (const float *) x; if (t) xs[t] = (const float *) y;")
    out = apply_pass("pointer_offsets", parse_source(text, "vnni", "p.cpp"))
    assert not out.changed
