"""loop_bind: entry locals named like the CUDA / HIP host wrapper's device buffers (d_P of a
pointer parameter P) are renamed, not declared twice; a clash it cannot rename is refused."""
from __future__ import annotations

import pytest

from passes.lower import loop_bind  # noqa: F401  (registers the pass)
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.argspec import parse_arg_specs
from xpiler.translate import translate

PASSES = (loop_bind,)   # imported to register it

SRC = """extern "C" void scale(const float *x, float *out, int n) {
  float d_x = 2.0f;
  if (n > 1000) d_x = 3.0f;   // two definitions: const_prop keeps the local
  for (int i = 0; i < n; ++i) out[i] = x[i] * d_x;
}
"""
ARGS = ("x=random:100", "out=zeros:100", "n=100")


@pytest.mark.parametrize("to", ["cuda", "hip"])
def test_clashing_entry_local_is_renamed_and_verified(tmp_path, to):
    src = tmp_path / "scale.cpp"
    src.write_text(SRC)
    out = tmp_path / f"scale.{'cu' if to == 'cuda' else 'hip'}"
    report = translate(str(src), to, str(out), arg_specs=parse_arg_specs(ARGS))
    assert report.status == "verified", report.message
    text = out.read_text()
    assert text.count("float *d_x = 0;") == 1 and "float d_x_h = 2.0f;" in text


def test_clash_with_a_file_scope_name_is_refused():
    prog = parse_source("float d_out[4];\n" + SRC.replace("* d_x;", "* d_x + d_out[0];"), "vnni", "t.cpp")
    with pytest.raises(PassRefused) as exc:
        run_pass("loop_bind", prog)
    assert exc.value.diagnostics[0].code == "XP-BIND-003"
    assert "d_out" in exc.value.diagnostics[0].message


SCALAR_SRC = """extern "C" void scaled(const float *x, float *out, int n) {
  float t[4];
  for (int i = 0; i < 4; ++i) t[i] = x[i] * 2.0f;
  float s = t[0] + t[3];
  for (int i = 0; i < n; ++i) out[i] = x[i] * s;
  out[0] += s;
}
"""


@pytest.mark.parametrize("to", ["cuda"])
def test_a_scalar_device_code_computes_becomes_a_device_buffer(tmp_path, to):
    """'s' is computed from device data and read by later device code: loop_bind keeps it in
    a one-element device buffer instead of refusing (XP-BIND-003 before)."""
    src = tmp_path / "scaled.cpp"
    src.write_text(SCALAR_SRC)
    out = tmp_path / "scaled.cu"
    report = translate(str(src), to, str(out),
                       arg_specs=parse_arg_specs(("x=random:64", "out=zeros:64", "n=64")))
    assert report.status == "verified", report.message
    text = out.read_text()
    assert "float s[1];" in text and "s[0]" in text
