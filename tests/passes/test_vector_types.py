"""passes/cleanup/vector_types.py: GNU/clang vector typedefs -> element arrays (checked on the virtual
device), one refusal per Requires line, and verified hip -> cuda MFMA outputs compiled with the
real nvcc (skipped where it is not installed)."""
from __future__ import annotations

import copy
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import platforms
from passes.cleanup import vector_types  # noqa: F401
from passes.lift import vector_struct_ops  # noqa: F401
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

ROOT = Path(__file__).resolve().parents[2]
HIP = ROOT / "xpiler" / "corpus" / "hip"

VEC = r"""
#include <string.h>
typedef float v4 __attribute__((vector_size(16)));
typedef float w4 __attribute__((vector_size(16)));
extern "C" void k(const float *x, float *out, int n) {
  for (int i = 0; i < n; ++i) {
    v4 a;
    v4 b = {1.0f, 2.0f, 3.0f, 4.0f};
    memcpy(&a, x + 4 * i, sizeof(a));
    v4 c = a * b + (v4){0.5f, 0.25f, 0.125f, 1.0f};
    c -= a / 3.0f;
    w4 d;
    d = c;
    d[1] = -d[1];
    const float *p = (const float *) &d;
    for (int j = 0; j < 4; ++j)
      out[4 * i + j] = p[j] + d[j];
  }
}
"""


def _prog(text):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _refused(text, code):
    with pytest.raises(PassRefused) as exc:
        run_pass("vector_types", _prog(text))
    assert exc.value.diagnostics[0].code == code, exc.value.diagnostics[0].message


def test_vectors_become_element_arrays_with_the_same_outputs():
    src = _prog(VEC)
    out = run_pass("vector_types", src)
    text = _emit(out)
    assert "vector_size" not in text and "v4" not in text and "w4" not in text
    assert "float a[4];" in text and "c[3] = " in text
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(12).astype(np.float32), np.zeros(12, np.float32), 3]
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.cpp", args=want, source=_emit(src), program=src)
    run_kernel("b.cpp", args=got, source=_emit(out), program=out)
    assert np.any(want[1] != 0)
    np.testing.assert_array_equal(want[1], got[1])


def test_nothing_to_do_without_a_vector_typedef():
    from passes.base import apply_pass

    prog = _prog('extern "C" void k(float *x) { x[0] = 1.0f; }')
    out = apply_pass("vector_types", prog)              # not applicable: the input, unchanged
    assert not out.changed and out.program is prog and out.reason.code == "XP-VECTYPES-001"


def test_refuses_a_lane_count_that_is_not_a_power_of_two():
    _refused('typedef float v3 __attribute__((vector_size(12)));\n'
             'extern "C" void k(float *x) { v3 a; a[0] = 1.0f; x[0] = a[0]; }', "XP-VECTYPES-002")


def test_refuses_a_vector_comparison():
    _refused('typedef int v4 __attribute__((vector_size(16)));\n'
             'extern "C" void k(int *x) { v4 a = {1, 2, 3, 4}; v4 b = {4, 3, 2, 1}; v4 c;\n'
             '  c = a < b; x[0] = c[0]; }', "XP-VECTYPES-003")


def test_refuses_a_vector_passed_by_value():
    _refused('typedef float v4 __attribute__((vector_size(16)));\n'
             'static float f(v4 a) { return a[0]; }\n'
             'extern "C" void k(float *x) { v4 a = {1, 2, 3, 4}; x[0] = f(a); }', "XP-VECTYPES-003")


def test_refuses_an_operand_with_side_effects():
    _refused('typedef float v4 __attribute__((vector_size(16)));\n'
             'extern "C" void k(float *x) { int i = 0; v4 a = {1, 2, 3, 4};\n'
             '  a = a * x[i++]; x[0] = a[0]; }', "XP-VECTYPES-004")


def test_refuses_two_vectors_through_pointers():
    _refused('typedef float v4 __attribute__((vector_size(16)));\n'
             'extern "C" void k(float *x) { v4 *p = (v4 *) x; v4 *q = (v4 *) (x + 2);\n'
             '  *p = *q + *p; }', "XP-VECTYPES-005")


# ------------------------------------------------------------------ real toolchain
MFMA = ["bmm_2_32_64_32", "gemm_32_32_32", "mha_1_2_32_16"]


