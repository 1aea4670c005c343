"""Hand-written x86 kernels with size classes and pointer walks (SimSIMD's hamming, hnswlib's
inner product shapes, small synthetic kernels): the mechanisms that let them reach CUDA / BANG.

* ``canon.rename_decls`` (inline): a local a helper declares in both branches of an ``if``
  gets one name per declaration, so that ``sroa`` and the binders, which key locals by name,
  see one object per name;
* ``sroa``: a name declared several times with one lane-struct type is converted;
* ``affine.extents``: a guard on scalars the subscript does not use (a size class,
  ``n > 256``) does not enlarge the extent;
* ``const_prop``: ``const void *p = &x;`` is propagated and ``*(T *) (&x)`` folds to ``x``;
* ``counted_while``: ``while (n-- > 0)`` / ``while (u--)`` count-down loops, an offset stepped
  several times per iteration, and a second loop starting where the first left the offset;
* ``loop_bind``: a scratch array's alignment attribute is not put on the kernel parameter.
"""
from __future__ import annotations

import copy

import numpy as np
from pycparser import c_ast

import passes.canon as canon
import platforms
from passes.analysis import affine
from passes.base import apply_pass, run_pass
from passes.cleanup import const_prop, counted_while, inline, sroa  # noqa: F401  (register)
from xpiler.parse import parse_source
from xpiler.run import run_kernel


