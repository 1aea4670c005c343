"""loop_recovery on ports and real host code (issue 16, wild set): a port's compatibility macros
keep their names when the lift gives the runtime names in their bodies a host meaning; stream
types and arguments are dropped; device queries (``cudaGetDevice``, ``cudaDeviceGetAttribute``)
are answered from the virtual device's profile."""
from __future__ import annotations

import numpy as np

import platforms
from passes.base import run_pass
from passes.lift import loop_recovery  # noqa: F401  (registers the pass)
from xpiler.parse import parse_source
from xpiler.run import run_kernel

SUFFIX = {"cuda": ".cu", "hip": ".hip"}


def _lift_and_run(tmp_path, src: str, platform: str, args: list):
    prog = parse_source(src, platform, f"k{SUFFIX[platform]}")
    text = platforms.module("vnni", "backend").emit(run_pass("loop_recovery", prog))
    sp = tmp_path / f"k{SUFFIX[platform]}"
    sp.write_text(src)
    tp = tmp_path / "k.cpp"
    tp.write_text(text)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(sp, args=want, program=prog)
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(tp, args=got, source=text, strict=True)
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)
    return text


PORT_MACROS = r"""
#include <hip/hip_runtime.h>
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaGetLastError hipGetLastError
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) return; } while (0)

__global__ void twice(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

extern "C" void entry(const float *x, float *y, int n) {
  float *dx, *dy;
  CHECK(hipMalloc(&dx, n * sizeof(float)));
  CHECK(hipMalloc(&dy, n * sizeof(float)));
  hipMemcpy(dx, x, n * sizeof(float), hipMemcpyHostToDevice);
  twice<<<(n + 63) / 64, 64>>>(dx, dy, n);
  CHECK(cudaGetLastError());
  hipMemcpy(y, dy, n * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dx);
  hipFree(dy);
}
"""


def test_port_macros_of_runtime_names_keep_their_names(tmp_path):
    x = np.arange(300, dtype=np.float32)
    text = _lift_and_run(tmp_path, PORT_MACROS, "hip", [x, np.zeros(300, np.float32), 300])
    assert "#define cudaSuccess 0" in text and "#define cudaError_t int" in text
    assert "#define 0" not in text and "#define int" not in text
