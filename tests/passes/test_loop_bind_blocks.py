"""loop_bind{levels=2} (passes/lower/loop_bind/blocks.py): blocks x threads, __shared__ arrays, barriers.

Synthetic canonical-C programs (a task loop with a local array and two element phases, a
reduction, a carried dependence that must stay sequential) are bound two-level, checked for
their structure and run on the virtual device (CUDA emulator, strict) against the C source.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import platforms
from passes.lower import loop_bind  # noqa: F401  (registers the pass)
from passes.lower.loop_bind import blocks as blocks
from passes.base import run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

PHASES = """
extern "C" void phases(const float *x, float *y) {
  for (int t = 0; t < 24; ++t) {
    float buf[100];
    for (int i = 0; i < 100; ++i)
      buf[i] = x[t * 100 + i] * 2.0f;
    for (int i = 0; i < 100; ++i)
      y[t * 100 + i] = buf[99 - i] + 1.0f;       /* reads what another thread wrote */
  }
}
"""

REDUCTION = """
extern "C" void center(const float *x, float *y, float *mean) {
  for (int t = 0; t < 6; ++t) {
    float tmp[96];
    float s = 0.0f;
    for (int i = 0; i < 96; ++i)
      s += x[t * 96 + i];
    float m = s / 96.0f;
    for (int i = 0; i < 96; ++i)
      tmp[i] = x[t * 96 + i] - m;
    for (int i = 0; i < 96; ++i)
      y[t * 96 + i] = tmp[i] * tmp[95 - i];
    mean[t] = m;
  }
}
"""

SCAN = """
extern "C" void scan(const float *x, float *y) {
  for (int t = 0; t < 5; ++t) {
    float acc[80];
    acc[0] = x[t * 80];
    for (int i = 1; i < 80; ++i)
      acc[i] = acc[i - 1] + x[t * 80 + i];
    for (int i = 0; i < 80; ++i)
      y[t * 80 + i] = acc[i] * 0.5f;
  }
}
"""

TILED = """
#define TILE 32
extern "C" void tiled(const float *x, float *y, int n) {
  for (int t = 0; t < 4; ++t) {
    float a[TILE];
    float b[TILE];
    for (int off = 0; off < n; off += TILE) {
      int cnt = n - off < TILE ? n - off : TILE;
      for (int i = 0; i < cnt; ++i)
        a[i] = x[t * n + off + i];
      for (int i = 0; i < cnt; ++i)
        b[i] = a[cnt - 1 - i] * 3.0f;
      for (int i = 0; i < cnt; ++i)
        y[t * n + off + i] = b[i];
    }
  }
}
"""


def _bind(src: str, name: str, tmp_path, to: str = "cuda", **opts):
    prog = parse_source(src, "vnni", str(tmp_path / f"{name}.cpp"))
    out = run_pass("loop_bind", prog, to=to, levels=2, **opts)
    text = platforms.module(to, "backend").emit(out)
    return prog, out, text


def _run_both(src: str, text: str, name: str, tmp_path, args: list, to: str = "cuda"):
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(tmp_path / f"{name}.cpp", args=want, source=src)
    ext = ".cu" if to == "cuda" else ".hip"
    path = tmp_path / f"{name}{ext}"
    path.write_text(text)
    run_kernel(path, args=got, source=text, strict=True)
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _kernel(text: str) -> str:
    return text.split('extern "C"')[0]


def test_task_loop_with_local_array_gets_blocks_threads_and_shared(tmp_path):
    _, out, text = _bind(PHASES, "phases", tmp_path)
    k = _kernel(text)
    assert "__shared__ float buf[100];" in k
    assert "for (long long __xp_b = blockIdx.x; __xp_b < __xp_n; __xp_b += gridDim.x)" in k
    assert k.count("threadIdx.x") == 2 and k.count("blockDim.x") == 2
    # the second phase reads buf[99 - i], written by other threads: a barrier between
    assert re.search(r"buf\[i\] = .*?__syncthreads\(\);.*?y\[", k, re.S)
    assert "dim3(128)" in text                            # 100 elements -> 128 threads
    assert "__xp_g0 = (__xp_n0 + 0) / 1" in text          # one block per task
    rng = np.random.default_rng(1)
    x = rng.standard_normal(2400).astype(np.float32)
    _run_both(PHASES, text, "phases", tmp_path, [x, np.zeros(2400, np.float32)])


def test_reduction_is_redundant_and_the_store_is_thread_zero(tmp_path):
    _, _, text = _bind(REDUCTION, "center", tmp_path)
    k = _kernel(text)
    assert "__shared__ float tmp[96];" in k
    assert re.search(r"for \(int i = 0; i < 96; \+\+i\)\s*s \+= x", k)   # every thread sums
    assert re.search(r"if \(threadIdx.x == 0\)\s*\{\s*mean\[t\] = m;", k)
    assert k.count("__syncthreads();") >= 2
    rng = np.random.default_rng(2)
    x = rng.standard_normal(576).astype(np.float32)
    _run_both(REDUCTION, text, "center", tmp_path,
              [x, np.zeros(576, np.float32), np.zeros(6, np.float32)])


def test_carried_dependence_stays_sequential_in_thread_zero(tmp_path):
    _, _, text = _bind(SCAN, "scan", tmp_path)
    k = _kernel(text)
    single = k[k.index("if (threadIdx.x == 0)"):]
    assert k.count("if (threadIdx.x == 0)") == 1          # acc[0] and the scan: one region
    assert "for (int i = 1; i < 80; ++i)" in single       # not strided
    assert single.index("acc[i] = acc[i - 1]") < single.index("__syncthreads();") < \
        single.index("y[t * 80 + i]")
    rng = np.random.default_rng(3)
    x = rng.standard_normal(400).astype(np.float32)
    _run_both(SCAN, text, "scan", tmp_path, [x, np.zeros(400, np.float32)])


def test_sequential_tile_loop_keeps_barriers_in_uniform_control_flow(tmp_path):
    _, _, text = _bind(TILED, "tiled", tmp_path, to="hip", extents="x:308 y:308")
    k = _kernel(text)
    loop = k[k.index("for (int off = 0; off < n; off += TILE)"):]
    assert loop.count("__syncthreads();") >= 3           # between phases and at the tile's end
    assert "__shared__ float a[32];" in k and "__shared__ float b[32];" in k
    rng = np.random.default_rng(4)
    x = rng.standard_normal(4 * 77).astype(np.float32)
    _run_both(TILED, text, "tiled", tmp_path, [x, np.zeros(4 * 77, np.float32), 77], to="hip")


def test_schedule_declines_what_it_cannot_fence():
    from passes.analysis import affine
    src = """
