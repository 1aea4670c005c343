"""Loop schedule passes (loop_split, loop_reorder, loop_fuse, loop_expansion,
loop_contraction): golden rewrites checked against the source on the virtual device (same
random inputs), and the legality refusals (one per Requires line that can be hit)."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

import platforms
from passes.schedule import loop_contraction
from passes.schedule import loop_expansion
from passes.schedule import loop_fuse
from passes.schedule import loop_reorder
from passes.schedule import loop_split  # noqa: F401
from passes.base import PassRefused, format_pipeline, parse_pipeline, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel


def _prog(text):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _body(p):
    return " ".join(_emit(p).split('extern "C"')[1].split())


def _same(src_prog, out_prog, args):
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.cpp", args=want, source=_emit(src_prog), program=src_prog)
    run_kernel("b.cpp", args=got, source=_emit(out_prog), program=out_prog)
    for a, b in zip(want, got):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


def _refused(name, prog, code, **opts):
    with pytest.raises(PassRefused) as exc:
        run_pass(name, prog, **opts)
    assert exc.value.diagnostics[0].code == code, exc.value.diagnostics[0].message
    return exc.value.diagnostics[0]


def _no_entry(prog):
    return dataclasses.replace(prog, entry=dataclasses.replace(prog.entry, name="missing"))


def _f(n, seed=0):
    return np.random.default_rng(seed).integers(-4, 5, n).astype(np.float32)


# ------------------------------------------------------------------------------ loop_split
SPLIT = r"""
extern "C" void k(const float *x, float *y, int n) {
  #pragma omp parallel for
  for (int i = 0; i < n; ++i) {
    if (x[i] < 0.0f) continue;
    y[i] = x[i] * 2.0f + 1.0f;
  }
  for (int j = 0; j <= 11; ++j)
    y[j + 64] = y[j] + x[j + 1];
}
"""


def test_loop_split_golden_and_equivalent():
    prog = _prog(SPLIT)
    out = run_pass("loop_split", prog, loop="i", factor=4)
    body = _body(out)
    assert "for (int i_o = 0; i_o < n; i_o += 4) for (int i = i_o; i < (i_o + 4) && (i < n); ++i)" \
        in body or "for (int i_o = 0; i_o < n; i_o += 4) for (int i = i_o; i < i_o + 4 && i < n; ++i)" \
        in body, body
    assert "#pragma omp" not in body
    both = run_pass("loop_split", out, loop="j", factor=3)      # 12 trips: exact tiles
    b2 = _body(both)
    assert "for (int j = j_o; j < j_o + 3; ++j)" in b2, b2
    for n in (13, 8):
        _same(prog, both, [_f(80), np.zeros(80, np.float32), n])
    # the pipeline spelling round-trips
    steps = parse_pipeline("loop_split{factor=4;loop=i},loop_reorder{loops=i,j}")
    assert steps == [("loop_split", {"loop": "i", "factor": 4}),
                     ("loop_reorder", {"loops": "i,j"})]
    assert parse_pipeline(format_pipeline(steps)) == steps


def test_loop_split_refusals():
    prog = _prog(SPLIT)
    _refused("loop_split", _no_entry(prog), "XP-SPLIT-001", loop="i", factor=2)
    d = _refused("loop_split", prog, "XP-SPLIT-002")
    assert "loop" in d.message
    _refused("loop_split", prog, "XP-SPLIT-002", loop="i")
    _refused("loop_split", prog, "XP-SPLIT-002", loop="i", factor=1)
    _refused("loop_split", prog, "XP-SPLIT-003", loop="z", factor=2)
    _refused("loop_split", prog, "XP-SPLIT-003", loop="i", factor=2, nth=1)
    two = _prog("extern \"C\" void k(float *y) { for (int i = 0; i < 4; ++i) y[i] = 1.0f; "
                "for (int i = 0; i < 8; ++i) y[i + 4] = 2.0f; }\n")
    _refused("loop_split", two, "XP-SPLIT-004", loop="i", factor=2)
    picked = run_pass("loop_split", two, loop="i", factor=2, nth=1)
    assert "i_o < 8" in _body(picked) and "i_o < 4" not in _body(picked)
    writes = _prog("extern \"C\" void k(float *y) { for (int i = 0; i < 4; ++i) { y[i] = 1.0f; "
                   "i += 1; } }\n")
    _refused("loop_split", writes, "XP-SPLIT-005", loop="i", factor=2)
    bound = _prog("extern \"C\" void k(float *y, int n) { for (int i = 0; i < n; ++i) { "
                  "y[i] = 1.0f; n = n - 1; } }\n")
    _refused("loop_split", bound, "XP-SPLIT-005", loop="i", factor=2)
    brk = _prog("extern \"C\" void k(float *y, int n) { for (int i = 0; i < n; ++i) { "
                "if (y[i] > 0.0f) break; y[i] = 1.0f; } }\n")
    _refused("loop_split", brk, "XP-SPLIT-005", loop="i", factor=2)
    mem = _prog("extern \"C\" void k(float *y, const int *n) { for (int i = 0; i < n[0]; ++i) "
                "y[i] = 1.0f; }\n")
    _refused("loop_split", mem, "XP-SPLIT-005", loop="i", factor=2)


# ------------------------------------------------------------------------------ loop_reorder
TRANSPOSE = r"""
extern "C" void k(const float *a, float *c, float *b, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 7; ++j)
      c[j * n + i] = a[i * 7 + j] + 1.0f;
  for (int p = 1; p < 6; ++p)
    for (int q = 0; q < 7; ++q)
      b[p * 8 + q] = b[(p - 1) * 8 + q] + a[q];
}
"""


def test_loop_reorder_golden_and_equivalent():
    prog = _prog(TRANSPOSE)
    out = run_pass("loop_reorder", prog, loops="i,j")
    body = _body(out)
    assert "for (int j = 0; j < 7; ++j) for (int i = 0; i < n; ++i) c[(j * n) + i]" in body or \
        "for (int j = 0; j < 7; ++j) for (int i = 0; i < n; ++i) c[j * n + i]" in body, body
    # (<, =) becomes (=, <): still lexicographically positive
    out2 = run_pass("loop_reorder", out, loops="q,p")
    assert "for (int q = 0; q < 7; ++q) for (int p = 1; p < 6; ++p)" in _body(out2)
    _same(prog, out2, [_f(96), np.zeros(96, np.float32), _f(64, 1), 13])


PERM = r"""
extern "C" void k(const float *a, float *c) {
  #pragma omp parallel for collapse(3)
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j)
      for (int l = 0; l < 6; ++l)
        c[i * 30 + j * 6 + l] += a[l * 20 + j * 4 + i];
}
"""


def test_loop_reorder_permutation_and_distant_interchange():
    prog = _prog(PERM)
    out = run_pass("loop_reorder", prog, loops="l,i,j")
    body = _body(out)
    assert "for (int l = 0; l < 6; ++l) for (int i = 0; i < 4; ++i) for (int j = 0; j < 5; ++j)" \
        in body, body
    assert "#pragma omp" not in body
    swap = run_pass("loop_reorder", prog, loops="i,l")       # l, j, i
    # already in that order: nothing to do (not applicable), the input comes back unchanged
    from passes.base import apply_pass

    same = apply_pass("loop_reorder", prog, loops="i,j,l")
    assert not same.changed and same.program is prog and same.reason.code == "XP-REORDER-009"
    assert "for (int l = 0; l < 6; ++l) for (int j = 0; j < 5; ++j) for (int i = 0; i < 4; ++i)" \
        in _body(swap)
    for p in (out, swap):
        _same(prog, p, [_f(120), _f(120, 2)])


def test_loop_reorder_refusals():
    prog = _prog(TRANSPOSE)
    _refused("loop_reorder", _no_entry(prog), "XP-REORDER-001", loops="i,j")
    _refused("loop_reorder", prog, "XP-REORDER-002")
    _refused("loop_reorder", prog, "XP-REORDER-002", loops="i")
    _refused("loop_reorder", prog, "XP-REORDER-003", loops="i,z")
    _refused("loop_reorder", prog, "XP-REORDER-003", loops="i,q")     # not nested with i
    # a[i][j] = a[i-1][j+1]: direction (<, >) would become (>, <)
    dep = _prog(r"""
