"""passes/cleanup/inline.py: helpers (incl. pointer-taking ones) inlined into the entry; refusals."""
from __future__ import annotations

import copy
import dataclasses

import pytest

import platforms
from passes.cleanup import inline  # noqa: F401  (registers the pass)
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

import numpy as np

SRC = r"""
#include <string.h>
static inline int sq(int v) { return v * v; }
static void store(void *mem, const float *a, int n) {
  for (int j = 0; j < n; ++j) ((float *) mem)[j] = a[j] * 2.0f;
}
static float twice(float x) { float t = x + x; return t; }
static void guarded(float *p, int i, int n) {
  if (i >= n) return;
  p[i] = 1.0f;
}
extern "C" void k(const float *x, float *out, int *y, int n) {
  for (int i = 0; i < n; ++i) y[i] = sq(i);
  store(out, x, n);
  for (int i = 0; i < n; ++i) out[i] += twice(x[i]);
  guarded(out, n - 1, n);
}
"""


def _prog(text=SRC):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def test_golden_every_helper_inlined_and_removed():
    prog = _prog()
    out = run_pass("inline", prog)
    text = _emit(out)
    body = text.split('extern "C"')[1]
    assert "sq(" not in body and "store(" not in body and "twice(" not in body
    assert "static" not in text.split('extern "C"')[0]          # unreferenced statics dropped
    assert "y[i] = ((int) i) * ((int) i);" in body             # expression helper
    assert "((float *) out)[j__i" in body                      # void * param substituted
    assert "if (!((n - 1) >= n))" in body or "if (!(i__i" in body  # guard return -> if
    n = 7
    x = np.arange(n, dtype=np.float32)
    want = [x, np.zeros(n, np.float32), np.zeros(n, np.int32), n]
    got = copy.deepcopy(want)
    run_kernel("a.cpp", args=want, source=SRC, program=prog)
    run_kernel("b.cpp", args=got, source=text, program=out)
    for a, b in zip(want[:3], got[:3]):
        np.testing.assert_array_equal(a, b)


def test_the_inlining_runs_once_the_check_hands_it_to_the_rewrite(monkeypatch):
    from passes.base import apply_pass
    from passes.cleanup import inline as mod

    runs = []
    real = mod._inline_all
    monkeypatch.setattr(mod, "_inline_all", lambda *a: runs.append(1) or real(*a))
    out = apply_pass("inline", _prog())
    assert out.changed and runs == [1] and out.plan.ast is not None


def test_input_not_mutated():
    prog = _prog()
    before = _emit(prog)
    run_pass("inline", prog)
    assert _emit(prog) == before


def test_nothing_to_do_without_entry_definition_or_helper_call():
    from passes.base import apply_pass

    prog = _prog()
    prog = dataclasses.replace(prog, entry=dataclasses.replace(prog.entry, name="missing"))
    out = apply_pass("inline", prog)
    assert not out.changed and out.program is prog and out.reason.code == "XP-INLINE-001"
    plain = _prog("extern \"C\" void k(int *x, int n) { x[0] = n; }\n")
    out = apply_pass("inline", plain)
    assert not out.changed and out.program is plain and out.reason.code == "XP-INLINE-002"


def test_refuses_recursive_helper():
    prog = _prog("static int f(int a) { return a > 0 ? f(a - 1) : 0; }\n"
                 "extern \"C\" void k(int *x, int n) { x[0] = f(n); }\n")
    with pytest.raises(PassRefused) as exc:
        run_pass("inline", prog)
    d = exc.value.diagnostics[0]
    assert d.code == "XP-INLINE-003" and "recursive" in d.message


def test_refuses_return_in_the_middle_and_static_locals():
    for helper in ("static int f(int a) { for (int i = 0; i < a; ++i) if (i > 3) return i; return 0; }",
                   "static int f(int a) { static int c = 0; c += a; return c; }"):
        prog = _prog(helper + "\nextern \"C\" void k(int *x, int n) { x[0] = f(n); }\n")
        with pytest.raises(PassRefused) as exc:
            run_pass("inline", prog)
        assert exc.value.diagnostics[0].code == "XP-INLINE-003"


def test_call_in_loop_condition_is_left_alone():
    prog = _prog("static int lim(int a) { int t = a; return t; }\n"
                 "static int one(int a) { int t = a; return t; }\n"
                 "extern \"C\" void k(int *x, int n) { for (int i = 0; i < lim(n); ++i) x[i] = one(i); }\n")
    text = _emit(run_pass("inline", prog))
    assert "i < lim(n)" in text and "one(" not in text.split('extern "C"')[1]


