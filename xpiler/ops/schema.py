"""The case schema: dtype names, parameter binding, storage layouts and quantisation.

A *case* is a JSON-serialisable dict describing one kernel instance of an operator (see
``xpiler/ops/README.md`` for the full schema). This module holds the pieces every other module
of ``xpiler.ops`` shares:

- ``np_dtype(name)``          numpy dtype for a dtype name (``float16``, ``bfloat16``, ``int8`` ...)
- ``case_args(case)``         the integer arguments (``case["args"]`` or parsed from the name)
- ``bind(case, spec)``        map each pointer parameter to the operator's logical tensor
- ``to_logical / to_stored``  undo / apply a parameter's ``layout`` permutation
- ``fake_quant(x, q)``        quantise then dequantise a float array the way the kernel does
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

try:  # ml_dtypes registers bfloat16 & friends with numpy
    import ml_dtypes as _ml
except ImportError:  # pragma: no cover - listed in install_requires
    _ml = None

ROLES = ("input", "output", "inout", "scalar")

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
INT_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


class CaseError(ValueError):
    """A case dict does not follow the schema (message names the offending key)."""


def np_dtype(name: str) -> np.dtype:
    """numpy dtype for a schema dtype name; ``bfloat16`` comes from ml_dtypes."""
    if name == "bfloat16":
        if _ml is None:
            raise CaseError("bfloat16 needs the ml_dtypes package")
        return np.dtype(_ml.bfloat16)
    if name == "bool":
        return np.dtype(bool)
    if name in FLOAT_DTYPES or name in INT_DTYPES:
        return np.dtype(name)
    raise CaseError(f"unknown dtype {name!r}")


def is_float(name: str) -> bool:
    return name in FLOAT_DTYPES


def is_int(name: str) -> bool:
    return name in INT_DTYPES


def int_range(name: str) -> tuple[int, int]:
    info = np.iinfo(np.dtype(name))
    return int(info.min), int(info.max)


_NAME_ARGS = re.compile(r"^([a-z0-9]+?)((?:_-?\d+)+)$")


def case_args(case: dict) -> list[int]:
    """The operator's integer arguments: ``case["args"]`` or the numbers in ``case["name"]``."""
    if "args" in case:
        return [int(v) for v in case["args"]]
    if "shape" in case:
        return [int(v) for v in case["shape"]]
    m = _NAME_ARGS.match(case.get("name", ""))
    if not m:
        raise CaseError(f"case {case.get('name')!r} has no 'args' and its name carries none")
    return [int(v) for v in m.group(2).split("_")[1:]]


@dataclass(frozen=True)
class Bound:
    """One pointer parameter bound to a logical tensor of the operator."""

    index: int           # position in the entry's parameter list
    param: dict          # the case's parameter dict
    tensor: str          # logical tensor name (e.g. "A", "weight", "out")

    @property
    def name(self) -> str:
        return self.param["name"]

    @property
    def role(self) -> str:
        return self.param["role"]

    @property
    def dtype(self) -> str:
        return self.param["dtype"]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.param.get("shape", ()))

    @property
    def layout(self) -> tuple[int, ...] | None:
        lay = self.param.get("layout")
        return tuple(int(v) for v in lay) if lay is not None else None


def _expand(names: tuple[str, ...], count: int) -> list[str]:
    """Expand a variadic ``x*`` entry of an operator's tensor list to ``x0, x1, ...``."""
    out: list[str] = []
    fixed = sum(1 for n in names if not n.endswith("*"))
    for n in names:
        if n.endswith("*"):
            out += [f"{n[:-1]}{i}" for i in range(max(0, count - fixed))]
        else:
            out.append(n)
    return out


def bind(case: dict, spec) -> tuple[list[Bound], list[Bound], list[tuple[int, dict]]]:
    """Split the case's params into (inputs, outputs, scalars) bound to logical tensors.

    A parameter names its logical tensor with ``"tensor"``; without it, a parameter whose
    ``name`` is one of the operator's tensor names binds to it, and the rest bind in order
    to the operator's remaining inputs (role input) or outputs (role output/inout).
    """
    params = case.get("params")
    if not isinstance(params, list) or not params:
        raise CaseError(f"case {case.get('name')!r}: 'params' must be a non-empty list")
    for i, p in enumerate(params):
        for key in ("name", "dtype", "role"):
            if key not in p:
                raise CaseError(f"case {case.get('name')!r}: params[{i}] lacks {key!r}")
        if p["role"] not in ROLES:
            raise CaseError(f"params[{i}] ({p['name']}): role must be one of {ROLES}")
        np_dtype(p["dtype"])
        if p["role"] == "scalar" and "value" not in p:
            raise CaseError(f"params[{i}] ({p['name']}): a scalar needs a 'value'")
        if p["role"] != "scalar" and "shape" not in p:
            raise CaseError(f"params[{i}] ({p['name']}): a pointer needs a 'shape'")
    n_in = sum(1 for p in params if p["role"] == "input")
    n_out = sum(1 for p in params if p["role"] in ("output", "inout"))
    in_names = _expand(spec.inputs, n_in)
    out_names = _expand(spec.outputs, n_out)
    ins: list[Bound] = []
    outs: list[Bound] = []
    scalars: list[tuple[int, dict]] = []
    for want, pool, role_ok in ((ins, in_names, ("input",)), (outs, out_names, ("output", "inout"))):
        free = list(pool)
        pending = []
        for i, p in enumerate(params):
            if p["role"] not in role_ok:
                continue
            t = p.get("tensor") or (p["name"] if p["name"] in free else None)
            if t is not None:
                if t not in pool:
                    raise CaseError(f"param {p['name']!r}: {t!r} is not a {'/'.join(role_ok)} "
                                    f"tensor of {spec.name} ({', '.join(pool)})")
                if t in free:
                    free.remove(t)
                want.append(Bound(i, p, t))
            else:
                pending.append((i, p))
        for i, p in pending:
            if not free:
                raise CaseError(f"param {p['name']!r}: {spec.name} has no further "
                                f"{'/'.join(role_ok)} tensor to bind it to")
            want.append(Bound(i, p, free.pop(0)))
        want.sort(key=lambda b: b.index)
    for i, p in enumerate(params):
        if p["role"] == "scalar":
            scalars.append((i, p))
    return ins, outs, scalars


