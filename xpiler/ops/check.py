"""Reference evaluation, input generation and output checking for cases."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import numpy as np

from .registry import REGISTRY
from .schema import (Bound, CaseError, bind, cast_result, fake_quant, dequantize, is_float,
                     is_int, np_dtype, quant_input_range, scalar_value, to_logical, to_stored)
from .tolerances import tolerance_table

def _spec(case: dict):
    op = case.get("op")
    if op not in REGISTRY:
        raise CaseError(f"case {case.get('name')!r}: unknown op {op!r}")
    return REGISTRY[op]


def _compute_form(x: np.ndarray, b: Bound) -> np.ndarray:
    """The values a kernel computes with: fake-quantised, int64 for integers, else float64."""
    q = b.param.get("quant")
    if q is not None:
        return dequantize(x, q) if is_int(b.dtype) else fake_quant(x, q)
    if is_int(b.dtype):
        return np.asarray(x).astype(np.int64)
    if b.dtype == "bool":
        return np.asarray(x).astype(bool)
    return np.asarray(x).astype(np.float64)


def prepare(case: dict):
    spec = _spec(case)
    a = spec.resolve(case)
    a["op"] = spec.name
    ins, outs, scalars = bind(case, spec)
    shapes = spec.shapes(a)
    for idx, p in scalars:
        if p.get("tensor"):
            a[p["tensor"]] = scalar_value(p)
    missing = [n for n in spec.inputs if not n.endswith("*") and n not in spec.optional
               and n not in {b.tensor for b in ins}
               and n not in {b.param.get("input") for b in outs}]
    if missing:
        raise CaseError(f"case {case.get('name')!r}: no param for {spec.name} input(s) "
                        f"{', '.join(missing)}")
    return spec, a, ins, outs, shapes


def _raw_reference(case: dict, inputs: dict[str, np.ndarray]):
    spec, a, ins, outs, shapes = prepare(case)
    t: dict[str, np.ndarray] = {}
    for b in ins:
        if b.name not in inputs:
            raise CaseError(f"reference: no array for input param {b.name!r}")
        t[b.tensor] = _compute_form(to_logical(inputs[b.name], b, shapes.get(b.tensor)), b)
    for b in outs:
        src = b.param.get("input")
        if src:
            if b.name not in inputs:
                raise CaseError(f"reference: no initial array for inout param {b.name!r}")
            t[src] = _compute_form(to_logical(inputs[b.name], b, shapes.get(src)), b)
    res = spec.reference(a, t)
    fp = a.get("fix_position")
    raw = {}
    for b in outs:
        if b.tensor not in res:
            raise CaseError(f"{spec.name} produces no {b.tensor!r}")
        r = np.asarray(res[b.tensor])
        if fp:
            r = r.astype(np.float64) * (2.0 ** int(fp))
        lshape = shapes.get(b.tensor, r.shape)
        raw[b.name] = to_stored(r.reshape(lshape), b)
    return spec, a, ins, outs, raw


def reference(case: dict, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Expected outputs of ``case`` for the given input arrays.

    ``inputs`` maps parameter names to arrays (stored layout; inout params hold their
    initial content). Returns {output param name: array} with the param's shape and dtype:
    the float64/int64 result rounded to nearest (floats), wrapped (integer arithmetic) or
    rounded and saturated (integers from scaled results). ``fix_position`` multiplies every
    output by 2**fix_position before the cast.
    """
    _, a, _, outs, raw = _raw_reference(case, inputs)
    return {b.name: cast_result(raw[b.name], b.dtype, a.get("overflow", "wrap")) for b in outs}


# ---------------------------------------------------------------- inputs

_INT_RANGES = {"int8": (-8, 8), "uint8": (0, 16), "int16": (-64, 64), "uint16": (0, 64),
               "int32": (-100, 100), "uint32": (0, 100), "int64": (-100, 100),
               "uint64": (0, 100)}


def _default_values(b: Bound, shape, rng: np.random.Generator) -> np.ndarray:
    rng_lohi = b.param.get("range")
    if rng_lohi is not None:
        lo, hi = rng_lohi
        if is_int(b.dtype):
            return rng.integers(int(lo), int(hi), size=shape, endpoint=True)
        return rng.uniform(float(lo), float(hi), size=shape)
    q = b.param.get("quant")
    if q is not None and is_float(b.dtype):
        lo, hi = quant_input_range(q)
        return rng.uniform(lo, hi, size=shape)
    if is_int(b.dtype):
        lo, hi = _INT_RANGES[b.dtype]
        return rng.integers(lo, hi, size=shape, endpoint=True)
    if b.dtype == "bool":
        return rng.random(size=shape) < 0.5
    return rng.uniform(-1.0, 1.0, size=shape)


