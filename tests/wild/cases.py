"""Inputs of a wild case file (the ``xpiler.ops`` rules, without binding to an operator).

``make_inputs(case, seed)`` -> entry-order arguments: each param draws from its own stream
``default_rng([seed, index])``; ``range`` [lo, hi] if given (integers inclusive), else floats
uniform in [-1, 1) and small integers (int8 [-8, 8], uint8 [0, 16], wider [-100, 100]);
``sorted`` sorts the values, ``first``/``last`` pin the end points (CSR row pointers);
outputs start as NaN / the integer minimum (``init`` "poison") unless ``init`` is "zeros".
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from xpiler.run import numpy_dtype

INT_RANGES = {"int8": (-8, 8), "uint8": (0, 16), "int16": (-64, 64), "uint16": (0, 64)}


def load(path) -> dict:
    return json.loads(Path(path).read_text())


def _values(p: dict, rng) -> np.ndarray:
    dt = numpy_dtype(p["dtype"])
    shape = tuple(p["shape"])
    if p["role"] == "output" or (p["role"] == "inout" and "range" not in p):
        if p.get("init") == "zeros" or p["role"] == "inout":
            return np.zeros(shape, dt)
        if np.issubdtype(dt, np.floating):
            return np.full(shape, np.nan, dt)
        return np.full(shape, np.iinfo(dt).min, dt)
    if np.issubdtype(dt, np.integer):
        lo, hi = p.get("range") or INT_RANGES.get(p["dtype"], (-100, 100))
        v = rng.integers(int(lo), int(hi), size=shape, endpoint=True)
    else:
        lo, hi = p.get("range") or (-1.0, 1.0)
        v = rng.uniform(lo, hi, size=shape) if hi > lo else np.full(shape, lo)
    if p.get("sorted"):
        v = np.sort(v.reshape(-1)).reshape(shape)
    if "first" in p:
        v.reshape(-1)[0] = p["first"]
    if "last" in p:
        v.reshape(-1)[-1] = p["last"]
    return np.asarray(v).astype(dt)


def make_inputs(case: dict, seed: int = 0) -> list:
    args = []
    for i, p in enumerate(case["params"]):
        if p["role"] == "scalar":
            args.append(p["value"])
            continue
        args.append(_values(p, np.random.default_rng([int(seed), i])))
    return args


def config_args(case: dict, args: list, directory: Path) -> dict:
    """An ``xpiler translate --config`` file body ({"args": ..., "launch": ...}) for these arguments:
    arrays saved as .npy under ``directory``."""
    out = {}
    for p, a in zip(case["params"], args):
        if isinstance(a, np.ndarray):
            f = Path(directory) / f"{p['name']}.npy"
            np.save(f, a)
            out[p["name"]] = f"@{f}"
        else:
            out[p["name"]] = repr(a) if isinstance(a, float) else str(a)
    cfg = {"args": out}
    if "launch" in case:
        cfg["launch"] = case["launch"]
    return cfg