extern "C" void k(float *a, int n) {
  for (int i = 1; i < n; ++i)
    for (int j = 0; j < 7; ++j)
      a[i * 8 + j] = a[(i - 1) * 8 + j + 1] * 0.5f;
}
""")
    d = _refused("loop_reorder", dep, "XP-REORDER-008", loops="i,j")
    assert "'a'" in d.message and d.coord.line > 0
    local2d = _prog(r"""
extern "C" void k(float *o) {
  float a[8][8];
  for (int i = 0; i < 8; ++i) for (int j = 0; j < 8; ++j) a[i][j] = i + j;
  for (int i2 = 1; i2 < 8; ++i2)
    for (int j2 = 0; j2 < 7; ++j2)
      a[i2][j2] = a[i2 - 1][j2 + 1];
  o[0] = a[7][0];
}
""")
    _refused("loop_reorder", local2d, "XP-REORDER-008", loops="i2,j2")
    imperfect = _prog("extern \"C\" void k(float *a) { for (int i = 0; i < 4; ++i) { a[i] = 0; "
                      "for (int j = 0; j < 4; ++j) a[i * 4 + j + 4] = 1; } }\n")
    _refused("loop_reorder", imperfect, "XP-REORDER-005", loops="i,j")
    tri = _prog("extern \"C\" void k(float *a) { for (int i = 0; i < 4; ++i) "
                "for (int j = 0; j < i; ++j) a[i * 4 + j] = 1; }\n")
    _refused("loop_reorder", tri, "XP-REORDER-006", loops="i,j")
    red = _prog("extern \"C\" void k(const float *a, float *o) { float s = 0; "
                "for (int i = 0; i < 4; ++i) for (int j = 0; j < 4; ++j) { s = s * 0.5f + "
                "a[i * 4 + j]; } o[0] = s; }\n")
    _refused("loop_reorder", red, "XP-REORDER-007", loops="i,j")


# ------------------------------------------------------------------------------ loop_fuse
FUSE = r"""
extern "C" void k(const float *x, float *t, float *y, int n) {
  #pragma omp parallel for
  for (int i = 0; i < n; ++i) {
    float u = x[i] * 2.0f;
    t[i] = u;
  }
  #pragma omp parallel for
  for (int j = 0; j < n; ++j) {
    float u = t[j] + 1.0f;
    y[j] = u + (j > 0 ? t[j - 1] : 0.0f);
  }
}
"""


def test_loop_fuse_golden_and_equivalent():
    prog = _prog(FUSE)
    out = run_pass("loop_fuse", prog, loop="i")
    body = _body(out)
    assert body.count("for (") == 1 and "#pragma omp" not in body
    assert "t[i] + 1.0f" in body and "{ float u = x[i] * 2.0f; t[i] = u; } {" in body, body
    _same(prog, out, [_f(32), np.zeros(32, np.float32), np.zeros(32, np.float32), 29])


def test_loop_fuse_refusals():
    prog = _prog(FUSE)
    _refused("loop_fuse", _no_entry(prog), "XP-FUSE-001", loop="i")
    _refused("loop_fuse", prog, "XP-FUSE-002")
    _refused("loop_fuse", prog, "XP-FUSE-003", loop="z")
    _refused("loop_fuse", prog, "XP-FUSE-005", loop="j")              # no next loop
    # B(j) reads t[j + 1], written by A's later iteration j + 1
    rev = _prog(FUSE.replace("t[j - 1]", "t[j + 1]").replace("j > 0", "j + 1 < n"))
    _refused("loop_fuse", rev, "XP-FUSE-008", loop="i")
    other = _prog(FUSE.replace("j < n", "j < n - 1"))
    _refused("loop_fuse", other, "XP-FUSE-005", loop="i")
    scalar = _prog(r"""
