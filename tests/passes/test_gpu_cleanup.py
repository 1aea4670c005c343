"""passes scalarize_structs, const_prop, unit_loops, flatten_blocks, devtemp and the dce
pointer-store fix: golden rewrites checked against the source on the virtual device, and one
refusal per Requires line."""
from __future__ import annotations

import copy
import dataclasses
import re

import numpy as np
import pytest

import platforms
from passes.cleanup import const_prop
from passes.cleanup import dce
from passes.cleanup import devtemp
from passes.cleanup import fold_branches
from passes.cleanup import goto_continue
from passes.cleanup import inline
from passes.cleanup import scalarize_structs
from passes.cleanup import unit_loops
from passes.cleanup import unroll_const
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel


def _prog(text):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _body(p):
    return _emit(p).split('extern "C"')[1]


def _same(src_prog, out_prog, args):
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.cpp", args=want, source=_emit(src_prog), program=src_prog)
    run_kernel("b.cpp", args=got, source=_emit(out_prog), program=out_prog)
    for a, b in zip(want, got):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


def _unchanged(name, prog, code):
    """Nothing to do (issue 15): the input comes back unchanged with the not-applicable code."""
    from passes.base import apply_pass

    out = apply_pass(name, prog)
    assert not out.changed and out.program is prog, name
    assert out.reason.code == code, out.reason.message
    assert run_pass(name, prog) is prog


def _refused(name, prog, code):
    """Found something and judged the rewrite wrong there: a refusal with its own code."""
    with pytest.raises(PassRefused) as exc:
        run_pass(name, prog)
    assert exc.value.diagnostics[0].code == code, exc.value.diagnostics[0].message


def _no_entry(prog):
    return dataclasses.replace(prog, entry=dataclasses.replace(prog.entry, name="missing"))


# the shape loop_recovery + inline leave behind: dim3 locals, copies, extent-1 loops
LIFTED = r"""
typedef struct { unsigned int x; unsigned int y; unsigned int z; } dim3;
extern "C" void k(const float *A, float *T, int size) {
  dim3 grid;
  {
    unsigned int x__i1 = (size + 63) / 64;
    unsigned int y__i1 = 1;
    unsigned int z__i1 = 1;
    dim3 d__i1;
    d__i1.x = x__i1;
    d__i1.y = y__i1;
    d__i1.z = z__i1;
    grid = d__i1;
  }
  dim3 block = {64, 1, 1};
  {
    float *T__i3 = T;
    dim3 g__i3 = grid;
    const unsigned int nt__i3 = block.x * block.y * block.z;
    #pragma omp parallel for collapse(3) schedule(static)
    for (unsigned int bz = 0; bz < g__i3.z; ++bz)
      for (unsigned int by = 0; by < g__i3.y; ++by)
        for (unsigned int bx = 0; bx < g__i3.x; ++bx)
          for (unsigned int tx = 0; tx < block.x; ++tx) {
            const unsigned int tid = tx + block.x * by;
            int i = (int) (bx * 64 + tid);
            if (i < size) T__i3[i] = A[i] * 2.0f + (float) bz;
          }
  }
}
"""


def _args(n=200):
    return [np.arange(n, dtype=np.float32), np.zeros(n, np.float32), n]


def test_scalarize_structs_golden():
    prog = _prog(LIFTED)
    out = run_pass("scalarize_structs", prog)
    body = _body(out)
    assert "dim3" not in body and ".x" not in body
    assert "grid__x = d__i1__x;" in body and "unsigned int block__x = 64;" in body
    _same(prog, out, _args())


def test_scalarize_structs_not_applicable_and_refusal():
    _unchanged("scalarize_structs", _no_entry(_prog(LIFTED)), "XP-SCALARIZE-001")
    escapes = r"""
typedef struct { unsigned int x; unsigned int y; } pair;
void use(pair *p);
extern "C" void k(float *o) { pair p; p.x = 1; use(&p); o[0] = p.x; }
"""
    _refused("scalarize_structs", _prog(escapes), "XP-SCALARIZE-003")
    _unchanged("scalarize_structs", _prog("extern \"C\" void k(float *o) { o[0] = 1.0f; }\n"),
               "XP-SCALARIZE-002")


