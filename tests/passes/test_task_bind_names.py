"""task_bind: entry locals named like the host wrapper's own locals (d_P, queue) are renamed."""
from __future__ import annotations

import json

import pytest

import platforms
from passes.lower import task_bind  # noqa: F401  (registers the pass)
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_file

PASSES = (task_bind,)   # imported to register it

# an entry local d_x beside pointer parameter x (a device buffer devcopy left in place) and a
# local named queue: the wrapper declares float *d_x and cnrtQueue_t queue in the same block
SRC = """#include <stdint.h>
extern "C" void clash(const float* x, float* y) {
  float d_x[64];
  int queue = 3;
  for (int i = 0; i < 64; ++i)
    d_x[i] = x[i] * 2.0f;
  for (int i = 0; i < 64; ++i)
    y[i] = d_x[63 - i] + d_x[i] + (float) queue;
}
"""


def _case(tmp_path, src=SRC, name="clash"):
    p = tmp_path / f"{name}.cpp"
    p.write_text(src)
    (tmp_path / f"{name}.json").write_text(json.dumps({"args": {"x": "random:64", "y": "random:64"}}))
    return p


def test_clashing_entry_locals_are_renamed_and_verified(tmp_path):
    from xpiler.parse import parse_source
    from xpiler.run import run_kernel
    from xpiler.translate import _copy, _inputs, _verify
    from xpiler.verify import compare_arrays

    src = _case(tmp_path)
    prog = parse_file(src)
    out = run_pass("task_bind", prog)
    text = platforms.module("bang", "backend").emit(out)
    host = text.split('extern "C"')[1]
    assert host.count("float *d_x = 0;") == 1 and "float d_x[" not in host
    assert "float d_x_h[64];" in host and "int queue_h = 3;" in host
    args, how, _ = _inputs(prog, src, {}, None, 0, False)
    assert args is not None, how
    reference = _copy(args)
    run_kernel(src, args=reference, program=prog, timeout=60)
    ok, outputs, message = _verify(text, out, tmp_path / "clash.mlu", prog, args, reference,
                                   True, 60, run_kernel, parse_source, compare_arrays)
    assert ok, (message, outputs)


def test_clash_with_a_file_scope_name_is_refused(tmp_path):
    src = SRC.replace('extern "C"', "float d_y[4];\nextern \"C\"").replace(
        "(float) queue;", "(float) queue + d_y[0];")
    prog = parse_file(_case(tmp_path, src, "clash_global"))
    with pytest.raises(PassRefused) as exc:
        run_pass("task_bind", prog)
    assert [d.code for d in exc.value.diagnostics] == ["XP-TASK-BIND-006"]
    assert "d_y" in exc.value.diagnostics[0].message
