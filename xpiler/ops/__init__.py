"""numpy reference implementations of the 36 operators of OPS.md, and case checking.

Public API::

    REGISTRY: dict[str, OpSpec]                 # op name -> spec (group, tensors, reference, ...)
    make_case(op, args, **options) -> dict      # a schema-valid case with default params
    load_case(path) -> dict                     # read a case JSON file
    dump_case(case) -> str                      # the canonical JSON text of a case file
    validate_case(case) -> None                 # raise CaseError if the case is malformed
    reference(case, inputs: dict[str, ndarray]) -> dict[str, ndarray]
    make_inputs(case, seed=0) -> list           # entry-order arguments (arrays + scalars)
    check(case, args, *, seed=None, inputs=None) -> CheckReport
    tolerance_for(case, param) -> (class, rtol, atol)

The case schema and the tolerance rules are documented in ``xpiler/ops/README.md``; the
tolerance table lives in ``xpiler/ops/tolerances.toml``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from .check import CheckReport, OutputReport, check, make_inputs, reference, tolerance_for, \
    tolerance_table
from .schema import CaseError, np_dtype
from .registry import GROUPS, REGISTRY
from .spec import OpSpec

__all__ = ["REGISTRY", "OpSpec", "CaseError", "CheckReport", "OutputReport", "make_case",
           "load_case", "dump_case", "validate_case", "reference", "make_inputs", "check", "tolerance_for",
           "tolerance_table", "GROUPS", "np_dtype"]


def make_case(op: str, args: Iterable[int], *, name: str | None = None,
              dtype: str = "float32", dtypes: dict[str, str] | None = None,
              omit: Iterable[str] = (), param_names: dict[str, str] | None = None,
              scalars: Iterable[dict] = (), **attrs: Any) -> dict:
    """A case for ``op`` with one param per logical tensor in canonical entry order
    (inputs, then outputs, then ``scalars``), named after the tensors.

    ``dtype`` is the default element type, ``dtypes`` overrides it per tensor, ``omit``
    drops optional inputs, ``param_names`` renames params ({tensor: name}), ``attrs`` are
    op attributes (axis, perm, eps, stride, ...) written into the case. The result can be
    edited further (layout, quant, tolerance, init) before use.
    """
    spec = REGISTRY[op]
    args = [int(v) for v in args]
    case: dict[str, Any] = {"op": op, "name": name or "_".join([op] + [str(v) for v in args]),
                            "args": args}
    for k, v in attrs.items():
        if k not in spec.attrs and k not in ("fix_position", "overflow", "tolerance"):
            raise CaseError(f"{op} has no attribute {k!r} (known: {', '.join(spec.attrs)})")
        case[k] = v
    a = spec.resolve(case)
    for k in spec.attrs:          # make every attribute explicit in the file
        if k not in case and a.get(k) is not None:
            case[k] = a[k]
    shapes = spec.shapes(a)
    dtypes = dict(dtypes or {})
    param_names = dict(param_names or {})
    omit = set(omit)
    params = []
    ins = [n for n in shapes if n not in spec.outputs and n not in omit]
    order = [n for n in _expand_names(spec.inputs, ins)]
    for t in order:
        dt = dtypes.get(t, "int32" if t in ("indices", "spatial_shapes", "level_start_index")
                        else dtype)
        params.append({"name": param_names.get(t, t), "tensor": t, "dtype": dt,
                       "role": "input", "shape": list(shapes[t])})
    for t in spec.outputs:
        params.append({"name": param_names.get(t, t), "tensor": t, "dtype": dtypes.get(t, dtype),
                       "role": "output", "shape": list(shapes[t])})
    params += [dict(s, role="scalar") for s in scalars]
    case["params"] = params
    validate_case(case)
    return case


def _expand_names(names, present):
    out = []
    for n in names:
        if n.endswith("*"):
            out += sorted((p for p in present if p.startswith(n[:-1]) and p[len(n) - 1:].isdigit()),
                          key=lambda p: int(p[len(n) - 1:]))
        elif n in present:
            out.append(n)
    return out


def validate_case(case: dict) -> None:
    """Raise ``CaseError`` unless the case binds to its op and every shape fits."""
    from .check import prepare

    spec, a, ins, outs, shapes = prepare(case)
    import numpy as np

    for b in ins + outs:
        t = b.tensor
        if t in shapes:
            need = int(np.prod(shapes[t], dtype=np.int64))
            have = int(np.prod(b.shape, dtype=np.int64)) if b.shape else 1
            if need != have:
                raise CaseError(f"case {case.get('name')!r}: param {b.name!r} has {have} "
                                f"elements, {spec.name} {t} needs {list(shapes[t])}")
            if b.layout is not None and sorted(b.layout) != list(range(len(shapes[t]))):
                raise CaseError(f"param {b.name!r}: layout {list(b.layout)} is not a "
                                f"permutation of {len(shapes[t])} axes")
        q = b.param.get("quant")
        if q is not None and "scale" not in q:
            raise CaseError(f"param {b.name!r}: quant needs a 'scale'")


def load_case(path: str | Path) -> dict:
    with open(path) as fh:
        case = json.load(fh)
    validate_case(case)
    return case


_CASE_KEYS = ("op", "name", "platform", "file", "entry", "launch", "args")


def dump_case(case: dict) -> str:
    """Canonical case-file text: schema keys first, ``params`` last, one param per line
    group, short lists of numbers on one line."""
    import re

    ordered = {k: case[k] for k in _CASE_KEYS if k in case}
    ordered.update({k: v for k, v in case.items() if k not in ordered and k != "params"})
    if "params" in case:
        ordered["params"] = case["params"]
    text = json.dumps(ordered, indent=1)

    def inline(m):
        return json.dumps(json.loads(m.group(0)), separators=(", ", ": "))

    # collapse arrays holding only numbers / strings / nested number pairs
    prev = None
    while prev != text:
        prev = text
        text = re.sub(r"\[\s*((?:-?[\d.eE+-]+|\"[^\"]*\"|\[[^\[\]]*\])"
                      r"(?:\s*,\s*(?:-?[\d.eE+-]+|\"[^\"]*\"|\[[^\[\]]*\]))*)\s*\]",
                      inline, text)
    return text + "\n"