# a launch-parameter struct (ggml's ggml_cuda_kernel_launch_params after the lift, the
# constructor inlined): nested records, record fields copied whole, a one-element array built
# by the constructor, a pointer leaf and a leaf nothing reads
NESTED = r"""
typedef struct { unsigned int x; unsigned int y; unsigned int z; } dim3;
typedef float *fptr;
typedef struct {
  dim3 grid; dim3 block; unsigned long shmem; fptr out; int stream; const float *in;
} launch;
extern "C" void k(const float *A, float *T, int size) {
  dim3 g; g.x = (size + 63) / 64; g.y = 1; g.z = 1;
  dim3 b = {64, 1, 1};
  launch lp;
  {
    const dim3 grid_ = g;
    launch this_[1];
    this_->grid = grid_;
    this_[0].block = b;
    this_->shmem = 0;
    this_->out = T;
    this_->stream = 7;
    this_->in = A;
    lp = this_[0];
  }
  const launch lp2 = lp;
  dim3 gg = lp2.grid;
  launch lp3 = {{gg.x, 1, 1}, lp2.block, 0, lp2.out};
  lp3.block.y = 2;
  lp3.grid = gg;
  for (unsigned int bx = 0; bx < lp3.grid.x; ++bx)
    for (unsigned int ty = 0; ty < lp3.block.y; ++ty)
      for (unsigned int tx = 0; tx < lp3.block.x; ++tx) {
        int i = (int) (bx * 64 + tx);
        if (i < size) lp3.out[i] = lp2.in[i] * 2.0f + (float) ty + (float) lp3.stream;
      }
}
"""


def test_scalarize_structs_nested_records_and_array_locals():
    prog = _prog(NESTED)
    out = run_pass("scalarize_structs", prog)
    body = _body(out)
    assert "dim3" not in body and "launch " not in body and "->" not in body
    assert not re.search(r"[A-Za-z_]\.[A-Za-z_]", body)
    assert "this___grid__x = grid___x;" in body
    assert "lp__block__z = this___block__z;" in body
    assert "const unsigned int lp2__grid__y = lp__grid__y;" in body
    assert "const fptr lp2__out = lp__out;" in body
    assert "const float * const lp2__in = lp__in;" in body
    assert "unsigned int gg__x = lp2__grid__x;" in body
    assert "unsigned int lp3__grid__x = gg__x;" in body and "int lp3__stream = 0;" in body
    assert "lp3__out[i]" in body
    _same(prog, out, _args())
    # the scalars then fold into the loop bounds
    c = run_pass("const_prop", out)
    assert "tx < 64u" in _body(c) and "ty < 2u" in _body(c)
    _same(prog, c, _args())


def test_scalarize_structs_nested_refusals():
    # a copy from a record that is not split keeps both sides whole (all refused: 003)
    escapes = NESTED.replace("const launch lp2 = lp;", "const launch lp2 = lp; use(&lp);") \
        .replace("extern \"C\"", "void use(launch *p);\nextern \"C\"", 1)
    _refused("scalarize_structs", _prog(escapes), "XP-SCALARIZE-003")
    # ... but unrelated record locals are still split: lp stays, b goes
    text = r"""
typedef struct { unsigned int x; unsigned int y; } pair;
typedef struct { pair a; int n; } outer;
void use(outer *p) { p->n += p->a.x; }
extern "C" void k(float *o) {
  outer s; s.a.x = 1; s.n = 2; use(&s);
  pair t = {3, 4};
  pair u = s.a;
  o[0] = (float) (s.a.x + t.y + u.x);
}
"""
    prog = _prog(text)
    out = run_pass("scalarize_structs", prog)
    body = _body(out)
    assert "unsigned int t__y = 4;" in body and "outer s;" in body and "pair u = s.a;" in body
    _same(prog, out, [np.zeros(1, np.float32)])
    # an element other than [0], or the array passed whole, keeps an array local
    arr = r"""
typedef struct { unsigned int x; unsigned int y; } pair;
void use(pair *p);
extern "C" void k(float *o) { pair a[1]; a->x = 1; a[0].y = 2; use(a); o[0] = (float) a[0].x; }
"""
    _refused("scalarize_structs", _prog(arr), "XP-SCALARIZE-003")
    # a struct with an array member is no record type, nor one that nests it
    noarr = r"""
typedef struct { int v[2]; } vec;
typedef struct { vec a; int n; } outer;
extern "C" void k(float *o) { outer s; s.n = 1; o[0] = (float) s.n; }
"""
    _unchanged("scalarize_structs", _prog(noarr), "XP-SCALARIZE-002")


