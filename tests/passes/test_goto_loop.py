"""goto_loop: a label and a later ``if (c) goto label;`` in its block -> ``do { } while (c)``."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.base import apply_pass
from passes.cleanup import goto_loop  # noqa: F401  (registers the pass)
from xpiler.parse import parse_source
from xpiler.run import run_kernel

SUM = """
extern "C" void sum(const float *x, unsigned long long n, float *out) {
  float acc = 0.0f;
cycle:
  if (n < 4) { for (unsigned long long i = 0; i < n; ++i) acc += x[i]; n = 0; }
  else { acc += x[0] + x[1] + x[2] + x[3]; x += 4; n -= 4; }
  if (n) goto cycle;
  *out = acc;
}
"""


def _emit(program) -> str:
    return platforms.module(program.platform, "backend").emit(program)


def test_backward_goto_becomes_do_while_and_runs_the_same(tmp_path):
    prog = parse_source(SUM, "vnni", "s.cpp")
    out = apply_pass("goto_loop", prog)
    assert out.changed
    text = _emit(out.program)
    assert "goto" not in text and "cycle" not in text and "while (n);" in text
    src, dst = tmp_path / "s.cpp", tmp_path / "d.cpp"
    src.write_text(SUM)
    dst.write_text(text)
    x = np.random.default_rng(1).standard_normal(23).astype(np.float32)
    want, got = np.zeros(1, np.float32), np.zeros(1, np.float32)
    run_kernel(src, args=[x.copy(), 23, want])
    run_kernel(dst, args=[x.copy(), 23, got], source=text)
    assert want[0] == got[0]


@pytest.mark.parametrize("body, why", [
    ("for (;;) { L: n--; if (n == 3) break; if (n) goto L; }", "a break of the enclosing loop"),
    ("L: { unsigned t = n; n = t - 1; } if (n) goto L; unsigned t = 2; *out = t;", "fine: t in a nested block"),
    ("L: int t = n; n--; if (n) goto L; *out = t;", "a declaration used after the jump"),
    ("L: n--; if (n > 5) goto L; if (n) goto L;", "two gotos"),
])
def test_what_is_left_alone(body, why):
    text = f'extern "C" void f(unsigned n, unsigned *out) {{ {body} }}\n'
    out = apply_pass("goto_loop", parse_source(text, "vnni", "f.cpp"))
    assert out.changed == why.startswith("fine"), why
    if not out.changed:
        assert out.reason.code == "XP-GOTO-LOOP-002"
