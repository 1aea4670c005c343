"""passes sroa, memops, simplify, dce, indvar: golden rewrites (run against the source on the
virtual device) and one refusal per Requires line; a VNNI corpus sample through the plans."""
from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import numpy as np
import pytest

import platforms
from passes.cleanup import dce  # noqa: F401  (register the passes)
from passes.cleanup import indvar
from passes.cleanup import memops
from passes.cleanup import simplify
from passes.cleanup import sroa
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

ROOT = Path(__file__).resolve().parents[2]


def _prog(text):
    return parse_source(text, "vnni", "t.cpp")


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


def _same(src_prog, out_prog, args):
    want, got = copy.deepcopy(args), copy.deepcopy(args)
    run_kernel("a.cpp", args=want, source=_emit(src_prog), program=src_prog)
    run_kernel("b.cpp", args=got, source=_emit(out_prog), program=out_prog)
    for a, b in zip(want, got):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


def _refused(name, prog, code):
    with pytest.raises(PassRefused) as exc:
        run_pass(name, prog)
    assert exc.value.diagnostics[0].code == code, exc.value.diagnostics[0].message


def _unchanged(name, prog, code):
    """Nothing to do (issue 15): the input comes back unchanged with the not-applicable code."""
    from passes.base import apply_pass

    out = apply_pass(name, prog)
    assert not out.changed and out.program is prog, name
    assert out.reason.code == code, out.reason.message


def _no_entry(prog):
    return dataclasses.replace(prog, entry=dataclasses.replace(prog.entry, name="missing"))


LANES = r"""
#include <string.h>
typedef struct { float v[16]; } xp_m512;
extern "C" void k(const float *x, float *out) {
  xp_m512 a;
  memcpy(&a, x, sizeof(a));
  xp_m512 b = a;
  for (int j = 0; j < 16; ++j) b.v[j] = b.v[j] * 2.0f;
  memcpy(out, &b, sizeof(b));
}
"""


def test_sroa_golden_and_memops_golden():
    prog = _prog(LANES)
    s = run_pass("sroa", prog)
    text = _emit(s)
    assert "float a[16];" in text and "float b[16];" in text and ".v[" not in text
    assert "memcpy(b, a, sizeof(b));" in text
    m = run_pass("memops", s)
    mt = _emit(m)
    assert "memcpy" not in mt.split('extern "C"')[1]
    assert "for (int __xp_m1 = 0; __xp_m1 < 16; ++__xp_m1)" in mt
    x = np.arange(16, dtype=np.float32)
    _same(prog, m, [x, np.zeros(16, np.float32)])


def test_sroa_refusals():
    _unchanged("sroa", _no_entry(_prog(LANES)), "XP-SROA-001")
    _unchanged("sroa", _prog("extern \"C\" void k(float *x) { x[0] = 1.0f; }\n"), "XP-SROA-002")
    whole = LANES.replace("memcpy(out, &b, sizeof(b));", "xp_m512 *p = &b; out[0] = p->v[0];")
    _refused("sroa", _prog(whole), "XP-SROA-003")


def test_memops_sizes_and_types():
    text = r"""
#include <string.h>
extern "C" void k(const float *x, float *out, unsigned char *bytes, int n) {
  memset(bytes, 7, n * sizeof(unsigned char));
  float t[8];
  memcpy(t, x, 8 * sizeof(float));
  void *d = out;
  memmove(d, t, sizeof(t));
}
"""
    prog = _prog(text)
    out = run_pass("memops", prog)
    body = _emit(out).split('extern "C"')[1]
    assert "memset" not in body and "memcpy" not in body and "memmove" not in body
    _same(prog, out, [np.arange(8, dtype=np.float32), np.zeros(8, np.float32),
                      np.zeros(5, np.uint8), 5])


def test_memops_refusals():
    _unchanged("memops", _no_entry(_prog(LANES)), "XP-MEMOPS-001")
    _unchanged("memops", _prog("extern \"C\" void k(float *x) { x[0] = 1.0f; }\n"), "XP-MEMOPS-002")
    reinterpret = ("#include <string.h>\nextern \"C\" void k(const unsigned char *p, int *o) "
                   "{ int v; memcpy(&v, p, 4); o[0] = v; }\n")
    _refused("memops", _prog(reinterpret), "XP-MEMOPS-003")
    odd = ("#include <string.h>\nextern \"C\" void k(const float *p, float *o, int n) "
           "{ memcpy(o, p, n); }\n")
    _refused("memops", _prog(odd), "XP-MEMOPS-003")
    overlap = ("#include <string.h>\nextern \"C\" void k(float *o, int n) "
               "{ memmove(o + 1, o, n * sizeof(float)); }\n")
    _refused("memops", _prog(overlap), "XP-MEMOPS-003")
    nonzero = ("#include <string.h>\nextern \"C\" void k(float *o, int n) "
               "{ memset(o, 1, n * sizeof(float)); }\n")
    _refused("memops", _prog(nonzero), "XP-MEMOPS-003")


