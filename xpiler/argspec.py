"""Argument specifications shared by ``xpiler run`` and ``xpiler check``.

``NAME=SPEC`` where SPEC is one of
    42, 0.5            a scalar (converted to the parameter's declared C type)
    @in.npy            a numpy file (dtype must match the declared pointer type)
    zeros:SHAPE[:DTYPE]  ones:SHAPE[:DTYPE]  random:SHAPE[:DTYPE]  arange:SHAPE[:DTYPE]
SHAPE is ``128x64`` or ``128,64``; DTYPE defaults to the parameter's declared element type.
``random`` draws from the run's seed (uniform [-1, 1) for floats, small integers for ints).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .ir.errors import UsageError

_GENERATORS = ("zeros", "ones", "random", "arange")


@dataclass(frozen=True)
class ArgSpec:
    name: str
    text: str

    @property
    def is_array(self) -> bool:
        return self.text.startswith("@") or self.text.split(":", 1)[0] in _GENERATORS


def parse_arg_specs(items) -> dict[str, ArgSpec]:
    specs: dict[str, ArgSpec] = {}
    for item in items or ():
        name, sep, text = item.partition("=")
        name, text = name.strip(), text.strip()
        if not sep or not name.isidentifier() or not text:
            raise UsageError(f"--arg expects NAME=VALUE|@file.npy|zeros:SHAPE[:DTYPE]; got '{item}'")
        if name in specs:
            raise UsageError(f"--arg {name} given twice")
        specs[name] = ArgSpec(name, text)
    return specs


def _shape(text: str) -> tuple[int, ...]:
    parts = [p for p in text.replace("x", ",").split(",") if p.strip()]
    try:
        shape = tuple(int(p) for p in parts)
    except ValueError:
        raise UsageError(f"bad shape '{text}' (expected e.g. 128x64)") from None
    if not shape or any(d < 0 for d in shape):
        raise UsageError(f"bad shape '{text}'")
    return shape


def random_array(rng, shape, dtype):
    import numpy as np

    dt = np.dtype(dtype)
    if dt.kind == "f" or dt.name == "bfloat16":
        return rng.uniform(-1.0, 1.0, size=shape).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, size=shape).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, min(16, np.iinfo(dt).max), size=shape, endpoint=True).astype(dt)
    return rng.integers(-8, 8, size=shape, endpoint=True).astype(dt)


def materialise(spec: ArgSpec, param, rng):
    """The value for one parameter: a numpy array for pointers, a number for scalars."""
    import numpy as np
    from .run import numpy_dtype

    text = spec.text
    if param.kind == "pointer":
        if text.startswith("@"):
            path = Path(text[1:])
            try:
                arr = np.load(path, allow_pickle=False)
            except (OSError, ValueError) as exc:
                raise UsageError(f"--arg {spec.name}: cannot load {path}: {exc}") from None
            return np.ascontiguousarray(arr)
        kind, _, rest = text.partition(":")
        if kind not in _GENERATORS:
            raise UsageError(f"--arg {spec.name}: '{param.name}' is a pointer ({param.type}); give @file.npy "
                             f"or {'|'.join(_GENERATORS)}:SHAPE[:DTYPE]")
        shape_text, _, dtype_text = rest.partition(":")
        shape = _shape(shape_text)
        dtype = numpy_dtype(dtype_text or param.dtype)
        if kind == "zeros":
            return np.zeros(shape, dtype)
        if kind == "ones":
            return np.ones(shape, dtype)
        if kind == "arange":
            return np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)
        return random_array(rng, shape, dtype)
    if spec.is_array:
        raise UsageError(f"--arg {spec.name}: '{param.name}' is a scalar ({param.type}); give a number")
    try:
        value = float(text) if any(c in text for c in ".eE") and not text.startswith("0x") else int(text, 0)
    except ValueError:
        raise UsageError(f"--arg {spec.name}: '{text}' is not a number") from None
    return value
