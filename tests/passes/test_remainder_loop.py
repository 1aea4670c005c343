"""remainder_loop: do { if (N < C) {tail; N = 0;} else {full; N -= C;} } while (N) -> a counted
loop of the full iterations and the remainder iteration after it."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.analysis import affine
from passes.base import apply_pass
from passes.cleanup import goto_loop, remainder_loop  # noqa: F401  (register the passes)
from xpiler.parse import parse_source
from xpiler.run import run_kernel

# the simsimd shape after goto_loop: a count walked down by 4, the output pointer stepped in
# the body, the input in the full branch only, a carried accumulator and a loop-carried mask
SUM = """
typedef unsigned long long size_type;
extern "C" void sum4(const float *x, int n, float *out, float *run) {
  size_type count = (size_type) n;
  long long xo = 0;
  long long ro = 0;
  float acc = 0.0f;
  unsigned mask = 15u;
  do {
    float v[4];
    if (count < 4) {
      mask = (1u << count) - 1u;
      for (int j = 0; j < 4; ++j) v[j] = (j < (int) count) ? x[xo + j] : 0.0f;
      count = 0;
    } else {
      for (int j = 0; j < 4; ++j) v[j] = x[xo + j];
      xo += 4, count -= 4;
    }
    for (int j = 0; j < 4; ++j) { acc += v[j]; if (mask >> j & 1) run[ro + j] = acc; }
    ro += 4;
  } while (count);
  *out = acc + (float) ro;
}
"""


def _emit(program) -> str:
    return platforms.module(program.platform, "backend").emit(program)


@pytest.mark.parametrize("n", [0, 1, 4, 7, 8, 13])
def test_runs_the_same_for_every_remainder(tmp_path, n):
    prog = parse_source(SUM, "vnni", "s.cpp")
    out = apply_pass("remainder_loop", prog)
    assert out.changed
    text = _emit(out.program)
    assert "while (count)" not in text and "__xp_n0 % 4" in text
    src, dst = tmp_path / "s.cpp", tmp_path / "d.cpp"
    src.write_text(SUM)
    dst.write_text(text)
    rng = np.random.default_rng(n)
    x = rng.standard_normal(max(n, 1)).astype(np.float32)
    size = 4 * max((n + 3) // 4, 1)
    want = [np.zeros(1, np.float32), np.full(size, -1, np.float32)]
    got = [np.zeros(1, np.float32), np.full(size, -1, np.float32)]
    run_kernel(src, args=[x.copy(), n, *want])
    run_kernel(dst, args=[x.copy(), n, *got], source=text)
    np.testing.assert_array_equal(want[0], got[0])
    np.testing.assert_array_equal(want[1], got[1])


def test_the_loop_becomes_countable():
    """Before: the elements of x the do-while reads are not computable; after: n."""
    prog = parse_source(SUM, "vnni", "s.cpp")
    before = affine.extents(affine.analyze(prog))
    after = affine.extents(affine.analyze(apply_pass("remainder_loop", prog).program))
    assert before["x"] is None
    assert after["x"] is not None


@pytest.mark.parametrize("body, why", [
    ("do { if (n < 4) { n = 0; } else { n -= 4; } } while (n);", "fine: the bare shape"),
    ("do { if (n < 4) { n = 0; } else { n -= 3; } } while (n);", "a step other than the width"),
    ("do { if (n < 4) { n = 0; } else { n -= 4; } if (*out) break; } while (n);", "a break"),
    ("do { if (n < 4) { n = 0; } else { n -= 4; p = p * 2; p += 4; } } while (n);",
     "a stepped variable also written otherwise"),
    ("do { if (n < 4) { n = 0; } else { n -= 4; p += 2; } } while (n);",
     "a step that is not a multiple of the width"),
    ("do { if (m < 4) { m = 0; } else { m -= 4; } } while (m);", "a signed count"),
])
def test_what_is_left_alone(body, why):
    text = ('extern "C" void f(unsigned n, int m, long long p, unsigned *out) '
            f'{{ {body} *out = (unsigned) p; }}\n')
    out = apply_pass("remainder_loop", parse_source(text, "vnni", "f.cpp"))
    assert out.changed == why.startswith("fine"), why
    if not out.changed:
        assert out.reason.code == "XP-REMAINDER-LOOP-002"