extern "C" void k(const float *x, float *y, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s = s + x[i];
  for (int j = 0; j < n; ++j) y[j] = s;
}
""")
    _refused("loop_fuse", scalar, "XP-FUSE-007", loop="i")
    capture = _prog(r"""
extern "C" void k(const float *x, float *y, int n) {
  int a = 3;
  for (int a = 0; a < n; ++a) y[a] = x[a];
  for (int b = 0; b < n; ++b) y[b + n] = x[b] + a;
}
""")
    _refused("loop_fuse", capture, "XP-FUSE-006", loop="a")


# ------------------------------------------------------------------------------ loop_expansion
EXPAND = r"""
extern "C" void k(const float *x, float *y, float *z) {
  for (int i = 2; i < 34; ++i) {
    const float t = x[i] * 2.0f;
    float w = t - 1.0f;
    z[i] = w;
    y[i] = t + z[i - 1] + w;
  }
}
"""


def test_loop_expansion_golden_and_equivalent():
    prog = _prog(EXPAND)
    out = run_pass("loop_expansion", prog, loop="i", at=3)
    body = _body(out)
    assert "float t_x[32];" in body and "float w_x[32];" in body, body
    assert "t_x[i - 2] = x[i] * 2.0f;" in body and "y[i] = (t_x[i - 2] + z[i - 1]) + w_x[i - 2];" \
        in body or "y[i] = t_x[i - 2] + z[i - 1] + w_x[i - 2];" in body, body
    assert body.count("for (int i = 2; i < 34; ++i)") == 2
    _same(prog, out, [_f(40), np.zeros(40, np.float32), _f(40, 3)])
    one = run_pass("loop_expansion", prog, loop="i")          # at=1: only t expanded
    assert "t_x" in _body(one) and "w_x" not in _body(one)
    _same(prog, one, [_f(40), np.zeros(40, np.float32), _f(40, 3)])


def test_loop_expansion_refusals():
    prog = _prog(EXPAND)
    _refused("loop_expansion", _no_entry(prog), "XP-EXPAND-001", loop="i")
    _refused("loop_expansion", prog, "XP-EXPAND-002")
    _refused("loop_expansion", prog, "XP-EXPAND-002", loop="i", at=4)
    _refused("loop_expansion", prog, "XP-EXPAND-003", loop="q")
    # backward carried dependence: S2 (z[i] = ...) in iteration i, S1 reads z[i - 1] in i + 1
    back = _prog(r"""
