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


def test_expression_trees_become_chains_in_the_destination():
    """``x * a + b``, ``a * x + y`` and relu of ``(x + y) * 0.5f`` through a float temporary:
    one instruction per operation, each result left in the destination slice for the next
    (task_bind's staging buffers are disjoint regions: no overlap test). A destination read
    again after the first instruction rewrote it stays a scalar loop."""
    out, text = _tensorize("chains")
    assert out.facts["tensorize_bang"]["intrinsics"] == {
        "__bang_active_relu": 1, "__bang_add": 2, "__bang_add_scalar": 1, "__bang_mul_scalar": 3}
    ss = "__xp_ss_n + -__xp_w0_ss + __xp_b"
    assert f"__bang_mul_scalar({ss}, __xp_x_n + -__xp_w0_x + __xp_b, (float) a, " in text
    assert f"__bang_add_scalar({ss}, {ss}, (float) b, " in text
    rs = "__xp_rs_n + -__xp_w0_rs + __xp_b"
    assert f"__bang_mul_scalar({rs}, {rs}, (float) 0.5f, " in text
    assert f"__bang_active_relu({rs}, {rs}, " in text
    k3 = text[text.index("chains_kernel_k3("):]
    assert "__bang_" not in k3.split("extern")[0]
    assert "<=" not in text.split("chains_kernel_k3(")[0].split("chains_kernel_k1(")[1]


def test_an_operand_read_after_the_first_instruction_is_tested_for_overlap():
    """Without task_bind's regions (pointers into one pool the pass cannot separate), ``d =
    a * x + y`` is guarded: the chain runs when y's slice does not overlap d's, the original
    loop otherwise."""
    import dataclasses

    prog = _bang("chains")
    facts = dict(prog.facts)
    facts["task_bind"] = {k: v for k, v in facts["task_bind"].items() if k != "nram_buffers"}
    out = run_pass("tensorize_bang", dataclasses.replace(prog, facts=facts))
    text = platforms.module("bang", "backend").emit(out)
    k1 = text[text.index("chains_kernel_k1("):text.index("chains_kernel_k2(")]
    assert "__xp_y_n + -__xp_w0_y + __xp_b + ((unsigned int) (__xp_b + __xp_c - __xp_b)) <= " \
           "__xp_axpy_n + -__xp_w0_axpy + __xp_b ||" in k1
    assert "else\n" in k1 and "__xp_axpy_n[i - __xp_w0_axpy] = a * __xp_x_n[" in k1


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


@pytest.mark.parametrize("name", ["add", "rowsum128", "chains"])
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