TAIL = r"""
extern "C" void k(const float *x, float *out, int n) {
  for (int i = 0; i < n; i += 16) {
    unsigned short m = (n - i >= 16) ? (unsigned short) 0xFFFF : (unsigned short) ((1u << (n - i)) - 1u);
    unsigned short k2 = m;
    for (int j = 0; j < 16; ++j)
      if (k2 >> j & 1) out[i + j] = x[i + j] + 1.0f;
  }
}
"""


def test_simplify_golden_and_extent():
    from passes.analysis import affine

    prog = _prog(TAIL)
    out = run_pass("simplify", prog)
    text = _emit(out)
    assert "if (j < n - i)" in text and ">> j" not in text
    assert affine.extents(affine.analyze(out)) == {"x": "n", "out": "n"}
    _same(prog, out, [np.arange(37, dtype=np.float32), np.zeros(37, np.float32), 37])


def test_simplify_refusals():
    _unchanged("simplify", _no_entry(_prog(TAIL)), "XP-SIMPLIFY-001")
    _unchanged("simplify", _prog("extern \"C\" void k(float *x) { x[0] = 1.0f; }\n"), "XP-SIMPLIFY-002")
    narrow = TAIL.replace("unsigned short k2 = m;", "unsigned char k2 = m;")
    _refused("simplify", _prog(narrow), "XP-SIMPLIFY-003")             # 8 bits kept of 16
    moved = TAIL.replace("unsigned short k2 = m;", "unsigned short k2 = m; m = 0;")
    _refused("simplify", _prog(moved), "XP-SIMPLIFY-003")              # mask reassigned


DEAD = r"""
extern "C" void k(const float *x, float *out, int n) {
  float one[16];
  for (int j = 0; j < 16; ++j) one[j] = 1.0f;
  (void) one;
  float keep = 2.0f;
  for (int i = 0; i < n; ++i) out[i] = x[i] * keep;
}
"""


def test_dce_golden_and_not_applicable():
    prog = _prog(DEAD)
    out = run_pass("dce", prog)
    body = _emit(out).split('extern "C"')[1]
    assert "one" not in body and "keep" in body
    _same(prog, out, [np.arange(5, dtype=np.float32), np.zeros(5, np.float32), 5])
    _unchanged("dce", _no_entry(prog), "XP-DCE-001")
    _unchanged("dce", out, "XP-DCE-002")


OUTER = r"""
extern "C" void k(const float *x, float *out, int n) {
  int i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) out[i + j] = x[i + j] * 2.0f;
  for (; i < n; ++i) out[i] = -x[i];
}
"""


def test_indvar_golden_and_refusals():
    prog = _prog(OUTER)
    out = run_pass("indvar", prog)
    text = _emit(out)
    assert "for (int i__v1 = 0; i__v1 + 4 <= n; i__v1 += 4)" in text
    assert "int i__e1 = (n / 4) * 4;" in text or "int i__e1 = n / 4 * 4;" in text
    assert "for (int i__v2 = i__e1; i__v2 < n; i__v2 += 1)" in text
    for n in (0, 3, 9, 12):
        _same(prog, out, [np.arange(max(n, 1), dtype=np.float32), np.zeros(max(n, 1), np.float32), n])
    _unchanged("indvar", _no_entry(prog), "XP-INDVAR-001")
    _unchanged("indvar", _prog("extern \"C\" void k(float *o, int n) { for (int i = 0; i < n; ++i) "
                               "o[i] = 1.0f; }\n"), "XP-INDVAR-002")
    body_writes = _prog("extern \"C\" void k(float *o, int n) { int i = 0; "
                        "for (; i < n; i += 1) { o[i] = 1.0f; i += 1; } }\n")
    _refused("indvar", body_writes, "XP-INDVAR-003")
    unknown_start = _prog("extern \"C\" void k(float *o, int n, int s) { int i; o[0] = 0.0f; "
                          "for (; i < n; ++i) o[i] = 1.0f; }\n")
    _refused("indvar", unknown_start, "XP-INDVAR-003")


SAMPLE = ["relu_3_5_67.cpp", "add_18_128.cpp"]


@pytest.mark.parametrize("name", SAMPLE)
@pytest.mark.parametrize("to", ["cuda", "hip"])
def test_vnni_corpus_sample_lowers_verified(tmp_path, name, to):
    from xpiler.translate import translate

    src = ROOT / "xpiler" / "corpus" / "vnni" / name
    rep = translate(str(src), to, str(tmp_path / (Path(name).stem + (".cu" if to == "cuda" else ".hip"))))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert all(s.status == "verified" for s in rep.steps if s.name in ("inline", "loop_bind"))
    assert "__global__" in (tmp_path / (Path(name).stem + (".cu" if to == "cuda" else ".hip"))).read_text()


@pytest.mark.slow
@pytest.mark.parametrize("to", ["cuda", "hip"])
def test_vnni_corpus_sweep(tmp_path, to):
    from xpiler.translate import translate

    files = sorted((ROOT / "xpiler" / "corpus" / "vnni").glob("*.cpp"))
    ok = 0
    for f in files:
        rep = translate(str(f), to, str(tmp_path / (f.stem + (".cu" if to == "cuda" else ".hip"))))
        ok += rep.status == "verified"
    assert ok >= 20, f"{ok}/{len(files)} verified"