def _poison(dtype: str, shape) -> np.ndarray:
    dt = np_dtype(dtype)
    if is_int(dtype):
        return np.full(shape, np.iinfo(dt).min, dtype=dt)
    if dtype == "bool":
        return np.zeros(shape, dtype=bool)
    return np.full(shape, np.nan, dtype=dt)


def _gen_tensor(spec, a, b: Bound, tensor: str, shapes, rng) -> np.ndarray:
    lshape = shapes.get(tensor)
    if lshape is None:
        if b.layout is not None:
            raise CaseError(f"param {b.name!r}: layout given but {tensor} has no known shape")
        lshape = b.shape
    vals = None
    if spec.make_tensor is not None and b.param.get("range") is None:
        vals = spec.make_tensor(a, tensor, tuple(lshape), b.dtype, rng)
    if vals is None:
        vals = _default_values(b, tuple(lshape), rng)
    vals = np.asarray(vals)
    if is_int(b.dtype) and vals.dtype.kind == "f":
        vals = np.rint(vals)
    return to_stored(vals.astype(np_dtype(b.dtype)), b)


def make_inputs(case: dict, seed: int = 0) -> list:
    """Arguments for the case's entry, in entry order, deterministic for ``seed``.

    Inputs: the param's ``range`` [lo, hi] if given, else the op's generator
    (``OpSpec.make_tensor``), else uniform [-1, 1) floats, small
    integers (int8 [-8, 8], uint8 [0, 16], int16 [-64, 64], wider types [-100, 100]), and for a
    quantised float param values whose codes never saturate. Outputs: ``init`` "poison"
    (default: NaN / the integer minimum, so unwritten elements fail the check), "zeros" or
    "random". Inout params with ``input`` hold that input's values, else zeros. Scalars:
    their ``value``. Each param draws from its own stream ``default_rng([seed, index])``.
    """
    spec, a, ins, outs, shapes = prepare(case)
    by_index = {b.index: b for b in ins + outs}
    args: list[Any] = []
    for i, p in enumerate(case["params"]):
        rng = np.random.default_rng([int(seed), i])
        if p["role"] == "scalar":
            args.append(scalar_value(p))
            continue
        b = by_index[i]
        if p["role"] == "input":
            args.append(_gen_tensor(spec, a, b, b.tensor, shapes, rng))
            continue
        if p.get("input"):
            args.append(_gen_tensor(spec, a, b, p["input"], shapes, rng))
            continue
        init = p.get("init", "poison" if p["role"] == "output" else "zeros")
        shape = b.shape
        if init == "zeros":
            args.append(np.zeros(shape, dtype=np_dtype(b.dtype)))
        elif init == "random":
            args.append(np.asarray(_default_values(b, shape, rng)).astype(np_dtype(b.dtype)))
        elif init == "poison":
            args.append(_poison(b.dtype, shape))
        else:
            raise CaseError(f"param {b.name!r}: init must be poison, zeros or random")
    return args


# ---------------------------------------------------------------- checking

@dataclass
class OutputReport:
    name: str
    dtype: str
    tolerance_class: str
    rtol: float
    atol: float
    size: int
    mismatches: int
    max_abs_err: float
    max_rel_err: float
    first_mismatch: dict | None = None   # {"index": [...], "got": x, "expected": y}

    @property
    def ok(self) -> bool:
        return self.mismatches == 0


@dataclass
class CheckReport:
    case: str
    ok: bool
    outputs: list[OutputReport] = field(default_factory=list)
    inputs_modified: list[str] = field(default_factory=list)

    def summary(self) -> str:
        lines = [f"{self.case}: {'ok' if self.ok else 'MISMATCH'}"]
        for o in self.outputs:
            lines.append(f"  {o.name} [{o.dtype}, {o.tolerance_class} rtol={o.rtol:.3g} "
                         f"atol={o.atol:.3g}]: {o.mismatches}/{o.size} mismatches, "
                         f"max abs err {o.max_abs_err:.3g}, max rel err {o.max_rel_err:.3g}")
            if o.first_mismatch:
                fm = o.first_mismatch
                lines.append(f"    first at {tuple(fm['index'])}: got {fm['got']!r}, "
                             f"expected {fm['expected']!r}")
        for n in self.inputs_modified:
            lines.append(f"  input {n} was modified by the kernel")
        return "\n".join(lines)

    def to_json(self) -> dict:
        d = asdict(self)
        for o, od in zip(self.outputs, d["outputs"]):
            od["ok"] = o.ok
        return d

    __str__ = summary