def test_scalarize_structs_switch_and_for_header():
    """Copies inside switch cases are split; a record declared in a for header stays whole,
    and so does what it is copied from."""
    text = r"""
typedef struct { unsigned int x; unsigned int y; } pair;
typedef struct { pair a; int n; } outer;
extern "C" void k(float *o, int m) {
  outer s; s.a.x = 1; s.a.y = 2; s.n = 3;
  pair q = {5, 6};
  switch (m) {
    case 1: { pair r = s.a; s.a = q; q = r; break; }
    case 2: s.a.y = 9; break;
    default: { outer w = s; s = w; s.n = 4; }
  }
  pair y = {1, 2};
  for (pair z = y; z.x < 6; z.x++) o[1] += 1.0f;
  o[0] = (float) (s.a.x * 100 + s.a.y * 10 + s.n + q.x * 1000);
}
"""
    prog = _prog(text)
    out = run_pass("scalarize_structs", prog)
    body = _body(out)
    assert "s__a__x = q__x;" in body and "int w__n = s__n;" in body
    assert "pair y = {1, 2};" in body and "for (pair z = y;" in body
    for m in (1, 2, 3):
        _same(prog, out, [np.zeros(2, np.float32), m])


def test_const_prop_unit_loops_flatten_dce_golden():
    prog = _prog(LIFTED)
    s = run_pass("scalarize_structs", prog)
    c = run_pass("const_prop", s)
    body = _body(c)
    assert "grid__" not in body and "block__" not in body and "T__i3" not in body
    assert "bz < 1u" in body and "tx < 64u" in body
    assert "((unsigned int) ((size + 63) / 64))" in body
    u = run_pass("unit_loops", c)
    ub = _body(u)
    assert "for (unsigned int bz" not in ub and "(float) 0u" in ub
    assert "for (unsigned int by" not in ub
    # the grid assertion moves to the surviving grid loop, with the surviving count
    assert "#pragma omp parallel for schedule(static)\n" in ub and "collapse" not in ub
    assert ub.index("#pragma omp parallel for") < ub.index("for (unsigned int bx") < \
        ub.index("for (unsigned int tx")
    f = run_pass("flatten_blocks", u)
    fb = _body(f)
    assert fb.count("{") < ub.count("{")
    for p in (s, c, u, f):
        _same(prog, p, _args())
        _same(prog, p, _args(64))


def test_const_prop_keeps_values_that_change():
    text = r"""
extern "C" void k(const float *x, float *o, int n) {
  int a = n;
  int b = a + 1;
  for (int i = 0; i < n; ++i) {
    int c = i * 2;
    o[i] = x[i] + c + b;
  }
  int m;
  m = n;
  n = 3;
  o[0] = o[0] + m + n;
}
"""
    prog = _prog(text)
    out = run_pass("const_prop", prog)
    body = _body(out)
    assert "int m;" in body and "m = n;" in body       # n is assigned later: m stays
    assert "(int) (i * 2)" in body                      # the loop variable is fixed per iteration
    _same(prog, out, [np.arange(8, dtype=np.float32), np.zeros(8, np.float32), 8])


