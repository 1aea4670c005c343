"""HIP virtual device (platforms/hip/emulate.py): wavefront-64 collectives, hipLaunchKernelGGL,
and the MFMA builtins against numpy. The MFMA kernels index A/B/D like the amd-lab-notes samples
(written against hardware), not with the TOML formulas, so the lane maps are checked end to end."""
from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _emu_harness as H  # noqa: E402

from platforms.hip import emulate  # noqa: E402

I = ctypes.c_int

SRC = r'''
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>

using float4_t = __attribute__((__vector_size__(4 * sizeof(float)))) float;
using float16x4 = __attribute__((__vector_size__(4 * sizeof(_Float16)))) _Float16;
typedef float floatx16 __attribute__((ext_vector_type(16)));
constexpr int LDA = 16, LDB = 16, LDD = 16;

// D (16x16) = A (16x16) B (16x16) as four 16x16x4 steps; one wavefront as dim3(16, 4)
__global__ void mfma_16x16x4(const float* A, const float* B, float* D, int blgp) {
  float4_t d = {0};
  for (int k = 0; k < 4; ++k) {
    const int mk = threadIdx.y + 4 * k + LDA * threadIdx.x;
    const int kn = threadIdx.x + LDB * (threadIdx.y + 4 * k);
    float a = A[mk], b = B[kn];
    d = blgp ? __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, d, 0, 0, 1)
             : __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, d, 0, 0, 0);
  }
  for (int i = 0; i < 4; ++i) D[threadIdx.x + i * LDD + threadIdx.y * 4 * LDD] = d[i];
}

__global__ void mfma_16x16x16(const _Float16* A, const _Float16* B, float* D) {
  float4_t d = {0};
  float16x4 a, b;
  for (int i = 0; i < 4; ++i) {
    a[i] = A[threadIdx.x * LDA + i + threadIdx.y * 4];
    b[i] = B[threadIdx.x + i * LDB + threadIdx.y * 4 * LDB];
  }
  d = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, d, 0, 0, 0);
  for (int i = 0; i < 4; ++i) D[threadIdx.x + i * LDD + threadIdx.y * 4 * LDD] = d[i];
}

// 32x32x8: one wavefront as dim3(32, 2); A 32x8, B 8x32, D 32x32
__global__ void mfma_32x32x8(const _Float16* A, const _Float16* B, float* D) {
  floatx16 d = {0};
  float16x4 a, b;
  for (int i = 0; i < 4; ++i) {
    a[i] = A[threadIdx.x * 8 + i + threadIdx.y * 4];
    b[i] = B[threadIdx.x + i * 32 + threadIdx.y * 4 * 32];
  }
  d = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, d, 0, 0, 0);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) D[threadIdx.x + i * 32 + threadIdx.y * 4 * 32 + j * 2 * 4 * 32] = d[i + 4 * j];
}

__global__ void mfma_bad_cbsz(const float* A, float* D) {
  float4_t d = {0};
  d = __builtin_amdgcn_mfma_f32_16x16x4f32(A[threadIdx.x], A[threadIdx.x], d, 1, 0, 0);
  D[threadIdx.x] = d[0];
}

// wavefront-64 reduction with mask-less shuffles + a 64-bit ballot
__global__ void wave_sum(const float* in, float* out, unsigned long long* ballots) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  for (int off = warpSize / 2; off > 0; off >>= 1) v += __shfl_xor(v, off);
  unsigned long long b = __ballot(in[i] > 0.5f);
  if (__lane_id() == 0) { out[i / warpSize] = v; ballots[i / warpSize] = b; }
}

__global__ void shfl_rules(int* out) {
  int lane = threadIdx.x, v = 1000 + lane;
  out[0 * 64 + lane] = __shfl(v, 70);           // 70 & 63 = 6
  out[1 * 64 + lane] = __shfl_up(v, 5, 16);
  out[2 * 64 + lane] = __shfl_down(v, 40);
  out[3 * 64 + lane] = __shfl_xor(v, 33, 64);
}

__global__ void dyn_rev(float* d) {
  HIP_DYNAMIC_SHARED(float, s)
  int t = threadIdx.x;
  s[t] = d[t];
  __syncthreads();
  d[t] = s[blockDim.x - 1 - t];
}

extern "C" void wave_sum_host(const float* h_in, float* h_out, unsigned long long* h_ballots, int n) {
  float *d_in, *d_out;
  unsigned long long* d_b;
  hipMalloc(&d_in, n * sizeof(float));
  hipMalloc(&d_out, n / 64 * sizeof(float));
  hipMalloc(&d_b, n / 64 * sizeof(unsigned long long));
  hipMemcpy(d_in, h_in, n * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(wave_sum, dim3(n / 256), dim3(256), 0, 0, d_in, d_out, d_b);
  hipDeviceSynchronize();
  hipMemcpy(h_out, d_out, n / 64 * sizeof(float), hipMemcpyDeviceToHost);
  hipMemcpy(h_ballots, d_b, n / 64 * sizeof(unsigned long long), hipMemcpyDeviceToHost);
  hipFree(d_in); hipFree(d_out); hipFree(d_b);
}
'''


@pytest.fixture(scope="module")
def so():
    return H.build("hip", SRC, path="mfma.hip")


def _run(so, entry, args, launch=None, strict=True):
    r = H.call(so, entry, args, launch=launch, strict=strict, platform="hip")
    assert r.rc == 0, r.stderr
    return r.arrays


