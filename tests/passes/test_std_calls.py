"""passes/cleanup/std_calls.py: std:: math / max / min / memset calls -> the C overload C++ picks,
checked on the virtual device (including NaN operands of std::max / std::min), and one refusal
per cause."""
from __future__ import annotations

import numpy as np
import pytest

import platforms
from passes.cleanup import std_calls  # noqa: F401  (registers the pass)
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

SRC = r"""
#include <cmath>
#include <cstring>
#include <cstdint>
#include <algorithm>
static inline int8_t q8(float v, float scale) {
  int32_t q = (int32_t)std::nearbyint(v / scale);
  return (int8_t)std::min(127, std::max(-128, q));
}
extern "C" void k(const float *x, const double *d, float *out, double *dout, int8_t *q, int n) {
  float tmp[4];
  std::memset(tmp, 0, sizeof(tmp));
  for (int i = 0; i < n; ++i) {
    const float v = x[i];
    out[4 * i] = std::sqrt(std::fabs(v)) + std::exp(v * 0.5f);
    out[4 * i + 1] = std::max(v, 0.0f) + 0.25f * std::min(v, 0.0f);
    std::memcpy(&out[4 * i + 2], &tmp[1], sizeof(float));
    out[4 * i + 3] = (float)std::sqrt(i + 1);
    const double w = d[i];
    dout[i] = std::exp(w) + std::pow(w, 2.0);
    q[i] = q8(v, 0.01f);
  }
}
"""


def _prog(text):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _refused(body, code, words):
    text = "#include <cmath>\n#include <algorithm>\n" + body
    with pytest.raises(PassRefused) as exc:
        run_pass("std_calls", _prog(text))
    d = exc.value.diagnostics[0]
    assert d.code == code and words in d.message, d.message


def _run(p, n, x):
    rng = np.random.default_rng(1)
    args = [x, rng.standard_normal(n), np.zeros(4 * n, np.float32), np.zeros(n), np.zeros(n, np.int8), n]
    run_kernel("a.cpp", args=args, source=_emit(p), program=p)
    return args


def test_overloads_by_operand_type_with_the_same_outputs():
    src = _prog(SRC)
    out = run_pass("std_calls", src)
    text = _emit(out)
    assert "std::" not in text
    for call in ("sqrtf(fabsf(v))", "expf(v * 0.5f)", "nearbyintf(v / scale)", "exp(w)", "pow(w, 2.0)",
                 "sqrt(i + 1)", "memset(tmp", "memcpy(&out"):
        assert call in text, call
    n = 50
    x = (np.random.default_rng(0).standard_normal(n) * 3).astype(np.float32)
    x[3] = np.nan                     # std::max(NaN, 0.0f) is NaN (fmaxf would give 0)
    want, got = _run(src, n, x.copy()), _run(out, n, x.copy())
    for a, b in zip(want[2:5], got[2:5]):
        np.testing.assert_array_equal(a, b)
    assert np.isnan(got[2][4 * 3 + 1]) and np.any(got[4] == 127) and np.any(got[4] == -128)


def test_nothing_to_do_without_a_std_call():
    from passes.base import apply_pass

    prog = _prog('#include <cmath>\nextern "C" void k(float *x) { x[0] = sqrtf(x[1]); }')
    out = apply_pass("std_calls", prog)                 # not applicable: the input, unchanged
    assert not out.changed and out.program is prog
    assert out.reason.code == "XP-STD-001" and "no std::" in out.reason.message


def test_refuses_an_operand_of_unknown_type():
    _refused('extern "C" void k(float *x) { x[0] = std::sqrt(x[1].v); }', "XP-STD-002", "cannot be established")


def test_refuses_max_of_different_types():
    _refused('extern "C" void k(float *x, int n) { x[0] = std::max(x[1], 2.0); }', "XP-STD-002",
             "different types")


def test_refuses_max_with_side_effects():
    _refused('extern "C" void k(float *x, int n) { int i = 0; x[0] = std::max(x[i++], x[2]); }', "XP-STD-002",
             "side effects")


def test_refuses_an_unknown_std_function():
    _refused('extern "C" void k(float *x) { x[0] = std::riemann_zeta(x[1]); }', "XP-STD-002",
             "std::riemann_zeta")


ZP_FILL = r"""
#include <cstring>
#include <cstdint>
namespace { constexpr int32_t ZP = 128; uint8_t xq[64]; int8_t wq[64]; }
extern "C" void k(const uint8_t *x, uint8_t *out, int8_t *wout, int n) {
  std::memset(xq, ZP, sizeof(xq));
  std::memset(wq, ZP, sizeof(wq));
  for (int i = 0; i < n; ++i) xq[i] = x[i];
  for (int i = 0; i < 64; ++i) { out[i] = xq[i]; wout[i] = wq[i]; }
}
"""