def test_const_prop_not_applicable():
    _unchanged("const_prop", _no_entry(_prog(LIFTED)), "XP-CONST-PROP-001")
    twice = "extern \"C\" void k(float *o, int n) { int a = n; a = a + 1; o[0] = a; }\n"
    _unchanged("const_prop", _prog(twice), "XP-CONST-PROP-002")
    memory = "extern \"C\" void k(float *o) { float a = o[1]; o[1] = 2.0f; o[0] = a; }\n"
    _unchanged("const_prop", _prog(memory), "XP-CONST-PROP-002")


def test_unit_loops_not_applicable_and_refusal():
    _unchanged("unit_loops", _no_entry(_prog(LIFTED)), "XP-UNIT-LOOPS-001")
    two = "extern \"C\" void k(float *o) { for (int i = 0; i < 2; ++i) o[i] = 1.0f; }\n"
    _unchanged("unit_loops", _prog(two), "XP-UNIT-LOOPS-002")
    writes = ("extern \"C\" void k(float *o) { for (int i = 0; i < 1; ++i) { o[i] = 1.0f; "
              "i = 5; } }\n")
    _refused("unit_loops", _prog(writes), "XP-UNIT-LOOPS-003")


def test_flatten_blocks_not_applicable_and_refusal():
    _unchanged("flatten_blocks", _no_entry(_prog(LIFTED)), "XP-FLATTEN-001")
    clash = "extern \"C\" void k(float *o) { { int a = 1; o[0] = a; } int a = 2; o[1] = a; }\n"
    _refused("flatten_blocks", _prog(clash), "XP-FLATTEN-003")
    _unchanged("flatten_blocks", _prog("extern \"C\" void k(float *o) { o[0] = 1.0f; }\n"),
               "XP-FLATTEN-002")


TEMPS = r"""
#include <stdlib.h>
static inline int xp_malloc(void **p, size_t n) { *p = malloc(n ? n : 1); return (*p) ? 0 : 2; }
static inline int xp_free(void *p) { free(p); return 0; }
static void k1(const float *x, float *t, int n) { for (int i = 0; i < n; ++i) t[i] = x[i] * 3.0f; }
static void k2(const float *t, float *o, int n) { for (int i = 0; i < n; ++i) o[i] = t[i] + 1.0f; }
extern "C" void k(const float *x, float *o, int n) {
  float *d_t;
  xp_malloc((void **) &d_t, n * sizeof(float));
  k1(x, d_t, n);
  k2(d_t, o, n);
  xp_free(d_t);
}
"""


def test_devtemp_golden():
    prog = _prog(TEMPS)
    out = run_pass("devtemp", prog)
    body = _body(out)
    assert "float d_t[n];" in body and "xp_malloc" not in body and "xp_free" not in body
    _same(prog, out, [np.arange(16, dtype=np.float32), np.zeros(16, np.float32), 16])


def test_devtemp_not_applicable_and_refusals():
    _unchanged("devtemp", _no_entry(_prog(TEMPS)), "XP-DEVTEMP-001")
    reassigned = TEMPS.replace("k2(d_t, o, n);", "d_t = d_t + 1; k2(d_t, o, n - 1);")
    _refused("devtemp", _prog(reassigned), "XP-DEVTEMP-003")
    early = TEMPS.replace("  xp_malloc((void **) &d_t, n * sizeof(float));\n", "").replace(
        "  k2(d_t, o, n);\n", "  xp_malloc((void **) &d_t, n * sizeof(float));\n  k2(d_t, o, n);\n")
    _refused("devtemp", _prog(early), "XP-DEVTEMP-003")
    _unchanged("devtemp", _prog("extern \"C\" void k(float *o) { o[0] = 1.0f; }\n"), "XP-DEVTEMP-002")


def test_dce_keeps_stores_through_pointer_locals():
    text = r"""
typedef struct { float *p; int n; } view;
extern "C" void k(float *o, int n) {
  float *q = o;
  for (int i = 0; i < n; ++i) q[i] = 1.0f;
  float *rows[2];
  rows[0] = o;
  rows[0][1] = 5.0f;
  view v;
  v.p = o;
  v.p[2] = 7.0f;
  float dead[4];
  dead[0] = 3.0f;
}
"""
    prog = _prog(text)
    out = run_pass("dce", prog)
    body = _body(out)
    assert "dead" not in body and "q[i] = 1.0f" in body and "rows[0][1]" in body
    assert "v.p[2]" in body
    _same(prog, out, [np.zeros(8, np.float32), 8])


