"""bfloat16 API of the virtual device (platforms/common/gpu_runtime/xp_gpu_half.h): the
conversions of cuda_bf16.h / HIP's hip_bf16.h in every rounding mode against an exact reference,
__nv_bfloat162 pairs, and HIP's __hip_bfloat162 as ggml's vendors/hip.h uses it."""
from __future__ import annotations

import bisect
import math

import ml_dtypes
import numpy as np
import pytest

from xpiler.run import run_kernel

BF16 = ml_dtypes.bfloat16

# every finite bfloat16 value, ascending, with its bits (python floats hold them exactly, and
# python compares ints with floats exactly)
_BITS = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
with np.errstate(invalid="ignore"):
    _VALS = _BITS.view(BF16).astype(np.float64)
_FIN = sorted({(float(v), int(b)) for v, b in zip(_VALS, _BITS) if math.isfinite(v) and b != 0x8000})
_FV = [v for v, _ in _FIN]
_MAX = _FV[-1]


def _ref_bits(v, mode: str) -> int:
    """bits of ``v`` (int or float, exact) rounded to bfloat16 in ``mode`` (rn/rz/rd/ru); a
    negative value (or -0.0) that rounds to zero is -0 (IEEE keeps the sign)."""
    if isinstance(v, float) and math.isnan(v):
        return 0x7FFF
    b = _ref_mag(v, mode)
    negative = v < 0 or (isinstance(v, float) and math.copysign(1.0, v) < 0)
    return 0x8000 if b == 0 and negative else b


def _ref_mag(v, mode: str) -> int:
    if v in (math.inf, -math.inf):
        return 0x7F80 if v > 0 else 0xFF80
    i = bisect.bisect_left(_FV, v)
    if i < len(_FV) and _FV[i] == v:
        return _FIN[i][1]
    lo = _FIN[i - 1] if i > 0 else (-math.inf, 0xFF80)
    hi = _FIN[i] if i < len(_FV) else (math.inf, 0x7F80)
    if mode == "rz":
        return lo[1] if v > 0 else hi[1]
    if mode == "rd":
        return lo[1]
    if mode == "ru":
        return hi[1]
    half_ulp = 2.0 ** 119
    mid = (lo[0] + half_ulp if hi[0] == math.inf else hi[0] - half_ulp if lo[0] == -math.inf
           else (lo[0] + hi[0]) / 2)
    if v < mid:
        return lo[1]
    if v > mid:
        return hi[1]
    return hi[1] if lo[1] & 1 else lo[1]


