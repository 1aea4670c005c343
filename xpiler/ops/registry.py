"""The operator registry: every ``OpSpec`` of the operator modules by name, and by group."""
from __future__ import annotations

from . import conv, elementwise, layout, llm, matrix, norm, pool, reduction
from .spec import OpSpec

REGISTRY: dict[str, OpSpec] = {}
for _mod in (elementwise, reduction, matrix, conv, norm, pool, layout, llm):
    for _s in _mod.SPECS:
        REGISTRY[_s.name] = _s

GROUPS: dict[str, list[str]] = {}
for _s in REGISTRY.values():
    GROUPS.setdefault(_s.group, []).append(_s.name)
