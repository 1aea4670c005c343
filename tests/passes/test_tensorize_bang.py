"""passes/tensorize/tensorize_bang.py: description-driven matching, golden rewrites, refusals, strict runs."""
from __future__ import annotations

from pathlib import Path

import pytest

import platforms
from passes.lower import task_bind  # noqa: F401  (register the passes)
from passes.tensorize import tensorize_bang
from passes.tensorize.bang_match import eligible, patterns
from passes.base import PassRefused, run_pass
from platforms.bang.intrinsics import load
from xpiler.parse import parse_file

DATA = Path(__file__).parent / "data_bang"


def _bang(name: str):
    return run_pass("task_bind", parse_file(DATA / f"{name}.cpp"))


def _tensorize(name: str, **opts):
    out = run_pass("tensorize_bang", _bang(name), **opts)
    return out, platforms.module("bang", "backend").emit(out)


def test_patterns_come_from_the_descriptions():
    names = {p.name for p in patterns(3)}
    assert {"__bang_add", "__bang_sub", "__bang_mul", "__bang_add_scalar", "__bang_mul_scalar",
            "__bang_relu", "__bang_active_relu"} <= names
    # clamped / table / Taylor approximations are never used for an exact loop
    assert not names & {"__bang_active_exp", "__bang_active_sigmoid", "__bang_active_gelu",
                        "__bang_taylor3_sigmoid", "__bang_active_recip"}
    assert "__bang_add_const" not in names                   # deprecated name
    assert "__bang_div" not in names                          # not on mtp_372 (a rule)
    assert "__bang_maximum" not in names                      # >= 520
    # 2xx: every vector op has 128-byte / 64-byte-alignment rules the pass does not prove
    assert patterns(2) == []
    add = next(e for e in load() if e["name"] == "__bang_add")
    assert eligible(add, 3) == "vec_binary" and eligible(add, 2) is None


def test_elementwise_golden():
    out, text = _tensorize("add")
    assert "__bang_add(__xp_out_n + -__xp_w0_out + __xp_b, __xp_x_n + -__xp_w0_x + __xp_b, " \
           "__xp_y_n + -__xp_w0_y + __xp_b, (unsigned int) (__xp_b + __xp_c - __xp_b))" in text
    assert "if ((__xp_b + __xp_c) > __xp_b)" in text.replace("((__xp_b + __xp_c) > __xp_b)",
                                                             "((__xp_b + __xp_c) > __xp_b)") or \
        "if (__xp_b + __xp_c > __xp_b)" in text
    assert out.facts["tensorize_bang"]["intrinsics"] == {"__bang_add": 1}


def test_reduction_and_scalar_form():
    out, text = _tensorize("rowsum128")
    assert "__nram__ float __xp_red[128];" in text
    assert "__bang_reduce_sum(__xp_red, __xp_x_n + (-__xp_w0_x + 128 * i) + 0, 128)" in text
    assert "__xp_k += 32" in text                             # one sum per 128-byte chunk
    assert "__bang_mul_scalar(" in text and "(float) 0.5f" in text
    assert out.facts["tensorize_bang"]["intrinsics"] == {"__bang_mul_scalar": 1,
                                                        "__bang_reduce_sum": 1}


def test_relu_matches_but_sigmoid_does_not():
    out, text = _tensorize("relu_sigmoid")
    assert set(out.facts["tensorize_bang"]["intrinsics"]) == {"__bang_active_relu"}
    assert "expf(" in text and "sigmoid" not in text          # the sigmoid loop stays scalar


def test_nothing_to_match_is_not_applicable():
    from passes.base import apply_pass

    for name in ("sigmoid", "gemm"):                          # gemm: dot products, no vector loop
        prog = _bang(name)
        out = apply_pass("tensorize_bang", prog)             # the input, unchanged
        assert not out.changed and out.program is prog
        assert out.reason.code == "XP-TENSORIZE-BANG-001"


def test_non_bang_program_is_refused():
    with pytest.raises(PassRefused) as exc:
        run_pass("tensorize_bang", parse_file(DATA / "add.cpp"))
    assert exc.value.diagnostics[0].code == "XP-TENSORIZE-BANG-002"


def test_2xx_profile_uses_no_element_wise_intrinsic():
    # mtp_290: vector ops need 128-byte multiples and 64-byte addresses the pass cannot prove:
    # no description is eligible, so nothing matches (not applicable, the input unchanged)
    prog = _bang("add")
    assert run_pass("tensorize_bang", prog, profile="mtp_290") is prog


def _translate(name: str, tmp_path):
    from xpiler.translate import translate

    return translate(str(DATA / f"{name}.cpp"), "bang", str(tmp_path / f"{name}.mlu"))


@pytest.mark.parametrize("name", ["add", "rowsum128"])
def test_strict_mode_round_trip(name, tmp_path):
    rep = _translate(name, tmp_path)
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert [s.status for s in rep.steps if s.name == "tensorize_bang"] == ["verified"]
    assert "__bang_" in (tmp_path / f"{name}.mlu").read_text()


@pytest.mark.slow
def test_strict_mode_round_trip_relu(tmp_path):
    rep = _translate("relu_sigmoid", tmp_path)
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert "__bang_active_relu" in (tmp_path / "relu_sigmoid.mlu").read_text()
