"""Element-wise operators (add, sub, sign, sin, relu, gelu, sigmoid) and softmax."""
from __future__ import annotations

import math

import numpy as np

from .spec import OpSpec

_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """Vectorised ``math.erf`` (numpy has none), float64."""
    return _erf(np.asarray(x, dtype=np.float64)).astype(np.float64)


def gelu(x: np.ndarray, approximate: str = "tanh") -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    if approximate in ("none", "erf"):
        return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
    raise ValueError(f"gelu: approximate must be 'tanh' or 'none', not {approximate!r}")


def sigmoid(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _full(a: dict, names) -> dict:
    shp = tuple(a["args"])
    return {n: shp for n in names}


def _binary(name, fn, doc):
    return OpSpec(name=name, group="element-wise", arg_names=("*",), inputs=("x", "y"),
                  outputs=("out",), shapes=lambda a: _full(a, ("x", "y", "out")),
                  reference=lambda a, t: {"out": fn(t["x"], t["y"])}, linear=True, doc=doc)


def _unary(name, fn, doc, attrs=None, make=None, linear=False):
    return OpSpec(name=name, group="element-wise", arg_names=("*",), inputs=("x",),
                  outputs=("out",), shapes=lambda a: _full(a, ("x", "out")),
                  reference=lambda a, t: {"out": fn(a, t["x"])}, attrs=attrs or {},
                  make_tensor=make, linear=linear, doc=doc)


def _sign_inputs(a, tensor, shape, dtype, rng):
    if dtype.startswith(("int", "uint")):
        return None
    x = rng.uniform(-1.0, 1.0, size=shape)
    x[rng.random(size=shape) < 0.1] = 0.0  # exact zeros: sign(0) == 0
    return x


def _wide_inputs(lo, hi):
    def make(a, tensor, shape, dtype, rng):
        if dtype.startswith(("int", "uint")):
            return None
        return rng.uniform(lo, hi, size=shape)
    return make


def _softmax_shapes(a):
    return _full(a, ("x", "out"))


SPECS = [
    _binary("add", lambda x, y: x + y, "out = x + y"),
    _binary("sub", lambda x, y: x - y, "out = x - y"),
    _unary("sign", lambda a, x: np.sign(x), "out = sign(x), sign(0) = 0",
           make=_sign_inputs, linear=True),
    _unary("sin", lambda a, x: np.sin(x), "out = sin(x)", make=_wide_inputs(-math.pi, math.pi)),
    _unary("relu", lambda a, x: np.maximum(x, 0), "out = max(x, 0)", linear=True),
    _unary("gelu", lambda a, x: gelu(x, a["approximate"]),
           "out = gelu(x); attr approximate: 'tanh' (0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))) "
           "or 'none' (0.5x(1+erf(x/sqrt 2)))", attrs={"approximate": "tanh"},
           make=_wide_inputs(-4.0, 4.0)),
    _unary("sigmoid", lambda a, x: sigmoid(x), "out = 1 / (1 + exp(-x))",
           make=_wide_inputs(-6.0, 6.0)),
    OpSpec(name="softmax", group="activation", arg_names=("*",), inputs=("x",), outputs=("out",),
           shapes=_softmax_shapes, attrs={"axis": -1},
           reference=lambda a, t: {"out": softmax(t["x"], a["axis"])},
           make_tensor=_wide_inputs(-4.0, 4.0),
           reduction=lambda a: a["args"][a["axis"]],
           doc="out = exp(x - max) / sum(exp(x - max)) along attr axis (default last)"),
]
