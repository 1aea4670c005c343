"""numpy references of the wild kernels, keyed by file stem (``ggmlhip_X`` shares ``ggml_X``).

Each function takes the entry's arguments before the run (``{param name: array or scalar}``)
and returns ``{output param name: expected array}``; it only reads the scalars the entry
takes, so it also checks runs on inferred inputs (any sizes). ``check`` compares with
|got - want| <= atol + rtol * |want| (case ``tolerance``, default rtol 1e-4, atol 1e-4 scaled
by sqrt of the reduction length where one is given). A reference returns
``{"_undefined": why}`` instead when the arguments violate a precondition of the kernel, so that
its output is not defined (unsorted COO indices, a mode value the kernel has no branch for):
``check`` then reports "no reference: why" (not a match) rather than a misleading mismatch.
"""
from __future__ import annotations

import math

import numpy as np

F32 = np.float32
FLT_MAX = np.finfo(np.float32).max


def _i(v):
    return int(v)


def ggml_arange(a):
    n = _i(a["ne0"])
    return {"dst": F32(a["start"]) + F32(a["step"]) * np.arange(n, dtype=F32)}


def ggml_diag_mask_inf(a):
    nc, nr, rpc, npast = (_i(a[k]) for k in ("ncols", "nrows", "rows_per_channel", "n_past"))
    x = a["x"].reshape(-1)[:nc * nr].reshape(nr, nc).astype(F32)
    col = np.arange(nc)[None, :]
    row = np.arange(nr)[:, None]
    mask = (col > npast + row % rpc).astype(F32)
    return {"dst": x - mask * FLT_MAX}


def ggml_scale(a):
    n = _i(a["n"])
    return {"dst": F32(a["scale"]) * a["x"].reshape(-1)[:n] + F32(a["bias"])}


def ggml_clamp(a):
    k = _i(a["k"])
    return {"dst": np.minimum(np.maximum(a["x"].reshape(-1)[:k], F32(a["min"])), F32(a["max"]))}


def ggml_timestep_embedding(a):
    n, dim, mp = _i(a["ne00"]), _i(a["dim"]), _i(a["max_period"])
    ne0 = dim + dim % 2
    half = dim // 2
    t = a["timesteps"].reshape(-1)[:n].astype(np.float64)
    out = np.zeros((n, ne0))
    j = np.arange(half)
    freq = np.exp(-math.log(mp) * j / half) if half else j
    arg = t[:, None] * freq[None, :]
    out[:, :half] = np.cos(arg)
    out[:, half:2 * half] = np.sin(arg)
    return {"dst": out, "_tol": (1e-4, 2e-3)}     # float32 sin/cos of arguments up to 1e3


def ggml_argmax(a):
    nc, nr = _i(a["ne00"]), _i(a["nrows"])
    return {"dst": np.argmax(a["x"].reshape(-1)[:nc * nr].reshape(nr, nc), axis=1).astype(np.int32)}


def ggml_softcap(a):
    k = _i(a["k"])
    return {"dst": np.tanh(float(a["scale"]) * a["x"].reshape(-1)[:k].astype(np.float64)) * float(a["softcap"])}


def ggml_norm(a):
    nc, nr = _i(a["ncols"]), _i(a["nrows"])
    x = a["x"].reshape(-1)[:nc * nr].reshape(nr, nc).astype(np.float64)
    m = x.mean(1, keepdims=True)
    v = (x * x).mean(1, keepdims=True) - m * m
    return {"dst": (x - m) / np.sqrt(v + float(a["eps"])), "_R": nc}


def ggml_group_norm(a):
    g, gs, ne = _i(a["num_groups"]), _i(a["group_size"]), _i(a["ne_elements"])
    x = a["x"].reshape(-1)[:ne].astype(np.float64)
    out = np.array(a["x"], dtype=np.float64).reshape(-1)[:ne].copy()
    for j in range(g):
        s = x[j * gs:min(j * gs + gs, ne)]
        if s.size == 0:
            continue
        d = s - s.sum() / gs
        out[j * gs:j * gs + s.size] = d / np.sqrt((d * d).sum() / gs + float(a["eps"]))
    return {"dst": out, "_R": gs}