HIP_EARLY_RETURN = r"""
#include <hip/hip_runtime.h>
__global__ void scale_kernel(const float *x, float *y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;  // the lift turns this into goto xp_skipN
  y[i] = 2.0f * x[i] + 1.0f;
}
extern "C" void scale(float *x, float *y, int n) {
  float *dx, *dy;
  hipMalloc((void **)&dx, n * sizeof(float));
  hipMalloc((void **)&dy, n * sizeof(float));
  hipMemcpy(dx, x, n * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(scale_kernel, dim3((n + 63) / 64), dim3(64), 0, 0, dx, dy, n);
  hipMemcpy(y, dy, n * sizeof(float), hipMemcpyDeviceToHost);
  hipFree(dx);
  hipFree(dy);
}
"""


def test_lifted_kernel_with_early_return_inlined_after_goto_continue(tmp_path):
    """The hip -> cuda fallback's dense MFMA misses (XP-BIND-003, call to the kernel with unknown
    effects): the lifted kernel keeps its early return as goto/label, which inline refuses; the
    cuda<->hip plans therefore run goto_continue before inline, as the ->bang plans do."""
    from passes.cleanup import goto_continue
    from passes.lift import loop_recovery  # noqa: F401
    from xpiler.translate import PLANS

    src = parse_source(HIP_EARLY_RETURN, "hip", "s.hip")
    lifted = run_pass("loop_recovery", src)
    helper = inline.inlinable(lifted.ast, lifted.entry.name)["scale_kernel"]
    assert not helper.ok and "goto" in helper.reason
    assert "scale_kernel(" in _emit(run_pass("inline", lifted)).split('extern "C"')[1]
    out = run_pass("inline", run_pass("goto_continue", lifted))
    text = _emit(out)
    body = text.split('extern "C"')[1]
    assert "scale_kernel(" not in body and "goto" not in text
    n = 200
    x = np.linspace(-1, 1, n).astype(np.float32)
    want = [x, np.zeros(n, np.float32), n]
    got = [x.copy(), np.zeros(n, np.float32), n]
    run_kernel(tmp_path / "a.hip", args=want, source=HIP_EARLY_RETURN, program=src)
    run_kernel(tmp_path / "b.cpp", args=got, source=text, program=out)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(want[1], 2.0 * x + 1.0)
    for pair in (("cuda", "hip"), ("hip", "cuda")):
        fallback = PLANS[pair][-1].split(",")
        assert fallback.index("goto_continue") < fallback.index("inline")


MACRO_SRC = r"""
#include <stdio.h>
static const char *err_text(int e) { return e ? "failure" : "ok"; }
static int twice(int v) { return v + v; }
#define CHECK(call) do { int e_ = (call); if (e_ != 0) { printf("%s\n", err_text(e_)); } } while (0)
extern "C" void k(int *y, int n) {
  for (int i = 0; i < n; ++i) y[i] = twice(i);
  CHECK(y[0]);
}
"""


def test_static_helper_a_macro_calls_is_kept():
    # CHECK's body calls err_text: the AST shows no reference, the macro use needs it
    out = run_pass("inline", _prog(MACRO_SRC))
    text = _emit(out)
    assert "twice(" not in text                                  # inlined and dropped
    assert "err_text(int e)" in text.split('extern "C"')[0]       # kept for the macro
    n = 5
    got = [np.zeros(n, np.int32), n]
    run_kernel("b.cpp", args=got, source=text, program=out)
    np.testing.assert_array_equal(got[0], 2 * np.arange(n, dtype=np.int32))


def test_helper_named_only_in_an_emitted_macro_line_is_kept():
    # the lift rewrites API names in the macro text it emits (cudaGetErrorString ->
    # xp_error_string) while facts["defines"] keep the source's body: both are read
    import dataclasses as dc

    prog = _prog(MACRO_SRC)
    facts = dict(prog.facts)
    facts["defines"] = {"CHECK": {"params": ["call"], "body": "do { (call); } while (0)"}}
    out = run_pass("inline", dc.replace(prog, facts=facts))
    assert "err_text(int e)" in _emit(out).split('extern "C"')[0]


NESTED_VOID = r"""
static float inner(const void *pv, const void *qv) {
    const float *p = (const float *) pv;
    size_t q = *((const size_t *) qv);
    float s = 0.0f;
    for (size_t i = 0; i < q; ++i) s += p[i];
    return s;
}
static float outer(const void *pv, const void *qv) { return 1.0f - inner(pv, qv); }
extern "C" void entry(const float *a, int dim, float *result) {
    size_t qty = (size_t) dim;
    result[0] = outer(a, &qty);
}
"""


