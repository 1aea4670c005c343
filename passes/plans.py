"""Translation plans, composed from ``passes/plans.toml``; passes discovered by registration.

A plan is ``lift[source] + cleanup + lower[target] + tensorize[target] + finish``, each piece
named in the stage tables of ``plans.toml`` (``finish``: rewrites of the final program's host
code, after every other stage); a direction may also list structure-preserving ``map``
routes, tried first. A piece that is a list holds alternatives: the direction's candidate
pipelines are their product, in order (``candidates``).

``PLANS`` maps ``(source, target)`` to the composed candidates as pipeline strings (a string
when there is one) — the table the driver, ``xpiler passes``, ``docs/passes.md`` and the tests
read. ``load_passes()`` imports every module under ``passes/`` so that each pass registers
itself (``passes.base.register``); there is no hand-kept list. ``stage_of(name)`` is the stage
folder a registered pass lives in.
"""
from __future__ import annotations

import importlib
import itertools
import pkgutil
import tomllib
from functools import lru_cache
from pathlib import Path

import passes
from passes.base import REGISTRY

PLANS_FILE = Path(__file__).resolve().parent / "plans.toml"
STAGES = ("map", "lift", "cleanup", "lower", "tensorize", "finish")   # composition order (map: alone)


@lru_cache(maxsize=None)
def plan_data() -> dict:
    return tomllib.loads(PLANS_FILE.read_text())


def _alternatives(piece) -> list[str]:
    return [piece] if isinstance(piece, str) else list(piece)


def candidates(direction: dict, data: dict | None = None) -> list[str]:
    """The candidate pipelines (strings, in order) of one ``[direction."a->b"]`` table."""
    data = data or plan_data()
    out = []
    if "map" in direction:
        out += _alternatives(data["map"][direction["map"]])
    stages = [_alternatives(data[stage][direction[stage]]) for stage in STAGES[1:] if stage in direction]
    for combo in itertools.product(*stages):
        text = ",".join(part for part in combo if part)
        if text:
            out.append(text)
    return out


def compose(data: dict | None = None) -> dict[tuple[str, str], str | list[str]]:
    data = data or plan_data()
    plans = {}
    for key, direction in data["direction"].items():
        source, _, target = key.partition("->")
        unknown = set(direction) - set(STAGES)
        if unknown:
            raise ValueError(f"plans.toml: direction {key}: unknown stage(s) {sorted(unknown)}")
        found = candidates(direction, data)
        plans[(source.strip(), target.strip())] = found[0] if len(found) == 1 else found
    return plans


# the composed table; tests and experiments may patch entries (monkeypatch.setitem)
PLANS: dict[tuple[str, str], str | list[str]] = compose()


def analysis_lift(platform: str) -> list[tuple[str, dict]]:
    """The steps (pass name, options) of the lift ``xpiler.infer`` analyses for a source platform."""
    from passes.base import parse_pipeline

    return list(parse_pipeline(plan_data().get("analysis", {}).get(platform, "")))


def pass_modules() -> list[str]:
    """Every module under ``passes/`` (its import registers the passes it defines)."""
    return sorted(m.name for m in pkgutil.walk_packages(passes.__path__, "passes."))


def load_passes() -> None:
    for name in pass_modules():
        importlib.import_module(name)


def stage_of(name: str) -> str:
    """The stage folder of a registered pass (``passes/<stage>/...``)."""
    entry = REGISTRY[name]
    module = getattr(entry.apply, "__module__", "") or ""
    parts = module.split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "passes" else ""
