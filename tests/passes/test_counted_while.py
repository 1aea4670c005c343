"""passes/cleanup/counted_while.py: while loops over integers stepped by constants -> counted
for loops with closed-form values, checked on the virtual device; nothing to do otherwise."""
from __future__ import annotations

import numpy as np

import platforms
from passes.base import apply_pass, run_pass
from passes.cleanup import counted_while  # noqa: F401  (registers the pass)
from xpiler.parse import parse_source
from xpiler.run import run_kernel

# hnswlib's shape after pointer_offsets: two offsets stepped by 16, an end offset, a tail
SRC = r"""
extern "C" void dot(const float *a, const float *b, int dim, float *out) {
  long long oa = 0;
  long long ob = 0;
  long long end = oa + ((dim >> 4) << 4);
  float acc = 0.0f;
  while (oa < end) {
    for (int j = 0; j < 16; ++j) acc += a[oa + j] * b[ob + j];
    oa += 16;
    out[1 + (ob >> 4)] = a[oa - 1];
    ob += 16;
  }
  out[0] = acc + (float) oa + (float) ob;
}
"""


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _run(p, dim):
    rng = np.random.default_rng(dim)
    a, b = rng.random(dim, dtype=np.float32), rng.random(dim, dtype=np.float32)
    out = np.zeros(1 + dim // 16 + 1, np.float32)
    run_kernel("k.cpp", args=[a, b, dim, out], source=_emit(p), program=p)
    return out


def test_stepped_offsets_become_closed_forms_with_the_same_outputs():
    src = parse_source(SRC, "vnni", "k.cpp")
    out = run_pass("counted_while", src)
    text = _emit(out)
    assert "while" not in text and "for (long long __xp_k1 = 0;" in text
    assert "oa += 16" not in text and "ob += 16" not in text
    for dim in (0, 5, 16, 40, 64):                 # no iteration, one, several
        np.testing.assert_array_equal(_run(src, dim), _run(out, dim))


def test_a_loop_that_leaves_early_is_left_alone():
    # (a variable stepped several times per iteration is converted: test_vnni_size_classes.py)
    for body in ("if (a[o] > 0.5f) break; o += 4;", "o += 4; if (o > 8) return;",
                 "o += 4; o = o + 1;"):
        text = ('extern "C" void k(const float *a, float *out, int n) { long long o = 0; '
                f'while (o < n) {{ out[0] += a[0]; {body} }} out[1] = (float) o; }}')
        got = apply_pass("counted_while", parse_source(text, "vnni", "k.cpp"))
        assert not got.changed and got.reason.code == "XP-COUNTED-WHILE-002", body