def test_profile_and_flags():
    p = emulate.load_profile()
    assert p["warp_size"] == 64 and p["shared_mem_bytes"] == 65536 and p["max_threads_per_block"] == 1024
    assert isinstance(emulate.compile_flags(True), list)


def test_mfma_code_generated_from_toml():
    code = emulate.mfma_code()
    for it in emulate.load_mfma():
        assert it["name"] in code
        for e in it["a_map"] + it["b_map"] + it["d_map"]:
            assert f"return {e};" in code


def test_mfma_16x16x4f32(so):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((16, 16)).astype(np.float32)
    B = rng.standard_normal((16, 16)).astype(np.float32)
    D = np.zeros((16, 16), np.float32)
    *_, D = _run(so, "mfma_16x16x4", [A, B, D, I(0)], launch=((1, 1, 1), (16, 4, 1)))
    np.testing.assert_allclose(D, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


def test_mfma_blgp_lane_copy(so):
    rng = np.random.default_rng(1)
    A = rng.standard_normal((16, 16)).astype(np.float32)
    B = rng.standard_normal((16, 16)).astype(np.float32)
    D = np.zeros((16, 16), np.float32)
    *_, D = _run(so, "mfma_16x16x4", [A, B, D, I(1)], launch=((1, 1, 1), (16, 4, 1)))
    # blgp=1: lanes 32-63 read B from lanes 0-31, i.e. rows 4k+2, 4k+3 of each step use rows 4k, 4k+1
    Bp = B.copy()
    for k in range(4):
        Bp[4 * k + 2], Bp[4 * k + 3] = B[4 * k], B[4 * k + 1]
    np.testing.assert_allclose(D, A.astype(np.float64) @ Bp, rtol=1e-5, atol=1e-5)


def test_mfma_16x16x16f16(so):
    rng = np.random.default_rng(2)
    A = rng.standard_normal((16, 16)).astype(np.float16)
    B = rng.standard_normal((16, 16)).astype(np.float16)
    D = np.zeros((16, 16), np.float32)
    *_, D = _run(so, "mfma_16x16x16", [A, B, D], launch=((1, 1, 1), (16, 4, 1)))
    np.testing.assert_allclose(D, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_mfma_32x32x8f16(so):
    rng = np.random.default_rng(3)
    A = rng.standard_normal((32, 8)).astype(np.float16)
    B = rng.standard_normal((8, 32)).astype(np.float16)
    D = np.zeros((32, 32), np.float32)
    *_, D = _run(so, "mfma_32x32x8", [A, B, D], launch=((1, 1, 1), (32, 2, 1)))
    np.testing.assert_allclose(D, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-5, atol=1e-5)


def test_mfma_partial_wavefront_and_cbsz(so):
    A = np.ones(64, np.float32)
    D = np.zeros(64, np.float32)
    r = H.call(so, "mfma_bad_cbsz", [A, D], launch=((1, 1, 1), (64, 1, 1)), strict=True, platform="hip")
    assert r.rc == 42 and "cbsz" in r.error()["message"]
    Ah = np.ones(1024, np.float16)
    D = np.zeros(1024, np.float32)
    r = H.call(so, "mfma_16x16x16", [Ah, Ah, D], launch=((1, 1, 1), (32, 1, 1)), strict=False, platform="hip")
    assert r.rc == 40 and "32 of the 64 lanes" in r.error()["message"]


def test_wavefront64_shuffle_ballot_via_hipLaunchKernelGGL(so):
    n = 1024
    x = np.random.default_rng(4).random(n).astype(np.float32)
    out = np.zeros(n // 64, np.float32)
    ballots = np.zeros(n // 64, np.uint64)
    _, out, ballots = _run(so, "wave_sum_host", [x, out, ballots, I(n)])
    np.testing.assert_allclose(out, x.reshape(-1, 64).sum(1), rtol=1e-5)
    ref = [sum(1 << i for i in range(64) if row[i] > 0.5) for row in x.reshape(-1, 64)]
    assert [int(b) for b in ballots] == ref


def test_hip_dynamic_shared_and_lds_limit(so):
    d = np.arange(128, dtype=np.float32)
    (d,) = _run(so, "dyn_rev", [d], launch=((1, 1, 1), (128, 1, 1), 512))
    np.testing.assert_array_equal(d, np.arange(128, dtype=np.float32)[::-1])
    r = H.call(so, "dyn_rev", [np.zeros(128, np.float32)], launch=((1, 1, 1), (128, 1, 1), 65537), strict=True,
               platform="hip")
    assert r.rc == 42 and "65537 bytes of dynamic" in r.error()["message"]


def test_hip_shuffle_rules(so):
    out = np.zeros(4 * 64, np.int32)
    (out,) = _run(so, "shfl_rules", [out], launch=((1, 1, 1), (64, 1, 1)))
    out = out.reshape(4, 64)
    lanes = np.arange(64)
    v = 1000 + lanes
    assert (out[0] == v[6]).all()
    np.testing.assert_array_equal(out[1], np.where(lanes % 16 >= 5, v[lanes - 5], v))
    np.testing.assert_array_equal(out[2], np.where(lanes + 40 < 64, v[np.minimum(lanes + 40, 63)], v))
    np.testing.assert_array_equal(out[3], v[lanes ^ 33])