def test_an_expression_helper_passing_a_void_pointer_on_keeps_its_binding(tmp_path):
    """hnswlib's distance wrappers: ``outer`` is one expression, but its void * parameters are
    passed on to ``inner`` (not only cast), so they need declarations: the statement form is
    used, not the bare expression (which left ``pv`` unbound: the output did not build)."""
    import numpy as np

    import platforms
    from passes.base import run_pass
    from xpiler.parse import parse_source
    from xpiler.run import run_kernel

    out = run_pass("inline", parse_source(NESTED_VOID, "vnni", "n.cpp"))
    text = platforms.module("vnni", "backend").emit(out)
    assert "inner(" not in text.split('extern "C"')[1] and "outer(" not in text.split('extern "C"')[1]
    src, dst = tmp_path / "n.cpp", tmp_path / "d.cpp"
    src.write_text(NESTED_VOID)
    dst.write_text(text)
    a = np.random.default_rng(2).standard_normal(64).astype(np.float32)
    want, got = np.zeros(1, np.float32), np.zeros(1, np.float32)
    run_kernel(src, args=[a, 64, want])
    run_kernel(dst, args=[a, 64, got], source=text)
    np.testing.assert_array_equal(got, want)


BRANCH_RETURNS = r"""
static void axpby(const float *a, const float *b, int n, float alpha, float beta, float *r) {
  if (alpha == 1 && beta == 1) {
    for (int i = 0; i < n; ++i) r[i] = a[i] + b[i];
    return;
  }
  else if (alpha == 0 || beta == 0) {
    if (beta == 0) { for (int i = 0; i < n; ++i) r[i] = alpha * a[i]; }
    else { for (int i = 0; i < n; ++i) r[i] = beta * b[i]; }
    return;
  }
  for (int i = 0; i < n; ++i) r[i] = alpha * a[i] + beta * b[i];
}
extern "C" void k(const float *a, const float *b, int n, float alpha, float beta, float *r) {
  axpby(a, b, n, alpha, beta, r);
}
"""


@pytest.mark.parametrize("alpha, beta", [(1.0, 1.0), (0.0, 2.0), (3.0, 0.0), (0.5, 2.0)])
def test_a_void_helper_returning_from_branches_is_inlined(tmp_path, alpha, beta):
    """simsimd's wsum: ``if (c) { A; return; } else if (d) { B; return; } rest`` becomes
    ``if (c) { A } else if (d) { B } else { rest }``."""
    out = run_pass("inline", parse_source(BRANCH_RETURNS, "vnni", "b.cpp"))
    text = platforms.module("vnni", "backend").emit(out)
    assert "axpby(" not in text.split('extern "C"')[1] and "return" not in text.split('extern "C"')[1]
    src, dst = tmp_path / "b.cpp", tmp_path / "d.cpp"
    src.write_text(BRANCH_RETURNS)
    dst.write_text(text)
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(37).astype(np.float32), rng.standard_normal(37).astype(np.float32)
    want, got = np.zeros(37, np.float32), np.zeros(37, np.float32)
    run_kernel(src, args=[a, b, 37, alpha, beta, want])
    run_kernel(dst, args=[a, b, 37, alpha, beta, got], source=text)
    np.testing.assert_array_equal(got, want)


VALUE_BRANCHES = r"""
#include <math.h>
static double normalize(double ab, double a2, double b2) {
  if (a2 == 0 && b2 == 0) return 0;
  else if (ab == 0)
    return 1;
  double r = 1 - ab / sqrt(a2 * b2);
  return r > 0 ? r : 0;
}
static int classify(float v, float lo, float hi) {
  int code = 0;
  if (v < lo) {
    if (v < 2 * lo) return -2;
    code = -1;
  } else if (v > hi) {
    float over = v - hi;
    if (over > hi) { return 3; } else if (over > 1) return 2;
    code = 1;
  } else {
    return 0;
  }
  code *= 10;
  return code;
}
static float pick(float a, float b) {
  if (a > b) { float d = a - b; return d * d; }
  else { return b - a; }
}
extern "C" void k(const float *x, const float *y, float *o, int *c, double *d, int n) {
  for (int i = 0; i < n; ++i) {
    double v = normalize((double) x[i] * y[i], (double) x[i] * x[i], (double) y[i] * y[i]);
    d[i] = v;
    c[i] = 2 * classify(x[i], -1.0f, 1.5f) + 1;
    if (classify(y[i], -0.5f, 0.5f) > 0)
      o[i] = pick(x[i], y[i]) + 1.0f;
    else
      o[i] = pick(y[i], x[i]) * 0.5f + (float) normalize(x[i], 0.0, (double) y[i] * y[i]);
  }
}
"""


