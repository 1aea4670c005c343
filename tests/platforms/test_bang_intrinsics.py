"""Every __bang_* intrinsic of PLATFORMS.md §2 against its definition computed in numpy.

Kernels are generated per case, batched into a few translation units (compiled concurrently,
cached by content hash) and run in strict mode on the mtp_592 profile (5xx: bf16, __bang_div,
__bang_maximum exist there) as BLOCK tasks; operands go GDRAM -> NRAM/WRAM -> intrinsic -> GDRAM.
A last test checks that the generated C++ is current with the TOML knowledge base.
"""
from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _bang_harness as H  # noqa: E402

from platforms.bang import emulate, intrinsics  # noqa: E402

BF16 = ml_dtypes.bfloat16
CT = {np.float32: "float", np.float16: "half", BF16: "bfloat16_t", np.int32: "int", np.int16: "short",
      np.int8: "signed char", np.uint8: "unsigned char", np.uint16: "unsigned short", np.uint32: "unsigned int"}
PROFILE = emulate.load_profile("mtp_592")
N = 256
RNG = np.random.default_rng(1234)


def ct(dt) -> str:
    return CT[np.dtype(dt).type] if np.dtype(dt).type in CT else CT[dt]


@dataclass
class Case:
    id: str
    group: str
    src: str
    kernel: str
    args: list
    check: object  # callable(outputs: list[np.ndarray]) -> None
    nout: int = 1


CASES: list[Case] = []


def add(case: Case) -> None:
    CASES.append(case)


def rand(dt, n=N, lo=-4.0, hi=4.0):
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return RNG.integers(max(info.min, -100 if dt.kind == "i" else 0), min(info.max, 100), n, endpoint=True).astype(dt)
    return RNG.uniform(lo, hi, n).astype(np.float32).astype(dt)


def close(got, want, rtol=0.0, atol=0.0):
    got = np.asarray(got)
    want = np.asarray(want)
    if rtol == 0 and atol == 0:
        if got.dtype.kind == "f" or got.dtype == BF16:
            g, w = got.astype(np.float64), want.astype(np.float64)
            ok = (g == w) | (np.isnan(g) & np.isnan(w))
            assert ok.all(), f"mismatch at {np.nonzero(~ok)[0][:8]}: got {g[~ok][:8]}, want {w[~ok][:8]}"
        else:
            assert np.array_equal(got, want), f"got {got[:16]}, want {want[:16]}"
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)


def cast(x, dt):
    """numpy reference rounding: float64/32 -> dt (RNE)."""
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(dt) if np.dtype(dt) != np.float32 \
        else np.asarray(x, dtype=np.float64).astype(np.float32)


# ------------------------------------------------------------------------------ kernel shapes
def k_unary(name, dt, x, ref, group, tol=(0, 0), ident=None, n=N):
    c = ct(dt)
    kn = f"k_{ident or name.strip('_')}_{c.replace(' ', '_')}"
    src = f"""__mlu_global__ void {kn}({c} *out, const {c} *in, int n) {{
  __nram__ {c} a[{n}];
  __nram__ {c} b[{n}];
  __memcpy(a, in, n * sizeof({c}), GDRAM2NRAM);
  {name}(b, a, n);
  __memcpy(out, b, n * sizeof({c}), NRAM2GDRAM);
}}"""
    out = np.zeros(n, dt)
    add(Case(f"{name}[{c}]", group, src, kn, [out, x, n], lambda o: close(o[0], ref, *tol)))


def k_binary(name, dt, x, y, ref, group, tol=(0, 0), ident=None):
    c = ct(dt)
    kn = f"k_{ident or name.strip('_')}_{c.replace(' ', '_')}"
    src = f"""__mlu_global__ void {kn}({c} *out, const {c} *in0, const {c} *in1, int n) {{
  __nram__ {c} a[{N}];
  __nram__ {c} b[{N}];
  __nram__ {c} d[{N}];
  __memcpy(a, in0, n * sizeof({c}), GDRAM2NRAM);
  __memcpy(b, in1, n * sizeof({c}), GDRAM2NRAM);
  {name}(d, a, b, n);
  __memcpy(out, d, n * sizeof({c}), NRAM2GDRAM);
}}"""
    out = np.zeros(N, dt)
    add(Case(f"{name}[{c}]", group, src, kn, [out, x, y, N], lambda o: close(o[0], ref, *tol)))


def k_scalar(name, dt, x, v, ref, group, ident=None):
    c = ct(dt)
    kn = f"k_{ident or name.strip('_')}_{c.replace(' ', '_')}"
    pt = "float" if np.dtype(dt).kind == "f" or dt == BF16 else "int"
    src = f"""__mlu_global__ void {kn}({c} *out, const {c} *in, {pt} v, int n) {{
  __nram__ {c} a[{N}];
  __nram__ {c} d[{N}];
  __memcpy(a, in, n * sizeof({c}), GDRAM2NRAM);
  {name}(d, a, ({c})v, n);
  __memcpy(out, d, n * sizeof({c}), NRAM2GDRAM);
}}"""
    out = np.zeros(N, dt)
    add(Case(f"{name}[{c}]", group, src, kn, [out, x, v, N], lambda o: close(o[0], ref)))


def k_cycle(name, dt, x, seg, ref, group):
    c = ct(dt)
    kn = f"k_{name.strip('_')}_{c.replace(' ', '_')}"
    src = f"""__mlu_global__ void {kn}({c} *out, const {c} *in, const {c} *sg, int n, int m) {{
  __nram__ {c} a[{N}];
  __nram__ {c} s[{N}];
  __nram__ {c} d[{N}];
  __memcpy(a, in, n * sizeof({c}), GDRAM2NRAM);
  __memcpy(s, sg, m * sizeof({c}), GDRAM2NRAM);
  {name}(d, a, s, n, m);
  __memcpy(out, d, n * sizeof({c}), NRAM2GDRAM);
}}"""
    out = np.zeros(N, dt)
    add(Case(f"{name}[{c}]", group, src, kn, [out, x, seg, N, len(seg)], lambda o: close(o[0], ref)))


def k_custom(cid, group, kn, src, args, check):
    add(Case(cid, group, src, kn, args, check))


# ------------------------------------------------------------------------------ arithmetic
F, Hf = np.float32, np.float16
for dt in (F, Hf, BF16, np.int32, np.int16, np.int8):
    x, y = rand(dt), rand(dt)
    if dt == np.int32:  # overflow wraps
        x[:4] = np.iinfo(np.int32).max
        y[:4] = 7
    for name, op in (("__bang_add", np.add), ("__bang_sub", np.subtract), ("__bang_mul", np.multiply)):
        with np.errstate(over="ignore"):
            if dt in (F, Hf):
                ref = op(x, y)
            elif dt == BF16:
                ref = cast(op(x.astype(np.float32), y.astype(np.float32)), BF16)
            else:
                ref = op(x, y)  # numpy integer ops wrap
        k_binary(name, dt, x, y, ref, "arith")
