"""passes/cleanup/localize.py: the reason given for entries whose scratch is already function-scope."""
from __future__ import annotations

import pytest

from passes.cleanup import localize  # noqa: F401  (registers the pass)
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source


def test_function_scope_static_arrays_are_named_in_the_reason():
    src = ('extern "C" void k(const float* x, float* out) {\n'
           '  static float q[8];\n'
           '  for (int i = 0; i < 8; ++i) q[i] = x[i];\n'
           '  for (int i = 0; i < 8; ++i) out[i] = q[7 - i];\n'
           '}\n')
    from passes.base import apply_pass

    prog = parse_source(src, "vnni", "<t>.cpp")
    out = apply_pass("localize", prog)               # nothing to do: the input, unchanged
    assert not out.changed and out.program is prog
    d = out.reason
    assert d.code == "XP-LOCALIZE-002"
    assert "static arrays q are already local" in d.message
