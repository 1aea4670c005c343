"""Normalisations: batchnorm, layernorm, rmsnorm, instancenorm (biased variance, ``eps``)."""
from __future__ import annotations

import numpy as np

from .spec import OpSpec


def _f(x):
    return np.asarray(x, dtype=np.float64)


def _chan(v, nd, axis):
    """Broadcast a per-channel vector along ``axis`` of an ``nd``-D tensor."""
    shape = [1] * nd
    shape[axis] = -1
    return _f(v).reshape(shape)


def batchnorm(x, mean=None, var=None, gamma=None, beta=None, eps=1e-5, channel_axis=1):
    """Per-channel normalisation. With ``mean``/``var`` given: inference mode; without them:
    statistics over every axis but the channel axis (training mode, biased variance)."""
    x = _f(x)
    axes = tuple(i for i in range(x.ndim) if i != channel_axis)
    m = _chan(mean, x.ndim, channel_axis) if mean is not None else x.mean(axis=axes, keepdims=True)
    v = (_chan(var, x.ndim, channel_axis) if var is not None
         else ((x - m) ** 2).mean(axis=axes, keepdims=True))
    y = (x - m) / np.sqrt(v + eps)
    if gamma is not None:
        y = y * _chan(gamma, x.ndim, channel_axis)
    if beta is not None:
        y = y + _chan(beta, x.ndim, channel_axis)
    return y


def layernorm(x, gamma=None, beta=None, eps=1e-5, axis=-1):
    x = _f(x)
    axes = tuple(range(axis % x.ndim, x.ndim))
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    if gamma is not None:
        y = y * _f(gamma)
    if beta is not None:
        y = y + _f(beta)
    return y


def rmsnorm(x, weight=None, eps=1e-5):
    x = _f(x)
    y = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
    return y * _f(weight) if weight is not None else y


def instancenorm(x, gamma=None, beta=None, eps=1e-5, channel_axis=1):
    """Statistics over the spatial axes of each (n, c)."""
    x = _f(x)
    axes = tuple(i for i in range(2, x.ndim)) if channel_axis == 1 else tuple(range(1, x.ndim - 1))
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    if gamma is not None:
        y = y * _chan(gamma, x.ndim, channel_axis)
    if beta is not None:
        y = y + _chan(beta, x.ndim, channel_axis)
    return y


def _tail(a):
    """Shape of layernorm's gamma/beta: the normalised trailing axes."""
    return tuple(a["args"][a["axis"] % len(a["args"]):])


def _nchw_shape(a):
    if a["layout"] == "NHWC":
        return (a["N"], a["H"], a["W"], a["C"])
    return (a["N"], a["C"], a["H"], a["W"])


def _cax(a):
    return 3 if a["layout"] == "NHWC" else 1


def _bn_make(a, tensor, shape, dtype, rng):
    if tensor == "var":
        return rng.uniform(0.5, 1.5, size=shape)
    if tensor == "gamma":
        return rng.uniform(0.5, 1.5, size=shape)
    return None


SPECS = [
    OpSpec(name="batchnorm", group="normalization", arg_names=("N", "C", "H", "W"),
           inputs=("x", "mean", "var", "gamma", "beta"), outputs=("out",),
           optional=frozenset({"mean", "var", "gamma", "beta"}),
           attrs={"eps": 1e-5, "layout": "NCHW"},
           shapes=lambda a: {"x": _nchw_shape(a), "mean": (a["C"],), "var": (a["C"],),
                             "gamma": (a["C"],), "beta": (a["C"],), "out": _nchw_shape(a)},
           reference=lambda a, t: {"out": batchnorm(t["x"], t.get("mean"), t.get("var"),
                                                    t.get("gamma"), t.get("beta"), a["eps"],
                                                    _cax(a))},
           make_tensor=_bn_make, reduction=lambda a: a["N"] * a["H"] * a["W"],
           doc="(x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c]; without mean/var "
               "params the batch statistics over N,H,W are used; attr layout NCHW|NHWC"),
    OpSpec(name="layernorm", group="normalization", arg_names=("*",),
           inputs=("x", "gamma", "beta"), outputs=("out",), optional=frozenset({"gamma", "beta"}),
           attrs={"eps": 1e-5, "axis": -1},
           shapes=lambda a: {"x": tuple(a["args"]), "out": tuple(a["args"]),
                             "gamma": _tail(a), "beta": _tail(a)},
           reference=lambda a, t: {"out": layernorm(t["x"], t.get("gamma"), t.get("beta"),
                                                    a["eps"], a["axis"])},
           make_tensor=lambda a, n, s, d, r: r.uniform(0.5, 1.5, size=s) if n == "gamma" else None,
           reduction=lambda a: int(np.prod(a["args"][a["axis"] % len(a["args"]):])),
           doc="(x - mean) / sqrt(var + eps) * gamma + beta over the axes from attr axis "
               "(default last) to the end"),
    OpSpec(name="rmsnorm", group="normalization", arg_names=("R", "C"),
           inputs=("x", "weight"), outputs=("out",), optional=frozenset({"weight"}),
           attrs={"eps": 1e-5},
           shapes=lambda a: {"x": (a["R"], a["C"]), "weight": (a["C"],), "out": (a["R"], a["C"])},
           reference=lambda a, t: {"out": rmsnorm(t["x"], t.get("weight"), a["eps"])},
           make_tensor=lambda a, n, s, d, r: r.uniform(0.5, 1.5, size=s) if n == "weight" else None,
           reduction=lambda a: a["C"],
           doc="x / sqrt(mean(x^2 over the row) + eps) * weight"),
    OpSpec(name="instancenorm", group="normalization", arg_names=("N", "C", "H", "W"),
           inputs=("x", "gamma", "beta"), outputs=("out",), optional=frozenset({"gamma", "beta"}),
           attrs={"eps": 1e-5, "layout": "NCHW"},
           shapes=lambda a: {"x": _nchw_shape(a), "gamma": (a["C"],), "beta": (a["C"],),
                             "out": _nchw_shape(a)},
           reference=lambda a, t: {"out": instancenorm(t["x"], t.get("gamma"), t.get("beta"),
                                                       a["eps"], _cax(a))},
           make_tensor=lambda a, n, s, d, r: r.uniform(0.5, 1.5, size=s) if n == "gamma" else None,
           reduction=lambda a: a["H"] * a["W"],
           doc="per (n, c): (x - mean_hw) / sqrt(var_hw + eps) * gamma[c] + beta[c]"),
]
