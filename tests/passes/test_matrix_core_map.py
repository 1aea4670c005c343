"""passes/map/matrix_core_map/__init__.py: CUDA wmma -> HIP MFMA (one wavefront per warp), verified on the
virtual device; refusals (float32 MFMA -> wmma, thread indices that cannot be remapped,
non-element-wise fragment use); outputs compile with hipcc where installed."""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import platforms
from passes.map import matrix_core_map  # noqa: F401  (registers the pass)
from passes.map import api_map  # noqa: F401
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

# a 1-D block of two warps; warp w computes the 16x16 tile (row0, col0 + 16w) of
# C = relu(A * B^T + C0) (B col-major view, C0 loaded column-major), then stages it in shared
# memory and every lane copies / reduces it with thread-indexed code and shuffles
SRC = r"""
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>
using namespace nvcuda;

__global__ void __launch_bounds__(64) mm_kernel(const half *A, const half *B, const float *C0, float *C,
                                                float *sums, int M, int N, int K) {
  __shared__ float tile[2 * 256];
  const int w = threadIdx.x / 32;
  const int row0 = blockIdx.y * 16;
  const int col0 = (blockIdx.x * 2 + w) * 16;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(acc, C0 + col0 * M + row0, M, wmma::mem_col_major);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(a, A + row0 * K + k, K);
    wmma::load_matrix_sync(b, B + col0 * K + k, K);
    wmma::mma_sync(acc, a, b, acc);
  }
  for (int i = 0; i < acc.num_elements; ++i) acc.x[i] = fmaxf(acc.x[i], 0.0f);
  wmma::store_matrix_sync(tile + w * 256, acc, 16, wmma::mem_row_major);
  __syncthreads();
  float s = 0.0f;
  for (int e = threadIdx.x % 32; e < 256; e += 32) {
    C[(row0 + e / 16) * N + col0 + e % 16] = tile[w * 256 + e] * 2.0f;
    s += tile[w * 256 + e];
  }
  for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffff, s, off);
  if (threadIdx.x % 32 == 0) sums[(blockIdx.y * gridDim.x + blockIdx.x) * (blockDim.x / 32) + w] = s;
}

extern "C" void mm(half *A, half *B, float *C0, float *C, float *sums, int M, int N, int K) {
  half *dA, *dB;
  float *dC0, *dC, *dS;
  cudaMalloc(&dA, M * K * sizeof(half));
  cudaMalloc(&dB, N * K * sizeof(half));
  cudaMalloc(&dC0, M * N * sizeof(float));
  cudaMalloc(&dC, M * N * sizeof(float));
  cudaMalloc(&dS, (M / 16) * (N / 16) * sizeof(float));
  cudaMemcpy(dA, A, M * K * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B, N * K * sizeof(half), cudaMemcpyHostToDevice);
  cudaMemcpy(dC0, C0, M * N * sizeof(float), cudaMemcpyHostToDevice);
  dim3 grid(N / 32, M / 16);
  mm_kernel<<<grid, 64>>>(dA, dB, dC0, dC, dS, M, N, K);
  cudaMemcpy(C, dC, M * N * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(sums, dS, (M / 16) * (N / 16) * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC0);
  cudaFree(dC);
  cudaFree(dS);
}
"""


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _args(M=32, N=64, K=48, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((M, K)).astype(np.float16)
    B = rng.standard_normal((N, K)).astype(np.float16)
    C0 = rng.standard_normal((N, M)).astype(np.float32)       # column-major M x N
    return [A.ravel(), B.ravel(), C0.ravel(), np.zeros(M * N, np.float32),
            np.zeros((M // 16) * (N // 16), np.float32), M, N, K]


def _reference(args):
    A, B, C0, _, _, M, N, K = args
    full = A.reshape(M, K).astype(np.float64) @ B.reshape(N, K).astype(np.float64).T + \
        C0.reshape(N, M).T.astype(np.float64)
    full = np.maximum(full, 0.0)
    sums = full.reshape(M // 16, 16, N // 16, 16).sum(axis=(1, 3)).ravel()
    return 2.0 * full.ravel(), sums


@pytest.fixture(scope="module")
def mapped():
    prog = parse_source(SRC, "cuda", "mm.cu")
    return prog, run_pass("matrix_core_map", prog, to="hip")


def test_wmma_becomes_mfma_on_wavefronts(mapped):
    _, out = mapped
    text = _emit(out)
    assert out.platform == "hip"
    assert "wmma" not in text and "mma.h" not in text
    assert text.count("__builtin_amdgcn_mfma_f32_16x16x16f16(") == 1
    assert "<<<grid, dim3(128, 1, 1)>>>" in text                  # two warps -> two wavefronts
    assert "__launch_bounds__(128)" in text
    assert "__shfl_xor(s, off, 32)" in text                       # api_map tail: width 32
    assert "if (__xp_lead)" in text                              # stores by lanes 0..31 only
    assert out.launches[0].block[0] == "128"


def test_mapped_kernel_verified_on_the_virtual_device(mapped, tmp_path):
    prog, out = mapped
    want, got = _args(), _args()
    run_kernel(tmp_path / "a.cu", args=want, source=SRC, program=prog, strict=True)
    run_kernel(tmp_path / "b.hip", args=got, source=_emit(out), program=out, strict=True)
    ref_c, ref_s = _reference(want)
    np.testing.assert_allclose(want[3], ref_c, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(got[3], want[3], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[4], want[4], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(want[4], ref_s, rtol=1e-4, atol=1e-2)


def test_input_not_mutated(mapped):
    prog, _ = mapped
    before = _emit(prog)
    run_pass("matrix_core_map", prog, to="hip")
    assert _emit(prog) == before


def _refusal(text, platform="cuda", to="hip"):
    prog = parse_source(text, platform, "t." + ("cu" if platform == "cuda" else "hip"))
    with pytest.raises(PassRefused) as exc:
        run_pass("matrix_core_map", prog, to=to)
    return exc.value.diagnostics[0]


def test_refuses_block_whose_warps_cannot_become_wavefronts():
    # 16 x 4 block: a warp spans two rows of threadIdx.y, no x-only remap keeps the warps
    d = _refusal(SRC.replace("mm_kernel<<<grid, 64>>>", "mm_kernel<<<grid, dim3(16, 4)>>>"))
    assert d.code == "XP-MCMAP-004" and "multiple of 32" in d.message


@pytest.mark.parametrize("body", ["acc.x[i] = fmaxf(acc.x[0], 0.0f);",        # another lane's element
                                  "acc.x[i] = acc.x[i] + (float)i;",          # the element's position
                                  "acc.x[i] = acc.x[i] + C0[i];",             # memory by position
                                  "C[i] = acc.x[i];"])
def test_refuses_position_dependent_fragment_code(body):
    # wmma's element -> lane map is unspecified (and differs from MFMA's): only element-wise code
    # on every x[i] is portable
    d = _refusal(SRC.replace("acc.x[i] = fmaxf(acc.x[i], 0.0f);", body))
    assert d.code == "XP-MCMAP-003" and d.coord.line > 0


def test_refuses_num_elements_outside_the_element_loop():
    d = _refusal(SRC.replace("float s = 0.0f;", "float s = (float)acc.num_elements;"))
    assert d.code == "XP-MCMAP-003"


def test_refuses_wmma_pointer_read_from_memory_the_kernel_writes():
    # the tile offset comes from shared memory the kernel writes: the replaying lanes 32..63 might
    # read it at another time than their CUDA thread
    src = SRC.replace("wmma::store_matrix_sync(tile + w * 256, acc, 16, wmma::mem_row_major);",
                      "tile[threadIdx.x] = 0.0f;\n  __syncthreads();\n"
                      "  wmma::store_matrix_sync(tile + (int)tile[w] * 256 + w * 256, acc, 16, wmma::mem_row_major);")
    d = _refusal(src)
    assert d.code == "XP-MCMAP-006"


def test_refuses_float32_mfma_to_wmma():
    hip = r"""
#include <hip/hip_runtime.h>
typedef float floatx4 __attribute__((ext_vector_type(4)));
__global__ void k(const float *A, const float *B, float *D) {
  const int lane = threadIdx.x % 64;
  floatx4 acc = {0.0f, 0.0f, 0.0f, 0.0f};
  acc = __builtin_amdgcn_mfma_f32_16x16x4f32(A[lane], B[lane], acc, 0, 0, 0);
  for (int i = 0; i < 4; ++i) D[(4 * (lane / 16) + i) * 16 + lane % 16] = acc[i];
}
extern "C" void run(float *A, float *B, float *D) {
  float *a, *b, *d;
  hipMalloc((void **)&a, 64 * sizeof(float));
  hipMalloc((void **)&b, 64 * sizeof(float));
  hipMalloc((void **)&d, 256 * sizeof(float));
  hipMemcpy(a, A, 64 * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(b, B, 64 * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(k, dim3(1), dim3(64), 0, 0, a, b, d);
  hipMemcpy(D, d, 256 * sizeof(float), hipMemcpyDeviceToHost);
}
"""
    d = _refusal(hip, "hip", "cuda")
    assert d.code == "XP-MCMAP-007" and "float32" in d.message


def test_plans_try_it_first():
    from xpiler.translate import PLANS

    for pair in (("cuda", "hip"), ("hip", "cuda")):
        assert PLANS[pair][0].startswith("matrix_core_map") and PLANS[pair][1].startswith("api_map")


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")
def test_output_compiles_with_hipcc(mapped, tmp_path):
    _, out = mapped
    path = tmp_path / "mm.hip"
    path.write_text(_emit(out))
    r = subprocess.run(["hipcc", "-c", "--offload-arch=gfx90a", str(path), "-o", str(tmp_path / "mm.o")],
                       capture_output=True, text=True, env=dict(os.environ, HIP_PLATFORM="amd"), timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_source_compiles_with_nvcc(tmp_path):
    # the CUDA side of the pair is real CUDA (the pass's input is what nvcc accepts)
    path = tmp_path / "mm.cu"
    path.write_text(SRC)
    r = subprocess.run(["nvcc", "-c", "-arch=sm_80", str(path), "-o", str(tmp_path / "mm.o")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


# HIP -> CUDA: a block of two wavefronts; wavefront w computes the 16x16 tile (row0, col0 + 16w) of
# C = leaky_relu(A * B + bias) with the f16 MFMA over a K loop
HIP_SRC = r"""
#include <hip/hip_runtime.h>
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef float float4_t __attribute__((ext_vector_type(4)));

__global__ void __launch_bounds__(128) gemm16(const _Float16 *A, const _Float16 *B, const float *bias, float *C,
                                              int N, int K) {
  const int wave = threadIdx.x / 64;
  const int lane = threadIdx.x % 64;
  const int row0 = blockIdx.y * 16;
  const int col0 = (blockIdx.x * 2 + wave) * 16;
  const float bv = bias[col0 + lane % 16];
  float4_t acc = {bv, bv, bv, bv};
  for (int k = 0; k < K; k += 16) {
    half4_t a, b;
    for (int r = 0; r < 4; ++r) {
      a[r] = A[(row0 + lane % 16) * K + k + 4 * (lane / 16) + r];
      b[r] = B[(k + 4 * (lane / 16) + r) * N + col0 + lane % 16];
    }
    acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, acc, 0, 0, 0);
  }
  for (int r = 0; r < 4; ++r)
    C[(row0 + 4 * (lane / 16) + r) * N + col0 + lane % 16] = acc[r] > 0.0f ? acc[r] : 0.125f * acc[r];
}

extern "C" void gemm(_Float16 *A, _Float16 *B, float *bias, float *C, int M, int N, int K) {
  _Float16 *dA, *dB;
  float *dbias, *dC;
  hipMalloc((void **)&dA, M * K * sizeof(_Float16));
  hipMalloc((void **)&dB, K * N * sizeof(_Float16));
  hipMalloc((void **)&dbias, N * sizeof(float));
  hipMalloc((void **)&dC, M * N * sizeof(float));
  hipMemcpy(dA, A, M * K * sizeof(_Float16), hipMemcpyHostToDevice);
  hipMemcpy(dB, B, K * N * sizeof(_Float16), hipMemcpyHostToDevice);
  hipMemcpy(dbias, bias, N * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(gemm16, dim3(N / 32, M / 16), dim3(128), 0, 0, dA, dB, dbias, dC, N, K);
  hipMemcpy(C, dC, M * N * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dA);
  hipFree(dB);
  hipFree(dbias);
  hipFree(dC);
}
"""


@pytest.fixture(scope="module")
def mapped_hip():
    prog = parse_source(HIP_SRC, "hip", "g.hip")
    return prog, run_pass("matrix_core_map", prog, to="cuda")


def test_f16_mfma_becomes_wmma(mapped_hip):
    _, out = mapped_hip
    text = _emit(out)
    assert out.platform == "cuda" and "__builtin_amdgcn" not in text and "hip" not in text.lower()
    assert text.count("nvcuda::wmma::mma_sync(") == 1 and "#include <mma.h>" in text
    assert out.launches[0].block[0] == "128"                     # same threads: a wavefront = 2 warps


def test_f16_mfma_mapping_verified_on_the_virtual_device(mapped_hip, tmp_path):
    prog, out = mapped_hip
    rng = np.random.default_rng(1)
    M, N, K = 32, 64, 48
    A = rng.standard_normal(M * K).astype(np.float16)
    B = rng.standard_normal(K * N).astype(np.float16)
    bias = rng.standard_normal(N).astype(np.float32)
    want = [A, B, bias, np.zeros(M * N, np.float32), M, N, K]
    got = [A.copy(), B.copy(), bias.copy(), np.zeros(M * N, np.float32), M, N, K]
    run_kernel(tmp_path / "a.hip", args=want, source=HIP_SRC, program=prog, strict=True)
    run_kernel(tmp_path / "b.cu", args=got, source=_emit(out), program=out, strict=True)
    full = A.reshape(M, K).astype(np.float64) @ B.reshape(K, N).astype(np.float64) + bias
    np.testing.assert_allclose(want[3], np.where(full > 0, full, 0.125 * full).ravel(), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(got[3], want[3])               # same products, same f32 sums


def test_refuses_mfma_under_thread_dependent_control():
    src = HIP_SRC.replace("    acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, acc, 0, 0, 0);",
                          "    if (lane < 48) acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, acc, 0, 0, 0);")
    d = _refusal(src, "hip", "cuda")
    assert d.code == "XP-MCMAP-009"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_mapped_cuda_compiles_with_nvcc(mapped_hip, tmp_path):
    _, out = mapped_hip
    path = tmp_path / "g.cu"
    path.write_text(_emit(out))
    r = subprocess.run(["nvcc", "-c", "-arch=sm_80", str(path), "-o", str(tmp_path / "g.o")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
