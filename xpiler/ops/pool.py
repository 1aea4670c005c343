"""Pooling over NHWC windows without padding: maxpool, avgpool, minpool, sumpool."""
from __future__ import annotations

import numpy as np

from .spec import OpSpec


def pool_nhwc(x: np.ndarray, kh: int, kw: int, sh: int, sw: int, kind: str) -> np.ndarray:
    """x[N,H,W,C] -> [N,OH,OW,C], OH = (H-KH)//SH + 1; partial windows are dropped."""
    n, h, w, c = x.shape
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    wins = [x[:, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw, :]
            for i in range(kh) for j in range(kw)]
    st = np.stack(wins, axis=0)
    if kind == "max":
        return st.max(axis=0)
    if kind == "min":
        return st.min(axis=0)
    s = st.sum(axis=0)
    return s / (kh * kw) if kind == "avg" else s


def _dims(args, a):
    return {"OH": (a["H"] - a["KH"]) // a["SH"] + 1, "OW": (a["W"] - a["KW"]) // a["SW"] + 1}


def _spec(kind, doc):
    return OpSpec(name=f"{kind}pool", group="pooling",
                  arg_names=("N", "H", "W", "C", "KH", "KW", "SH", "SW"), inputs=("x",),
                  outputs=("out",), dims=_dims,
                  shapes=lambda a: {"x": (a["N"], a["H"], a["W"], a["C"]),
                                    "out": (a["N"], a["OH"], a["OW"], a["C"])},
                  reference=lambda a, t: {"out": pool_nhwc(t["x"], a["KH"], a["KW"], a["SH"],
                                                           a["SW"], kind)},
                  reduction=lambda a: a["KH"] * a["KW"], linear=kind != "avg",
                  doc=doc + " over KHxKW windows, strides SH, SW; NHWC; no padding")


SPECS = [_spec("max", "max"), _spec("avg", "mean"), _spec("min", "min"), _spec("sum", "sum")]