GOTO = r"""
static void kern(const float *x, float *o, int n) {
  for (int t = 0; t < 64; ++t) {
    if (t >= n) {
      goto skip;
    }
    o[t] = x[t] * 2.0f;
    skip:
    ;
  }
}
extern "C" void k(const float *x, float *o, int n) { kern(x, o, n); }
"""


def test_goto_continue_golden_then_inline():
    prog = _prog(GOTO)
    out = run_pass("goto_continue", prog)
    text = _emit(out)
    assert "goto" not in text and "skip:" not in text and "continue;" in text
    inl = run_pass("inline", out)
    assert "kern(" not in _body(inl)
    args = [np.arange(64, dtype=np.float32), np.zeros(64, np.float32), 40]
    _same(prog, out, args)
    _same(prog, inl, args)


def test_goto_continue_not_applicable():
    _unchanged("goto_continue", _prog("extern \"C\" void k(float *o) { o[0] = 1.0f; }\n"),
             "XP-GOTO-CONTINUE-002")
    nested = GOTO.replace("      goto skip;", "      for (int q = 0; q < 2; ++q) goto skip;")
    _unchanged("goto_continue", _prog(nested), "XP-GOTO-CONTINUE-002")


def test_fold_branches_null_pointers_and_constants():
    text = r"""
extern "C" void k(const float *x, float *o, int n) {
  for (int i = 0; i < n; ++i) {
    int r;
    if (((const unsigned char *) 0) && ((const unsigned char *) 0)[i])
      r = 0;
    else
      r = i;
    o[i] = (1 < 2) ? x[r] : -x[r];
    if (0 || i > 3) o[i] += 1.0f;
  }
}
"""
    prog = _prog(text)
    out = run_pass("fold_branches", prog)
    body = _body(out)
    assert "(const unsigned char *) 0" not in body and "?" not in body
    assert "i > 3" in body
    _same(prog, out, [np.arange(8, dtype=np.float32), np.zeros(8, np.float32), 8])


def test_fold_branches_enumerators():
    """A template argument of enum type becomes its enumerator (torch-sparse's
    ``Reducer<float, SUM>``: ``if (SUM == MIN || SUM == MAX) *arg = ...`` with a null ``arg``):
    enumerators are constants, so the branch that stores through the null pointer goes; a local
    named like an enumerator shadows it."""
    text = r"""
enum Red { SUM, MEAN = 4, MIN, MAX = MIN + 2 };
extern "C" void k(const float *x, float *o, int n) {
  long *arg = 0;
  for (int i = 0; i < n; ++i) {
    if (0 == MIN || 0 == MAX) arg[i] = i;
    else o[i] = x[i] * (MAX == 7 ? 2.0f : 3.0f);
  }
}
"""
    prog = _prog(text)
    assert fold_branches.enum_values(prog.ast) == {"SUM": 0, "MEAN": 4, "MIN": 5, "MAX": 7}
    out = run_pass("fold_branches", prog)
    body = _body(out)
    assert "arg[i]" not in body and "?" not in body and "2.0f" in body
    _same(prog, out, [np.arange(8, dtype=np.float32), np.zeros(8, np.float32), 8])
    shadowed = text.replace("long *arg = 0;", "long *arg = 0; int MIN = n;")
    _unchanged("fold_branches", _prog(shadowed.replace("(MAX == 7 ? 2.0f : 3.0f)", "2.0f")
                                      .replace("0 == MAX", "0 == MIN")), "XP-FOLD-002")


def test_fold_branches_not_applicable():
    _unchanged("fold_branches", _no_entry(_prog(GOTO)), "XP-FOLD-001")
    _unchanged("fold_branches", _prog("extern \"C\" void k(float *o, int n) { if (n > 1) "
                                    "o[0] = 1.0f; }\n"), "XP-FOLD-002")


