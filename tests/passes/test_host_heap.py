"""passes/finish/host_heap.py: host arrays sized by the data become heap blocks (verified,
golden shapes, scope exits, nothing to do, refusals)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import platforms
from passes.base import PassRefused, apply_pass
from passes.finish import host_heap  # noqa: F401  (registers the pass)
from xpiler.parse import parse_source
from xpiler.run import run_kernel

VNNI = r'''
#include <stdlib.h>
static float helper(const float *x, int n) {
  float t[n];
  for (int i = 0; i < n; ++i) t[i] = x[i] * 2.0f;
  if (n > 100000) return t[0];
  float s = 0;
  for (int i = 0; i < n; ++i) {
    float u[n + 1][4];
    u[i][1] = t[i];
    if (i == 50) break;
    s += u[i][1];
  }
  return s + (float) (sizeof(t) / sizeof(t[0]));
}
extern "C" void k(const float *x, float *y, int n) {
  float buf[n * 2] = {0};
  const int m = 8;
  float fixed[m];
  #pragma omp parallel for
  for (int b = 0; b < n; ++b) { float priv[n]; priv[0] = x[b]; y[b] = priv[0] + buf[b]; }
  for (int i = 0; i < m; ++i) fixed[i] = 0;
  y[0] += helper(x, n) + fixed[0] + (float) sizeof(buf);
}
'''

CUDA = r'''
#include <cuda_runtime.h>
__global__ void scale(float *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float priv[4];
  if (i < n) { priv[i % 4] = d[i] * 3.0f; d[i] = priv[i % 4]; }
}
extern "C" void entry(const float *x, float *y, int n) {
  float h[n];
  for (int i = 0; i < n; ++i) h[i] = x[i] + 1.0f;
  float *d;
  cudaMalloc(&d, sizeof(h));
  cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice);
  scale<<<(n + 63) / 64, 64>>>(d, n);
  cudaMemcpy(y, d, sizeof(h), cudaMemcpyDeviceToHost);
  cudaFree(d);
}
'''


def _emit(prog):
    return platforms.module(prog.platform, "backend").emit(prog)


def _vla(text):
    """Array declarations whose first dimension names a variable (here: n)."""
    return re.findall(r"\b\w+\s+\w+\[[^\]]*\bn\b[^\]]*\]\s*(?:\[[^\]]*\])*\s*(?:=|;)", text)


def _run_both(tmp_path, src, platform, args_of, strict_after=True):
    prog = parse_source(src, platform, f"k.{ {'vnni': 'cpp', 'cuda': 'cu'}[platform]}")
    out = apply_pass("host_heap", prog)
    assert out.changed, out.reason
    text = _emit(out.program)
    suffix = {"vnni": ".cpp", "cuda": ".cu"}[platform]
    sp, tp = tmp_path / f"src{suffix}", tmp_path / f"out{suffix}"
    sp.write_text(src)
    tp.write_text(text)
    want, got = args_of(), args_of()
    run_kernel(sp, args=want, program=prog)
    run_kernel(tp, args=got, source=text, strict=strict_after)
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)
    return text


def test_vnni_verified_and_shapes(tmp_path):
    n = 300
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    text = _run_both(tmp_path, VNNI, "vnni", lambda: [x.copy(), np.zeros(n, np.float32), n])
    host = text[text.find("static float helper"):]
    assert "float *t = (float *) malloc(" in host
    assert "float (*u)[4] = (float (*)[4]) malloc(" in host       # a[i][j] still works
    assert "float *buf = (float *) calloc(" in host                # = {0}: zeroed block
    assert "float fixed[m];" in host                                # const m: a constant size
    assert "float priv[n];" in host                                 # omp-parallel private state
    assert "sizeof(t)" not in host and "sizeof(buf)" not in host
    assert host.count("free(t);") == 2 and host.count("free(u);") == 2 and host.count("free(buf);") == 1
    # the return inside t's scope frees it first, its value computed before the free
    assert re.search(r"float __xp_ret = t\[0\];\s*free\(t\);\s*return __xp_ret;", host)
    # the break out of u's loop-body scope frees u
    assert re.search(r"free\(u\);\s*break;", host)


def test_cuda_host_entry_verified_strict(tmp_path):
    n = 1000
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    text = _run_both(tmp_path, CUDA, "cuda", lambda: [x.copy(), np.zeros(n, np.float32), n])
    entry = text[text.rfind('extern "C"'):]
    assert not _vla(entry), entry
    assert "float *h = (float *) malloc(" in entry and "free(h);" in entry
    assert "sizeof(h)" not in entry
    assert "float priv[4];" in text                                  # kernel code untouched


def test_void_return_and_goto_leaving_the_scope():
    src = r'''
extern "C" void k(const float *x, float *y, int n) {
  for (int r = 0; r < 2; ++r) {
    float t[n];
    for (int i = 0; i < n; ++i) t[i] = x[i];
    if (n < 0) goto out;
    if (n == 1) continue;
    if (n == 2) return;
    y[r] = t[0];
  }
out:
  y[0] += 1.0f;
}
'''
    out = apply_pass("host_heap", parse_source(src, "vnni", "t.cpp"))
    text = _emit(out.program)
    assert re.search(r"free\(t\);\s*goto out;", text)
    assert re.search(r"free\(t\);\s*continue;", text)
    assert re.search(r"free\(t\);\s*return;", text)
    assert text.count("free(t);") == 4


def test_nothing_to_do():
    src = ('extern "C" void k(const float *x, float *y, int n) {\n'
           '  enum { B = 4 };\n  float a[16]; float b[B * 2]; static float s[n > 0 ? 8 : 8];\n'
           '  #pragma omp parallel for\n'
           '  for (int i = 0; i < n; ++i) { float p[n]; p[0] = x[i]; y[i] = p[0] + a[0] * 0 + b[0] * 0; }\n'
           '}\n')
    prog = parse_source(src, "vnni", "t.cpp")
    out = apply_pass("host_heap", prog)
    assert not out.changed and out.program is prog
    assert out.reason.code == "XP-HOST-HEAP-002"


def test_kernel_only_program_is_not_applicable():
    src = "__global__ void k(float *d, int n) { float t[8]; int i = threadIdx.x; if (i < n) { t[0] = d[i]; d[i] = t[0]; } }\n"
    prog = parse_source(src, "cuda", "t.cu")
    out = apply_pass("host_heap", prog)
    assert not out.changed and out.reason.code == "XP-HOST-HEAP-001"


@pytest.mark.parametrize("decl, why", [
    ("float t[n]; float *p = &t;", "address of 't' is taken"),
    ("float t[n] = {1.0f};", "initialiser that is not all zeros"),
    ("float t[n][n];", "variable dimension after the first"),
    ("alignas(64) float t[n];", "alignment specifier"),
])
def test_refusals(decl, why):
    src = f'extern "C" void k(float *y, int n) {{ {decl} y[0] = 1.0f; }}\n'
    with pytest.raises(PassRefused) as exc:
        apply_pass("host_heap", parse_source(src, "vnni", "t.cpp"))
    d = exc.value.diagnostics[0]
    assert d.code == "XP-HOST-HEAP-003" and why in d.message, d.message


def test_size_read_once_when_its_variables_change(tmp_path):
    """A VLA's size is fixed at its declaration: a count over a variable written later is
    computed once into a local, and sizeof(a) reads that local."""
    src = r'''
extern "C" void k(const float *x, float *y, int n) {
  int m = n;
  float t[m + 1];
  m = 3;
  for (int i = 0; i <= n; ++i) t[i] = x[i % n];
  y[0] = (float) sizeof(t) + t[n] + (float) m;
}
'''
    n = 5000
    x = np.arange(n, dtype=np.float32)
    text = _run_both(tmp_path, src, "vnni", lambda: [x.copy(), np.zeros(4, np.float32), n])
    assert "const size_t __xp_n_t = (size_t) (m + 1);" in text, text
    assert "float *t = (float *) malloc(__xp_n_t * sizeof(float));" in text, text
    assert "(float) (__xp_n_t * sizeof(float))" in text, text
