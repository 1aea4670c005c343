"""array_copies: whole-array copies between local arrays removed (forward and backward)."""
from __future__ import annotations

import re
from pathlib import Path

import platforms
from passes.cleanup import array_copies  # noqa: F401  (registers the pass)
from passes.base import apply_pass, run_pass
from xpiler.parse import parse_source

DATA = Path(__file__).parent / "data"
HEAD = 'extern "C" void k(const float* x, float* o) {\n'


def _run(body: str):
    prog = parse_source(HEAD + body + "\n}\n", "vnni", "<t>.cpp")
    out = run_pass("array_copies", prog)
    return platforms.module("vnni", "backend").emit(out)


def _unchanged(body: str):
    """Nothing to do: the input comes back unchanged with the not-applicable code."""
    prog = parse_source(HEAD + body + "\n}\n", "vnni", "<t>.cpp")
    out = apply_pass("array_copies", prog)
    assert not out.changed and out.program is prog
    assert out.reason.code == "XP-ARRCOPY-002", out.reason.message


def _copy(dst, src, m="m"):
    return f"for (int {m} = 0; {m} < 16; ++{m}) {dst}[{m}] = {src}[{m}];"


def test_forward_then_backward_leave_one_accumulator():
    body = ("float acc[16];\n" + _copy("acc", "x") + "\n"
            "for (int i = 0; i < 4; ++i) {\n"
            "  float c[16]; " + _copy("c", "acc") + "\n"
            "  float d[16]; for (int j = 0; j < 16; ++j) d[j] = c[j] * 2.0f + x[j];\n"
            "  float r[16]; " + _copy("r", "d", "q") + "\n"
            "  " + _copy("acc", "r", "p") + "\n}\n" + _copy("o", "acc"))
    text = _run(body)
    assert "acc[j] = acc[j] * 2.0f + x[j];" in text
    for gone in ("c", "d", "r"):
        assert not re.search(rf"\b{gone}\[", text), text


def test_a_read_after_the_source_changes_keeps_the_copy():
    # forward would make the read of t see the new value of a
    _unchanged("float a[16]; " + _copy("a", "x") + " float t[16]; " + _copy("t", "a") +
               " a[3] = 0.0f; " + _copy("o", "t"))


def test_a_lane_loop_reading_another_lane_keeps_the_copy():
    # backward would overwrite a[15 - j] before the iteration that reads it
    _unchanged("float a[16]; " + _copy("a", "x") + " float d[16]; "
               "for (int j = 0; j < 16; ++j) d[j] = a[15 - j]; " + _copy("a", "d") +
               " " + _copy("o", "a"))


def test_escaping_or_resized_arrays_are_left_alone():
    _unchanged("float a[16]; " + _copy("a", "x") + " float t[16]; float *p = t; " +
               _copy("t", "a") + " " + _copy("o", "t") + " o[0] = p[0];")
    _unchanged("float a[32]; " + _copy("a", "x") + " float t[16]; " + _copy("t", "a") +
               " " + _copy("o", "t") + " o[0] = sizeof(t);")


def test_vnni_lanes_reach_the_gpu_as_few_kernels(tmp_path):
    from xpiler.translate import translate

    rep = translate(str(DATA / "lanes_dot.cpp"), "cuda", str(tmp_path / "lanes_dot.cu"))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert "array_copies" in rep.pipeline
    # zero, two loads, the fma, the store: 21 launches without the pass
    assert (tmp_path / "lanes_dot.cu").read_text().count("<<<") == 5