def _nvcc(path: Path):
    proc = subprocess.run(["nvcc", "-c", "-std=c++17", "-o", str(path.with_suffix(".o")), str(path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.stderr or proc.stdout)[-2000:]


def _hipcc(path: Path):
    proc = subprocess.run(["hipcc", "-c", "-std=c++17", "--offload-arch=gfx90a", "-o",
                           str(path.with_suffix(".o")), str(path)], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, HIP_PLATFORM="amd"))
    assert proc.returncode == 0, (proc.stderr or proc.stdout)[-2000:]


def _mfma_sources(n):
    names = sorted(p.stem for p in HIP.glob("*.hip") if "__builtin_amdgcn_mfma" in p.read_text())
    return names[:n]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_lifted_mfma_kernel_compiles_with_nvcc(tmp_path):
    from xpiler.translate import translate

    name = _mfma_sources(1)[0]
    out = tmp_path / f"{name}.cu"
    rep = translate(str(HIP / f"{name}.hip"), "cuda", str(out))
    assert rep.status == "verified", rep.message
    assert "vector_types" in rep.pipeline
    assert "vector_size" not in out.read_text()
    _nvcc(out)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
@pytest.mark.parametrize("index", range(1, 4))
def test_more_lifted_mfma_kernels_compile_with_nvcc(tmp_path, index):
    from xpiler.translate import translate

    names = _mfma_sources(index + 1)
    if len(names) <= index:
        pytest.skip("not enough MFMA kernels in the corpus")
    name = names[index]
    out = tmp_path / f"{name}.cu"
    rep = translate(str(HIP / f"{name}.hip"), "cuda", str(out))
    assert rep.status == "verified", rep.message
    _nvcc(out)


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not installed")
def test_rewritten_vectors_compile_with_hipcc(tmp_path):
    out = run_pass("vector_types", _prog(VEC))
    text = "#include <hip/hip_runtime.h>\n" + _emit(out).replace('extern "C" void k', '__global__ void k')
    path = tmp_path / "k.hip"
    path.write_text(text)
    _hipcc(path)


# ------------------------------------------------------------------ vector_struct_ops (HIP float2 arithmetic)
HIP_STRUCTS = r"""
#include <hip/hip_runtime.h>
template <int M>
__global__ void k(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float2 acc[M];
  for (int m = 0; m < M; ++m) acc[m] = {0.0f, 0.0f};
  float2 a = make_float2(x[2 * i], x[2 * i + 1]);
  float2 b = {y[2 * i], y[2 * i + 1]};
  for (int m = 0; m < M; ++m) {
    acc[m] += a * b;
    acc[m] = acc[m] - make_float2(0.5f, 0.25f) * b;
  }
  float2 c = a + acc[M - 1];
  out[2 * i] = c.x;
  out[2 * i + 1] = c.y;
}
extern "C" void run(const float *x, const float *y, float *out, int n) {
  k<3><<<(n + 63) / 64, 64>>>(x, y, out, n);
}
"""


def test_vector_struct_arithmetic_becomes_member_statements_with_the_same_outputs():
    from passes.base import apply_pass

    src = parse_source(HIP_STRUCTS, "hip", "t.hip")
    out = apply_pass("vector_struct_ops", src)
    assert out.changed
    text = _emit(out.program)
    assert ".x = (float)" in text and ".y = (float)" in text and "a * b" not in text
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(200).astype(np.float32), rng.standard_normal(200).astype(np.float32),
            np.zeros(200, np.float32), 100]
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.hip", args=want, source=_emit(src), program=src)
    run_kernel("b.hip", args=got, source=text, program=out.program)
    assert np.any(want[2] != 0)
    np.testing.assert_array_equal(want[2], got[2])


def test_vector_struct_ops_nothing_to_do_and_refusal():
    from passes.base import apply_pass

    plain = parse_source('#include <hip/hip_runtime.h>\n__global__ void k(float *x) '
                         '{ float2 v = make_float2(1.0f, 2.0f); float2 w = v; x[0] = w.x; }', "hip", "t.hip")
    got = apply_pass("vector_struct_ops", plain)
    assert not got.changed and got.program is plain and got.reason.code == "XP-VECTYPES-006"
    nested = parse_source(HIP_STRUCTS.replace("out[2 * i] = c.x;", "out[2 * i] = (a * b).x;"), "hip", "t.hip")
    with pytest.raises(PassRefused) as exc:
        run_pass("vector_struct_ops", nested)
    assert exc.value.diagnostics[0].code == "XP-VECTYPES-003"
