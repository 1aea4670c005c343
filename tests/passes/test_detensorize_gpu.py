"""Detensorize inside loop_recovery: wmma fragments and MFMA builtins become scalar C++ driven by
platforms/cuda/intrinsics/wmma.toml and platforms/hip/intrinsics/mfma.toml (lane maps, reference
bodies); results must match the virtual device bit for bit, including the per-lane ``x[]`` map."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.lift import loop_recovery  # noqa: F401  (registers the pass)
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

WMMA = """#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;
__global__ void k(const half* a, const half* b, float* c, float* tag) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::col_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> t;
  int w = threadIdx.x / 32;
  wmma::fill_fragment(acc, 0.5f);
  wmma::load_matrix_sync(fa, a + w * 256, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::mma_sync(acc, fa, fb, acc);
  for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = acc.x[i] * 2.0f;
  wmma::store_matrix_sync(c + w * 256, acc, 16, wmma::mem_col_major);
  for (int i = 0; i < t.num_elements; ++i) t.x[i] = (float)((threadIdx.x % 32) * 100 + i);
  wmma::store_matrix_sync(tag + w * 256, t, 16, wmma::mem_row_major);
}
extern "C" void entry(half* a, half* b, float* c, float* tag) {
  half *da, *db; float *dc, *dt;
  cudaMalloc(&da, 512 * sizeof(half)); cudaMalloc(&db, 256 * sizeof(half));
  cudaMalloc(&dc, 512 * sizeof(float)); cudaMalloc(&dt, 512 * sizeof(float));
  cudaMemcpy(da, a, 512 * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b, 256 * sizeof(half), cudaMemcpyHostToDevice);
  k<<<1, 64>>>(da, db, dc, dt);
  cudaMemcpy(c, dc, 512 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(tag, dt, 512 * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(da); cudaFree(db); cudaFree(dc); cudaFree(dt);
}
"""

MFMA = """#include <hip/hip_runtime.h>
typedef float floatx4 __attribute__((ext_vector_type(4)));
__global__ void k(const float* A, const float* B, float* C, int K) {
  floatx4 acc = {0.0f, 0.0f, 0.0f, 0.0f};
  int L = threadIdx.x;
  for (int k0 = 0; k0 < K; k0 += 4) {
    float a = A[(L % 16) * K + k0 + L / 16];
    float b = B[(k0 + L / 16) * 16 + L % 16];
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, acc, 0, 0, 0);
  }
  for (int r = 0; r < 4; ++r) C[(4 * (L / 16) + r) * 16 + L % 16] = acc[r];
}
extern "C" void entry(float* A, float* B, float* C, int K) {
  float *dA, *dB, *dC;
  hipMalloc((void**)&dA, 16 * K * sizeof(float)); hipMalloc((void**)&dB, 16 * K * sizeof(float));
  hipMalloc((void**)&dC, 256 * sizeof(float));
  hipMemcpy(dA, A, 16 * K * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(dB, B, 16 * K * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(k, dim3(1), dim3(64), 0, 0, dA, dB, dC, K);
  hipMemcpy(C, dC, 256 * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dA); hipFree(dB); hipFree(dC);
}
"""


def _run_both(tmp_path, src, platform, args):
    suffix = ".cu" if platform == "cuda" else ".hip"
    prog = parse_source(src, platform, "k" + suffix)
    out = run_pass("loop_recovery", prog)
    text = platforms.module("vnni", "backend").emit(out)
    (tmp_path / ("k" + suffix)).write_text(src)
    (tmp_path / "k.cpp").write_text(text)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(tmp_path / ("k" + suffix), args=want, program=prog)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(tmp_path / "k.cpp", args=got, source=text, strict=True)
    return text, want, got


def test_wmma_fragments_are_per_warp_matrices(tmp_path):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(512).astype(np.float16)
    b = rng.standard_normal(256).astype(np.float16)
    text, want, got = _run_both(tmp_path, WMMA, "cuda", [a, b, np.zeros(512, np.float32),
                                                         np.zeros(512, np.float32)])
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    # lane L's x[e] is element L*E + e of the row-major fragment (wmma.toml lane_map)
    tag = got[3][:256].reshape(-1)
    assert tag[0] == 0 and tag[8] == 100 and tag[255] == 31 * 100 + 7
    assert "float acc[xp_nw][16][16];" in text
    assert "xp_wmma_mma_float_half_half_float_16x16x16(" in text
    assert "nvcuda" not in text.split("static void k")[1]


def test_mfma_lane_maps_from_the_toml(tmp_path):
    K = 8
    rng = np.random.default_rng(4)
    args = [rng.standard_normal(16 * K).astype(np.float32), rng.standard_normal(16 * K).astype(np.float32),
            np.zeros(256, np.float32), K]
    text, want, got = _run_both(tmp_path, MFMA, "hip", args)
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_allclose(got[2].reshape(16, 16), args[0].reshape(16, K) @ args[1].reshape(K, 16),
                               rtol=1e-5, atol=1e-5)
    assert "typedef float floatx4 __attribute__((vector_size(16)));" in text
    assert "static void xp_mfma_f32_16x16x4f32(" in text


def test_mfma_modifiers_are_refused():
    src = MFMA.replace("acc, 0, 0, 0)", "acc, 0, 0, 1)")
    with pytest.raises(PassRefused) as e:
        run_pass("loop_recovery", parse_source(src, "hip", "k.hip"))
    assert e.value.diagnostics[0].code == "XP-RECOVER-002"
