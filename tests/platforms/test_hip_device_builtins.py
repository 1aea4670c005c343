"""HIP device builtins of amd_detail/amd_device_functions.h on the HIP virtual device
(platforms/hip/runtime/xp_hip.h): bit fields, last bit, clamped funnel shifts, __fns32, lane
masks, mbcnt and the rounding conversions, each against the header's own body written in Python."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _emu_harness as H  # noqa: E402

import platforms  # noqa: E402

M32, M64 = (1 << 32) - 1, (1 << 64) - 1

SRC = r'''
#include <hip/hip_runtime.h>

__global__ void bits(const unsigned* a, const unsigned* b, unsigned* out, unsigned long long* out64) {
  int t = threadIdx.x;
  unsigned x = a[t], y = b[t];
  unsigned off = t & 15, w = (t >> 2) & 15;
  unsigned long long xx = ((unsigned long long)y << 32) | x, yy = ((unsigned long long)x << 32) | y;
  out[t * 8 + 0] = __bitextract_u32(x, off, w);
  out[t * 8 + 1] = __bitinsert_u32(x, y, off, w);
  out[t * 8 + 2] = __lastbit_u32_u64(t == 0 ? 0ull : (unsigned long long)y << (t % 33));
  out[t * 8 + 3] = __funnelshift_lc(x, y, t);
  out[t * 8 + 4] = __funnelshift_rc(x, y, t);
  out[t * 8 + 5] = (unsigned)__fns32(0xf0f0f0f00ff00ff0ull, t, (t % 5) - 2);
  out[t * 8 + 6] = __mbcnt_hi(~0u, __mbcnt_lo(~0u, 0));
  out[t * 8 + 7] = __lastbit_u32_u32(t == 0 ? 0u : y << (t % 32));
  out64[t * 3 + 0] = __lanemask_gt();
  out64[t * 3 + 1] = __bitextract_u64(xx, t, (64 - t) / 2);
  out64[t * 3 + 2] = __bitinsert_u64(xx, yy, t, (64 - t) / 2);
}

__global__ void conversions(const double* d, long long* out) {
  int t = threadIdx.x;
  double v = d[t];
  float f = (float)v;
  out[t * 8 + 0] = __double2ll_rn(v);
  out[t * 8 + 1] = __double2ll_rd(v);
  out[t * 8 + 2] = __double2int_ru(v);
  out[t * 8 + 3] = __float2ll_ru(f);
  out[t * 8 + 4] = (long long)__double2uint_rn(v < 0 ? -v : v);
  out[t * 8 + 5] = (long long)__float2ull_rn(f < 0 ? -f : f);
  out[t * 8 + 6] = (long long)__float2uint_rd(f < 0 ? -f : f);
  out[t * 8 + 7] = (long long)__double2ull_ru(v < 0 ? -v : v);
}
'''


@pytest.fixture(scope="module")
def so():
    return H.build("hip", SRC, path="builtins.hip")


# ---------------------------------------------------------------- the header's bodies
def bitextract(src, off, width, bits):
    off, width = off & (bits - 1), width & (bits - 1)
    m = (1 << bits) - 1
    return 0 if width == 0 else (((src << ((bits - off - width) % bits)) & m) >> ((bits - width) % bits))


def bitinsert(src0, src1, off, width, bits):
    off, width = off & (bits - 1), width & (bits - 1)
    m = (1 << bits) - 1
    mask = (1 << width) - 1
    return ((src0 & ~(mask << off)) | ((src1 & mask) << off)) & m


def lastbit(x):
    return M32 if x == 0 else (x & -x).bit_length() - 1


def alignbit(hi, lo, s):
    return (((hi << 32) | lo) >> (s & 31)) & M32


def funnelshift_lc(lo, hi, shift):
    s = min(shift, 32)
    return hi if s == 0 else alignbit(hi, lo, 32 - s)


def funnelshift_rc(lo, hi, shift):
    return hi if shift >= 32 else alignbit(hi, lo, shift)


def fns32(mask, base, offset):
    """amd_device_functions.h's loop (the n-th set bit from base; -1 when none)."""
    if offset == 0:
        return base if (mask >> base) & 1 else -1
    if offset > 0:
        bits = [b for b in range(base, 64) if (mask >> b) & 1]
        return bits[offset - 1] if len(bits) >= offset else -1
    bits = [b for b in range(base, -1, -1) if (mask >> b) & 1]
    return bits[-offset - 1] if len(bits) >= -offset else -1


