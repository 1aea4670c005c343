"""Declared extents: a case file's constant shapes reach the device lowering (loop_bind's
``extents`` option) where the analysis cannot bound a pointer (data-dependent subscripts)."""
from __future__ import annotations

import json

import pytest

import platforms
from passes.lower import loop_bind
from passes.base import PassRefused, parse_pipeline, format_pipeline, run_pass
from xpiler.parse import parse_source

GATHER = ('extern "C" void gather_rows(const float* data, const int* idx, float* out) {\n'
          '  for (int k = 0; k < 8; ++k)\n'
          '    for (int j = 0; j < 4; ++j)\n'
          '      out[k * 4 + j] = data[idx[k] * 4 + j];\n'
          '}\n')


def _case(tmp_path, rows=16):
    src = tmp_path / "gather_rows.cpp"
    src.write_text(GATHER)
    case = {"op": "gather", "name": "gather_rows", "platform": "vnni", "file": src.name,
            "entry": "gather_rows", "args": [rows, 4], "axis": 0, "mode": "take", "num_indices": 8,
            "params": [
                {"name": "data", "tensor": "data", "dtype": "float32", "role": "input", "shape": [rows, 4]},
                {"name": "idx", "tensor": "indices", "dtype": "int32", "role": "input", "shape": [8]},
                {"name": "out", "tensor": "out", "dtype": "float32", "role": "output", "shape": [8, 4]}]}
    (tmp_path / "gather_rows.json").write_text(json.dumps(case))
    return src


def test_parse_extents_and_its_errors():
    assert loop_bind.parse_extents("data:64 idx:8") == {"data": "64", "idx": "8"}
    assert loop_bind.parse_extents("") == {}
    for bad in ("data", "data:x", "1a:3", "data:-1"):
        with pytest.raises(ValueError):
            loop_bind.parse_extents(bad)


def test_pipeline_spelling_round_trips():
    steps = [("loop_bind", {"to": "cuda", "extents": "data:64 idx:8 out:32"})]
    assert parse_pipeline(format_pipeline(steps)) == steps


def test_data_dependent_subscript_needs_the_declared_extent():
    prog = parse_source(GATHER, "vnni", "<t>.cpp")
    with pytest.raises(PassRefused) as exc:
        run_pass("loop_bind", prog, to="cuda")
    assert "XP-BIND-002" in exc.value.render()
    with pytest.raises(PassRefused) as exc:               # only pointer parameters
        run_pass("loop_bind", prog, to="cuda", extents="nosuch:4")
    assert "not a pointer parameter" in exc.value.render()
    out = run_pass("loop_bind", prog, to="cuda", extents="data:64 idx:8 out:32")
    text = platforms.module("cuda", "backend").emit(out)
    assert "64 * sizeof(float)" in text.replace("(64)", "64")   # data copied with its declared size
    assert len(out.kernels) == 1


def test_driver_hands_case_shapes_to_the_lowering_and_verifies(tmp_path):
    from xpiler.translate import translate

    src = _case(tmp_path)
    rep = translate(str(src), "cuda", str(tmp_path / "out.cu"))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert "loop_bind{extents=data:64 idx:8 out:32;" in rep.pipeline and "to=cuda}" in rep.pipeline


def test_declared_extents_only_for_constant_interfaces(tmp_path):
    """Only a case file of an entry without scalar parameters declares constant extents; --arg
    inputs or scalar-dependent shapes give none (the analysis or host code must size those)."""
    from xpiler.translate import _declared_extents
    from xpiler.parse import parse_file

    src = _case(tmp_path, rows=16)
    prog = parse_file(src)
    assert _declared_extents(prog, src, None, {}) == "data:64 idx:8 out:32"
    assert _declared_extents(prog, src, None, {"data": "x"}) == ""   # --arg given: no case
    scalar = parse_source(GATHER.replace("float* out)", "float* out, int n)"), "vnni", "<t>.cpp")
    assert _declared_extents(scalar, src, None, {}) == ""            # shapes depend on n


def test_task_bind_takes_declared_extents_too():
    from passes.lower import task_bind  # noqa: F401  (registers the pass)
    from passes.base import REGISTRY

    prog = parse_source(GATHER, "vnni", "<t>.cpp")

    def check(prog, **options):        # the diagnostics, or none where the check hands a plan
        got = REGISTRY["task_bind"].check(prog, **options)
        return got if isinstance(got, list) else []

    assert any(d.code == "XP-TASK-BIND-002" for d in check(prog))
    assert any("name:count" in d.message for d in check(prog, extents="data"))
    assert not [d for d in check(prog, extents="data:64 idx:8 out:32") if d.code == "XP-TASK-BIND-002"]