extern "C" void f(const float *x, float *y, float *z) {
  for (int t = 0; t < 4; ++t) {
    float run = 0.0f;
    for (int i = 0; i < 8; ++i) { run += x[t * 8 + i]; z[t * 8 + i] = run; }
    for (int i = 0; i < 8; ++i) y[t * 8 + i] = run;
  }
}
"""
    prog = parse_source(src, "vnni", "f.cpp")
    info = affine.analyze(prog)
    with pytest.raises(blocks.NotTwoLevel, match="assigned in a statement that writes memory"):
        blocks.schedule(info.top[0], info, 256, 49152)
    big = PHASES.replace("float buf[100];", "float buf[100]; float big[20000]; "
                         "big[sizeof(big) / sizeof(float) - 1] = 0.0f;")
    info = affine.analyze(parse_source(big, "vnni", "g.cpp"))
    with pytest.raises(blocks.NotTwoLevel, match="does not fit in shared memory and the code "
                       "applies 'sizeof'"):
        blocks.schedule(info.top[0], info, 256, 49152)


BIG = PHASES.replace("float buf[100];", "float buf[100]; float wide[13000];").replace(
    "buf[i] = x[t * 100 + i] * 2.0f;", "{ buf[i] = x[t * 100 + i] * 2.0f; wide[i * 130] = buf[i]; }"
).replace("buf[99 - i] + 1.0f", "buf[99 - i] + wide[(99 - i) * 130]")


def test_arrays_over_the_static_limit_go_to_dynamic_shared_memory(tmp_path):
    # 52,000 B: over the 48 KiB of static shared memory, within what sm_80 lets a kernel
    # opt in to (163 KiB): the host raises the limit and passes the bytes in the launch
    _, out, text = _bind(BIG, "big", tmp_path)
    k = _kernel(text)
    assert "__shared__ float buf[100];" in k and "__shared__ float wide" not in k
    assert "extern __shared__ double __xp_dyn_shared[];" in k
    assert "float *wide = (float *) (((char *) __xp_dyn_shared) + 0);" in k
    host = text[text.index('extern "C"'):]
    assert "cudaFuncSetAttribute(phases_k0, cudaFuncAttributeMaxDynamicSharedMemorySize, 52096);" \
        in host
    assert re.search(r"phases_k0<<<dim3\(.*\), dim3\(\d+\), 52096>>>", host)
    assert "__xp_scratch" not in text
    from xpiler.resources import resources
    assert resources(out)["on_chip_bytes"] == {"shared": 400 + 52096}
    rng = np.random.default_rng(5)
    x = rng.standard_normal(2400).astype(np.float32)
    _run_both(BIG, text, "big", tmp_path, [x, np.zeros(2400, np.float32)])


HUGE = BIG.replace("float wide[13000];", "float wide[45000];")


def test_arrays_over_the_opt_in_limit_get_per_block_global_scratch(tmp_path):
    _, _, text = _bind(HUGE, "huge", tmp_path)
    k = _kernel(text)
    assert "__shared__ float buf[100];" in k and "__xp_dyn_shared" not in text
    assert "float *wide = (float *) (__xp_scratch + ((long long) blockIdx.x) * 180224 + 0);" in k
    host = text[text.index('extern "C"'):]
    assert "cudaMalloc((void **) (&__xp_scratch), ((unsigned long long) __xp_g0) * 180224);" \
        in host
    assert "cudaFree(__xp_scratch);" in host
    rng = np.random.default_rng(5)
    x = rng.standard_normal(2400).astype(np.float32)
    _run_both(HUGE, text, "huge", tmp_path, [x, np.zeros(2400, np.float32)])


def test_one_level_is_kept_when_nothing_inside_is_parallel(tmp_path):
    src = """
