"""Matrix operators: gemm, gemv, bmm, dense (+ bias).

Integer operands (int8 BANG, uint8/int8 VNNI) are multiplied in int64 (exact); float operands
(half on CUDA wmma, float on HIP MFMA, fake-quantised VNNI) in float64. ``fix_position`` (BANG)
and output casting are applied by ``xpiler.ops.reference`` after these functions.
"""
from __future__ import annotations

import numpy as np

from .spec import OpSpec


def matmul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x @ y`` in int64 when both are integer arrays, else float64."""
    if x.dtype.kind in "iu" and y.dtype.kind in "iu":
        return np.matmul(x.astype(np.int64), y.astype(np.int64))
    return np.matmul(np.asarray(x, np.float64), np.asarray(y, np.float64))


def _add_bias(acc, bias):
    if bias is None:
        return acc
    if acc.dtype.kind in "iu" and bias.dtype.kind in "iu":
        return acc + bias.astype(np.int64)
    return acc.astype(np.float64) + bias


SPECS = [
    OpSpec(name="gemm", group="matrix", arg_names=("M", "K", "N"), inputs=("A", "B"),
           outputs=("C",),
           shapes=lambda a: {"A": (a["M"], a["K"]), "B": (a["K"], a["N"]), "C": (a["M"], a["N"])},
           reference=lambda a, t: {"C": matmul(t["A"], t["B"])},
           reduction=lambda a: a["K"], linear=True, doc="C[M,N] = A[M,K] @ B[K,N]"),
    OpSpec(name="gemv", group="matrix", arg_names=("M", "N"), inputs=("A", "x"), outputs=("y",),
           shapes=lambda a: {"A": (a["M"], a["N"]), "x": (a["N"],), "y": (a["M"],)},
           reference=lambda a, t: {"y": matmul(t["A"], t["x"])},
           reduction=lambda a: a["N"], linear=True, doc="y[M] = A[M,N] @ x[N]"),
    OpSpec(name="bmm", group="matrix", arg_names=("B", "I", "J", "K"), inputs=("A", "B"),
           outputs=("C",),
           shapes=lambda a: {"A": (a["B"], a["I"], a["J"]), "B": (a["B"], a["J"], a["K"]),
                             "C": (a["B"], a["I"], a["K"])},
           reference=lambda a, t: {"C": matmul(t["A"], t["B"])},
           reduction=lambda a: a["J"], linear=True,
           doc="C[B,I,K] = A[B,I,J] @ B[B,J,K] (batched)"),
    OpSpec(name="dense", group="matrix", arg_names=("M", "K", "N"),
           inputs=("X", "W", "bias"), outputs=("out",), optional=frozenset({"bias"}),
           shapes=lambda a: {"X": (a["M"], a["K"]), "W": (a["N"], a["K"]), "bias": (a["N"],),
                             "out": (a["M"], a["N"])},
           reference=lambda a, t: {"out": _add_bias(matmul(t["X"], t["W"].T), t.get("bias"))},
           reduction=lambda a: a["K"], linear=True,
           doc="out[M,N] = X[M,K] @ W[N,K]^T + bias[N] (TVM dense; a [K,N] weight is "
               "W with layout [1,0]; bias optional)"),
]
