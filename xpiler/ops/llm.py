"""LLM operators: mha, gqa, gatemlp, deformable (multi-scale deformable attention)."""
from __future__ import annotations

import math

import numpy as np

from .elementwise import sigmoid, softmax
from .matrix import matmul
from .schema import CaseError
from .spec import OpSpec


def attention(q, k, v, scale, causal=False):
    """softmax(q @ k^T * scale) @ v over the last two axes (float64)."""
    s = matmul(q, np.swapaxes(k, -1, -2)).astype(np.float64) * scale
    if causal:
        m, n = s.shape[-2:]
        mask = np.triu(np.ones((m, n), dtype=bool), k=1 + n - m)
        s = np.where(mask, -np.inf, s)
    return matmul(softmax(s, axis=-1), v)


def gqa(q, k, v, scale, causal=False):
    """q[B,H,M,D], k/v[B,G,N,D]; query head h uses kv head h // (H // G)."""
    h, g = q.shape[1], k.shape[1]
    if h % g:
        raise CaseError(f"gqa: {h} query heads are not a multiple of {g} kv heads")
    rep = h // g
    return attention(q, np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1), scale, causal)


def silu(x):
    x = np.asarray(x, dtype=np.float64)
    return x * sigmoid(x)


def ms_deform_attn(value, spatial_shapes, level_start, locations, weights):
    """Multi-scale deformable attention core (Deformable DETR ``ms_deform_attn``).

    value[N,S,M,D], spatial_shapes[L,2] (H,W), level_start[L], locations[N,Lq,M,L,P,2]
    (x, y) normalised to [0,1], weights[N,Lq,M,L,P] -> out[N,Lq,M*D]. Bilinear sampling at
    pixel (x*W - 0.5, y*H - 0.5) (grid_sample, align_corners=False) with zero padding.
    """
    value = np.asarray(value, dtype=np.float64)
    n, s, m, d = value.shape
    _, lq, _, nl, p, _ = locations.shape
    out = np.zeros((n, lq, m, d))
    ni = np.arange(n)[:, None, None, None]
    mi = np.arange(m)[None, None, :, None]
    for lvl in range(nl):
        h, w = (int(v) for v in spatial_shapes[lvl])
        st = int(level_start[lvl])
        vl = value[:, st:st + h * w].reshape(n, h, w, m, d)
        x = locations[:, :, :, lvl, :, 0] * w - 0.5       # [N,Lq,M,P]
        y = locations[:, :, :, lvl, :, 1] * h - 0.5
        x0, y0 = np.floor(x), np.floor(y)
        fx, fy = x - x0, y - y0
        samp = np.zeros((n, lq, m, p, d))
        for dy, wy in ((0, 1 - fy), (1, fy)):
            for dx, wx in ((0, 1 - fx), (1, fx)):
                yi = (y0 + dy).astype(np.int64)
                xi = (x0 + dx).astype(np.int64)
                ok = (yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)
                g = vl[ni, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1), mi]  # [N,Lq,M,P,D]
                samp += (np.where(ok, wy * wx, 0.0))[..., None] * g
        out += np.einsum("nqmpd,nqmp->nqmd", samp, weights[:, :, :, lvl, :])
    return out.reshape(n, lq, m * d)


def _mha_scale(a, d):
    return float(a["scale"]) if a.get("scale") is not None else 1.0 / math.sqrt(d)