def test_memset_of_a_named_constant_becomes_element_stores():
    """std::memset(q, ZP, sizeof(q)) (oneDNN's zero-point fill in dense_s8_vnni) -> memset ->
    memops element loops: the byte value is a named constant; int8 elements take its byte."""
    import passes.cleanup.memops  # noqa: F401

    src = _prog(ZP_FILL)
    out = run_pass("memops", run_pass("std_calls", src))
    text = _emit(out)
    assert "memset" not in text and "xq[__xp_m1] = 128" in text and "wq[__xp_m2] = 128" in text
    x = np.arange(10, dtype=np.uint8)
    runs = []
    for p in (src, out):
        args = [x.copy(), np.zeros(64, np.uint8), np.zeros(64, np.int8), 10]
        run_kernel("a.cpp", args=args, source=_emit(p), program=p)
        runs.append(args)
    for a, b in zip(runs[0][1:3], runs[1][1:3]):
        np.testing.assert_array_equal(a, b)
    assert runs[1][1][20] == 128 and runs[1][2][0] == -128
    wide = _prog(ZP_FILL.replace("int8_t wq[64]", "int16_t wq[64]").replace("int8_t *wout", "int16_t *wout"))
    assert "memset(wq" in _emit(run_pass("memops", run_pass("std_calls", wide)))   # 2-byte elements


def test_explicit_template_argument_converts_both_operands():
    """std::min<int64_t>(1024, x): both operands as int64_t (of different types, which the
    deduced form refuses), the same values on the virtual device."""
    text = ('#include <algorithm>\n#include <cstdint>\n'
            'extern "C" void k(const long long *x, long long *y, int n) {\n'
            '  for (int i = 0; i < n; ++i) { y[2 * i] = std::min<int64_t>(1024, x[i]);\n'
            '    y[2 * i + 1] = std::max<int64_t>(x[i], -7); } }\n')
    src = _prog(text)
    out = run_pass("std_calls", src)
    assert "std::" not in _emit(out) and "(int64_t) 1024" in _emit(out)
    n = 40
    x = np.random.default_rng(3).integers(-3000, 3000, n).astype(np.int64)
    results = []
    for p in (src, out):
        y = np.zeros(2 * n, np.int64)
        run_kernel("a.cpp", args=[x, y, n], source=_emit(p), program=p)
        results.append(y)
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[1][0::2], np.minimum(x, 1024))


def test_object_macro_operands_take_the_type_of_their_body():
    """std::min(int64_t, (int64_t + CHUNK - 1) / CHUNK) with ``#define CHUNK 128`` (ggml's
    count_equal grid size): the macro name has the type of its body (int), so both operands are
    int64_t; a macro whose body is not an expression still leaves the type unknown."""
    text = ('#include <algorithm>\n#include <cstdint>\n#define CHUNK 128\n#define WIDE (CHUNK * 2LL)\n'
            '#define STMT do { } while (0)\n'
            'extern "C" void k(const long long *x, long long *y, int n) {\n'
            '  for (int i = 0; i < n; ++i) { y[2 * i] = std::min((int64_t) 4 * n, ((int64_t) x[i] + CHUNK - 1) / CHUNK);\n'
            '    y[2 * i + 1] = std::max(x[i], WIDE); } }\n')
    src = _prog(text)
    out = run_pass("std_calls", src)
    assert "std::" not in _emit(out)
    n = 40
    x = np.random.default_rng(5).integers(-3000, 30000, n).astype(np.int64)
    results = []
    for p in (src, out):
        y = np.zeros(2 * n, np.int64)
        run_kernel("a.cpp", args=[x, y, n], source=_emit(p), program=p)
        results.append(y)
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[1][1::2], np.maximum(x, 256))
    _refused('#define STMT do { } while (0)\nextern "C" void k(float *x) { x[0] = std::max(x[1], STMT); }',
             "XP-STD-002", "cannot be established")


def test_rounding_to_an_integer_takes_the_operand_type():
    src = r"""
#include <cmath>
#include <cstdint>
extern "C" void k(const float *x, const double *d, long *out, int n) {
  for (int i = 0; i < n; ++i) out[i] = std::lround(x[i]) + std::llround(d[i]) + std::lrint(x[i] * 2.0f);
}
"""
    p = _prog(src)
    out = run_pass("std_calls", p)
    text = _emit(out)
    assert "lroundf(x[i])" in text and "llround(d[i])" in text and "lrintf(x[i] * 2.0f)" in text
    x = np.array([0.5, -1.5, 2.4, 7.6], np.float32)
    d = np.array([2.5, -0.5, 1e3, 3.49])
    got = np.zeros(4, np.int64)
    run_kernel("a.cpp", args=[x, d, got, 4], source=text, program=out)
    want = np.array([1, -2, 2, 8]) + np.array([3, -1, 1000, 3]) + np.rint(x * 2).astype(np.int64)
    np.testing.assert_array_equal(got, want)