extern "C" void rowsum(const float *x, float *y) {
  for (int t = 0; t < 64; ++t) {
    float s = 0.0f;
    for (int i = 0; i < 16; ++i) s += x[t * 16 + i];
    y[t] = s;
  }
}
"""
    _, _, text = _bind(src, "rowsum", tmp_path)
    assert "__xp_b" not in text and "__syncthreads" not in text
    assert "blockIdx.x) * blockDim.x + threadIdx.x" in text


def test_an_array_shadowing_a_parameter_is_not_hoisted(tmp_path):
    src = PHASES.replace("float buf[100];", "float y2 = 0.0f; float x[1];").replace(
        "buf[i] = x[t * 100 + i] * 2.0f;", "y2 += 1.0f;").replace(
        "buf[99 - i] + 1.0f", "1.0f")
    _, _, text = _bind(src, "shadow", tmp_path)
    assert "__shared__" not in text and "__xp_b" not in text      # one level kept


TABLE = """
extern "C" void scaled(const float *x, float *y) {
  for (int t = 0; t < 3; ++t) {
    const int stride[3] = {1, 2, 3};
    float buf[64];
    for (int i = 0; i < 64; ++i)
      buf[i] = x[t * 64 + i] * (float) stride[t];
    for (int i = 0; i < 64; ++i)
      y[t * 64 + i] = buf[63 - i];
  }
}
"""


def test_a_read_only_initialised_table_stays_per_thread(tmp_path):
    _, _, text = _bind(TABLE, "scaled", tmp_path, extents="x:192 y:192")
    k = _kernel(text)
    assert "__shared__ float buf[64];" in k and "__shared__ int stride" not in k
    assert "const int stride[3] = {1, 2, 3};" in k
    x = np.linspace(-1, 1, 192).astype(np.float32)
    _run_both(TABLE, text, "scaled", tmp_path, [x, np.zeros(192, np.float32)])
    written = TABLE.replace("buf[i] = x[t * 64 + i]", "stride[0] = 2; buf[i] = x[t * 64 + i]")
    _, _, text = _bind(written, "written", tmp_path, extents="x:192 y:192")
    assert "__xp_b" not in text                        # a written table: one level kept


COPIED_SIZES = """
extern "C" void copied(const float *x, float *y, int M, int N) {
  int M1 = M;
  int N1 = N;
  for (int t = 0; t < 3; ++t) {
    float buf[256];
    int m = M1;
    int n = N1;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        buf[i * n + j] = x[t * m * n + i * n + j] * 2.0f;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        y[t * m * n + i * n + j] = buf[(m - 1 - i) * n + j];
  }
}
"""


def test_thread_band_counts_over_copied_scalars_are_passed_to_the_kernel(tmp_path):
    # the (i, j) band's trip counts are written over M and N, which the analysis reads
    # through m = M1 = M: the kernel takes them as parameters (it did not, and did not build)
    _, _, text = _bind(COPIED_SIZES, "copied", tmp_path)
    k = _kernel(text)
    assert "__shared__ float buf[256];" in k
    sig = k[k.index("copied_k0("):k.index(")", k.index("copied_k0("))]
    assert "int M" in sig and "int N" in sig, sig
    rng = np.random.default_rng(3)
    x = rng.standard_normal(3 * 12 * 20).astype(np.float32)
    _run_both(COPIED_SIZES, text, "copied", tmp_path, [x, np.zeros(3 * 12 * 20, np.float32), 12, 20])


BITS = """
#include <string.h>
extern "C" void bits(const float *x, unsigned *y, float *z) {
  for (int t = 0; t < 6; ++t) {
    float buf[96];
    for (int i = 0; i < 96; ++i)
      buf[i] = x[t * 96 + i] * 2.0f;
    for (int i = 0; i < 96; ++i) {
      float v = buf[95 - i];
      unsigned b;
      memcpy(&b, &v, 4);              /* a bit cast of the iteration's own value */
      y[t * 96 + i] = b >> 3;
    }
  }
  float w = x[0];
  memcpy(z, &w, 4);
}
"""


def test_the_address_of_a_thread_loops_own_variable_keeps_two_levels(tmp_path):
    _, out, text = _bind(BITS, "bits", tmp_path)
    k = _kernel(text)
    assert "__shared__ float buf[96];" in k and "memcpy(&b, &v, 4);" in k
    rng = np.random.default_rng(3)
    x = rng.standard_normal(576).astype(np.float32)
    _run_both(BITS, text, "bits", tmp_path, [x, np.zeros(576, np.uint32), np.zeros(1, np.float32)])
    # a block-level scalar whose address is taken still keeps one level
    shared = BITS.replace("float buf[96];", "float buf[96]; unsigned k0 = 0; memcpy(&k0, x, 4);"
                          ).replace("b >> 3", "(b >> 3) + k0")
    _, _, one = _bind(shared, "bits1", tmp_path)
    assert "__shared__" not in _kernel(one)


ARGMAX = """
#include <string.h>
extern "C" void rowmax(const float *x, float *y) {
  for (int t = 0; t < 6; ++t) {
    float buf[96];
    float out[2];
    for (int i = 0; i < 96; ++i)
      buf[i] = x[t * 96 + i] * 2.0f;
    unsigned idx = 0;
    float best = buf[0];
    for (unsigned i = 1; i < 96; ++i)
      if (buf[i] > best) { best = buf[i]; idx = i; }
    out[0] = best;
    memcpy((char *) out + sizeof(float), &idx, sizeof(idx));   /* the lift of __bang_max */
    y[t * 2] = out[0];
    y[t * 2 + 1] = out[1];
  }
}
"""


def test_a_block_scalar_read_by_memcpy_keeps_two_levels(tmp_path):
    # ``&idx`` as memcpy's source is only read: every thread holds the same idx
    _, out, text = _bind(ARGMAX, "rowmax", tmp_path)
    assert "__shared__ float buf[96];" in _kernel(text)
    x = np.random.default_rng(5).standard_normal(576).astype(np.float32)
    _run_both(ARGMAX, text, "rowmax", tmp_path, [x, np.zeros(12, np.float32)])