k_binary("__bang_sub", np.uint8, rand(np.uint8), rand(np.uint8), None, "arith")
CASES[-1].check = (lambda xx, yy: (lambda o: close(o[0], (xx - yy).astype(np.uint8))))(CASES[-1].args[1], CASES[-1].args[2])

for dt in (F, Hf, np.int32):
    x = rand(dt)
    v = 3 if dt == np.int32 else 1.5
    for name, op in (("__bang_add_scalar", np.add), ("__bang_sub_scalar", np.subtract), ("__bang_mul_scalar", np.multiply)):
        k_scalar(name, dt, x, v, op(x, np.asarray(v, dt)), "arith")
for name, op in (("__bang_add_const", np.add), ("__bang_sub_const", np.subtract), ("__bang_mul_const", np.multiply)):
    x = rand(Hf)
    k_scalar(name, Hf, x, 0.75, op(x, np.float16(0.75)), "arith")

# __bang_div: element-wise, scalar divisor, deprecated 5-argument form
x, y = rand(F), rand(F, lo=0.5, hi=3)
k_binary("__bang_div", F, x, y, x / y, "arith")
xi, yi = rand(np.int32), rand(np.int32, N) % 9 + 1
k_binary("__bang_div", np.int32, xi, yi.astype(np.int32), (np.trunc(xi / yi)).astype(np.int32), "arith", ident="div_int")
xh, yh = rand(Hf), rand(Hf, lo=0.5, hi=3)
k_binary("__bang_div", Hf, xh, yh, (xh.astype(np.float32) / yh.astype(np.float32)).astype(Hf), "arith")
k_scalar("__bang_div", F, x, 2.5, x / np.float32(2.5), "arith", ident="div_scalar")
k_custom("__bang_div[deprecated 5-arg]", "arith", "k_div5",
         """__mlu_global__ void k_div5(float *out, const float *in0, const float *in1, int n) {
  __nram__ float a[256];
  __nram__ float b[256];
  __nram__ float t[256];
  __nram__ float d[256];
  __memcpy(a, in0, n * 4, GDRAM2NRAM);
  __memcpy(b, in1, n * 4, GDRAM2NRAM);
  __bang_div(d, a, b, t, n);
  __memcpy(out, d, n * 4, NRAM2GDRAM);
}""", [np.zeros(N, F), x, y, N], lambda o, x=x, y=y: close(o[0], x / y))

for dt in (F, Hf):
    x = rand(dt)
    k_unary("__bang_square", dt, x, x * x, "arith")
xs = rand(np.int8)
k_custom("__bang_square[short<-char]", "arith", "k_square_widen",
         """__mlu_global__ void k_square_widen(short *out, const signed char *in, int n) {
  __nram__ signed char a[256];
  __nram__ short d[256];
  __memcpy(a, in, n, GDRAM2NRAM);
  __bang_square(d, a, n);
  __memcpy(out, d, n * 2, NRAM2GDRAM);
}""", [np.zeros(N, np.int16), xs, N], lambda o, xs=xs: close(o[0], xs.astype(np.int16) ** 2))
for dt in (F, Hf, np.int32, np.int8):
    x = rand(dt)
    k_unary("__bang_abs", dt, x, np.abs(x), "arith")
for dt in (F, Hf):
    x = rand(dt)
    k_unary("__bang_relu", dt, x, np.maximum(x, 0), "arith")
    k_custom(f"__bang_relun[{ct(dt)}]", "arith", f"k_relun_{ct(dt)}",
             f"""__mlu_global__ void k_relun_{ct(dt)}({ct(dt)} *out, const {ct(dt)} *in, int n) {{
  __nram__ {ct(dt)} a[256];
  __memcpy(a, in, n * sizeof({ct(dt)}), GDRAM2NRAM);
  __bang_relun(a, a, n, ({ct(dt)})2.0f);
  __memcpy(out, a, n * sizeof({ct(dt)}), NRAM2GDRAM);
}}""", [np.zeros(N, dt), x, N], lambda o, x=x, dt=dt: close(o[0], np.minimum(np.maximum(x, 0), dt(2))))

CYCLE = {"__bang_cycle_add": np.add, "__bang_cycle_sub": np.subtract, "__bang_cycle_mul": np.multiply,
         "__bang_cycle_gt": lambda a, b: (a > b), "__bang_cycle_ge": lambda a, b: (a >= b),
         "__bang_cycle_lt": lambda a, b: (a < b), "__bang_cycle_le": lambda a, b: (a <= b),
         "__bang_cycle_eq": lambda a, b: (a == b), "__bang_cycle_ne": lambda a, b: (a != b),
         "__bang_cycle_maxequal": np.maximum, "__bang_cycle_minequal": np.minimum}
