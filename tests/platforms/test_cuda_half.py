"""platforms/cuda/half.py: _Float16 printed as __half in CUDA outputs (nvcc 13 has an internal
error on _Float16 in device code), with C's implicit conversions made explicit: the __half
program runs bit for bit like the _Float16 one on the virtual device, and nvcc compiles it."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from platforms.common.generator import emit_program
from platforms.cuda.backend import CudaGenerator, emit
from platforms.cuda.half import to_half
from xpiler.parse import parse_source
from xpiler.run import run_kernel

MIXED = r"""
#include <cuda_runtime.h>
#include <math.h>
__device__ _Float16 scale(_Float16 v, float s) { return v * s; }
__global__ void k(_Float16 *h, float *f, int *q, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    _Float16 a = h[i], b = h[n + i];
    _Float16 c = a * b + a;          // half operations, each rounded
    float x = f[i];
    float y = a * x;                 // float operation
    _Float16 d = a + 3;              // the integer becomes half
    d += x;                          // d = (half)(d + x)
    d -= 2;
    x += b;
    _Float16 e = x;                  // float -> half
    _Float16 g = 1;
    g = i;                           // int -> half
    long l = (long) (a * (_Float16) 100.0f);
    c = (a < 0) ? c : (_Float16) 0.5f;
    y = (b > x) ? y : a;             // ?: of float and half
    h[i] = c + d + e + scale(g, 0.25f);
    h[n + i] = expf(a) > 1.0f ? a : b;
    f[i] = y + x + sqrtf(fabsf(c));
    q[i] = (int) l + (a == b) + (int) (unsigned char) (a * (_Float16) 10);
  }
}
"""


def _prog(text):
    return parse_source(text, "cuda", "k.cu")


def test_mixed_expressions_get_cs_conversions_explicitly():
    out = emit(_prog(MIXED))
    assert "_Float16" not in out and "#include <cuda_fp16.h>" in out
    body = out.split("__global__")[1]
    for want in ("float y = ((float) a) * x;", "__half d = a + ((__half) 3);",
                 "d = (__half) (((float) d) + x);", "d -= (__half) 2;", "x += (float) b;",
                 "g = (__half) i;", "y = (((float) b) > x) ? y : ((float) a);",
                 "expf((float) a)", "fabsf((float) c)", "(unsigned char) ((float) (a * ((__half) 10)))",
                 "(a < ((__half) 0))", "__half c = a * b + a;"):
        assert want.replace(" ", "") in body.replace(" ", ""), want
    assert "return (__half) (((float) v) * s);".replace(" ", "") in out.replace(" ", "")


def test_the_half_program_runs_like_the_float16_one():
    prog = _prog(MIXED)
    plain = emit_program(prog, CudaGenerator)               # _Float16 (g++ on the virtual device)
    assert "_Float16" in plain
    n = 256
    rng = np.random.default_rng(3)
    h = (rng.standard_normal(2 * n) * 4).astype(np.float16)
    h[:8] = [0.0, -0.0, 1e-5, -65504, 65504, 0.1, -2.5, 1.0]
    f = (rng.standard_normal(n) * 4).astype(np.float32)
    runs = []
    for text in (plain, emit(prog)):
        args = [h.copy(), f.copy(), np.zeros(n, np.int32), n]
        run_kernel("k.cu", args=args, source=text, program=_prog(text),
                   launch={"grid": (2, 1, 1), "block": (128, 1, 1)})
        runs.append(args)
    for a, b in zip(runs[0][:3], runs[1][:3]):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_nvcc_compiles_the_half_program(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(emit(_prog(MIXED)))
    proc = subprocess.run(["nvcc", "-c", "-std=c++17", "-o", str(tmp_path / "k.o"), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("text, why", [
    ("typedef _Float16 half;\n__global__ void k(half *h) { h[0] = h[1] * 2.0f; }\n", "defines half"),
    ("struct P { _Float16 v; };\n__global__ void k(struct P *p, _Float16 *h) { h[0] = p->v * 2.0f; }\n",
     "a field type is not tracked"),
    ("__device__ float w(float x) { return x; }\n__device__ double w(double x) { return x; }\n"
     "__global__ void k(_Float16 *h) { h[0] = w(h[1]); }\n", "overload without a half parameter"),
])
def test_falls_back_to_float16_where_it_cannot_be_exact(text, why):
    prog = _prog(text)
    assert to_half(prog) is None, why
    assert "_Float16" in emit(prog)


def test_programs_without_float16_are_untouched():
    prog = _prog("__global__ void k(float *x) { x[0] = 2.0f * x[1]; }\n")
    assert to_half(prog) is prog
    assert "cuda_fp16" not in emit(prog)
