"""passes/plans.toml: plans are data, composed per direction; passes are found by registration."""
import json

import pytest
from click.testing import CliRunner

from passes.base import REGISTRY, parse_pipeline
from passes.plans import PLANS, STAGES, candidates, compose, load_passes, pass_modules, plan_data, stage_of

PLATFORMS = ("cuda", "hip", "bang", "vnni")
STAGE_FOLDERS = {"analysis", "lift", "cleanup", "lower", "tensorize", "finish", "schedule", "map"}


def _alts(p):
    return [p] if isinstance(p, str) else p


def test_twelve_directions_each_step_a_registered_pass():
    load_passes()
    assert set(PLANS) == {(a, b) for a in PLATFORMS for b in PLATFORMS if a != b}
    for key, plan in PLANS.items():
        for text in _alts(plan):
            steps = parse_pipeline(text)
            assert steps, key
            for name, opts in steps:
                assert name in REGISTRY, (key, name)
                assert set(opts) <= set(REGISTRY[name].info.options), (key, name, opts)


def test_composed_in_stage_order():
    """Every composed candidate is lift + cleanup + lower + tensorize + finish (or one map route)."""
    load_passes()
    rank = {"map": 0, "lift": 1, "cleanup": 2, "lower": 3, "tensorize": 4, "finish": 5}
    for key, direction in plan_data()["direction"].items():
        for text in candidates(direction):
            stages = [stage_of(name) for name, _ in parse_pipeline(text)]
            if stages[0] == "map":
                assert stages == ["map"], (key, text)
                continue
            assert stages[0] == "lift", (key, text)
            assert stages == sorted(stages, key=rank.__getitem__), (key, stages)


def test_alternatives_multiply_in_order():
    data = {"lift": {"l": "a"}, "cleanup": {"c": ""}, "lower": {"x": ["b{k=1}", "b"]},
            "tensorize": {"t": "z"}, "map": {"m": ["m1", "m2"]},
            "direction": {"p->q": {"map": "m", "lift": "l", "cleanup": "c", "lower": "x", "tensorize": "t"}}}
    assert compose(data)[("p", "q")] == ["m1", "m2", "a,b{k=1},z", "a,b,z"]
    data["direction"]["p->q"]["bogus"] = "l"
    with pytest.raises(ValueError, match="unknown stage"):
        compose(data)


def test_every_pass_lives_in_a_stage_folder():
    load_passes()
    for name in REGISTRY:
        module = REGISTRY[name].apply.__module__
        if not module.startswith("passes."):
            continue          # passes registered by tests
        assert stage_of(name) in STAGE_FOLDERS - {"analysis"}, (name, module)
    assert all(m.split(".")[1] in STAGE_FOLDERS | {"base", "canon", "plans"} for m in pass_modules())


def test_cli_passes_lists_stages_and_plans():
    from xpiler.cli import cli

    res = CliRunner().invoke(cli, ["passes", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["passes"]["loop_bind"]["stage"] == "lower"
    assert data["passes"]["loop_recovery"]["stage"] == "lift"
    assert data["plans"]["cuda->vnni"] == "loop_recovery,host_heap"
    assert data["passes"]["host_heap"]["stage"] == "finish"
    res = CliRunner().invoke(cli, ["passes"])
    assert res.exit_code == 0 and "vnni -> cuda (alternative 2):" in res.output