def to_logical(arr: np.ndarray, b: Bound, logical_shape: tuple[int, ...] | None) -> np.ndarray:
    """View a stored parameter array as the logical tensor.

    ``layout`` is a permutation with ``stored = logical.transpose(layout)``; the stored array
    is first reshaped to the parameter's ``shape``.
    """
    a = np.asarray(arr)
    if b.shape:
        if a.size != int(np.prod(b.shape, dtype=np.int64)):
            raise CaseError(f"param {b.name!r}: array has {a.size} elements, shape "
                            f"{list(b.shape)} needs {int(np.prod(b.shape))}")
        a = a.reshape(b.shape)
    if b.layout is not None:
        a = a.reshape(tuple(logical_shape[i] for i in b.layout)) if logical_shape else a
        a = np.transpose(a, np.argsort(b.layout))
    if logical_shape is not None:
        if a.size != int(np.prod(logical_shape, dtype=np.int64)):
            raise CaseError(f"param {b.name!r}: {a.size} elements, {b.tensor} needs "
                            f"{tuple(logical_shape)}")
        a = a.reshape(logical_shape)
    return a


def to_stored(logical: np.ndarray, b: Bound) -> np.ndarray:
    """Lay a logical tensor out as parameter ``b`` stores it (shape ``b.shape``)."""
    a = np.asarray(logical)
    if b.layout is not None:
        a = np.transpose(a, b.layout)
    a = np.ascontiguousarray(a)
    if b.shape:
        if a.size != int(np.prod(b.shape, dtype=np.int64)):
            raise CaseError(f"param {b.name!r} has shape {b.shape} but {b.tensor} has "
                            f"{a.size} elements")
        a = a.reshape(b.shape)
    return a


# ---------------------------------------------------------------- quantisation

def quant_params(q: dict) -> tuple[str, float, int, int, int]:
    """(dtype, scale, zero_point, qmin, qmax) of a param's ``quant`` dict."""
    dt = q.get("dtype", "int8")
    lo, hi = int_range(dt)
    lo, hi = q.get("clamp", (lo, hi))
    return dt, float(q["scale"]), int(q.get("zero_point", 0)), int(lo), int(hi)


def quantize(x: np.ndarray, q: dict) -> np.ndarray:
    """Integer codes the kernel computes: ``clamp(rint(x / scale) + zero_point, qmin, qmax)``.

    ``x / scale`` is evaluated in float32 (the kernels' precision) and rounded half to even
    (``_mm512_cvtps_epi32`` under the default MXCSR mode, ``__float2int_rn``); with a
    power-of-two scale, multiplying by ``1/scale`` gives the same codes.
    """
    _, scale, zp, lo, hi = quant_params(q)
    xs = np.asarray(x, dtype=np.float32) / np.float32(scale)
    return np.clip(np.rint(xs).astype(np.int64) + zp, lo, hi)


def dequantize(codes: np.ndarray, q: dict) -> np.ndarray:
    _, scale, zp, _, _ = quant_params(q)
    return (np.asarray(codes, dtype=np.int64) - zp).astype(np.float64) * scale


def fake_quant(x: np.ndarray, q: dict) -> np.ndarray:
    """The real value a quantised kernel computes with: ``(code - zero_point) * scale``."""
    return dequantize(quantize(x, q), q)


def quant_input_range(q: dict) -> tuple[float, float]:
    """A float range whose codes stay strictly inside [qmin, qmax] (no saturation)."""
    _, scale, zp, lo, hi = quant_params(q)
    return (lo - zp + 1) * scale, (hi - zp - 1) * scale


def cast_result(x: np.ndarray, dtype: str, overflow: str = "wrap") -> np.ndarray:
    """Cast a float64/int64 logical result to a parameter dtype.

    Floats round to nearest even. Integer results from float values are rounded half to
    even and saturated; integer results from integer arithmetic wrap (two's complement, as
    C and ``dpbusd`` do) unless ``overflow == "saturate"``.
    """
    dt = np_dtype(dtype)
    x = np.asarray(x)
    if is_int(dtype):
        lo, hi = int_range(dtype)
        if x.dtype.kind == "f":
            return np.clip(np.rint(x), lo, hi).astype(dt)
        if overflow == "saturate":
            return np.clip(x, lo, hi).astype(dt)
        return x.astype(np.int64).astype(dt)  # wraps modulo 2^bits
    if dtype == "bool":
        return x.astype(bool)
    return x.astype(dt)


def scalar_value(p: dict) -> Any:
    """The Python value of a scalar param, coerced to its dtype."""
    v = p["value"]
    if is_int(p["dtype"]):
        return int(v)
    if p["dtype"] == "bool":
        return bool(v)
    return float(np.asarray(v, dtype=np_dtype(p["dtype"])))