def tolerance_for(case: dict, param: dict, *, raw_kind: str = "f") -> tuple[str, float, float]:
    """(class, rtol, atol) for one output param of ``case``; ``atol`` includes the reduction
    scaling (x sqrt(R) for scaled classes)."""
    spec = _spec(case)
    over = param.get("tolerance") or case.get("tolerance")
    if over:
        return "case", float(over.get("rtol", 0.0)), float(over.get("atol", 0.0))
    classes = tolerance_table(spec.name)
    quantised = any(p.get("quant") for p in case["params"] if p["role"] in ("input", "inout"))
    if is_int(param["dtype"]):
        cls = "int" if raw_kind in "iub" else "int_rounded"
    elif quantised and spec.linear:
        cls = "quantised"
    else:
        cls = param["dtype"] if param["dtype"] in classes else "float32"
    c = classes[cls]
    f = 1.0
    if c.get("scaled", False):
        a = spec.resolve(case)
        f = max(1.0, math.sqrt(max(1, int(spec.reduction(a)))))
    return cls, float(c["rtol"]), float(c["atol"]) * f


def _compare(name, dtype, got, exp, cls, rtol, atol) -> OutputReport:
    g = np.asarray(got).astype(np.float64) if np.asarray(got).dtype.kind != "i" else np.asarray(got).astype(np.int64)
    e = np.asarray(exp)
    if g.dtype.kind == "i" and e.dtype.kind in "iu":
        diff = np.abs(g - e.astype(np.int64)).astype(np.float64)
        e64 = e.astype(np.float64)
        bad = diff > atol + rtol * np.abs(e64)
    else:
        g = g.astype(np.float64)
        e64 = e.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(g - e64)
            fin = np.isfinite(g) & np.isfinite(e64)
            same_nonfinite = (~np.isfinite(g)) & (~np.isfinite(e64)) & (
                (np.isnan(g) & np.isnan(e64)) | (g == e64))
            bad = np.where(fin, diff > atol + rtol * np.abs(e64), ~same_nonfinite)
            diff = np.where(fin, diff, np.where(same_nonfinite, 0.0, np.inf))
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(np.abs(e64) > 0, diff / np.abs(e64), np.where(diff > 0, np.inf, 0.0))
    n_bad = int(np.count_nonzero(bad))
    first = None
    if n_bad:
        idx = np.unravel_index(int(np.argmax(bad.reshape(-1))), bad.shape)
        first = {"index": [int(i) for i in idx], "got": np.asarray(got)[idx].item(),
                 "expected": e[idx].item()}
    return OutputReport(name=name, dtype=dtype, tolerance_class=cls, rtol=rtol, atol=atol,
                        size=int(g.size), mismatches=n_bad,
                        max_abs_err=float(diff.max()) if diff.size else 0.0,
                        max_rel_err=float(rel.max()) if rel.size else 0.0, first_mismatch=first)


def check(case: dict, args: Sequence[Any], *, seed: int | None = None,
          inputs: Sequence[Any] | None = None) -> CheckReport:
    """Compare a run's arguments (after the call, entry order) with the reference.

    The reference is computed from pristine inputs: ``inputs`` (the argument list before the
    run), else ``make_inputs(case, seed)`` when ``seed`` is given, else the input arrays in
    ``args`` themselves. With pristine inputs available, an input param the kernel wrote
    to is reported and fails the check.
    """
    params = case["params"]
    if len(args) != len(params):
        raise CaseError(f"check: {len(args)} arguments for {len(params)} params")
    before = list(inputs) if inputs is not None else (
        make_inputs(case, seed) if seed is not None else None)
    src = before if before is not None else list(args)
    arrays = {p["name"]: np.asarray(src[i]) for i, p in enumerate(params)
              if p["role"] in ("input", "inout")}
    spec, a, ins, outs, raw = _raw_reference(case, arrays)
    report = CheckReport(case=case.get("name", spec.name), ok=True)
    if before is not None:
        for b in ins:
            if not np.array_equal(np.asarray(args[b.index]), np.asarray(before[b.index]),
                                  equal_nan=np.asarray(before[b.index]).dtype.kind == "f"):
                report.inputs_modified.append(b.name)
    for b in outs:
        r = raw[b.name]
        kind = r.dtype.kind
        if kind == "f" and is_int(b.dtype) and np.all(np.isfinite(r)) and np.array_equal(r, np.rint(r)):
            kind = "i"          # an integer-valued float result needs no rounding: exact
        cls, rtol, atol = tolerance_for(case, b.param, raw_kind=kind)
        # integer outputs compare with the cast result; float outputs with the exact value
        ref = cast_result(r, b.dtype, a.get("overflow", "wrap")) if is_int(b.dtype) else r
        got = np.asarray(args[b.index]).reshape(b.shape) if b.shape else np.asarray(args[b.index])
        report.outputs.append(_compare(b.name, b.dtype, got, ref, cls, rtol, atol))
    report.ok = all(o.ok for o in report.outputs) and not report.inputs_modified
    return report
