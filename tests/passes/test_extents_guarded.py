"""passes/analysis/affine/extents.py: an access under a condition on the entry's scalars needs
no extent beyond what another access covers wherever that condition holds (the dense fast
path of a strided 2-D copy, ``if (size == src_str)``, next to the gather of ``rows``
segments of ``cols`` elements: (rows - 1) * src_str + cols elements, not rows * src_str).
A candidate needed outside any condition, or not covered under its own, stays."""
from __future__ import annotations

import numpy as np

import platforms
from passes.analysis import affine
from passes.base import apply_pass
from passes.plans import load_passes
from xpiler import translate as tr
from xpiler.parse import parse_file, parse_source
from xpiler.run import run_kernel


def _info(body: str, params: str = "const float* x, float* out, int n, int k"):
    src = f'extern "C" void f({params}) {{\n{body}\n}}\n'
    return affine.analyze(parse_source(src, "vnni", "<test>.cpp"))


def _eval(text, **scalars):
    from xpiler.verify import evaluate_size

    prog = parse_source('extern "C" void f(int n) {}', "vnni", "<t>.cpp")
    return text if isinstance(text, int) else evaluate_size(prog, text, scalars)


_STRIDED = """
  if (c == s) {
    for (int i = 0; i < r * s; ++i) out[i] = x[i];
  } else {
    for (int q = 0; q < r; ++q)
      for (int j = 0; j < c; ++j) out[q * c + j] = x[q * s + j];
  }"""


def test_fast_path_covered_under_its_condition_adds_nothing():
    ext = affine.extents(_info(_STRIDED, "const float* x, float* out, int r, int c, int s"))
    # r * s only where c == s, where it equals the gather's (r - 1) * s + c
    for r, c, s in ((16, 32, 64), (3, 5, 5), (1, 4, 9), (7, 1, 2)):
        assert _eval(ext["x"], r=r, c=c, s=s) == (r - 1) * s + c, (ext["x"], r, c, s)


def test_guarded_candidate_not_covered_under_its_condition_stays():
    ext = affine.extents(_info("""
  if (k > 0) { for (int i = 0; i < n + 1; ++i) out[i] = x[i]; }
  else { for (int i = 0; i < n; ++i) out[i] = x[i]; }"""))
    assert _eval(ext["x"], n=10, k=1) == 11


def test_unconditional_access_is_not_absorbed_by_a_guarded_candidate():
    # x[i < n + 1] runs everywhere; n + k + 1 (only where k == 0) covers it for every k, but
    # absorbing it would make the guarded candidate needed everywhere: both stay, and n + k + 1
    # is dropped where it is needed (k == 0: n + 1 covers it). 2n + 1 - k must not replace
    # n + 1 (n + 1 > 2n + 1 - k when k > n).
    ext = affine.extents(_info("""
  for (int i = 0; i < n + 1; ++i) out[0] += x[i];
  if (k == 0) { for (int i = 0; i < n + k + 1; ++i) out[0] += x[i]; }
  for (int i = 0; i < 2 * n + 1 - k; ++i) out[0] += x[i];"""))
    assert "(n + 1)" in ext["x"] and "(-k + 2 * n + 1)" in ext["x"], ext["x"]
    for n, k in ((10, 0), (10, 3), (4, 9), (0, 0)):
        assert _eval(ext["x"], n=n, k=k) == max(n + 1, 2 * n + 1 - k), (ext["x"], n, k)


def test_a_smaller_guarded_count_is_not_absorbed_by_a_larger_one_under_other_conditions():
    # simsimd hamming: 64 bytes when n <= 64 (masked to n), 192 when 128 < n <= 192, ...
    # folding the first into the second kept 192 wherever n <= 64 too: the host copied 192
    # bytes of a 16-byte input
    ext = affine.extents(_info("""
  if (n <= 64) { for (int j = 0; j < 64; ++j) if (j < (n & 255)) out[0] += x[j]; }
  else if (n <= 128) { for (int j = 0; j < 64; ++j) out[0] += x[j];
                       for (int j = 0; j < 64; ++j) if (j < ((n - 64) & 255)) out[0] += x[64 + j]; }
  else { for (int j = 0; j < 128; ++j) out[0] += x[j];
         for (int j = 0; j < n - 128; ++j) out[0] += x[128 + j]; }"""))
    for n in (1, 16, 64, 65, 100, 128, 129, 300):
        assert _eval(ext["x"], n=n) == n, (ext["x"], n)


_BANG = r"""
#include <bang.h>
__mlu_global__ void str2d(float *src, float *dst, int rows, int cols, int src_str) {
  __nram__ float buf[4096];
  if (taskId != 0) return;
  if (cols == src_str) {
    __memcpy(buf, src, rows * src_str * sizeof(float), GDRAM2NRAM);
  } else {
    __memcpy(buf, src, cols * sizeof(float), GDRAM2NRAM, cols * sizeof(float),
             src_str * sizeof(float), rows - 1);
  }
  __memcpy(dst, buf, rows * cols * sizeof(float), NRAM2GDRAM);
}
"""


def test_bang_strided_copy_to_cuda_reads_only_the_footprint(tmp_path):
    """The CUDA host entry copies (rows - 1) * src_str + cols elements of ``src``: the
    virtual device reports a read past a buffer sized to the source's footprint."""
    load_passes()
    sp = tmp_path / "str2d.mlu"
    sp.write_text(_BANG)
    prog = parse_file(sp)
    for name, opts in tr.plans("bang", "cuda")[-1]:
        out = apply_pass(name, prog, **opts)
        if out.program is not None:
            prog = out.program
    assert prog.platform == "cuda"
    text = platforms.module("cuda", "backend").emit(prog)
    assert "rows * src_str + cols - src_str" in text and "rows * src_str >" not in text
    # a footprint of whole 64-byte granules: the guarded slot ends right after it
    rows, cols, src_str = 6, 4, 12
    rng = np.random.default_rng(0)
    src = rng.standard_normal((rows - 1) * src_str + cols).astype(np.float32)
    want = [src.copy(), np.zeros(rows * cols, np.float32), rows, cols, src_str]
    run_kernel(sp, args=want, launch={"clusters": 1, "cores": 1})
    tp = tmp_path / "str2d.cu"
    tp.write_text(text)
    got = [src.copy(), np.zeros(rows * cols, np.float32), rows, cols, src_str]
    run_kernel(tp, args=got, source=text, strict=True)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[1].reshape(rows, cols),
                                  src[np.arange(rows)[:, None] * src_str + np.arange(cols)])


def test_size_texts_with_conditionals_evaluate():
    """An extent of several candidates is a C conditional; the evaluator the inference and the
    host copies use reads it (it returned None: the size was then guessed)."""
    assert _eval("((-k + 2 * n + 1) > (n + 1) ? (-k + 2 * n + 1) : (n + 1))", n=10, k=3) == 18
    assert _eval("(n > 4 && k != 0) ? n * k : (n - 20) / 3 + 7", n=10, k=0) == 4     # C truncation
    assert _eval("n > unknown ? 1 : 2", n=3) is None
