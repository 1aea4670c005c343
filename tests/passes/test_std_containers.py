"""passes/cleanup/std_containers.py (std::vector locals -> local arrays) and std_calls' range
statements (std::copy / std::fill): golden text, the same outputs on the virtual device, one
refusal per cause, and a vector kernel translated to CUDA."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.base import PassRefused, run_pass
from passes.plans import load_passes
from xpiler.parse import parse_source
from xpiler.run import run_kernel

load_passes()

SRC = r"""
#include <vector>
#include <algorithm>
extern "C" void k(const float *x, float *y, float *z, int n, float v) {
  std::vector<float> row(x, x + n);
  std::vector<float> acc(n);
  std::vector<int> flags(n, 3);
  for (size_t i = 0; i < row.size(); ++i) acc[i] = row[i] * 2.0f + flags.at(i);
  std::copy(acc.begin(), acc.end(), y);
  std::fill(z, z + n, v);
  if (!acc.empty()) z[0] = acc.data()[n - 1];
}
"""


def _prog(text):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def test_vectors_become_arrays_and_ranges_loops(tmp_path):
    prog = _prog(SRC)
    out = run_pass("std_calls", run_pass("std_containers", prog))
    text = _emit(out)
    assert "std::" not in text.split('extern "C"')[1]
    assert "float row[__xp_size_row]" in text and "const size_t __xp_size_row = (size_t) n" in text
    assert "__xp_k" in text and ".size()" not in text
    n = 37
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    want = [x, np.zeros(n, np.float32), np.zeros(n, np.float32), n, np.float32(1.5)]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in want]
    run_kernel(tmp_path / "a.cpp", args=want, source=_emit(prog), program=prog)
    run_kernel(tmp_path / "b.cpp", args=got, source=text, program=out)
    np.testing.assert_array_equal(got[1], x * 2 + 3)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])


def test_nothing_to_do_without_a_vector():
    prog = _prog('extern "C" void k(float *x) { x[0] = 1.0f; }')
    assert run_pass("std_containers", prog) is prog


@pytest.mark.parametrize("body, what", [
    ("std::vector<float> v;\n  v.push_back(x[0]);\n  x[1] = v[0];", "not constructed"),
    ("std::vector<float> v(4);\n  v.resize(8);\n  x[1] = v[0];", "used other than"),
    ("std::vector<float> v(4);\n  std::vector<float> w = v;\n  x[1] = w[0];", "used other than"),
])
def test_a_growing_vector_is_refused(body, what):
    prog = _prog("#include <vector>\nextern \"C\" void k(float *x) {\n  " + body + "\n}\n")
    with pytest.raises(PassRefused) as exc:
        run_pass("std_containers", prog)
    d = exc.value.diagnostics[0]
    assert d.code == "XP-STD-CONTAINERS-002" and what in d.message, d.message


def test_a_vector_scratch_row_translates_to_cuda(tmp_path):
    from xpiler.translate import translate
    src = tmp_path / "clamp.cpp"
    src.write_text(r"""
#include <vector>
#include <algorithm>
template <typename T>
static void clamp_inplace(T* data, size_t n, T lo, T hi) {
  for (size_t i = 0; i < n; ++i) data[i] = std::min(std::max(data[i], lo), hi);
}
extern "C" void clamp_f32(float* data, long n, float lo, float hi) {
  std::vector<float> tmp(data, data + n);
  clamp_inplace(tmp.data(), tmp.size(), lo, hi);
  std::copy(tmp.begin(), tmp.end(), data);
}
""")
    rep = translate(str(src), "cuda", str(tmp_path / "clamp.cu"))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert {s.name: s.status for s in rep.steps}["std_containers"] == "verified"


def test_host_vectors_of_a_cuda_entry_translate_to_bang(tmp_path):
    """CUDA host code staging through std::vector host buffers (`hx(x, x + n)`, `hy.data()`)
    lifts and lowers to BANG: the vectors are arrays before task_bind plans the copies."""
    from xpiler.translate import translate
    src = tmp_path / "saxpy.cu"
    src.write_text(r"""
#include <cuda_runtime.h>
#include <vector>
__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" void saxpy_host(const float* x, float* y, float a, int n) {
  std::vector<float> hx(x, x + n), hy(y, y + n);
  float *dx, *dy;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  saxpy<<<(n + 255) / 256, 256>>>(n, a, dx, dy);
  cudaMemcpy(hy.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) y[i] = hy[i];
  cudaFree(dx); cudaFree(dy);
}
""")
    rep = translate(str(src), "bang", str(tmp_path / "saxpy.mlu"))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