def test_unroll_const_golden():
    text = r"""
extern "C" void k(const float *x, float *o) {
  for (int t = 0; t < 32; ++t) o[t] = x[t];
  for (int off = 16; off > 0; off >>= 1)
    for (int t = 0; t < 32; ++t)
      if (t < off) o[t] += o[t + off];
}
"""
    prog = _prog(text)
    out = run_pass("unroll_const", prog)
    body = _body(out)
    assert "off" not in body and "o[t + 16]" in body and "o[t + 1]" in body
    assert body.count("for (int t = 0; t < 32; ++t)") == 6      # the arithmetic loops stay
    _same(prog, out, [np.arange(32, dtype=np.float32), np.zeros(32, np.float32)])


def test_unroll_const_not_applicable_and_refusals():
    _unchanged("unroll_const", _no_entry(_prog(GOTO)), "XP-UNROLL-001")
    arith = "extern \"C\" void k(float *o) { for (int i = 0; i < 4; ++i) o[i] = 1.0f; }\n"
    _unchanged("unroll_const", _prog(arith), "XP-UNROLL-002")
    leaves = ("extern \"C\" void k(float *o) { for (int i = 8; i > 0; i >>= 1) { if (o[i] > 0) "
              "break; o[i] = 1.0f; } }\n")
    _refused("unroll_const", _prog(leaves), "XP-UNROLL-003")
    run_pass("unroll_const", _prog(leaves.replace("if (o[i] > 0) break; ", "")))
    big = "extern \"C\" void k(float *o) { for (int i = 1; i < 4096; i <<= 1) o[0] += 1.0f; }\n"
    _refused("unroll_const", _prog(big.replace("4096", "(1 << 40)")), "XP-UNROLL-003")


def test_inline_value_guards_and_overloads():
    text = r"""
static unsigned int pick(unsigned int t, unsigned int n, const unsigned char *done) {
  unsigned int s = t ^ 1u;
  if (s >= n)
    return t;
  if (done && done[s])
    return t;
  return s;
}
inline int mn(int a, int b) { return a < b ? a : b; }
inline float mn(float a, float b) { return a < b ? a : b; }
extern "C" void k(const float *x, float *o, int n) {
  for (unsigned int t = 0; t < 8u; ++t)
    o[t] = x[pick(t, (unsigned int) n, (const unsigned char *) 0)] + (float) mn((int) t, 3)
           + mn(x[t], 0.5f);
}
"""
    prog = _prog(text)
    out = run_pass("inline", prog)
    body = _body(out)
    assert "pick(" not in body and "__xp_rv" in body
    # overloaded: the exact match of the arguments' evident types (a cast, a literal) is
    # inlined (issue 16: GET_BLOCKS's min(int, int) in mmcv launches); an argument whose type
    # is not evident keeps the call
    assert "mn((int) t, 3)" not in body and body.count("mn(") == 1
    _same(prog, out, [np.arange(8, dtype=np.float32), np.zeros(8, np.float32), 7])


def test_devcopy_records_host_extents():
    from pathlib import Path

    from passes.cleanup import devcopy as dc
    from passes.lift import loop_recovery  # noqa: F401
    from xpiler.parse import parse_file

    src = Path(__file__).resolve().parents[2] / "xpiler" / "corpus" / "cuda" / "add_4_256.cu"
    lifted = run_pass("loop_recovery", parse_file(src))
    plain = run_pass("devcopy", lifted)
    assert not dc.recorded_extents(plain.ast)
    out = run_pass("devcopy", lifted, extents=True)
    ext = dc.recorded_extents(out.ast)
    assert set(ext) == {"A", "B", "T_add"}
    assert ext["A"].replace(" ", "").replace("(", "").replace(")", "") == "size*sizeoffloat"
    n = 1024
    _same(plain, out, [np.arange(n, dtype=np.float32), np.ones(n, np.float32),
                       np.zeros(n, np.float32), n])