extern "C" void k(const float *x, float *y, float *z) {
  for (int i = 1; i < 32; ++i) {
    y[i] = z[i - 1] + x[i];
    z[i] = y[i] * 0.5f;
  }
}
""")
    _refused("loop_expansion", back, "XP-EXPAND-008", loop="i")
    sym = _prog(EXPAND.replace("34", "n").replace("float *z)", "float *z, int n)"))
    _refused("loop_expansion", sym, "XP-EXPAND-007", loop="i")
    out = _prog(r"""
extern "C" void k(const float *x, float *y) {
  float s = 0.0f;
  for (int i = 0; i < 8; ++i) {
    s = x[i];
    y[i] = s;
  }
}
""")
    _refused("loop_expansion", out, "XP-EXPAND-006", loop="i")


# ------------------------------------------------------------------------------ loop_contraction
CONTRACT = r"""
extern "C" void k(const float *x, float *y, float *z) {
  float tmp[40];
  for (int i = 0; i < 32; ++i) {
    tmp[i + 1] = x[i] * 2.0f;
    z[i] = tmp[i + 1] - 1.0f;
  }
  for (int j = 0; j < 32; ++j)
    y[j] = tmp[j + 1] + x[j];
}
"""


def test_loop_contraction_golden_and_equivalent():
    prog = _prog(CONTRACT)
    out = run_pass("loop_contraction", prog, loop="i")
    body = _body(out)
    assert "tmp[" not in body and "float tmp_c; tmp_c = x[i] * 2.0f;" in body, body
    assert body.count("for (") == 1
    _same(prog, out, [_f(40), np.zeros(40, np.float32), np.zeros(40, np.float32)])
    # expansion followed by contraction is the identity up to names
    exp = run_pass("loop_expansion", _prog(EXPAND), loop="i", at=3)
    back = run_pass("loop_contraction", exp, loop="i", array="w_x", nth=0)
    assert "w_x[" not in _body(back) and "w_x_c" in _body(back)
    _same(_prog(EXPAND), back, [_f(40), np.zeros(40, np.float32), _f(40, 3)])


def test_loop_contraction_refusals():
    prog = _prog(CONTRACT)
    _refused("loop_contraction", _no_entry(prog), "XP-CONTRACT-001", loop="i")
    _refused("loop_contraction", prog, "XP-CONTRACT-002")
    _refused("loop_contraction", prog, "XP-CONTRACT-003", loop="q")
    _refused("loop_contraction", prog, "XP-CONTRACT-005", loop="j")
    _refused("loop_contraction", prog, "XP-CONTRACT-009", loop="i", array="nope")
    elsewhere = _prog(CONTRACT.replace("y[j] = tmp[j + 1] + x[j];",
                                       "y[j] = tmp[j + 1] + x[j];\n  z[33] = tmp[5];"))
    d = _refused("loop_contraction", elsewhere, "XP-CONTRACT-010", loop="i")
    assert "outside" in d.message
    halves = _prog(CONTRACT.replace("tmp[i + 1]", "tmp[i / 2]").replace("tmp[j + 1]",
                                                                          "tmp[j / 2]"))
    # a subscript that repeats: B(j) reads what a later A(i) overwrites (fusion refuses)
    _refused("loop_contraction", halves, "XP-CONTRACT-008", loop="i")
    writes = _prog(CONTRACT.replace("y[j] = tmp[j + 1] + x[j];",
                                    "{ y[j] = tmp[j + 1] + x[j]; tmp[j + 1] = 0.0f; }"))
    _refused("loop_contraction", writes, "XP-CONTRACT-010", loop="i")
    first = _prog(CONTRACT.replace("tmp[i + 1] = x[i] * 2.0f;",
                                   "z[i + 1] = tmp[i + 1]; tmp[i + 1] = x[i] * 2.0f;"))
    _refused("loop_contraction", first, "XP-CONTRACT-010", loop="i")
    shifted = _prog(CONTRACT.replace("y[j] = tmp[j + 1]", "y[j] = tmp[j]"))
    _refused("loop_contraction", shifted, "XP-CONTRACT-010", loop="i")
    reversed_ = _prog(CONTRACT.replace("y[j] = tmp[j + 1] + x[j];",
                                       "y[j] = tmp[j + 1] + z[j + 1];"))
    _refused("loop_contraction", reversed_, "XP-CONTRACT-008", loop="i")


@pytest.mark.parametrize("name,text,opts", [
    ("loop_split", SPLIT, {"loop": "i", "factor": 3}),
    ("loop_reorder", PERM, {"loops": "i,j"}),
    ("loop_fuse", FUSE, {"loop": "i"}),
    ("loop_expansion", EXPAND, {"loop": "i", "at": 2}),
    ("loop_contraction", CONTRACT, {"loop": "i"}),
])
def test_passes_are_pure_and_deterministic(name, text, opts):
    prog = _prog(text)
    before = _emit(prog)
    first = _emit(run_pass(name, prog, **opts))
    assert _emit(prog) == before
    assert _emit(run_pass(name, _prog(text), **opts)) == first != before


def test_affine_schedule_queries():
    from passes.analysis import affine

    def info_of(stmt):
        return affine.analyze(_prog("extern \"C\" void k(float *a, int n) { for (int i = 1; "
                                    "i < n; ++i) for (int j = 0; j < 7; ++j) " + stmt + " }\n"))

    anti = info_of("a[i * 8 + j] = a[(i - 1) * 8 + j + 1];")        # direction (<, >)
    band = anti.loops
    assert affine.reorder_violation(anti, band, [1, 0]) is not None
    assert affine.reorder_violation(anti, band, [0, 1]) is None      # identity keeps it
    flow = info_of("a[i * 8 + j] = a[(i - 1) * 8 + j];")             # direction (<, =)
    assert affine.reorder_violation(flow, flow.loops, [1, 0]) is None
    w, r = [x for x in flow.accesses if x.write][0], [x for x in flow.accesses if not x.write][0]
    i, j = flow.loops
    # the write of iteration (i, j) and the read of iteration (i + 1, j) meet
    assert affine.may_conflict(flow, w, r, (), lambda z3, e1, e2: e2[i.uid] == e1[i.uid] + 1)
    assert not affine.may_conflict(flow, w, r, (), lambda z3, e1, e2: e2[i.uid] == e1[i.uid])
    assert not affine.may_conflict(flow, w, r, (), lambda z3, e1, e2: e2[j.uid] != e1[j.uid])
