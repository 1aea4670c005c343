"""Tolerance classes per operator, read once from ``tolerances.toml`` beside this file."""
from __future__ import annotations

import functools
import tomllib
from pathlib import Path

TOLERANCES_FILE = Path(__file__).with_name("tolerances.toml")


@functools.lru_cache(maxsize=None)
def _table() -> dict:
    with open(TOLERANCES_FILE, "rb") as fh:
        return tomllib.load(fh)


def tolerance_table(op: str | None = None) -> dict[str, dict[str, float]]:
    """Tolerance classes ({class: {rtol, atol, scaled}}), with ``op``'s overrides merged."""
    t = _table()
    classes = {k: dict(v) for k, v in t["class"].items()}
    for k, v in t.get("op", {}).get(op or "", {}).items():
        classes[k] = {**classes.get(k, {}), **v}
    return classes