CUDA = r'''
#include <cuda_runtime.h>
#include <cuda_bf16.h>

__global__ void conv(const float *f, const long long *ll, const double *d, unsigned short *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[0 * n + i] = __bfloat16_as_ushort(__float2bfloat16_rn(f[i]));
  out[1 * n + i] = __bfloat16_as_ushort(__float2bfloat16_rz(f[i]));
  out[2 * n + i] = __bfloat16_as_ushort(__float2bfloat16_rd(f[i]));
  out[3 * n + i] = __bfloat16_as_ushort(__float2bfloat16_ru(f[i]));
  out[4 * n + i] = __bfloat16_as_ushort(__ll2bfloat16_rn(ll[i]));
  out[5 * n + i] = __bfloat16_as_ushort(__ll2bfloat16_rz(ll[i]));
  out[6 * n + i] = __bfloat16_as_ushort(__ll2bfloat16_rd(ll[i]));
  out[7 * n + i] = __bfloat16_as_ushort(__ll2bfloat16_ru(ll[i]));
  out[8 * n + i] = __bfloat16_as_ushort(__double2bfloat16(d[i]));
  out[9 * n + i] = __bfloat16_as_ushort(__int2bfloat16_rn((int)(ll[i] >> 32)));
}

__global__ void to_int(const unsigned short *b, int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nv_bfloat16 h = __ushort_as_bfloat16(b[i]);
  out[0 * n + i] = __bfloat162int_rn(h);
  out[1 * n + i] = __bfloat162int_rz(h);
  out[2 * n + i] = __bfloat162int_rd(h);
  out[3 * n + i] = __bfloat162int_ru(h);
  out[4 * n + i] = (int)__bfloat162uchar_rz(h);
  out[5 * n + i] = (int)__bfloat162short_rn(h);
}

__global__ void pairs(const float *x, float *out) {
  nv_bfloat162 p = __floats2bfloat162_rn(x[0], x[1]);
  nv_bfloat162 q = __float22bfloat162_rn(make_float2(x[2], x[3]));
  nv_bfloat162 s = __hfma2(p, q, __bfloat162bfloat162(__float2bfloat16(x[4])));
  float2 f = __bfloat1622float2(s);
  out[0] = f.x; out[1] = f.y;
  out[2] = __bfloat162float(__low2bfloat16(p)); out[3] = __bfloat162float(__high2bfloat16(p));
  out[4] = __low2float(__lowhigh2highlow(q)); out[5] = __high2float(__highs2bfloat162(p, q));
  nv_bfloat162 m = __hmax2(p, q) - __halves2bfloat162(__float2bfloat16(1.0f), __float2bfloat16(2.0f));
  out[6] = __low2float(m); out[7] = __high2float(m);
  out[8] = __hisnan(__ushort_as_bfloat16(0x7fc0)) ? 1.f : 0.f;
  out[9] = (float)__hisinf(__ushort_as_bfloat16(0xff80));
}

extern "C" void bf16_conv(const float *f, const long long *ll, const double *d, unsigned short *out, int n) {
  float *df; long long *dl; double *dd; unsigned short *dout;
  cudaMalloc(&df, n * sizeof(float)); cudaMalloc(&dl, n * sizeof(long long));
  cudaMalloc(&dd, n * sizeof(double)); cudaMalloc(&dout, 10 * n * sizeof(unsigned short));
  cudaMemcpy(df, f, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dl, ll, n * sizeof(long long), cudaMemcpyHostToDevice);
  cudaMemcpy(dd, d, n * sizeof(double), cudaMemcpyHostToDevice);
  conv<<<(n + 127) / 128, 128>>>(df, dl, dd, dout, n);
  cudaMemcpy(out, dout, 10 * n * sizeof(unsigned short), cudaMemcpyDeviceToHost);
  cudaFree(df); cudaFree(dl); cudaFree(dd); cudaFree(dout);
}

extern "C" void bf16_to_int(const unsigned short *b, int *out, int n) {
  unsigned short *db; int *dout;
  cudaMalloc(&db, n * sizeof(unsigned short)); cudaMalloc(&dout, 6 * n * sizeof(int));
  cudaMemcpy(db, b, n * sizeof(unsigned short), cudaMemcpyHostToDevice);
  to_int<<<(n + 127) / 128, 128>>>(db, dout, n);
  cudaMemcpy(out, dout, 6 * n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(db); cudaFree(dout);
}

extern "C" void bf16_pairs(const float *x, float *out) {
  float *dx, *dout;
  cudaMalloc(&dx, 5 * sizeof(float)); cudaMalloc(&dout, 10 * sizeof(float));
  cudaMemcpy(dx, x, 5 * sizeof(float), cudaMemcpyHostToDevice);
  pairs<<<1, 1>>>(dx, dout);
  cudaMemcpy(out, dout, 10 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dx); cudaFree(dout);
}
'''

# ggml's vendors/hip.h: <hip/hip_bf16.h> and nv_bfloat16 / nv_bfloat162 as HIP's types
HIP = r'''
#include <hip/hip_runtime.h>
#include <hip/hip_bf16.h>
typedef __hip_bfloat16 nv_bfloat16;
typedef __hip_bfloat162 nv_bfloat162;

__global__ void unpack(const float *x, float *out) {
  nv_bfloat162 v = __float22bfloat162_rn(make_float2(x[0], x[1]));
  float2 f = make_float2(__bfloat162float(__low2bfloat16(v)), __bfloat162float(__high2bfloat16(v)));
  out[0] = f.x; out[1] = f.y;
}

extern "C" void hip_bf16(const float *x, float *out) {
  float *dx, *dout;
  hipMalloc(&dx, 2 * sizeof(float)); hipMalloc(&dout, 2 * sizeof(float));
  hipMemcpy(dx, x, 2 * sizeof(float), hipMemcpyHostToDevice);
  unpack<<<1, 1>>>(dx, dout);
  hipMemcpy(out, dout, 2 * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dx); hipFree(dout);
}
'''


def _floats():
    rng = np.random.default_rng(7)
    special = [0.0, -0.0, 1.0, -1.0, 1.00390625, 1.005859375, 1.0078125 + 2 ** -9, 3.0e38, 3.3961e38, 3.4e38,
               -3.4e38, np.inf, -np.inf, 1e-40, -1e-40, 9.2e-41, np.finfo(np.float32).tiny, 65504.0, 0.1]
    ties = (np.arange(64, dtype=np.uint32) << 16 | 0x8000).view(np.float32)   # exact halfway cases
    vals = np.concatenate([np.array(special, np.float32), ties,
                           rng.standard_normal(200).astype(np.float32) * 1000,
                           (rng.integers(0, 2 ** 32, 200, dtype=np.uint64).astype(np.uint32)).view(np.float32)])
    return vals[np.isfinite(vals) | np.isinf(vals)]          # NaNs checked separately