def _gqa_dims(args, a):
    g = a.get("kv_heads") or max(1, a["H"] // 4)
    if a["H"] % g:
        raise CaseError(f"gqa: H={a['H']} is not a multiple of kv_heads={g}")
    return {"kv_heads": g}


def _deform_dims(args, a):
    ss = a.get("spatial_shapes")
    if ss is None:
        ss = [[2 ** (a["L"] + 1 - l)] * 2 for l in range(a["L"])]
    if len(ss) != a["L"]:
        raise CaseError(f"deformable: spatial_shapes has {len(ss)} levels, L = {a['L']}")
    ss = [[int(h), int(w)] for h, w in ss]
    starts = [0]
    for h, w in ss[:-1]:
        starts.append(starts[-1] + h * w)
    return {"spatial_shapes": ss, "level_start_index": starts,
            "S": sum(h * w for h, w in ss)}


def _deform_make(a, tensor, shape, dtype, rng):
    if tensor == "spatial_shapes":
        return np.asarray(a["spatial_shapes"], dtype=np.int64).reshape(shape)
    if tensor == "level_start_index":
        return np.asarray(a["level_start_index"], dtype=np.int64).reshape(shape)
    if tensor == "sampling_locations":
        return rng.uniform(-0.05, 1.05, size=shape)
    if tensor == "attention_weights":
        n, lq, m, nl, p = shape
        w = rng.uniform(-2.0, 2.0, size=(n, lq, m, nl * p))
        return softmax(w, axis=-1).reshape(shape)
    return None


def _deform_ref(a, t):
    ss = t.get("spatial_shapes", np.asarray(a["spatial_shapes"]))
    ls = t.get("level_start_index", np.asarray(a["level_start_index"]))
    return {"out": ms_deform_attn(t["value"], ss, ls, t["sampling_locations"],
                                  t["attention_weights"])}


SPECS = [
    OpSpec(name="mha", group="LLM", arg_names=("B", "H", "S", "D"), inputs=("Q", "K", "V"),
           outputs=("out",), attrs={"scale": None, "causal": False},
           shapes=lambda a: {n: (a["B"], a["H"], a["S"], a["D"]) for n in ("Q", "K", "V", "out")},
           reference=lambda a, t: {"out": attention(t["Q"], t["K"], t["V"],
                                                    _mha_scale(a, a["D"]), a["causal"])},
           reduction=lambda a: a["S"] + a["D"],
           doc="out = softmax(Q K^T * scale [+ causal mask]) V; Q,K,V,out [B,H,S,D]; "
               "scale default 1/sqrt(D)"),
    OpSpec(name="gqa", group="LLM", arg_names=("B", "H", "M", "K", "N"), inputs=("Q", "K", "V"),
           outputs=("out",), attrs={"scale": None, "causal": False, "kv_heads": None},
           dims=_gqa_dims,
           shapes=lambda a: {"Q": (a["B"], a["H"], a["M"], a["K"]),
                             "K": (a["B"], a["kv_heads"], a["N"], a["K"]),
                             "V": (a["B"], a["kv_heads"], a["N"], a["K"]),
                             "out": (a["B"], a["H"], a["M"], a["K"])},
           reference=lambda a, t: {"out": gqa(t["Q"], t["K"], t["V"], _mha_scale(a, a["K"]),
                                              a["causal"])},
           reduction=lambda a: a["N"] + a["K"],
           doc="grouped-query attention: Q[B,H,M,K] (M queries, head dim K), K/V[B,G,N,K] "
               "(N keys, G = attr kv_heads, default H//4); head h reads kv head h // (H//G)"),
    OpSpec(name="gatemlp", group="LLM", arg_names=("B", "K", "N"), inputs=("X", "A", "B"),
           outputs=("out",),
           shapes=lambda a: {"X": (a["B"], a["K"]), "A": (a["K"], a["N"]), "B": (a["K"], a["N"]),
                             "out": (a["B"], a["N"])},
           reference=lambda a, t: {"out": silu(matmul(t["X"], t["A"])) * matmul(t["X"], t["B"])},
           reduction=lambda a: a["K"], doc="out[B,N] = silu(X[B,K] @ A[K,N]) * (X @ B[K,N])"),
    OpSpec(name="deformable", group="LLM", arg_names=("N", "M", "D", "Lq", "L", "P"),
           inputs=("value", "spatial_shapes", "level_start_index", "sampling_locations",
                   "attention_weights"),
           outputs=("out",), optional=frozenset({"spatial_shapes", "level_start_index"}),
           derived=frozenset({"spatial_shapes", "level_start_index"}),
           attrs={"spatial_shapes": None}, dims=_deform_dims,
           shapes=lambda a: {"value": (a["N"], a["S"], a["M"], a["D"]),
                             "spatial_shapes": (a["L"], 2), "level_start_index": (a["L"],),
                             "sampling_locations": (a["N"], a["Lq"], a["M"], a["L"], a["P"], 2),
                             "attention_weights": (a["N"], a["Lq"], a["M"], a["L"], a["P"]),
                             "out": (a["N"], a["Lq"], a["M"] * a["D"])},
           reference=_deform_ref, make_tensor=_deform_make,
           reduction=lambda a: 4 * a["L"] * a["P"],
           doc="multi-scale deformable attention (ms_deform_attn core); attr spatial_shapes "
               "[[H,W]] per level (default 2^(L+1-l) squares)"),
]
