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