def _prog(text):
    return parse_source(text, "vnni", "k.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _outputs(p, args):
    args = copy.deepcopy(args)
    run_kernel("k.cpp", args=args, source=_emit(p), program=p)
    return [a for a in args if isinstance(a, np.ndarray)]


def _same(a, b, args):
    for x, y in zip(_outputs(a, args), _outputs(b, args)):
        np.testing.assert_array_equal(x, y)


def _decl_names(p):
    fdef = canon.entry_def(p.ast, p.entry.name)
    return [n.name for n in canon.walk(fdef.body) if isinstance(n, c_ast.Decl) and n.name]


BRANCHES = r"""
#include <string.h>
typedef struct { float v[8]; } lanes8;
static float total(const float *x, int n) {
  float s = 0.0f;
  if (n <= 8) {
    lanes8 t;
    for (int j = 0; j < 8; ++j) t.v[j] = j < n ? x[j] : 0.0f;
    for (int j = 0; j < 8; ++j) s += t.v[j];
  } else {
    lanes8 t;
    for (int i = 0; i + 8 <= n; i += 8) {
      memcpy(&t, x + i, sizeof(t));
      for (int j = 0; j < 8; ++j) s += t.v[j];
    }
  }
  return s;
}
extern "C" void k(const float *x, int n, float *out) { out[0] = total(x, n); }
"""


def test_inlined_branches_get_one_name_per_declaration_and_sroa_converts_them():
    src = _prog(BRANCHES)
    inl = run_pass("inline", src)
    names = _decl_names(inl)
    assert len(names) == len(set(names)), names           # t, j: one name per declaration
    out = run_pass("sroa", inl)
    text = _emit(out).split('extern "C"')[1]
    assert "lanes8" not in text and ".v[" not in text
    for n in (3, 8, 24):
        _same(src, out, [np.arange(24, dtype=np.float32), n, np.zeros(1, np.float32)])


def test_rename_decls_keeps_a_name_declared_once_as_before():
    body = canon.parse_stmts("{ int a = 1; { int b = a; a = b; } }")[0]
    text = canon_text(canon.rename_decls(body, "__s"))
    assert "int a__s = 1;" in text and "int b__s = a__s;" in text and "a__s = b__s;" in text


def test_rename_decls_follows_scopes_for_a_name_declared_twice():
    body = canon.parse_stmts("{ int r = 0; { int t = 1; r += t; } { int t = 2; r += t; } }")[0]
    text = canon_text(canon.rename_decls(body, "__s"))
    assert "int t__s = 1;" in text and "r__s += t__s;" in text
    assert "int t__s_2 = 2;" in text and "r__s += t__s_2;" in text


def canon_text(node):
    from pycparser import c_generator
    return c_generator.CGenerator().visit(node)


def test_a_size_class_guard_does_not_enlarge_the_extent():
    info = affine.analyze(_prog(r"""
extern "C" void k(const float *x, float *out, int n) {
  if (n > 256)
    for (int i = 0; i + 64 <= n; i += 64)
      for (int j = 0; j < 64; ++j) out[0] += x[i + j];
}"""))
    ext = affine.extents(info)["x"]
    from xpiler.verify import evaluate_size
    prog = _prog('extern "C" void k(int n) {}')
    for n in (300, 1000):
        assert evaluate_size(prog, ext, {"n": n}) == n // 64 * 64, (ext, n)


def test_an_address_passed_as_void_pointer_is_read_back_as_the_variable():
    src = _prog(r"""
#include <stddef.h>
extern "C" void k(const float *x, int dim, float *out) {
  size_t q = (size_t) dim;
  const void *qp = &q;
  size_t m = *((size_t *) qp) / 4;
  for (size_t i = 0; i < m; ++i) out[i] = x[4 * i];
}""")
    out = run_pass("const_prop", src)
    text = _emit(out).split('extern "C"')[1]
    assert "&q" not in text and "*((size_t *)" not in text
    _same(src, out, [np.arange(16, dtype=np.float32), 16, np.zeros(4, np.float32)])


def test_an_address_is_not_folded_through_a_pointer_of_another_type():
    src = _prog(r"""
extern "C" void k(const float *x, int dim, float *out) {
  float f = x[0];
  const void *fp = &f;
  out[0] = (float) *((const int *) fp);
}""")
    out = run_pass("const_prop", src)
    text = _emit(out)
    assert "*((const int *) ((void *) (&f)))" in text and "out[0] = (float) f" not in text


COUNT_DOWN = r"""
extern "C" void k(const float *a, int dim, float *out) {
  long long o = 0;
  long long end = o + 8 * (dim / 8);
  unsigned long long rounds = dim / 8 / 2;
  float s = 0.0f;
  while (rounds--) {
    for (int j = 0; j < 8; ++j) s += a[o + j];
    o += 8;
    for (int j = 0; j < 8; ++j) s += 2.0f * a[o + j];
    o += 8;
  }
  while (o < end) {
    for (int j = 0; j < 8; ++j) s += 3.0f * a[o + j];
    o += 8;
  }
  out[0] = s;
  out[1] = (float) o;
  out[2] = (float) (rounds == (unsigned long long) -1);
}
"""


def test_count_down_loops_with_several_steps_become_counted_loops():
    src = _prog(COUNT_DOWN)
    out = run_pass("counted_while", src)
    text = _emit(out)
    assert "while" not in text and "o += 8" not in text
    for dim in (0, 7, 8, 16, 24, 40, 64):       # no round, odd and even numbers of blocks
        _same(src, out, [np.arange(64, dtype=np.float32), dim, np.zeros(3, np.float32)])


def test_a_signed_count_down_without_comparison_is_left_alone():
    text = ('extern "C" void k(const float *a, float *out, int n) { long long o = 0; int c = n; '
            'while (c--) { out[0] += a[o]; o += 1; } out[1] = (float) c; }')
    got = apply_pass("counted_while", _prog(text))
    assert not got.changed and got.reason.code == "XP-COUNTED-WHILE-002"
    ok = text.replace("while (c--)", "while (c-- > 0)")
    src = _prog(ok)
    out = run_pass("counted_while", src)
    assert "while" not in _emit(out)
    for n in (0, 3):
        _same(src, out, [np.arange(4, dtype=np.float32), np.zeros(2, np.float32), n])


def test_a_scratch_array_parameter_carries_no_alignment_attribute():
    from passes.lower.loop_bind import _scratch_param_type

    p = _prog('extern "C" void k(float *x) { float __attribute__((aligned(64))) t[16]; '
              'float u[4][8]; t[0] = 1; u[0][0] = t[0]; x[0] = u[0][0]; }')
    fdef = canon.entry_def(p.ast, "k")
    types = {n.name: _scratch_param_type(n) for n in canon.walk(fdef.body)
             if isinstance(n, c_ast.Decl) and n.name in ("t", "u")}
    assert types == {"t": "float *", "u": "float (*)[8]"}
