"""passes/analysis/affine/__init__.py extents of subscripts with products of scalar parameters: a loop variable
whose coefficient has no provable sign (``i * (H - K + 1) * C``, the output row of a
depthwise convolution) is bounded through ``max(coef, 0)``, and the coordinates of a
flattened index (``idx % C``, ``(idx / C) % OW``, ``idx / (C * OW * OH)``) through fresh
variables over ``[0, d)`` / ``[0, xmax / d]``. Every extent is checked against the largest
index + 1 a brute-force run of the loops reaches; a division whose divisor or dividend has
no provable sign is still refused."""
from __future__ import annotations

import itertools
from pathlib import Path

from pycparser import CParser, c_ast

from passes.analysis import affine
from xpiler.parse import parse_source
from xpiler.translate import translate

ROOT = Path(__file__).resolve().parents[2]


def _extents(body: str, params: str) -> dict:
    src = f'extern "C" void k({params}) {{\n{body}\n}}\n'
    return affine.extents(affine.analyze(parse_source(src, "vnni", "<test>.cpp")))


def _c_eval(text: str, **scalars) -> int:
    """Value of a C integer expression (``?:``, comparisons, truncating ``/`` and ``%``)."""
    ret = CParser().parse(f"int f(void) {{ return {text}; }}").ext[0].body.block_items[0]

    def ev(n):
        if isinstance(n, c_ast.Constant):
            return int(n.value)
        if isinstance(n, c_ast.ID):
            return scalars[n.name]
        if isinstance(n, c_ast.UnaryOp) and n.op == "-":
            return -ev(n.expr)
        if isinstance(n, c_ast.TernaryOp):
            return ev(n.iftrue) if ev(n.cond) else ev(n.iffalse)
        a, b = ev(n.left), ev(n.right)
        if n.op == "/":
            return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        if n.op == "%":
            return a - b * (abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1))
        return {"+": a + b, "-": a - b, "*": a * b, "<": a < b, ">": a > b}[n.op]

    return ev(ret.expr)


_DEPTHWISE_OUT = """
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j)
      for (int c = 0; c < 16; ++c) {
        if (c >= C) continue;
        out[(i * (H - K + 1) + j) * C + c] = x[c];
      }"""


def test_product_of_symbols_subscript_has_a_sound_extent():
    ext = _extents(_DEPTHWISE_OUT, "const float* x, float* out, int H, int K, int C")["out"]
    assert isinstance(ext, str), ext
    for h, k, c in itertools.product((1, 3, 10, 12), (1, 5, 9), (1, 7, 16, 20)):
        o = h - k + 1                   # negative too: rows at i > 0 then lie below row 0
        true = max((i * o + j) * c + t for i in range(6) for j in range(6)
                   for t in range(min(16, c))) + 1
        got = _c_eval(ext, H=h, K=k, C=c)
        assert got >= true, (h, k, c, ext)
        if c <= 16:                     # the guard c < C is then the tight bound of c
            assert got == true, (h, k, c, ext)


def test_coefficient_of_unknown_sign_alone_is_exact():
    ext = _extents("for (int i = 0; i < 6; ++i) out[i * (H - K) + 3] = 0.0f;",
                   "float* out, int H, int K")["out"]
    for h, k in itertools.product(range(0, 9), range(0, 9)):
        true = max(i * (h - k) + 3 for i in range(6)) + 1
        assert _c_eval(ext, H=h, K=k) == true, (h, k, ext)


_MINPOOL_IN = """
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 64; ++t) {
      const int idx = b * 64 + t;
      if (idx >= N * OH * OW * C) continue;
      const int c = idx % C;
      const int ow = (idx / C) % OW;
      const int oh = (idx / (C * OW)) % OH;
      const int n = idx / (C * OW * OH);
      for (int kh = 0; kh < KH; ++kh)
        for (int kw = 0; kw < KW; ++kw)
          out[idx] += in[((n * H + oh * SH + kh) * W + ow * SW + kw) * C + c];
    }"""
_MINPOOL_PARAMS = ("const float* in, float* out, int N, int H, int W, int C, int KH, int KW, "
                   "int SH, int SW, int OH, int OW")


def test_flattened_index_coordinates_have_an_exact_extent():
    ext = _extents(_MINPOOL_IN, _MINPOOL_PARAMS)
    # idx < 128 (the 2 x 64 launch) and idx < N * OH * OW * C: the smaller of the two
    assert isinstance(ext["in"], str) and \
        ext["out"] == "((128) < (C * N * OH * OW) ? (128) : (C * N * OH * OW))", ext
    assert _c_eval(ext["out"], N=4, OH=8, OW=8, C=3) == 128
    for n_, c_, k_, s_, oh_ in itertools.product((1, 2), (1, 3), (1, 2), (1, 2), (1, 3)):
        hw = (oh_ - 1) * s_ + k_
        sc = dict(N=n_, H=hw, W=hw, C=c_, KH=k_, KW=k_, SH=s_, SW=s_, OH=oh_, OW=oh_)
        assert n_ * oh_ * oh_ * c_ <= 128       # every output is computed: the bound is exact
        true = max(((n * hw + oh * s_ + kh) * hw + ow * s_ + kw) * c_ + c
                   for n in range(n_) for oh in range(oh_) for ow in range(oh_)
                   for c in range(c_) for kh in range(k_) for kw in range(k_)) + 1
        assert _c_eval(ext["in"], **sc) == true == n_ * hw * hw * c_, (sc, ext["in"])


def test_division_by_a_sum_keeps_its_quotient_bound():
    # 127 / C is not a polynomial: the extent carries it (guarded against C == 0)
    ext = _extents("for (int t = 0; t < 128; ++t) out[t / C] = 0.0f;", "float* out, int C")["out"]
    for c in range(1, 40):
        assert _c_eval(ext, C=c) == 127 // c + 1, (c, ext)


def test_unprovable_signs_are_still_refused():
    ext = _extents("""
  for (int t = 0; t < 128; ++t) {
    a[t % (C - D)] = 0.0f;                // divisor of unknown sign
    b[(t - D) % C] = 0.0f;                // dividend of unknown sign
  }""", "float* a, float* b, int C, int D")
    assert ext == {"a": None, "b": None}, ext


def test_depthwiseconv_hip_to_bang_is_verified(tmp_path):
    src = ROOT / "xpiler" / "corpus" / "hip" / "depthwiseconv_10_5_16.hip"
    out = tmp_path / "depthwiseconv_10_5_16.mlu"
    rep = translate(str(src), "bang", str(out))
    assert rep.status == "verified", rep.message
    text = out.read_text()
    assert "__mlu_global__" in text and "> 0) ?" in text    # out's extent: max(C * O, 0)