def ggml_sum_rows(a):
    nc, nr = _i(a["ncols"]), _i(a["nrows"])
    return {"dst": a["x"].reshape(-1)[:nc * nr].reshape(nr, nc).astype(np.float64).sum(1), "_R": nc}


def ggml_pool2d(a):
    nc, ih, iw, oh, ow, kh, kw, sh, sw, ph, pw, op = (_i(a[k]) for k in
                                                       ("nc", "ih", "iw", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw", "op"))
    x = a["src"].reshape(-1)[:nc * ih * iw].reshape(nc, ih, iw).astype(np.float64)
    out = np.zeros((nc, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * sh - ph, j * sw - pw
            win = x[:, max(0, h0):min(ih, h0 + kh), max(0, w0):min(iw, w0 + kw)].reshape(nc, -1)
            if op == 0:
                out[:, i, j] = win.max(1) if win.shape[1] else -FLT_MAX
            else:
                out[:, i, j] = win.sum(1) / (kh * kw)
    return {"dst": out}


def ggml_count_equal(a):
    n = _i(a["ne"])
    return {"dst": np.array([np.sum(a["x"].reshape(-1)[:n] == a["y"].reshape(-1)[:n])], np.int64)}


# ---------------------------------------------------------------- mmcv
def mmcv_sigmoid_focal_loss(a):
    n, c = _i(a["num_samples"]), _i(a["num_classes"])
    x = a["input"].reshape(-1)[:n * c].reshape(n, c).astype(np.float64)
    t = a["target"].reshape(-1)[:n]
    g, al = float(a["gamma"]), float(a["alpha"])
    p = 1 / (1 + np.exp(-x))
    fm = np.finfo(np.float32).tiny
    fp = (t[:, None] == np.arange(c)[None, :]).astype(np.float64)
    tp = (1 - p) ** g * np.log(np.maximum(p, fm))
    tn = p ** g * np.log(np.maximum(1 - p, fm))
    out = -fp * al * tp - (1 - fp) * (1 - al) * tn
    return {"output": out * a["weight"].reshape(-1)[t][:, None]}


def _bilinear(img, h, w, y, x):
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    yl, xl = int(y), int(x)
    if yl >= h - 1:
        yh = yl = h - 1
        y = float(yl)
    else:
        yh = yl + 1
    if xl >= w - 1:
        xh = xl = w - 1
        x = float(xl)
    else:
        xh = xl + 1
    ly, lx = y - yl, x - xl
    hy, hx = 1 - ly, 1 - lx
    return hy * hx * img[yl, xl] + hy * lx * img[yl, xh] + ly * hx * img[yh, xl] + ly * lx * img[yh, xh]


def mmcv_roi_align(a):
    R, C, H, W = (_i(a[k]) for k in ("num_rois", "channels", "height", "width"))
    PH, PW, sr, mode, al = (_i(a[k]) for k in ("aligned_height", "aligned_width", "sampling_ratio", "pool_mode", "aligned"))
    if mode not in (0, 1):
        return {"_undefined": f"pool_mode {mode} is neither 0 (max) nor 1 (avg): the kernel writes no output"}
    ss = float(a["spatial_scale"])
    inp = a["input"].astype(np.float64).reshape(-1)
    rois = a["rois"].reshape(-1)[:R * 5].reshape(R, 5).astype(np.float64)
    out = np.zeros((R, C, PH, PW))
    for n in range(R):
        b = int(rois[n, 0])
        off = 0.5 if al else 0.0
        sw_, sh_, ew, eh = (rois[n, 1] * ss - off, rois[n, 2] * ss - off, rois[n, 3] * ss - off, rois[n, 4] * ss - off)
        rw, rh = ew - sw_, eh - sh_
        if not al:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / PH, rw / PW
        gh = sr if sr > 0 else int(math.ceil(rh / PH))
        gw = sr if sr > 0 else int(math.ceil(rw / PW))
        for c in range(C):
            img = inp[(b * C + c) * H * W:(b * C + c + 1) * H * W].reshape(H, W)
            for ph in range(PH):
                for pw in range(PW):
                    vals = [_bilinear(img, H, W, sh_ + ph * bh + (iy + .5) * bh / gh, sw_ + pw * bw + (ix + .5) * bw / gw)
                            for iy in range(gh) for ix in range(gw)]
                    if mode == 1:
                        out[n, c, ph, pw] = sum(vals) / max(gh * gw, 1)
                    else:
                        out[n, c, ph, pw] = max(vals) if vals else -FLT_MAX
    res = {"output": out}
    return res


def mmcv_gather_points(a):
    b, c, n, m = _i(a["b"]), _i(a["c"]), _i(a["n"]), _i(a["npoints"])
    pts = a["points"].reshape(-1)[:b * c * n].reshape(b, c, n)
    idx = a["idx"].reshape(-1)[:b * m].reshape(b, m)
    return {"out": np.stack([pts[i][:, idx[i]] for i in range(b)])}


def mmcv_three_nn(a):
    b, n, m = _i(a["b"]), _i(a["n"]), _i(a["m"])
    u = a["unknown"].reshape(-1)[:b * n * 3].reshape(b, n, 3).astype(np.float64)
    k = a["known"].reshape(-1)[:b * m * 3].reshape(b, m, 3).astype(np.float64)
    d = ((u[:, :, None, :] - k[:, None, :, :]) ** 2).sum(-1)
    idx = np.argsort(d, axis=2, kind="stable")[:, :, :3]
    return {"dist2": np.take_along_axis(d, idx, 2), "idx": idx.astype(np.int32)}


def mmcv_three_interpolate(a):
    b, c, m, n = _i(a["b"]), _i(a["c"]), _i(a["m"]), _i(a["n"])
    p = a["points"].reshape(-1)[:b * c * m].reshape(b, c, m).astype(np.float64)
    idx = a["idx"].reshape(-1)[:b * n * 3].reshape(b, n, 3)
    w = a["weight"].reshape(-1)[:b * n * 3].reshape(b, n, 3).astype(np.float64)
    out = np.stack([(p[i][:, idx[i]] * w[i][None]).sum(-1) for i in range(b)])
    return {"out": out}


def mmcv_tin_shift(a):
    B, T, C, HW, G = (_i(a[k]) for k in ("batch_size", "t_size", "channels", "hw_size", "group_size"))
    x = a["input"].reshape(-1)[:B * T * C * HW].reshape(B, T, C, HW)
    sh = a["shift"].reshape(-1)[:B * G].reshape(B, G)
    out = np.zeros_like(x)
    gc = C // G
    for n in range(B):
        for j in range(C):
            s = int(sh[n, j // gc])
            for t in range(T):
                if 0 <= t + s < T:
                    out[n, t + s, j] = x[n, t, j]
    return {"output": out}


def mmcv_ball_query(a):
    b, n, m, ns = _i(a["b"]), _i(a["n"]), _i(a["m"]), _i(a["nsample"])
    nx = a["new_xyz"].reshape(-1)[:b * m * 3].reshape(b, m, 3).astype(np.float32)
    xy = a["xyz"].reshape(-1)[:b * n * 3].reshape(b, n, 3).astype(np.float32)
    lo, hi = F32(a["min_radius"]) ** 2, F32(a["max_radius"]) ** 2
    out = np.zeros((b, m, ns), np.int32)
    for i in range(b):
        for j in range(m):
            d = ((xy[i] - nx[i, j]) ** 2).sum(-1, dtype=np.float32)
            hits = [k for k in range(n) if d[k] == 0 or (lo <= d[k] < hi)]
            if hits:
                out[i, j, :] = hits[0]
                out[i, j, :min(ns, len(hits))] = hits[:ns]
    return {"idx": out}


def _fps_pick(temp, stride):
    """The kernel's arg-max: thread t scans k = t, t + stride, ... keeping the first strictly
    larger value (best starts at -1, index 0); then the shared-memory tree reduction (slot i
    against slot i + h, h = stride/2 .. 1) keeps slot i on ties. Among equal maxima this is not
    the smallest index (np.argmax)."""
    n = temp.size
    rows = -(-n // stride)
    pad = np.full(rows * stride, -np.inf, np.float32)
    pad[:n] = temp
    best, besti = np.full(stride, -1.0, np.float32), np.zeros(stride, np.int64)
    for r in range(rows):
        row = pad[r * stride:(r + 1) * stride]
        take = row > best
        besti = np.where(take, np.arange(r * stride, (r + 1) * stride), besti)
        best = np.where(take, row, best)
    h = stride // 2
    while h >= 1:
        take = best[h:2 * h] > best[:h]
        besti[:h] = np.where(take, besti[h:2 * h], besti[:h])
        best[:h] = np.maximum(best[:h], best[h:2 * h])
        h //= 2
    return int(besti[0])


def mmcv_furthest_point_sample(a):
    b, n, m = _i(a["b"]), _i(a["n"]), _i(a["m"])
    ds = a["dataset"].reshape(-1)[:b * n * 3].reshape(b, n, 3).astype(np.float32)
    # opt_n_threads(n): the block size, which is the scan stride
    stride = max(min(1 << int(math.log(n) / math.log(2.0)), 1024), 1) if n > 0 else 1
    out = np.zeros((b, max(m, 0)), np.int32)
    for i in range(b):
        temp = a["temp"].reshape(-1)[i * n:(i + 1) * n].astype(np.float32).copy()
        old = 0
        for j in range(1, m):
            d = ((ds[i] - ds[i, old]) ** 2).sum(-1, dtype=np.float32)
            temp = np.minimum(d, temp)
            old = _fps_pick(temp, stride)
            out[i, j] = old
    return {"idxs": out}


def mmcv_masked_im2col(a):
    C, H, W, mc, kh, kw, ph, pw = (_i(a[k]) for k in ("channels", "height", "width", "mask_cnt", "kernel_h", "kernel_w",
                                                      "pad_h", "pad_w"))
    x = a["bottom_data"].reshape(-1)[:C * H * W].reshape(C, H, W)
    hi, wi = a["mask_h_idx"].reshape(-1)[:mc], a["mask_w_idx"].reshape(-1)[:mc]
    out = np.zeros((C, kh, kw, mc), np.float32)
    for m in range(mc):
        for i in range(kh):
            for j in range(kw):
                h, w = int(hi[m]) - ph + i, int(wi[m]) - pw + j
                if 0 <= h < H and 0 <= w < W:
                    out[:, i, j, m] = x[:, h, w]
    return {"top_data": out.reshape(C * kh * kw, mc)}


# ---------------------------------------------------------------- torch-sparse / torch-cluster
def sparse_ind2ptr(a):
    n, M = _i(a["numel"]), _i(a["M"])
    ind = a["ind"].reshape(-1)[:n]
    if n and (np.any(np.diff(ind) < 0) or ind[0] < 0 or ind[-1] >= M):
        # thread t writes out[ind[t-1]+1 .. ind[t]]: with unsorted indices the ranges overlap
        # (the last writer wins, a race) or leave entries unwritten (fresh device memory)
        return {"_undefined": "ind is not sorted row indices in [0, M): the kernel's output is defined "
                              "for a COO -> CSR conversion of sorted indices only"}
    return {"out": np.searchsorted(ind, np.arange(M + 1), side="left").astype(np.int64)}


def sparse_ptr2ind(a):
    rows, E = _i(a["rows"]), _i(a["E"])
    ptr = a["ptr"].reshape(-1)[:rows + 1]
    out = np.array(a.get("_out_init", np.zeros(E, np.int64)), np.int64)
    for r in range(rows):
        out[int(ptr[r]):int(ptr[r + 1])] = r
    return {"out": out}


def sparse_spmm_sum(a):
    M, N, K = _i(a["M"]), _i(a["N"]), _i(a["K"])
    rp, col, val = a["rowptr"].reshape(-1), a["col"].reshape(-1), a["value"].reshape(-1).astype(np.float64)
    mat = a["mat"].reshape(-1)[:N * K].reshape(N, K).astype(np.float64)
    out = np.zeros((M, K))
    for r in range(M):
        for e in range(int(rp[r]), int(rp[r + 1])):
            out[r] += val[e] * mat[int(col[e])]
    return {"out": out}


def cluster_grid(a):
    n, D = _i(a["numel"]), _i(a["D"])
    pos = a["pos"].reshape(-1)[:n * D].reshape(n, D).astype(np.float32)
    size, start, end = (a[k].reshape(-1)[:D].astype(np.float32) for k in ("size", "start", "end"))
    c = np.zeros(n, np.int64)
    k = 1
    for d in range(D):
        c += ((pos[:, d] - start[d]) / size[d]).astype(np.int64) * k
        k *= int((end[d] - start[d]) / size[d]) + 1
    return {"out": c}


# ---------------------------------------------------------------- amd-aiter
def aiter_mm_shared(a):
    M, K, N = _i(a["M"]), _i(a["K"]), _i(a["N"])
    return {"C": a["A"].reshape(-1)[:M * K].reshape(M, K).astype(np.float64) @ a["B"].reshape(-1)[:K * N].reshape(K, N),
            "_R": K}


def aiter_hgemv(a):
    M, K = _i(a["M"]), _i(a["K"])
    return {"y": a["A"].reshape(-1)[:M * K].reshape(M, K).astype(np.float64) @ a["x"].reshape(-1)[:K].astype(np.float64),
            "_R": K}


# ---------------------------------------------------------------- mmcv Cambricon helpers
def mmcv_int2float(a):
    n = _i(a["n"])
    return {"dst": a["src"].reshape(-1)[:n].astype(np.float32)}


def mmcv_float2int(a):
    n = _i(a["n"])     # __bang_float2int32 rounds toward zero (BANG C guide: cvt rounding mode tz)
    return {"dst": np.trunc(a["src"].reshape(-1)[:n]).astype(np.int32)}


def mmcv_float2half(a):
    n = _i(a["n"])
    return {"dst": a["src"].reshape(-1)[:n].astype(np.float16)}


def mmcv_relun(a):
    n = _i(a["n"])
    t = F32(a["threshold"])
    x = a["src"].reshape(-1)[:n]
    return {"dst": np.maximum(x, 0) if t == 0 else np.minimum(np.maximum(x, 0), t)}


def mmcv_load_str2d(a):
    r, c, s = _i(a["rows"]), _i(a["cols"]), _i(a["src_str"])
    src = a["src"].reshape(-1)
    return {"dst": np.stack([src[i * s:i * s + c] for i in range(r)]) if r else np.zeros((0, c))}


def mmcv_store_str2d(a):
    r, c, d = _i(a["rows"]), _i(a["cols"]), _i(a["dst_str"])
    src = a["src"].reshape(-1)[:r * c].reshape(r, c)
    out = np.array(a["dst"], copy=True).reshape(-1)
    for i in range(r):
        out[i * d:i * d + c] = src[i]
    return {"dst": out}


# ---------------------------------------------------------------- SimSIMD / hnswlib
def _ab(a, key="n"):
    n = _i(a[key])
    return a["a"].reshape(-1)[:n].astype(np.float64), a["b"].reshape(-1)[:n].astype(np.float64), n


def simsimd_dot_f32(a):
    x, y, n = _ab(a)
    return {"result": np.array([x @ y]), "_R": n}


simsimd_dot_f64 = simsimd_dot_f32
simsimd_dot_i8 = simsimd_dot_f32
simsimd_dot_u8 = simsimd_dot_f32


def simsimd_l2sq_f32(a):
    x, y, n = _ab(a)
    return {"result": np.array([((x - y) ** 2).sum()]), "_R": n}


simsimd_l2sq_i8 = simsimd_l2sq_f32
simsimd_l2sq_u8 = simsimd_l2sq_f32


def simsimd_cos_f32(a):
    x, y, n = _ab(a)
    ab, a2, b2 = x @ y, x @ x, y @ y
    if a2 == 0 and b2 == 0:
        r = 0.0
    elif ab == 0:
        r = 1.0
    else:
        r = max(0.0, 1 - ab / math.sqrt(a2 * b2))
    return {"result": np.array([r]), "_R": n}


def simsimd_hamming_b8(a):
    x = a["a"].reshape(-1)[:_i(a["n_words"])]
    y = a["b"].reshape(-1)[:_i(a["n_words"])]
    return {"result": np.array([float(np.unpackbits(np.bitwise_xor(x, y)).sum())])}


def simsimd_sum_f32(a):
    x, y, n = _ab(a)
    return {"result": x + y}


def simsimd_scale_f32(a):
    n = _i(a["n"])
    return {"result": float(a["alpha"]) * a["a"].reshape(-1)[:n].astype(np.float64)}


def simsimd_wsum_f32(a):
    x, y, n = _ab(a)
    return {"result": float(a["alpha"]) * x + float(a["beta"]) * y}


def simsimd_fma_f32(a):
    x, y, n = _ab(a)
    z = a["c"].reshape(-1)[:n].astype(np.float64)
    return {"result": float(a["alpha"]) * x * y + float(a["beta"]) * z}


def hnswlib_l2sqr_avx512(a):
    x, y, n = _ab(a, "dim")
    n16 = n >> 4 << 4          # the AVX-512 loop covers qty / 16 * 16 elements only
    return {"result": np.array([((x[:n16] - y[:n16]) ** 2).sum()]), "_R": n}


def hnswlib_ip_avx512(a):
    x, y, n = _ab(a, "dim")
    n16 = n >> 4 << 4
    return {"result": np.array([1.0 - x[:n16] @ y[:n16]]), "_R": n}


def reference(stem: str):
    return globals()[stem.replace("ggmlhip_", "ggml_")]


def check(case: dict, before: dict, after: dict) -> tuple[bool, str]:
    """Compare the outputs in ``after`` ({name: array}) with the reference on ``before``."""
    want = reference(case["name"])(before)
    if "_undefined" in want:      # the inputs violate a precondition of the kernel: nothing to compare
        return False, f"no reference: {want['_undefined']}"
    tol = case.get("tolerance", {})
    rtol, atol = tol.get("rtol", 1e-4), tol.get("atol", 1e-4)
    if "_tol" in want:
        rtol, atol = want["_tol"]
    f = math.sqrt(max(1, want.get("_R", 1)))
    msgs = []
    for name, w in want.items():
        if name.startswith("_"):
            continue
        g = np.asarray(after[name]).reshape(-1)
        w = np.asarray(w).reshape(-1)
        if g.size < w.size:
            return False, f"{name}: {g.size} elements, reference has {w.size}"
        g = g[:w.size]
        if np.issubdtype(g.dtype, np.integer) and np.issubdtype(w.dtype, np.integer):
            bad = g != w
        else:
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            with np.errstate(invalid="ignore"):
                bad = ~((np.abs(g64 - w64) <= f * atol + rtol * np.abs(w64)) | (g64 == w64)
                        | (np.isnan(g64) & np.isnan(w64)))
        if bad.any():
            i = int(np.argmax(bad))
            msgs.append(f"{name}: {int(bad.sum())}/{w.size} differ, first [{i}] got {g[i]} want {w[i]}")
    return not msgs, "; ".join(msgs) or "ok"
