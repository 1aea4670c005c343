"""passes/cleanup/localize.py: refusal messages for entries whose scratch is already function-scope."""
from __future__ import annotations

import pytest

from passes.cleanup import localize  # noqa: F401  (registers the pass)
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source


def test_function_scope_static_arrays_are_named_in_the_refusal():
    src = ('extern "C" void k(const float* x, float* out) {\n'
           '  static float q[8];\n'
           '  for (int i = 0; i < 8; ++i) q[i] = x[i];\n'
           '  for (int i = 0; i < 8; ++i) out[i] = q[7 - i];\n'
           '}\n')
    with pytest.raises(PassRefused) as exc:
        run_pass("localize", parse_source(src, "vnni", "<t>.cpp"))
    d = exc.value.diagnostics[0]
    assert d.code == "XP-LOCALIZE-002"
    assert "static arrays q are already local" in d.message