for name, op in CYCLE.items():
    for dt in (F, Hf):
        x, seg = rand(dt), rand(dt, 32)
        x[::5] = np.tile(seg, N // 32)[::5]  # some equal elements for eq/ne/ge/le
        ref = op(x, np.tile(seg, N // 32)).astype(dt)
        k_cycle(name, dt, x, seg, ref, "arith")
# cycle ops on integers
xi, si = rand(np.int16), rand(np.int16, 64)
k_cycle("__bang_cycle_add", np.int16, xi, si, (xi + np.tile(si, N // 64)).astype(np.int16), "arith")

# ------------------------------------------------------------------------------ unary math
ACT = {
    "exp": lambda x: np.where(x < -7.75, 5.96e-8, np.exp(x)),
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: np.where(x < -7.75, 0.0, np.where(x > 7.75, 1.0, 1 / (1 + np.exp(-x)))),
    "tanh": np.tanh,
    "gelu": lambda x: np.where(x < -3.875, -5.96e-8, 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))),
    "gelup": lambda x: np.where(x < -3.875, -5.96e-8, 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    "sign": lambda x: np.where(x >= 0, 1.0, -1.0),
    "abs": np.abs, "cos": np.cos, "sin": np.sin, "pow2": np.exp2,
    "exphp": np.exp,
}
POS = {"recip": lambda x: 1 / x, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
       "loghp": np.log, "reciphp": lambda x: 1 / x, "sqrthp": np.sqrt, "rsqrthp": lambda x: 1 / np.sqrt(x),
       "recip_greater_1": lambda x: 1 / x}
for dt in (F, Hf):
    tol = (1e-5, 1e-6) if dt == F else (1e-3, 1e-4)
    for n, f in ACT.items():
        x = rand(dt, lo=-9, hi=9)
        x[:3] = np.array([-0.0, 0.0, -7.9], dt)  # sign(-0) = 1; clamps
        k_unary(f"__bang_active_{n}", dt, x, cast(f(x.astype(np.float64)), dt), "math", tol)
    for n, f in POS.items():
        x = rand(dt, lo=1.0, hi=60)
        k_unary(f"__bang_active_{n}", dt, x, cast(f(x.astype(np.float64)), dt), "math", tol)
    x = rand(dt, lo=-8, hi=0)
    k_unary("__bang_active_exp_less_0", dt, x, cast(np.exp(x.astype(np.float64)), dt), "math", tol)
    for order in (3, 4):
        for n, f in {"sin": np.sin, "cos": np.cos, "tanh": np.tanh, "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
                     "softplus": lambda v: np.log1p(np.exp(v))}.items():
            x = rand(dt, lo=-3, hi=3)
            k_unary(f"__bang_taylor{order}_{n}", dt, x, cast(f(x.astype(np.float64)), dt), "math", tol)
for n, f, lo in (("recip", lambda x: 1 / x, 0.5), ("sqrt", np.sqrt, 0.0), ("rsqrt", lambda x: 1 / np.sqrt(x), 0.5),
                 ("sin", np.sin, -6), ("cos", np.cos, -6), ("log", np.log, 0.1), ("pow2", np.exp2, -10)):
    for dt in (F, BF16):
        x = rand(dt, lo=lo, hi=9)
        tol = (2e-6, 1e-7) if dt == F else (8e-3, 1e-3)
        k_unary(f"__bang_{n}", dt, x, cast(f(x.astype(np.float64)), dt), "math", tol)

# ------------------------------------------------------------------------------ comparisons
CMP = {"gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal, "eq": np.equal, "ne": np.not_equal}
for n, op in CMP.items():
    for dt in (F, Hf):
        x, y = rand(dt), rand(dt)
        y[::4] = x[::4]
        x[1], y[2] = np.nan, np.nan  # NaN compares give 0, also for ne
        ref = op(x, y).astype(dt)
        ref[1] = ref[2] = 0
        k_binary(f"__bang_{n}", dt, x, y, ref, "cmp")
        k_scalar(f"__bang_{n}_scalar", dt, x, 0.5, np.where(np.isnan(x), 0, op(x, dt(0.5))).astype(dt), "cmp")
for n, op in (("ge", np.greater_equal), ("eq", np.equal)):
    x, y = rand(np.int32), rand(np.int32)
    y[::3] = x[::3]
    k_binary(f"__bang_{n}", np.int32, x, y, op(x, y).astype(np.int32), "cmp")
for dt in (F, Hf):
    x, y = rand(dt), rand(dt)
    x[3], y[5] = np.nan, np.nan
    mx, mn = np.maximum(x, y), np.minimum(x, y)
    mx[5] = mn[5] = x[5]  # NaN in either input -> src0
    mx[3] = mn[3] = np.nan
    k_binary("__bang_maxequal", dt, x, y, mx, "cmp")
    k_binary("__bang_minequal", dt, x, y, mn, "cmp")
    k_binary("__bang_maximum", dt, x, y, np.fmax(x, y), "cmp")
    k_binary("__bang_minimum", dt, x, y, np.fmin(x, y), "cmp")
xi, yi = rand(np.int16), rand(np.int16)
k_binary("__bang_maxequal", np.int16, xi, yi, np.maximum(xi, yi), "cmp")


def ext_case(name, dt, want_max):
    c = ct(dt)
    x = rand(dt)
    x[7] = np.nan
    pos = 100 if want_max else 50
    x[pos] = 9 if want_max else -9
    x[pos + 20] = x[pos]  # first occurrence wins
    kn = f"k_{name.strip('_')}_{c}"
    src = f"""__mlu_global__ void {kn}(unsigned char *out, const {c} *in, int n) {{
  __nram__ {c} a[256];
  __nram__ {c} d[64];
  __memcpy(a, in, n * sizeof({c}), GDRAM2NRAM);
  {name}(d, a, n);
  __memcpy(out, d, 16, NRAM2GDRAM);
}}"""

    def check(o, x=x, pos=pos, dt=dt):
        raw = o[0]
        val = raw[:np.dtype(dt).itemsize].view(dt)[0]
        idx = raw[np.dtype(dt).itemsize:np.dtype(dt).itemsize + 4].view(np.uint32)[0]
        assert val == x[pos] and idx == pos, (val, idx)
    add(Case(f"{name}[{c}]", "cmp", src, kn, [np.zeros(16, np.uint8), x, N], check))


for name, mx in (("__bang_argmax", True), ("__bang_argmin", False), ("__bang_max", True), ("__bang_min", False)):
    for dt in (F, Hf):
        ext_case(name, dt, mx)

for dt in (F, Hf):
    c = ct(dt)
    x = rand(dt)
    idx = (RNG.random(N) < 0.3).astype(dt)
    src = f"""__mlu_global__ void k_select_{c}({c} *out, const {c} *in, const {c} *ix, int n) {{
  __nram__ {c} a[256];
  __nram__ {c} b[256];
  __nram__ {c} d[512];
  __memcpy(a, in, n * sizeof({c}), GDRAM2NRAM);
  __memcpy(b, ix, n * sizeof({c}), GDRAM2NRAM);
  __bang_write_value(d, 512, ({c})7);
  __bang_select(d, a, b, n);
  __memcpy(out, d, 512 * sizeof({c}), NRAM2GDRAM);
}}"""

    def check_sel(o, x=x, idx=idx, dt=dt):
        raw = o[0].view(np.uint8)
        kept = x[idx != 0]
        cnt = raw[:4].view(np.uint32)[0]
        assert cnt == len(kept)
        assert not raw[4:128].any()
        vals = raw[128:].view(dt)
        close(vals[:cnt], kept)
        pad = (-(int(cnt) * np.dtype(dt).itemsize)) % 128 // np.dtype(dt).itemsize
        assert not vals[cnt:cnt + pad].astype(np.float32).any()
    add(Case(f"__bang_select[{c}]", "cmp", src, f"k_select_{c}", [np.zeros(512, dt), x, idx, N], check_sel))

# ------------------------------------------------------------------------------ reductions
for dt in (F, Hf):
    c = ct(dt)
    x = rand(dt)
    E = 128 // np.dtype(dt).itemsize

    def ref_rs(x=x, E=E, dt=dt):
        want = x.copy()  # 3xx/5xx: other slots keep src (dst == src here)
        for k in range(0, N, E):
            want[k] = cast(x[k:k + E].astype(np.float32).sum(dtype=np.float32), dt)
        return want
    k_unary("__bang_reduce_sum", dt, x, None, "cmp", (2e-6, 1e-5) if dt == F else (2e-3, 2e-3))
    # in place, so "unchanged" slots are visible
    CASES[-1].src = CASES[-1].src.replace("__bang_reduce_sum(b, a, n);", "__bang_reduce_sum(a, a, n); __memcpy(b, a, n * sizeof(%s), NRAM2NRAM);" % c)
    CASES[-1].check = (lambda want, tol: (lambda o: close(o[0], want, *tol)))(ref_rs(), (2e-6, 1e-5) if dt == F else (2e-3, 2e-3))
    src = f"""__mlu_global__ void k_sum_{c}(float *out, const {c} *in, int n) {{
  __nram__ {c} a[256];
  __memcpy(a, in, n * sizeof({c}), GDRAM2NRAM);
  out[0] = (float)__bang_sum(a, n);
}}"""
    add(Case(f"__bang_sum[{c}]", "cmp", src, f"k_sum_{c}", [np.zeros(1, F), x, N],
             (lambda x, dt: lambda o: close(o[0][0], cast(x.astype(np.float32).sum(), dt), 1e-3, 1e-2))(x, dt)))


# ------------------------------------------------------------------------------ pooling
def pool_ref(x, C, Hh, W, kh, kw, sw, sh, op, dh=1, dw=1):
    x = x.astype(np.float32).reshape(Hh, W, C)
    eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    Ho, Wo = (Hh - eh) // sh + 1, (W - ew) // sw + 1
    out = np.zeros((Ho, Wo, C), np.float32)
    for ho in range(Ho):
        for wo in range(Wo):
            win = x[ho * sh: ho * sh + eh: dh, wo * sw: wo * sw + ew: dw, :].reshape(-1, C)
            out[ho, wo] = {"sum": win.sum(0, dtype=np.float32), "avg": win.sum(0, dtype=np.float32) / (kh * kw),
                           "max": win.max(0), "min": win.min(0)}[op]
    return out.reshape(-1)


C, HH, WW = 8, 7, 9  # odd sizes: partial windows must be dropped
for op in ("sum", "avg", "max", "min"):
    for form, (kh, kw, sw, sh) in (("9", (3, 2, 2, 3)), ("7", (2, 3, 2, 3))):
        if form == "7":
            sw, sh = kw, kh  # 7-argument form: stride = kernel
        for dt in ((F, Hf) if form == "9" else (Hf,)):
            c = ct(dt)
            x = rand(dt, C * HH * WW)
            extra = f", {sw}, {sh}" if form == "9" else ""
            kn = f"k_{op}pool{form}_{c}"
            src = f"""__mlu_global__ void {kn}({c} *out, const {c} *in) {{
  __nram__ {c} a[{C * HH * WW}];
  __nram__ {c} d[{C * HH * WW}];
  __memcpy(a, in, sizeof(a), GDRAM2NRAM);
  __bang_{op}pool(d, a, {C}, {HH}, {WW}, {kh}, {kw}{extra});
  __memcpy(out, d, sizeof(d), NRAM2GDRAM);
}}"""
            ref = pool_ref(x, C, HH, WW, kh, kw, sw, sh, op)
            tol = (1e-6, 1e-6) if dt == F else (1e-3, 1e-3)
            add(Case(f"__bang_{op}pool[{form}-arg,{c}]", "pool", src, kn, [np.zeros(C * HH * WW, dt), x],
                     (lambda ref, tol, dt: lambda o: close(o[0][:len(ref)], cast(ref, dt), *tol))(ref, tol, dt)))
for op in ("avg", "max", "min"):
    x = rand(F, C * HH * WW)
    kn = f"k_{op}pool13"
    src = f"""__mlu_global__ void {kn}(float *out, const float *in) {{
  __nram__ float a[{C * HH * WW}];
  __nram__ float d[{C * HH * WW}];
  __memcpy(a, in, sizeof(a), GDRAM2NRAM);
  __bang_{op}pool(d, a, {C}, {HH}, {WW}, 2, 2, 1, 2, 2, 3, 1, 1);
  __memcpy(out, d, sizeof(d), NRAM2GDRAM);
}}"""
    ref = pool_ref(x, C, HH, WW, 2, 2, 1, 2, op, dh=2, dw=3)
    add(Case(f"__bang_{op}pool[13-arg dilated]", "pool", src, kn, [np.zeros(C * HH * WW, F), x],
             (lambda ref: lambda o: close(o[0][:len(ref)], ref, 1e-6, 1e-6))(ref)))

# maxpool_value_index: window shrinks at the edges; index inside the window
x = rand(F, C * HH * WW)
src = f"""__mlu_global__ void k_mpvi(float *out, const float *in) {{
  __nram__ float a[{C * HH * WW}];
  __nram__ float d[1024];
  __memcpy(a, in, sizeof(a), GDRAM2NRAM);
  __bang_maxpool_value_index(d, a, {C}, {HH}, {WW}, 3, 2, 2, 3, 2048);
  __memcpy(out, d, sizeof(d), NRAM2GDRAM);
}}"""


def check_mpvi(o, x=x):
    raw = o[0]
    xr = x.reshape(HH, WW, C)
    Ho, Wo = -(-(HH - 3) // 3) + 1, -(-(WW - 2) // 2) + 1
    idx = raw.view(np.uint8)[2048:].view(np.uint32)
    for ho in range(Ho):
        for wo in range(Wo):
            win = xr[ho * 3: ho * 3 + 3, wo * 2: wo * 2 + 2, :]
            for ch in range(C):
                w = win[:, :, ch]
                flat = [(w[i, j], i * 2 + j) for i in range(w.shape[0]) for j in range(w.shape[1])]
                best = max(flat, key=lambda t: t[0])  # first maximum (max is stable)
                o_ = (ho * Wo + wo) * C + ch
                assert raw[o_] == best[0] and idx[o_] == best[1], (ho, wo, ch)


add(Case("__bang_maxpool_value_index[float]", "pool", src, "k_mpvi", [np.zeros(1024, F), x], check_mpvi))

# ------------------------------------------------------------------------------ transpose, mlp, matmul, conv
for dt in (F, Hf, np.int8):
    c = ct(dt)
    h, w = 8, 32
    x = rand(dt, h * w)
    kn = f"k_transpose_{c.replace(' ', '_')}"
    src = f"""__mlu_global__ void {kn}({c} *out, const {c} *in) {{
  __nram__ {c} a[{h * w}];
  __nram__ {c} d[{h * w}];
  __memcpy(a, in, sizeof(a), GDRAM2NRAM);
  __bang_transpose(d, a, {h}, {w});
  __memcpy(out, d, sizeof(d), NRAM2GDRAM);
}}"""
    add(Case(f"__bang_transpose[{c}]", "mat", src, kn, [np.zeros(h * w, dt), x],
             (lambda x: lambda o: close(o[0], x.reshape(h, w).T.reshape(-1)))(x)))

# mlp: filter [height][width] in WRAM; int8 fixed point
Hm, Wm = 64, 32
for fix in (-3, 0, 2):
    xs, ws = rand(np.int8, Wm), rand(np.int8, Hm * Wm)
    bias = rand(F, Hm)
    src = f"""__mlu_global__ void k_mlp_i8_{fix + 10}(float *out, float *out_b, const signed char *in, const signed char *flt, const float *bias) {{
  __nram__ signed char a[{Wm}];
  __wram__ signed char f[{Hm * Wm}];
  __nram__ float bb[{Hm}];
  __nram__ float d[{Hm}];
  __memcpy(a, in, sizeof(a), GDRAM2NRAM);
  __memcpy(f, flt, sizeof(f), GDRAM2WRAM);
  __memcpy(bb, bias, sizeof(bb), GDRAM2NRAM);
  __bang_mlp(d, a, f, {Hm}, {Wm}, {fix});
  __memcpy(out, d, sizeof(d), NRAM2GDRAM);
  __bang_mlp(d, a, bb, f, {Hm}, {Wm}, {fix});
  __memcpy(out_b, d, sizeof(d), NRAM2GDRAM);
}}"""
    acc = (ws.reshape(Hm, Wm).astype(np.int64) @ xs.astype(np.int64)).astype(np.float64) * 2.0 ** fix
    add(Case(f"__bang_mlp[int8,fix={fix}]", "mat", src, f"k_mlp_i8_{fix + 10}",
             [np.zeros(Hm, F), np.zeros(Hm, F), xs, ws, bias],
             (lambda acc, bias: lambda o: (close(o[0], acc.astype(np.float32)), close(o[1], (acc + bias).astype(np.float32), 1e-6, 1e-6)))(acc, bias), 2))
xs, ws = rand(Hf, Wm), rand(Hf, Hm * Wm)
src = f"""__mlu_global__ void k_mlp_half(float *out, const half *in, const half *flt) {{
  __nram__ half a[{Wm}];
  __wram__ half f[{Hm * Wm}];
  __nram__ float d[{Hm}];
  __memcpy(a, in, sizeof(a), GDRAM2NRAM);
  __memcpy(f, flt, sizeof(f), GDRAM2WRAM);
  __bang_mlp(d, a, f, {Hm}, {Wm});
  __memcpy(out, d, sizeof(d), NRAM2GDRAM);
}}"""
add(Case("__bang_mlp[half->float]", "mat", src, "k_mlp_half", [np.zeros(Hm, F), xs, ws],
         (lambda r: lambda o: close(o[0], r, 1e-5, 1e-4))(ws.reshape(Hm, Wm).astype(np.float64) @ xs.astype(np.float64))))

# matmul: src0 row-major MxK (NRAM), src1 column-major KxN = N rows of K (WRAM)
M, K, Nn = 8, 32, 64
for fix in (-4, -9):
    a, b = rand(np.int8, M * K), rand(np.int8, K * Nn)
    c2 = rand(Hf, M * Nn)
    src = f"""__mlu_global__ void k_mm_i8_{fix + 10}(half *out, half *out2, const signed char *x, const signed char *y, const half *z) {{
  __nram__ signed char a[{M * K}];
  __wram__ signed char b[{K * Nn}];
  __nram__ half c[{M * Nn}];
  __nram__ half d[{M * Nn}];
  __memcpy(a, x, sizeof(a), GDRAM2NRAM);
  __memcpy(b, y, sizeof(b), GDRAM2WRAM);
  __memcpy(c, z, sizeof(c), GDRAM2NRAM);
  __bang_matmul(d, a, b, {M}, {K}, {Nn}, {fix});
  __memcpy(out, d, sizeof(d), NRAM2GDRAM);
  __bang_matmul(c, a, b, c, {M}, {K}, {Nn}, {fix});
  __memcpy(out2, c, sizeof(c), NRAM2GDRAM);
}}"""
    ref = (a.reshape(M, K).astype(np.int64) @ b.reshape(Nn, K).T.astype(np.int64)).reshape(-1) * 2.0 ** fix
    add(Case(f"__bang_matmul[int8,fix={fix}]", "mat", src, f"k_mm_i8_{fix + 10}",
             [np.zeros(M * Nn, Hf), np.zeros(M * Nn, Hf), a, b, c2],
             (lambda ref, c2: lambda o: (close(o[0], cast(ref, Hf)), close(o[1], cast(ref + c2.astype(np.float64), Hf), 1e-3, 1e-3)))(ref, c2), 2))
a, b = rand(F, M * K), rand(F, K * Nn)
src = f"""__mlu_global__ void k_mm_f(float *out, const float *x, const float *y) {{
  __nram__ float a[{M * K}];
  __wram__ float b[{K * Nn}];
  __nram__ float d[{M * Nn}];
  __memcpy(a, x, sizeof(a), GDRAM2NRAM);
  __memcpy(b, y, sizeof(b), GDRAM2WRAM);
  __bang_matmul(d, a, b, {M}, {K}, {Nn});
  __memcpy(out, d, sizeof(d), NRAM2GDRAM);
}}"""
add(Case("__bang_matmul[float]", "mat", src, "k_mm_f", [np.zeros(M * Nn, F), a, b],
         (lambda r: lambda o: close(o[0], r, 1e-5, 1e-5))((a.reshape(M, K).astype(np.float64) @ b.reshape(Nn, K).T).reshape(-1))))


def conv_ref(x, k, Ci, Hh, W, kh, kw, sw, sh, Co, dh=1, dw=1):
    x = x.astype(np.float64).reshape(Hh, W, Ci)
    k = k.astype(np.float64).reshape(Co, kh, kw, Ci)
    eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    Ho, Wo = (Hh - eh) // sh + 1, (W - ew) // sw + 1
    out = np.zeros((Ho, Wo, Co))
    for ho in range(Ho):
        for wo in range(Wo):
            patch = x[ho * sh: ho * sh + eh: dh, wo * sw: wo * sw + ew: dw, :]
            out[ho, wo] = np.tensordot(k, patch, axes=([1, 2, 3], [0, 1, 2]))
    return out.reshape(-1)


Ci, Hc, Wc, Co = 16, 6, 7, 64
for name, (kh, kw, sw, sh, dh, dw, fix, bias) in {
        "int8,fix=-2": (3, 2, 1, 2, 1, 1, -2, False), "int8,bias,fix=1": (2, 3, 2, 1, 1, 1, 1, True),
        "int8,indilation": (2, 2, 1, 1, 2, 3, 0, False)}.items():
    xs, ks = rand(np.int8, Hc * Wc * Ci), rand(np.int8, Co * kh * kw * Ci)
    bs = rand(F, Co)
    tag = name.replace(",", "_").replace("=", "").replace("-", "m")
    call = f"__bang_conv(d, a, k, {'bb, ' if bias else ''}{Ci}, {Hc}, {Wc}, {kh}, {kw}, {sw}, {sh}, {Co}, {fix}" + \
        (f", {dw}, {dh})" if (dh, dw) != (1, 1) else ")")
    src = f"""__mlu_global__ void k_conv_{tag}(float *out, const signed char *x, const signed char *kk, const float *bias) {{
  __nram__ signed char a[{Hc * Wc * Ci}];
  __wram__ signed char k[{Co * kh * kw * Ci}];
  __nram__ float bb[{Co}];
  __nram__ float d[{Hc * Wc * Co}];
  __memcpy(a, x, sizeof(a), GDRAM2NRAM);
  __memcpy(k, kk, sizeof(k), GDRAM2WRAM);
  __memcpy(bb, bias, sizeof(bb), GDRAM2NRAM);
  {call};
  __memcpy(out, d, sizeof(d), NRAM2GDRAM);
}}"""
    ref = conv_ref(xs, ks, Ci, Hc, Wc, kh, kw, sw, sh, Co, dh, dw) * 2.0 ** fix
    if bias:
        ref = ref + np.tile(bs.astype(np.float64), len(ref) // Co)
    add(Case(f"__bang_conv[{name}]", "mat", src, f"k_conv_{tag}", [np.zeros(Hc * Wc * Co, F), xs, ks, bs],
             (lambda ref: lambda o: close(o[0][:len(ref)], ref.astype(np.float32), 1e-6, 1e-5))(ref)))
xs, ks = rand(Hf, Hc * Wc * Ci), rand(Hf, Co * 2 * 2 * Ci)
src = f"""__mlu_global__ void k_conv_half(float *out, const half *x, const half *kk) {{
  __nram__ half a[{Hc * Wc * Ci}];
  __wram__ half k[{Co * 2 * 2 * Ci}];
  __nram__ float d[{Hc * Wc * Co}];
  __memcpy(a, x, sizeof(a), GDRAM2NRAM);
  __memcpy(k, kk, sizeof(k), GDRAM2WRAM);
  __bang_conv(d, a, k, {Ci}, {Hc}, {Wc}, 2, 2, 1, 1, {Co});
  __memcpy(out, d, sizeof(d), NRAM2GDRAM);
}}"""
ref = conv_ref(xs, ks, Ci, Hc, Wc, 2, 2, 1, 1, Co)
add(Case("__bang_conv[half->float]", "mat", src, "k_conv_half", [np.zeros(Hc * Wc * Co, F), xs, ks],
         (lambda ref: lambda o: close(o[0][:len(ref)], ref, 1e-4, 1e-3))(ref)))

# ------------------------------------------------------------------------------ conversions


def f2h_ref(x, mode):
    """float32 -> float16 with a rounding mode, by exact bracketing in float64."""
    out = []
    for v in x.astype(np.float64):
        h = np.float16(v)
        hv = float(h)
        if hv == v or np.isnan(v):
            out.append(h)
            continue
        lo = h if hv < v else np.nextafter(h, np.float16(-np.inf))
        hi = h if hv > v else np.nextafter(h, np.float16(np.inf))
        lv, uv = float(lo), float(hi)
        if mode == "rn":
            r = h
        elif mode == "tz":
            r = lo if v > 0 else hi
        elif mode == "oz":
            r = hi if v > 0 else lo
        elif mode == "up":
            r = hi
        elif mode == "dn":
            r = lo
        elif mode == "rd":
            r = (hi if v > 0 else lo) if v - lv == uv - v else (lo if v - lv < uv - v else hi)
        else:  # rm: ties toward +inf
            r = hi if v - lv == uv - v else (lo if v - lv < uv - v else hi)
        out.append(r)
    return np.array(out, np.float16)


xf = rand(F, lo=-3, hi=3)
xf[:6] = np.array([1 + 2 ** -11, -(1 + 2 ** -11), 1 + 3 * 2 ** -11, 2.5e-8, -1e-9, 1 + 2 ** -12], F)  # ties, tiny
for mode in ("tz", "oz", "up", "dn", "rd", "rn", "rm"):
    src = f"""__mlu_global__ void k_f2h_{mode}(half *out, half *out2, const float *in, int n) {{
  __nram__ float a[256];
  __nram__ half d[256];
  __nram__ half e[512];
  __memcpy(a, in, n * 4, GDRAM2NRAM);
  __bang_float2half_{mode}(d, a, n);
  __memcpy(out, d, n * 2, NRAM2GDRAM);
  __bang_write_zero(e, 512);
  __bang_float2half_{mode}(e, a, 32, 128, 256, 3);   // 4 blocks of 32: dst stride 128 B, src stride 256 B
  __memcpy(out2, e, 1024, NRAM2GDRAM);
}}"""

    def chk(o, mode=mode):
        close(o[0], f2h_ref(xf, mode))
        e = o[1][:256].reshape(4, 64)
        for s in range(4):
            close(e[s, :32], f2h_ref(xf[64 * s: 64 * s + 32], mode))
            assert not e[s, 32:].astype(np.float32).any()
    add(Case(f"__bang_float2half_{mode}", "conv", src, f"k_f2h_{mode}", [np.zeros(N, Hf), np.zeros(512, Hf), xf, N], chk, 2))
xh = rand(Hf)
src = """__mlu_global__ void k_h2f(float *out, float *out2, const half *in, int n) {
  __nram__ half a[256];
  __nram__ float d[256];
  __memcpy(a, in, n * 2, GDRAM2NRAM);
  __bang_half2float(d, a, n);
  __memcpy(out, d, n * 4, NRAM2GDRAM);
  __bang_half2float(d, a, 16, 128, 0, 1);   // src_stride 0 repeats block 0
  __memcpy(out2, d, 256, NRAM2GDRAM);
}"""
add(Case("__bang_half2float", "conv", src, "k_h2f", [np.zeros(N, F), np.zeros(64, F), xh, N],
         lambda o: (close(o[0], xh.astype(F)), close(o[1][:16], xh[:16].astype(F)), close(o[1][32:48], xh[:16].astype(F))), 2))
for sname, sdt in (("float", F), ("half", Hf)):
    for dname, ddt in (("int16", np.int16), ("int8", np.int8)):
        for mode, fn in (("tz", np.trunc), ("oz", lambda v: np.sign(v) * np.ceil(np.abs(v))), ("up", np.ceil),
                         ("dn", np.floor), ("rd", lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)), ("rn", np.rint)):
            x = rand(sdt, lo=-40, hi=40)
            x[:4] = np.array([0.625, -0.625, 1000, -1000], sdt)  # ties after scaling by 4, saturation
            fix = -2
            kn = f"k_{sname}2{dname}_{mode}"
            src = f"""__mlu_global__ void {kn}({ct(ddt)} *out, const {ct(sdt)} *in, int n) {{
  __nram__ {ct(sdt)} a[256];
  __nram__ {ct(ddt)} d[256];
  __memcpy(a, in, n * sizeof({ct(sdt)}), GDRAM2NRAM);
  __bang_{sname}2{dname}_{mode}(d, a, n, {fix});
  __memcpy(out, d, n * sizeof({ct(ddt)}), NRAM2GDRAM);
}}"""
            info = np.iinfo(ddt)
            ref = np.clip(fn(x.astype(np.float64) * 2.0 ** -fix), info.min, info.max).astype(ddt)
            add(Case(f"__bang_{sname}2{dname}_{mode}", "conv", src, kn, [np.zeros(N, ddt), x, N],
                     (lambda ref: lambda o: close(o[0], ref))(ref)))
for sname, sdt in (("int16", np.int16), ("int8", np.int8)):
    for dname, ddt in (("float", F), ("half", Hf)):
        x = rand(sdt)
        kn = f"k_{sname}2{dname}"
        src = f"""__mlu_global__ void {kn}({ct(ddt)} *out, const {ct(sdt)} *in, int n) {{
  __nram__ {ct(sdt)} a[256];
  __nram__ {ct(ddt)} d[256];
  __memcpy(a, in, n * sizeof({ct(sdt)}), GDRAM2NRAM);
  __bang_{sname.replace('int16', 'int16').replace('int8', 'int8')}2{dname}(d, a, n, 3);
  __memcpy(out, d, n * sizeof({ct(ddt)}), NRAM2GDRAM);
}}"""
        add(Case(f"__bang_{sname}2{dname}", "conv", src, kn, [np.zeros(N, ddt), x, N],
                 (lambda ref: lambda o: close(o[0], ref))(cast(x.astype(np.float64) * 8, ddt))))
xb = rand(F)
src = """__mlu_global__ void k_bf16(float *out, bfloat16_t *outb, const float *in, int n) {
  __nram__ float a[256];
  __nram__ bfloat16_t b[256];
  __memcpy(a, in, n * 4, GDRAM2NRAM);
  __bang_float2bfloat16(b, a, n);
  __memcpy(outb, b, n * 2, NRAM2GDRAM);
  __bang_bfloat162float(a, b, n);
  __memcpy(out, a, n * 4, NRAM2GDRAM);
}"""
add(Case("__bang_float2bfloat16+__bang_bfloat162float", "conv", src, "k_bf16", [np.zeros(N, F), np.zeros(N, BF16), xb, N],
         lambda o: (close(o[1], xb.astype(BF16)), close(o[0], xb.astype(BF16).astype(F))), 2))

# 32-bit integer <-> float (BG §3.30, §5.1): int32 -> float rounds above 2^24 by the suffix; the
# unsuffixed __bang_int322float and mmcv's __bang_int2float round to nearest even (design choice).
def i2f_ref(x, fix, mode):
    """int32 * 2^fix -> float32 with a rounding mode, by exact bracketing (x * 2^fix is exact in float64)."""
    out = []
    for v in x.astype(np.float64) * 2.0 ** fix:
        f = np.float32(v)                     # nearest even
        fv = float(f)
        if fv == v:
            out.append(f)
            continue
        lo = f if fv < v else np.nextafter(f, np.float32(-np.inf))
        hi = f if fv > v else np.nextafter(f, np.float32(np.inf))
        lv, uv = float(lo), float(hi)
        tie = v - lv == uv - v
        r = {"rn": f, "tz": lo if v > 0 else hi, "oz": hi if v > 0 else lo, "up": hi, "dn": lo,
             "rd": (hi if v > 0 else lo) if tie else (lo if v - lv < uv - v else hi)}[mode]
        out.append(r)
    return np.array(out, F)


xi = RNG.integers(-2 ** 31, 2 ** 31 - 1, N, endpoint=True).astype(np.int32)
xi[:12] = np.array([2 ** 24 + 1, 2 ** 24 + 3, -(2 ** 24 + 1), -(2 ** 24 + 3), 2 ** 25 + 2, 2 ** 25 + 1,
                    2 ** 31 - 1, -2 ** 31, 0, 7, -7, 2 ** 24 - 1], np.int32)   # ties, carry to 2^31, exact
for fix in (0, -3):
    for mode in ("", "_tz", "_oz", "_up", "_dn", "_rd", "_rn", "int2float"):
        name = "__bang_int2float" if mode == "int2float" else f"__bang_int322float{mode}"
        kn = f"k_{name.strip('_')}_{-fix}"
        src = f"""__mlu_global__ void {kn}(float *out, const int *in, int n) {{
  __nram__ int a[256];
  __nram__ float d[256];
  __memcpy(a, in, n * sizeof(int), GDRAM2NRAM);
  {name}(d, a, n, {fix});
  __memcpy(out, d, n * sizeof(float), NRAM2GDRAM);
}}"""
        ref = i2f_ref(xi, fix, mode[1:] if mode.startswith("_") else "rn")
        add(Case(f"{name}[fix={fix}]", "conv", src, kn, [np.zeros(N, F), xi, N],
                 (lambda ref: lambda o: close(o[0], ref))(ref)))
for name, sdt in (("float2int32", F), ("half2int32", Hf), ("float2int", F)):
    for mode, fn in (("tz", np.trunc), ("oz", lambda v: np.sign(v) * np.ceil(np.abs(v))), ("up", np.ceil),
                     ("dn", np.floor), ("rd", lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)), ("rn", np.rint)):
        x = rand(sdt, lo=-40, hi=40)
        big = 6e9 if sdt == F else 60000.0    # float: saturates int32 after scaling by 4
        x[:6] = np.array([0.625, -0.625, 0.375, -0.375, big, -big], sdt)  # ties after scaling by 4, saturation
        fix = -2
        kn = f"k_{name}_{mode}"
        src = f"""__mlu_global__ void {kn}(int *out, const {ct(sdt)} *in, int n) {{
  __nram__ {ct(sdt)} a[256];
  __nram__ int d[256];
  __memcpy(a, in, n * sizeof({ct(sdt)}), GDRAM2NRAM);
  __bang_{name}_{mode}(d, a, n, {fix});
  __memcpy(out, d, n * sizeof(int), NRAM2GDRAM);
}}"""
        ref = np.clip(fn(x.astype(np.float64) * 2.0 ** -fix), -2 ** 31, 2 ** 31 - 1).astype(np.int32)
        add(Case(f"__bang_{name}_{mode}", "conv", src, kn, [np.zeros(N, np.int32), x, N],
                 (lambda ref: lambda o: close(o[0], ref))(ref)))

# ------------------------------------------------------------------------------ fills
src = """__mlu_global__ void k_fill(float *o1, half *o2, int *o3, short *o4, float *o5, float *o6, float *o7, float *o8) {
  __nram__ float f[256];
  __nram__ half h[256];
  __nram__ int i[256];
  __nram__ short s[256];
  __bang_write_value(f, 256, 1.5f);
  __memcpy(o1, f, sizeof(f), NRAM2GDRAM);
  __bang_write_value(h, 256, (half)-2.0f);
  __memcpy(o2, h, sizeof(h), NRAM2GDRAM);
  __memset_nram(i, 256, (int)-7);
  __memcpy(o3, i, sizeof(i), NRAM2GDRAM);
  __nramset(s, 256, (short)300);
  __memcpy(o4, s, sizeof(s), NRAM2GDRAM);
  __bang_write_zero(f, 256);
  __nramset(f, 4, 2.0f, 64, 3);                  // 4 rows of 4 values, 64 bytes apart
  __memcpy(o5, f, sizeof(f), NRAM2GDRAM);
  __bang_write_zero(f, 256);
  __bang_write_value(f, 2, 3.0f, 16, 2, 128, 1); // 2 x 3 blocks of 2 values
  __memcpy(o6, f, sizeof(f), NRAM2GDRAM);
  __bang_write_zero(f, 256);
  __nramset(f, 1, 4.0f, 8, 1, 32, 1);
  __memcpy(o7, f, sizeof(f), NRAM2GDRAM);
  __gdramset(o8, 256, 9.0f);
}"""


def chk_fill(o):
    close(o[0], np.full(256, 1.5, F))
    close(o[1], np.full(256, -2, Hf))
    close(o[2], np.full(256, -7, np.int32))
    close(o[3], np.full(256, 300, np.int16))
    w = np.zeros(256, F)
    for r in range(4):
        w[16 * r: 16 * r + 4] = 2
    close(o[4], w)
    w = np.zeros(256, F)
    for i2 in range(2):
        for i1 in range(3):
            w[32 * i2 + 4 * i1: 32 * i2 + 4 * i1 + 2] = 3
    close(o[5], w)
    w = np.zeros(256, F)
    for i2 in range(2):
        for i1 in range(2):
            w[8 * i2 + 2 * i1] = 4
    close(o[6], w)
    close(o[7], np.full(256, 9, F))


add(Case("fills (__bang_write_value/_zero, __memset_nram, __nramset 1/2/3-D, __gdramset)", "conv", src, "k_fill",
         [np.zeros(256, F), np.zeros(256, Hf), np.zeros(256, np.int32), np.zeros(256, np.int16),
          np.zeros(256, F), np.zeros(256, F), np.zeros(256, F), np.zeros(256, F)], chk_fill, 8))


# ------------------------------------------------------------------------------ vocabulary (issue 17)
# bitwise family on bit patterns, floor, log2, float -> bf16 toward zero (BANG-VOCABULARY.md)
def _bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


for dt in (F, Hf, np.int32, np.int16, np.int8):
    x, y = rand(dt), rand(dt)
    k_binary("__bang_band", dt, x, y, (_bits(x) & _bits(y)).view(dt), "vocab")
    k_binary("__bang_bor", dt, x, y, (_bits(x) | _bits(y)).view(dt), "vocab")
    k_unary("__bang_bnot", dt, x, (~_bits(x)).view(dt), "vocab")
    seg = rand(dt, 32)
    k_cycle("__bang_cycle_band", dt, x, seg, (_bits(x) & np.tile(_bits(seg), N // 32)).view(dt), "vocab")
for dt, v in ((np.int32, 0x0F0F), (np.int16, 0x00FF)):
    x = rand(dt)
    k_scalar("__bang_band_scalar", dt, x, v, (_bits(x) & _bits(np.array(v, dt))).view(dt), "vocab")
for dt in (F, Hf, BF16):
    x = rand(dt)
    x[:4] = np.array([-0.5, 2.0, -3.0, 0.0], np.float32).astype(dt)
    k_unary("__bang_floor", dt, x, np.floor(x.astype(np.float64)).astype(np.float32).astype(dt), "vocab")
for dt in (F, Hf):
    x = rand(dt, lo=0.01, hi=100.0)
    x[:3] = np.array([0.0, -1.0, 8.0], np.float32).astype(dt)
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.log2(x.astype(np.float32)).astype(dt)
    k_unary("__bang_log2", dt, x, ref, "vocab", tol=(1e-6, 0) if dt == F else (0, 0))


def _bf16_tz(x):
    u = np.asarray(x, np.float32).view(np.uint32)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    out = (u >> 16).astype(np.uint16).view(BF16)
    out[nan] = np.float32("nan")
    return out


x = rand(F)
x[:6] = np.array([1.0 + 2**-9, -(1.0 + 2**-9), 3.4e38, np.inf, np.nan, -0.0], np.float32)
add(Case("__bang_float2bfloat16_tz", "vocab", """__mlu_global__ void k_f2bf_tz(bfloat16_t *out, const float *in, int n) {
  __nram__ float a[256];
  __nram__ bfloat16_t b[256];
  __memcpy(a, in, n * sizeof(float), GDRAM2NRAM);
  __bang_float2bfloat16_tz(b, a, n);
  __memcpy(out, b, n * sizeof(bfloat16_t), NRAM2GDRAM);
}""", "k_f2bf_tz", [np.zeros(N, BF16), x, N], lambda o, x=x: close(o[0], _bf16_tz(x))))

add(Case("__nramset_async / __is_dram / __cn_scalar_*", "vocab", """__mlu_global__ void k_vocab_misc(float *o0, float *o1, int *o2, float *o3, half *o4) {
  __nram__ float f[256];
  __bang_write_zero(f, 256);
  __nramset_async(f, 256, 2.5f);
  __sync_compute();
  __memcpy(o0, f, sizeof(f), NRAM2GDRAM);
  __bang_write_zero(f, 256);
  __nramset_async(f, 2, 7.0f, 16, 3);
  __memcpy(o1, f, sizeof(f), NRAM2GDRAM);
  o2[0] = __is_dram(o0) ? 1 : 0;
  o2[1] = __is_dram(f) ? 1 : 0;
  o3[64] = __cn_scalar_sin_f32(0.5f);
  o3[65] = __cn_scalar_cos_f32(0.5f);
  o4[0] = __cn_scalar_sin_f16((half)0.5f);
  o4[1] = __cn_scalar_cos_f16((half)0.5f);
}""", "k_vocab_misc", [np.zeros(256, F), np.zeros(256, F), np.zeros(4, np.int32), np.zeros(66, F), np.zeros(2, Hf)],
         lambda o: (close(o[0], np.full(256, 2.5, F)),
                    close(o[1], np.where(np.isin(np.arange(256), [0, 1, 4, 5, 8, 9, 12, 13]), 7.0, 0.0).astype(F)),
                    close(o[2], np.array([1, 0, 0, 0], np.int32)),
                    close(o[3][64:], np.array([np.sin(np.float32(0.5)), np.cos(np.float32(0.5))], F), 1e-7, 0),
                    close(o[4], np.array([np.sin(0.5), np.cos(0.5)]).astype(np.float32).astype(Hf)))[0], 5))


# ------------------------------------------------------------------------------ running
MERGE = {"arith": "vec", "cmp": "vec", "pool": "mat"}  # fewer, larger translation units
for c in CASES:
    c.group = MERGE.get(c.group, c.group)
GROUPS = sorted({c.group for c in CASES})
_RESULTS: dict = {}


def _source(group: str) -> str:
    return "#include <bang.h>\n\n" + "\n\n".join(c.src for c in CASES if c.group == group) + "\n"


@pytest.fixture(scope="module")
def results():
    if not _RESULTS:
        sos = H.build_many([(_source(g), f"intrinsics_{g}.mlu") for g in GROUPS], strict=True, profile=PROFILE)
        for g, so in zip(GROUPS, sos):
            cases = [c for c in CASES if c.group == g]
            res = H.run(so, [H.Kernel(c.kernel, c.args, dim=(1, 1, 1), ktype=1) for c in cases],
                        strict=True, profile=PROFILE)
            _RESULTS[g] = (res, cases)
    return _RESULTS


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_intrinsic(case, results):
    res, cases = results[case.group]
    assert res.returncode == 0, res.stderr[-3000:]
    assert not res.warnings, res.warnings
    out = res.outputs[cases.index(case)]
    case.check(out)


def test_every_platforms_intrinsic_is_tested():
    """Every __bang_* name of the knowledge base appears in at least one test kernel."""
    text = "\n".join(c.src for c in CASES)
    missing = [n for n in intrinsics.names() if n.startswith("__bang_") and n + "(" not in text]
    assert not missing, missing


def test_generated_header_is_current():
    root = Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, str(root / "tools" / "gen_bang_intrinsics.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_knowledge_base_shape():
    entries = intrinsics.load()
    assert len(entries) > 150
    for e in entries:
        assert e["name"].startswith("__"), e
        assert "{name}" not in e["signature"] and e["body"].strip()
        for op in e["operands"]:
            assert set(op["space"].split("|")) <= set(intrinsics.SPACES), e["name"]
    # the 2-D memcpy reference keeps the segnum + 1 rule
    m2 = [e for e in entries if e["name"] == "__memcpy" and "segnum" in e["signature"] and "id_dst" not in e["signature"]
          and "stride0" not in e["signature"]]
    assert m2 and "s <= segnum" in m2[0]["body"]