def test_bit_builtins_follow_the_header(so):
    rng = np.random.default_rng(17)
    a = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    out = np.zeros(64 * 8, np.uint32)
    out64 = np.zeros(64 * 3, np.uint64)
    _, _, out, out64 = _call(so, "bits", [a, b, out, out64])
    out = out.reshape(64, 8)
    out64 = out64.reshape(64, 3)
    for t in range(64):
        x, y = int(a[t]), int(b[t])
        off, w = t & 15, (t >> 2) & 15
        xx, yy = (y << 32) | x, (x << 32) | y
        assert out[t, 0] == bitextract(x, off, w, 32), t
        assert out[t, 1] == bitinsert(x, y, off, w, 32), t
        assert out[t, 2] == lastbit(0 if t == 0 else (y << (t % 33)) & M64), t
        assert out[t, 3] == funnelshift_lc(x, y, t), t
        assert out[t, 4] == funnelshift_rc(x, y, t), t
        assert out[t, 5] == fns32(0xf0f0f0f00ff00ff0, t, t % 5 - 2) & M32, t
        assert out[t, 6] == t, t                       # mbcnt over a full wavefront: the lane id
        assert out[t, 7] == lastbit(0 if t == 0 else (y << (t % 32)) & M32), t
        assert int(out64[t, 0]) == (0 if t == 63 else (M64 << (t + 1)) & M64), t
        assert int(out64[t, 1]) == bitextract(xx, t, (64 - t) // 2, 64), t
        assert int(out64[t, 2]) == bitinsert(xx, yy, t, (64 - t) // 2, 64), t


def test_rounding_conversions_follow_the_header(so):
    d = np.array([(-1) ** i * (i * 0.75 + 0.5) for i in range(64)], np.float64)
    d[:4] = [2.5, -2.5, 3.5, 0.0]                      # ties: rint rounds to even
    out = np.zeros(64 * 8, np.int64)
    _, out = _call(so, "conversions", [d, out])
    out = out.reshape(64, 8)
    f = d.astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(out[:, 0], np.rint(d))
    np.testing.assert_array_equal(out[:, 1], np.floor(d))
    np.testing.assert_array_equal(out[:, 2], np.ceil(d))
    np.testing.assert_array_equal(out[:, 3], np.ceil(f))
    np.testing.assert_array_equal(out[:, 4], np.rint(np.abs(d)))
    np.testing.assert_array_equal(out[:, 5], np.rint(np.abs(f)))
    np.testing.assert_array_equal(out[:, 6], np.floor(np.abs(f)))
    np.testing.assert_array_equal(out[:, 7], np.ceil(np.abs(d)))


def _call(so, entry, args):
    r = H.call(so, entry, args, launch=((1, 1, 1), (64, 1, 1)), strict=True, platform="hip")
    assert r.rc == 0, r.stderr
    return r.arrays


def test_pure_builtins_are_host_definable():
    """The argument-only builtins are in the host-definable section a lift may copy."""
    defined = platforms.device_functions("hip")
    for name in ("__bitextract_u32", "__bitinsert_u64", "__lastbit_u32_u64", "__funnelshift_lc",
                 "__double2ll_rn", "__float2ull_rz"):
        assert name in defined, name
    assert "__fns32" not in defined and "__lanemask_gt" not in defined