def test_bf16_conversions_round_once_in_each_mode():
    f = _floats()
    f = f[~np.isnan(f)]
    n = len(f)
    rng = np.random.default_rng(3)
    ll = np.concatenate([np.array([0, 1, -1, 2 ** 24 + 1, 2 ** 31 - 1, -2 ** 31, 2 ** 62 + 2 ** 40 + 1,
                                   -(2 ** 63), 2 ** 63 - 1, 257, 258, 259, -259, 384, 385], np.int64),
                         rng.integers(-2 ** 63, 2 ** 63 - 1, n, dtype=np.int64)])[:n]
    d = np.concatenate([np.array([1e300, -1e300, 1.0 + 2 ** -8, 1.0 + 2 ** -8 + 2 ** -40, 3.3961e38, 5e-324],
                                 np.float64), rng.standard_normal(n) * 1e5])[:n]
    out = np.zeros(10 * n, np.uint16)
    run_kernel("test_bf16/bf16.cu", entry="bf16_conv", source=CUDA, args=[f, ll, d, out, n])
    out = out.reshape(10, n)
    for row, mode in enumerate(("rn", "rz", "rd", "ru")):
        want = [_ref_bits(float(v), mode) for v in f]
        bad = [(float(f[i]), hex(out[row, i]), hex(want[i])) for i in range(n) if out[row, i] != want[i]]
        assert not bad, (mode, bad[:5])
    # rn agrees with ml_dtypes' float32 -> bfloat16 cast
    np.testing.assert_array_equal(out[0], f.astype(BF16).view(np.uint16))
    for row, mode in enumerate(("rn", "rz", "rd", "ru"), start=4):
        want = [_ref_bits(int(v), mode) for v in ll]
        bad = [(int(ll[i]), hex(out[row, i]), hex(want[i])) for i in range(n) if out[row, i] != want[i]]
        assert not bad, (mode, bad[:5])
    want = [_ref_bits(float(v), "rn") for v in d]
    assert list(out[8]) == want
    assert list(out[9]) == [_ref_bits(int(v) >> 32, "rn") for v in ll]


def test_bf16_to_integers_round_and_saturate():
    b = np.array([0x3FC0, 0x4020, 0xC020, 0x4060, 0x4000 | 0x0040, 0x7F80, 0xFF80, 0x7FC0, 0x4F80, 0xCF80,
                  0x4780, 0x8000, 0x3F00, 0xBF00, 0x43FF, 0xC3FF], np.uint16)
    n = len(b)
    out = np.zeros(6 * n, np.int32)
    run_kernel("test_bf16/bf16.cu", entry="bf16_to_int", source=CUDA, args=[b, out, n])
    out = out.reshape(6, n)
    vals = b.view(BF16).astype(np.float64)

    def sat(r, lo, hi):
        return 0 if math.isnan(r) else int(max(lo, min(hi, r)))
    i32 = (-2 ** 31, 2 ** 31 - 1)
    assert list(out[0]) == [sat(np.rint(v), *i32) for v in vals]
    assert list(out[1]) == [sat(np.trunc(v), *i32) for v in vals]
    assert list(out[2]) == [sat(np.floor(v), *i32) for v in vals]
    assert list(out[3]) == [sat(np.ceil(v), *i32) for v in vals]
    assert list(out[4]) == [sat(np.trunc(v), 0, 255) for v in vals]
    assert list(out[5]) == [sat(np.rint(v), -32768, 32767) for v in vals]


def test_bf16_pairs():
    x = np.array([1.5, -2.25, 3.0, 0.5, 0.125], np.float32)
    out = np.zeros(10, np.float32)
    run_kernel("test_bf16/bf16.cu", entry="bf16_pairs", source=CUDA, args=[x, out])
    b = x.astype(BF16).astype(np.float32)
    fma = (b[0:2].astype(np.float64) * b[2:4] + b[4]).astype(np.float32).astype(BF16).astype(np.float32)
    assert list(out[:2]) == list(fma)
    assert list(out[2:6]) == [1.5, -2.25, 0.5, 0.5]
    assert list(out[6:8]) == [max(1.5, 3.0) - 1.0, max(-2.25, 0.5) - 2.0]
    assert list(out[8:10]) == [1.0, -1.0]


@pytest.mark.parametrize("x", [[1.2345, -7.5e3]])
def test_hip_bf16_header_and_bfloat162(x):
    xs = np.array(x, np.float32)
    out = np.zeros(2, np.float32)
    run_kernel("test_bf16/bf16.hip", entry="hip_bf16", source=HIP, args=[xs, out])
    np.testing.assert_array_equal(out, xs.astype(BF16).astype(np.float32))
