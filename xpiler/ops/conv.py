"""Convolutions: conv1d, conv2d (NHWC, OHWI), conv2dnchw (NCHW, OIHW), depthwiseconv (HWC).

All are cross-correlations (no kernel flip), like every DL framework. ``groups`` follows from
the channel counts in the name (C // IC); zero padding.
"""
from __future__ import annotations

import numpy as np

from .schema import CaseError
from .matrix import matmul
from .spec import OpSpec


def conv2d_nhwc(x: np.ndarray, w: np.ndarray, stride: int = 1, pad: int = 0,
                dilation: int = 1, groups: int = 1) -> np.ndarray:
    """x[N,H,W,C] (*) w[OC,KH,KW,C/groups] -> [N,OH,OW,OC]; exact in int64 for integer data."""
    n, h, wd, c = x.shape
    oc, kh, kw, icg = w.shape
    if c != icg * groups or oc % groups:
        raise CaseError(f"conv2d: C={c}, weight IC={icg}, OC={oc} do not fit groups={groups}")
    integer = x.dtype.kind in "iu" and w.dtype.kind in "iu"
    acc_t = np.int64 if integer else np.float64
    xp = np.zeros((n, h + 2 * pad, wd + 2 * pad, c), dtype=acc_t)
    xp[:, pad:pad + h, pad:pad + wd, :] = x
    oh = (h + 2 * pad - dilation * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, oh, ow, oc), dtype=acc_t)
    ocg = oc // groups
    for i in range(kh):
        for j in range(kw):
            hs, ws = i * dilation, j * dilation
            patch = xp[:, hs:hs + stride * (oh - 1) + 1:stride, ws:ws + stride * (ow - 1) + 1:stride, :]
            for g in range(groups):
                pg = patch[..., g * icg:(g + 1) * icg]
                wg = w[g * ocg:(g + 1) * ocg, i, j, :]          # [OCg, ICg]
                out[..., g * ocg:(g + 1) * ocg] += matmul(pg, wg.T.astype(acc_t))
    return out


def _out_hw(h, k, stride, pad, dil=1):
    return (h + 2 * pad - dil * (k - 1) - 1) // stride + 1


def _conv2d_dims(args, a):
    a = dict(a)
    if a["C"] % a["IC"]:
        raise CaseError(f"conv2d: C={a['C']} is not a multiple of IC={a['IC']}")
    groups = a["C"] // a["IC"]
    return {"groups": groups,
            "OH": _out_hw(a["H"], a["KH"], a["stride"], a["pad"], a["dilation"]),
            "OW": _out_hw(a["W"], a["KW"], a["stride"], a["pad"], a["dilation"])}


def _conv1d(a, t):
    x, w = t["x"], t["w"]
    k = w.shape[0]
    out_n = a["OUT"]
    acc_t = np.int64 if (x.dtype.kind in "iu" and w.dtype.kind in "iu") else np.float64
    out = np.zeros(out_n, dtype=acc_t)
    for j in range(k):
        out += x[j:j + out_n].astype(acc_t) * w[j]
    return {"out": out}


def _depthwise(a, t):
    x, w = t["x"], t["w"]
    k, o = a["K"], a["H"] - a["K"] + 1
    acc_t = np.int64 if (x.dtype.kind in "iu" and w.dtype.kind in "iu") else np.float64
    out = np.zeros((o, o, a["C"]), dtype=acc_t)
    for i in range(k):
        for j in range(k):
            out += x[i:i + o, j:j + o, :].astype(acc_t) * w[i, j, :]
    return {"out": out}


def _conv1d_dims(args, a):
    if a["IN"] < a["OUT"]:
        raise CaseError("conv1d_OUT_IN needs IN >= OUT (kernel size IN - OUT + 1)")
    return {"KS": a["IN"] - a["OUT"] + 1}


SPECS = [
    OpSpec(name="conv1d", group="convolution", arg_names=("OUT", "IN"), inputs=("x", "w"),
           outputs=("out",), dims=_conv1d_dims,
           shapes=lambda a: {"x": (a["IN"],), "w": (a["KS"],), "out": (a["OUT"],)},
           reference=_conv1d, reduction=lambda a: a["KS"], linear=True,
           doc="out[i] = sum_k x[i+k] * w[k]; x[IN], w[IN-OUT+1], out[OUT] (valid)"),
    OpSpec(name="conv2d", group="convolution",
           arg_names=("N", "H", "W", "C", "OC", "KH", "KW", "IC", "stride", "pad"),
           inputs=("input", "weight"), outputs=("output",), dims=_conv2d_dims,
           attrs={"dilation": 1},
           shapes=lambda a: {"input": (a["N"], a["H"], a["W"], a["C"]),
                             "weight": (a["OC"], a["KH"], a["KW"], a["IC"]),
                             "output": (a["N"], a["OH"], a["OW"], a["OC"])},
           reference=lambda a, t: {"output": conv2d_nhwc(t["input"], t["weight"], a["stride"],
                                                         a["pad"], a["dilation"], a["groups"])},
           reduction=lambda a: a["KH"] * a["KW"] * a["IC"], linear=True,
           doc="NHWC input, OHWI weight, NHWC output; zero padding; groups = C // IC"),
    OpSpec(name="conv2dnchw", group="convolution",
           arg_names=("N", "C", "H", "W", "OC", "IC", "KH", "KW", "stride", "pad"),
           inputs=("input", "weight"), outputs=("output",), dims=_conv2d_dims,
           attrs={"dilation": 1},
           shapes=lambda a: {"input": (a["N"], a["C"], a["H"], a["W"]),
                             "weight": (a["OC"], a["IC"], a["KH"], a["KW"]),
                             "output": (a["N"], a["OC"], a["OH"], a["OW"])},
           reference=lambda a, t: {"output": conv2d_nhwc(
               t["input"].transpose(0, 2, 3, 1), t["weight"].transpose(0, 2, 3, 1), a["stride"],
               a["pad"], a["dilation"], a["groups"]).transpose(0, 3, 1, 2)},
           reduction=lambda a: a["KH"] * a["KW"] * a["IC"], linear=True,
           doc="NCHW input, OIHW weight, NCHW output; zero padding; groups = C // IC"),
    OpSpec(name="depthwiseconv", group="convolution", arg_names=("H", "K", "C"),
           inputs=("x", "w"), outputs=("out",),
           shapes=lambda a: {"x": (a["H"], a["H"], a["C"]), "w": (a["K"], a["K"], a["C"]),
                             "out": (a["H"] - a["K"] + 1, a["H"] - a["K"] + 1, a["C"])},
           reference=_depthwise, reduction=lambda a: a["K"] * a["K"], linear=True,
           doc="out[i,j,c] = sum_{p,q} x[i+p,j+q,c] * w[p,q,c]; HWC, square, valid"),
]
