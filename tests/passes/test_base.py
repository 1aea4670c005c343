"""Pass registry contract: options are typed, legality runs before the rewrite, pipelines round-trip."""
import pytest

from passes.base import (REGISTRY, Option, PassInfo, PassRefused, format_pipeline, parse_pipeline,
                         register, run_pass)
from xpiler.ir.errors import Coord, Diagnostic


@pytest.fixture
def toy_pass():
    calls = []

    @register(PassInfo("toy_scale", "multiply a number", options={"factor": Option(int, 2, "how much")},
                       requires=("factor is positive",)))
    def toy(program, *, factor=2):
        calls.append(factor)
        return program * factor

    @toy.legality
    def _legal(program, *, factor=2):
        if factor <= 0:
            return [Diagnostic("XP-TOY-001", "factor must be positive", Coord("t", 1, 1))]
        return []

    yield toy, calls
    del REGISTRY["toy_scale"]


def test_run_pass_checks_legality_then_applies(toy_pass):
    toy, calls = toy_pass
    assert run_pass("toy_scale", 3, factor="4") == 12 and calls == [4]
    with pytest.raises(PassRefused) as exc:
        run_pass("toy_scale", 3, factor=-1)
    assert exc.value.diagnostics[0].code == "XP-TOY-001" and calls == [4]


def test_unknown_pass_and_option_are_refused(toy_pass):
    with pytest.raises(PassRefused, match="unknown pass"):
        run_pass("no_such_pass", 1)
    with pytest.raises(PassRefused, match="no option 'size'"):
        run_pass("toy_scale", 1, size=3)
    with pytest.raises(PassRefused, match="not a int"):
        run_pass("toy_scale", 1, factor="many")


@pytest.mark.parametrize("text", ["detensorize,split{factor=4},bind",
                                  "split{factor=4;inner=true},cache{space=nram}", "simplify"])
def test_pipeline_round_trip(text):
    steps = parse_pipeline(text)
    assert format_pipeline(steps) == text
    assert parse_pipeline(format_pipeline(steps)) == steps


def test_pipeline_values_are_typed_and_errors_clear():
    assert parse_pipeline("split{factor=4}, bind") == [("split", {"factor": 4}), ("bind", {})]
    with pytest.raises(PassRefused, match="bad pipeline"):
        parse_pipeline("split{factor=4")


# -- issue 15: applicability is not legality ---------------------------------------------------
@pytest.fixture
def planned_pass():
    """A toy pass whose check answers per program: 0 nothing to do (a not-applicable code),
    -1 a refusal, -2 both, otherwise a plan the rewrite consumes."""
    from dataclasses import dataclass

    @dataclass
    class Plan:
        double: int

    seen = {"checks": 0, "plans": []}

    @register(PassInfo("toy_plan", "double a number"))
    def toy(program, *, plan=None):
        seen["plans"].append(plan)
        if program == 7:
            return program                   # the rewrite may also find nothing: its input back
        if program == 8:
            raise PassRefused("toy: nothing", diagnostics=[Diagnostic("XP-DCE-002", "nothing to remove")])
        return plan.double if plan is not None else program * 2

    @toy.legality
    def _legal(program):
        seen["checks"] += 1
        if program in (0, -2):
            found = [Diagnostic("XP-INLINE-002", "the entry calls no helper")]
            return found + ([Diagnostic("XP-INLINE-003", "'f' cannot be inlined: recursive")]
                            if program == -2 else [])
        if program == -1:
            return [Diagnostic("XP-INLINE-003", "'f' cannot be inlined: recursive")]
        return Plan(program * 2)

    yield seen
    del REGISTRY["toy_plan"]


def test_nothing_to_do_returns_the_input_unchanged_without_applying(planned_pass):
    from passes.base import apply_pass

    out = apply_pass("toy_plan", 0)
    assert out.program == 0 and not out.changed and out.reason.code == "XP-INLINE-002"
    assert planned_pass["plans"] == []                       # the rewrite did not run
    assert run_pass("toy_plan", 0) == 0                      # run_pass: the input, no error


def test_a_refusal_is_raised_with_its_code_even_beside_a_not_applicable_one(planned_pass):
    for program in (-1, -2):
        with pytest.raises(PassRefused) as exc:
            run_pass("toy_plan", program)
        assert [d.code for d in exc.value.diagnostics] == ["XP-INLINE-003"]


def test_the_check_hands_its_plan_to_the_rewrite(planned_pass):
    from passes.base import apply_pass

    out = apply_pass("toy_plan", 5)
    assert out.changed and out.program == 10 and out.plan.double == 10
    assert planned_pass["checks"] == 1 and planned_pass["plans"] == [out.plan]   # analysed once


def test_a_rewrite_that_returns_its_input_or_raises_not_applicable_is_unchanged(planned_pass):
    from passes.base import apply_pass

    out = apply_pass("toy_plan", 7)
    assert not out.changed and out.program == 7 and out.reason is None
    out = apply_pass("toy_plan", 8)
    assert not out.changed and out.program == 8 and out.reason.code == "XP-DCE-002"


def test_a_rewrite_without_a_plan_parameter_is_called_as_before(toy_pass):
    from passes.base import apply_pass

    toy, calls = toy_pass
    assert apply_pass("toy_scale", 3, factor=2).program == 6 and calls == [2]


def test_not_applicable_codes_are_declared_in_the_table():
    import tomllib
    from pathlib import Path

    from passes.base import is_not_applicable, not_applicable_codes

    table = tomllib.loads((Path(__file__).resolve().parents[2] / "passes" / "diagnostics.toml").read_text())
    for code, entry in table.items():
        assert entry.get("applicability", True) is True, code       # only ever "= true"
    assert not_applicable_codes() == {c for c, e in table.items() if e.get("applicability")}
    # nothing to do ...
    for code in ("XP-INLINE-002", "XP-MCMAP-002", "XP-APIMAP-003", "XP-REORDER-009",
                 "XP-TENSORIZE-BANG-001", "XP-DCE-002", "XP-STD-001"):
        assert is_not_applicable(code), code
    # ... versus found something and judged the rewrite wrong, or asked for the impossible
    for code in ("XP-INLINE-003", "XP-APIMAP-001", "XP-APIMAP-002", "XP-MCMAP-003", "XP-SROA-003",
                 "XP-STD-002", "XP-LOOP-NORMALIZE-003", "XP-TENSORIZE-BANG-002", "XP-BIND-001",
                 "XP-REORDER-002", "XP-SPLIT-003"):
        assert not is_not_applicable(code), code
