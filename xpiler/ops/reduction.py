"""Reductions over one axis (or a list of axes): sum, mean, max, min."""
from __future__ import annotations

import numpy as np

from .spec import OpSpec


def _axes(a) -> tuple[int, ...]:
    ax = a["axis"]
    nd = len(a["args"])
    axes = ax if isinstance(ax, (list, tuple)) else [ax]
    return tuple(sorted(int(x) % nd for x in axes))


def _shapes(a):
    shp = tuple(a["args"])
    axes = _axes(a)
    if a.get("keepdims"):
        out = tuple(1 if i in axes else n for i, n in enumerate(shp))
    else:
        out = tuple(n for i, n in enumerate(shp) if i not in axes)
    return {"x": shp, "out": out}


def _red_len(a) -> int:
    return int(np.prod([a["args"][i] for i in _axes(a)]))


def _ref(fn):
    def ref(a, t):
        return {"out": fn(t["x"], axis=_axes(a), keepdims=bool(a.get("keepdims")))}
    return ref


def _spec(name, fn, doc, linear):
    return OpSpec(name=name, group="reduction", arg_names=("*",), inputs=("x",),
                  outputs=("out",), shapes=_shapes, reference=_ref(fn),
                  attrs={"axis": -1, "keepdims": False}, reduction=_red_len, linear=linear,
                  doc=doc + "; attr axis: int or list (default -1); keepdims (default false)")


SPECS = [
    _spec("sum", np.sum, "out = sum of x over axis", True),
    _spec("mean", np.mean, "out = mean of x over axis", False),
    _spec("max", np.max, "out = max of x over axis", True),
    _spec("min", np.min, "out = min of x over axis", True),
]