def test_a_value_helper_returning_from_branches_is_inlined(tmp_path):
    """simsimd's cos normalisation: ``if (c) return 0; else if (d) return 1; rest; return e;``
    and helpers returning from nested if / else-if / else branches, called in a declaration,
    an expression and an if condition: inlined (a result local, the rest pushed into the
    branches that fall through, no goto, no return), same outputs."""
    prog = parse_source(VALUE_BRANCHES, "vnni", "v.cpp")
    out = run_pass("inline", prog)
    text = _emit(out)
    body = text.split('extern "C"')[1]
    for name in ("normalize(", "classify(", "pick("):
        assert name not in body
    assert "return" not in body and "goto" not in body and "__xp_rv__i" in body
    src, dst = tmp_path / "v.cpp", tmp_path / "d.cpp"
    src.write_text(VALUE_BRANCHES)
    dst.write_text(text)
    n = 64
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    y = (rng.standard_normal(n) * 3).astype(np.float32)
    x[:4], y[:4] = 0, 0                        # both zero: normalize's first branch
    y[4:8] = 0                                 # ab == 0
    x[8:13] = [-5, -1.5, 2, 2.8, 3.5]          # every classify return
    want = [x, y, np.zeros(n, np.float32), np.zeros(n, np.int32), np.zeros(n, np.float64), n]
    got = copy.deepcopy(want)
    run_kernel(src, args=want)
    run_kernel(dst, args=got, source=text)
    for a, b in zip(want[2:5], got[2:5]):
        np.testing.assert_array_equal(a, b)
    assert set(want[3]) >= {-3, -19, 1, 5, 7, 21}    # the inputs reach every classify return


@pytest.mark.parametrize("helper, why", [
    ("static int f(int a) { if (a > 0) { for (int i = 0; i < a; ++i) if (i * i > a) return i; } "
     "return 0; }", "neither last"),
    ("static int f(int a) { if (a > 0) { switch (a) { case 1: return 5; default: break; } } "
     "return 0; }", "neither last"),
    ("static int f(int a) { if (a > 0) return 1; else if (a < -3) return 2; }",
     "ends without a return"),
    ("static int f(int a) { if (a > 0) { int t = a; a = t; } else return 2; int t = a * 2; "
     "return t; }", "declares a name"),
])
def test_value_helper_returns_it_cannot_place_stay_refused(helper, why):
    prog = _prog(helper + "\nextern \"C\" void k(int *x, int n) { x[0] = f(n); }\n")
    with pytest.raises(PassRefused) as exc:
        run_pass("inline", prog)
    d = exc.value.diagnostics[0]
    assert d.code == "XP-INLINE-003" and why in d.message


FOLDED_CONSTEXPR = r"""
static inline float cast_f(float x) {
  {
    return x;
  }
}
static inline int twice_i(int a) {
  int t = a + a;
  {
    int u = t + 1;
    {
      return u - 1;
    }
  }
}
static inline int shadowing(int a) {
  int t = a * 3;
  {
    int t = a + 1;
    return t;
  }
}
extern "C" void k(const float *x, float *out, int *y, int n) {
  for (int i = 0; i < n; ++i) {
    out[i] = cast_f(x[i]) * 2.0f;
    y[i] = twice_i(i) + shadowing(i);
  }
}
"""


def test_a_return_last_in_blocks_that_end_the_body_is_last(tmp_path):
    """A folded ``if constexpr`` chain leaves its branch as a plain block ending the helper
    (``{ { return x; } }``, ggml_cuda_cast): opened into the body, the return is last and the
    helper inlines. A block declaring a name the body already declares stays a block (a
    return inside it keeps that helper out)."""
    prog = parse_source(FOLDED_CONSTEXPR, "vnni", "f.cpp")
    out = run_pass("inline", prog)
    body = _emit(out).split('extern "C"')[1]
    assert "cast_f(" not in body and "twice_i(" not in body
    assert "shadowing(" in body                       # int t redeclared: not opened
    n = 9
    x = np.arange(n, dtype=np.float32) - 3
    want = [x, np.zeros(n, np.float32), np.zeros(n, np.int32), n]
    got = copy.deepcopy(want)
    run_kernel("a.cpp", args=want, source=FOLDED_CONSTEXPR, program=prog)
    run_kernel("b.cpp", args=got, source=_emit(out), program=out)
    for a, b in zip(want[1:3], got[1:3]):
        np.testing.assert_array_equal(a, b)
    assert list(want[2]) == [2 * i + i + 1 for i in range(n)]
