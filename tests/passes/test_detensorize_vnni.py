"""detensorize_vnni: golden rewrite, one refusal per Requires line, and the corpus sweep (each
VNNI corpus kernel detensorized and run against the original on the same inputs)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import passes.lift.detensorize_vnni  # noqa: F401  (registers the pass)
from passes.base import PassRefused, run_pass
from platforms.vnni.backend import emit
from platforms.vnni.emulate import host_flags
from xpiler import ops
from xpiler.parse import parse_file, parse_source
from xpiler.run import run_kernel
from xpiler.verify import compare_arrays

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "xpiler" / "corpus" / "vnni"
native = pytest.mark.skipif(not {"avx512f", "avx512bw", "avx512vl", "avx512_vnni"} <= host_flags(),
                            reason="the originals need AVX-512 VNNI to run")

GOLDEN = r"""#include <immintrin.h>
#include <stdint.h>

static inline __mmask16 tail16(int left) { return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u); }

extern "C" void clamp_dot(const float* x, const uint8_t* a, const int8_t* b, float* y, int32_t* d, int n) {
  for (int i = 0; i < n; i += 16) {
    __mmask16 m = tail16(n - i);
    __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    __mmask16 neg = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
    v = _mm512_mask_blend_ps(neg, v, _mm512_mul_ps(v, _mm512_set1_ps(0.5f)));
    _mm512_mask_storeu_ps(y + i, m, v);
  }
  __m512i acc = _mm512_setzero_si512();
  for (int k = 0; k < 64; k += 4)
    acc = _mm512_dpbusd_epi32(acc, _mm512_set1_epi32(*(const int32_t*)(a + k)), _mm512_loadu_si512((const void*)(b + 16 * k)));
  _mm512_storeu_si512((void*)d, acc);
  d[16] = _mm512_reduce_add_epi32(acc);
}
"""


def _detensorize(text: str, path: str = "golden.cpp", **options):
    program = parse_source(text, "vnni", path)
    return program, run_pass("detensorize_vnni", program, **options)


def test_golden_rewrite_text():
    program, out = _detensorize(GOLDEN)
    text = emit(out)
    body = text.split('extern "C"')[1]
    assert "xp_m512 v = xp_mm512_maskz_loadu_ps(m, x + i);" in body
    assert "unsigned short neg = xp_mm512_cmp_ps_mask(v, xp_mm512_setzero_ps(), 17);" in body
    assert "acc = xp_mm512_dpbusd_epi32(acc, xp_mm512_set1_epi32(" in body
    assert "d[16] = xp_mm512_reduce_add_epi32(acc);" in body
    assert "void clamp_dot(const float *x, const uint8_t *a, const int8_t *b, float *y, int32_t *d, int n)" in body
    assert "immintrin" not in text
    assert not re.search(r"(?<!xp)_mm(256|512)?_\w+\s*\(", text), "an intrinsic call is left"
    assert not re.search(r"__m(128|256|512)|__mmask", text)
    assert "typedef struct" in text and "xp_m512;" in text and "xp_m512i;" in text
    assert text.count("#pragma omp simd") >= 8
    # the compare builds a mask in a plain loop: a reduction clause would name a local that
    # inline renames
    assert "reduction(" not in text and "dst |= " in text
    assert "static xp_m512i xp_mm512_dpbusd_epi32(" in text
    assert out.intrinsics == [] and out.platform == "vnni"
    assert "#include <string.h>" in out.facts["preamble"] and "#include <math.h>" in out.facts["preamble"]
    # only what is used is emitted
    assert "xp_mm512_dpwssd_epi32" not in text and "xp_m256i" not in text


def test_input_program_is_untouched():
    program = parse_source(GOLDEN, "vnni", "golden.cpp")
    before = emit(program)
    run_pass("detensorize_vnni", program)
    assert emit(program) == before


@native
def test_golden_runs_like_the_original(tmp_path):
    program, out = _detensorize(GOLDEN)
    src = tmp_path / "golden.cpp"
    src.write_text(GOLDEN)
    dst = tmp_path / "golden_scalar.cpp"
    dst.write_text(emit(out))
    rng = np.random.default_rng(7)
    n = 37
    args = [rng.uniform(-2, 2, 48).astype(np.float32), rng.integers(0, 256, 64, dtype=np.uint8),
            rng.integers(-128, 128, 16 * 64, dtype=np.int8), np.full(48, np.nan, np.float32),
            np.zeros(17, np.int32), n]
    want = [a.copy() if hasattr(a, "copy") else a for a in args]
    got = [a.copy() if hasattr(a, "copy") else a for a in args]
    run_kernel(src, args=want)
    run_kernel(dst, args=got, strict=True)
    np.testing.assert_array_equal(got[3], want[3])      # tail lanes untouched (NaN stays NaN)
    np.testing.assert_array_equal(got[4], want[4])
    assert np.isnan(got[3][n:]).all()


def test_rules_option_controls_alignment_traps():
    text = GOLDEN.replace("_mm512_loadu_si512((const void*)(b + 16 * k))", "_mm512_load_si512((const void*)(b + 16 * k))")
    _, with_rules = _detensorize(text)
    _, without = _detensorize(text, rules=False)
    assert "__builtin_trap()" in emit(with_rules)
    assert "__builtin_trap()" not in emit(without)


def test_macros_are_rewritten():
    text = ("#include <immintrin.h>\n#define LOAD(p) _mm512_loadu_ps(p)\n#define LT _CMP_LT_OS\n"
            'extern "C" void k(const float* x, float* y) {\n'
            "  __m512 v = LOAD(x);\n"
            "  _mm512_storeu_ps(y, _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, LT), v));\n}\n")
    _, out = _detensorize(text)
    emitted = emit(out)
    assert "#define LOAD(p) xp_mm512_loadu_ps(p)" in emitted and "#define LT 1" in emitted
    assert "static xp_m512 xp_mm512_loadu_ps(" in emitted
    assert not re.search(r"(?<!xp)_mm512_", emitted)


# ------------------------------------------------------------------------ refusals, one per Requires
def _refusal(text: str, path="bad.cpp", platform="vnni"):
    program = parse_source(text, platform, path)
    with pytest.raises(PassRefused) as info:
        run_pass("detensorize_vnni", program)
    return info.value.diagnostics


def test_refuses_non_vnni_program():
    diags = _refusal("__global__ void k(float* a) { a[threadIdx.x] = 0; }\n", "k.cu", "cuda")
    assert diags[0].code == "XP-DETENSOR-VNNI-000"


def test_refuses_undescribed_intrinsic_naming_it_and_its_position():
    text = ("#include <immintrin.h>\n"
            'extern "C" void k(const float* x, float* y) {\n'
            "  __m512 v = _mm512_loadu_ps(x);\n"
            "  _mm512_storeu_ps(y, _mm512_getexp_ps(v));\n}\n")
    diags = _refusal(text, "getexp.cpp")
    assert [d.code for d in diags] == ["XP-DETENSOR-VNNI-001"]
    d = diags[0]
    assert d.construct == "_mm512_getexp_ps" and "_mm512_getexp_ps" in d.message
    assert (d.coord.file, d.coord.line, d.coord.col) == ("getexp.cpp", 4, 23)
    assert d.render().startswith("getexp.cpp:4:23: error XP-DETENSOR-VNNI-001")


def test_refuses_undescribed_scalar_bit_intrinsic():
    text = ('#include <immintrin.h>\nextern "C" void k(const unsigned* x, int* y) { y[0] = _bit_scan_forward(x[0]); }\n')
    assert [d.construct for d in _refusal(text)] == ["_bit_scan_forward"]


def test_refuses_undescribed_vector_type():
    text = ('#include <immintrin.h>\nextern "C" void k(const float* x, float* y) {\n'
            "  __m512h h;\n  _mm512_storeu_ps(y, _mm512_loadu_ps(x));\n}\n")
    diags = _refusal(text)
    assert diags[0].code == "XP-DETENSOR-VNNI-002" and diags[0].construct == "__m512h"


@pytest.mark.parametrize("stmt, what", [
    ("__m512 w = v + v;", "operator '+'"),
    ("y[0] = v[3];", "subscript"),
    ("v += v;", "compound assignment"),
    ("__m512i w = (__m512i)v;", "value cast"),
    ("__m512 w = {1.0f, 2.0f};", "brace initialiser"),
])
def test_refuses_vector_extension_uses(stmt, what):
    text = ('#include <immintrin.h>\nextern "C" void k(const float* x, float* y) {\n'
            f"  __m512 v = _mm512_loadu_ps(x);\n  {stmt}\n  _mm512_storeu_ps(y, v);\n}}\n")
    diags = _refusal(text)
    assert diags[0].code == "XP-DETENSOR-VNNI-003" and what in diags[0].message
    assert diags[0].coord.line == 4


def test_scalar_of_same_name_in_another_function_is_not_a_vector():
    text = ('#include <immintrin.h>\nstatic int f(int v) { return v + 1; }\n'
            'extern "C" void k(const float* x, float* y) {\n'
            "  __m512 v = _mm512_loadu_ps(x);\n  _mm512_storeu_ps(y, v);\n  y[0] += f(2);\n}\n")
    run_pass("detensorize_vnni", parse_source(text, "vnni", "ok.cpp"))


def test_refuses_name_clash():
    text = ('#include <immintrin.h>\nstatic int xp_sat32(int v) { return v; }\n'
            'extern "C" void k(const float* x, float* y) { _mm512_storeu_ps(y, _mm512_loadu_ps(x)); }\n')
    diags = _refusal(text)
    assert diags[0].code == "XP-DETENSOR-VNNI-004" and diags[0].construct == "xp_sat32"


# ------------------------------------------------------------------------ registration
def test_registered_in_the_translation_tables():
    from passes.plans import pass_modules
    from xpiler import translate

    assert "passes.lift.detensorize_vnni" in pass_modules()
    for target in ("cuda", "hip"):
        plan = translate.PLANS.get(("vnni", target))
        for alt in ([plan] if isinstance(plan, str) else plan or []):
            assert alt.startswith("detensorize_vnni"), alt


# ------------------------------------------------------------------------ corpus sweep
def detensorize_and_verify(path: Path, workdir: Path) -> tuple[bool, str]:
    """Detensorize one corpus kernel, run it and the original on the case file's inputs."""
    program = parse_file(path)
    out = run_pass("detensorize_vnni", program)
    text = emit(out)
    if re.search(r"(?<!xp)_mm(256|512)?_\w+\s*\(|immintrin|__m(128|256|512)", text):
        return False, "intrinsics left in the output"
    case = json.loads(path.with_suffix(".json").read_text())
    args = ops.make_inputs(case, seed=0)
    want = [a.copy() if hasattr(a, "copy") else a for a in args]
    got = [a.copy() if hasattr(a, "copy") else a for a in args]
    run_kernel(path, args=want, program=program)
    target = workdir / path.name
    target.write_text(text)
    run_kernel(target, args=got, source=text, program=parse_source(text, "vnni", str(target)), strict=True)
    bad = [c.to_json() for c in (compare_arrays(p.name, g, w, p.dtype, p.role)
                                 for p, g, w in zip(program.params, got, want) if p.kind == "pointer")
           if not c.ok]
    return not bad, json.dumps(bad)


ALL = sorted(CORPUS.glob("*.cpp"))
# one kernel per instruction family: dpbusd, dpbusds, dpwssd, compare/blend/mov masks,
# reduce_max + masked loads, reduce_min, 8/16-bit narrowing stores, aligned loads
SUBSET = ["gemm_17_60_40", "gemm_64_64_64", "conv1d_200_217", "sign_30_64", "softmax_7_50",
          "min_12_34_5", "dense_10_100_33", "layernorm_8_3_100"]


@native
@pytest.mark.parametrize("name", SUBSET)
def test_corpus_subset_detensorizes_and_verifies(tmp_path, name):
    ok, detail = detensorize_and_verify(CORPUS / f"{name}.cpp", tmp_path)
    assert ok, detail


@native
@pytest.mark.slow
@pytest.mark.parametrize("path", ALL, ids=[p.stem for p in ALL])
def test_whole_corpus_detensorizes_and_verifies(tmp_path, path):
    ok, detail = detensorize_and_verify(path, tmp_path)
    assert ok, detail


def test_subset_names_exist():
    assert all((CORPUS / f"{n}.cpp").exists() for n in SUBSET)


# ------------------------------------------------- masked tails: inactive lanes are not read
# The unguarded tail mask of oneDNN/MLAS kernels, ``(__mmask16)((1u << (n - i)) - 1u)``: once
# detensorize_vnni and inline have run, simplify turns the lane test into ``j < n - i``, so the
# extent analysis bounds the pointers by n (a masked-off lane never touches memory). An opaque
# bit test made the extents n + 15, and loop_bind's host code then copied 15 floats past the end
# of the caller's array (vnni -> cuda of layernorm_onednn / softmax_mlas).
BARE_TAIL = r"""#include <immintrin.h>
extern "C" void tail_scale(const float* x, float* y, int n) {
  int i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), _mm512_set1_ps(2.0f)));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
    __m512 v = _mm512_mask_loadu_ps(_mm512_set1_ps(-1.0f), m, x + i);
    _mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, x + i)));
  }
}
"""


LIFT = ("inline", "flatten_blocks", "indvar", "sroa", "memops")     # the vnni->gpu plan's order


def _lift_tail(text, through=LIFT + ("simplify",)):
    from xpiler.translate import load_passes

    load_passes()
    program, out = _detensorize(text, "tail.cpp", rules=False)
    for name in through:
        out = run_pass(name, out)
    return program, out


def test_masked_tail_lane_tests_become_index_guards_with_exact_extents():
    from passes.analysis import affine

    _, out = _lift_tail(BARE_TAIL)
    text = emit(out).split('extern "C"')[1]
    assert ">> j" not in text, "a lane test is left opaque"
    ext = affine.extents(affine.analyze(out))
    assert set(ext) == {"x", "y"}
    # n + 15 before (the masked-off lanes counted); n for every n >= 16 now (for 0 < n < 16 the
    # main loop's bound is still over-approximated by passes/analysis/affine/__init__.py, a separate issue)
    for n in (16, 37, 200, 1000):
        assert [_c_int(ext[p], {"n": n}) for p in ("x", "y")] == [n, n], ext


def _c_int(expr: str, env: dict) -> int:
    """Value of an integer C expression (C's truncating / and %, comparisons, ?:)."""
    from platforms.common.consts import ConstantTable

    table = ConstantTable({}, lambda t: t)
    table.values.update(env)
    value = table.evaluate(expr)
    assert isinstance(value, int), expr
    return value


def test_bare_tail_mask_needs_an_unsigned_literal_and_kept_bits():
    # a signed literal (1 << 31 overflows) and a 16-lane test of an 8-bit mask stay opaque
    for bad in ("(__mmask16)((1 << (n - i)) - 1)", "(unsigned char)((1u << (n - i)) - 1u)"):
        text = BARE_TAIL.replace("(__mmask16)((1u << (n - i)) - 1u)", bad)
        _, out = _lift_tail(text, LIFT)
        with pytest.raises(PassRefused) as exc:
            run_pass("simplify", out)
        assert exc.value.diagnostics[0].code == "XP-SIMPLIFY-003"      # a lane test, not provable


@native
def test_masked_tail_reads_only_active_lanes(tmp_path):
    """The lifted program runs like the intrinsics on arrays of exactly n floats (the runner's
    guard page after each array catches a read of a masked-off lane)."""
    program, out = _lift_tail(BARE_TAIL)
    src = tmp_path / "tail.cpp"
    src.write_text(BARE_TAIL)
    dst = tmp_path / "tail_lifted.cpp"
    dst.write_text(emit(out))
    for n in (37, 5, 16):
        x = np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32)
        want = [x.copy(), np.zeros(n, np.float32), n]
        got = [x.copy(), np.zeros(n, np.float32), n]
        run_kernel(src, args=want)
        run_kernel(dst, args=got, source=emit(out), program=out, strict=True)
        np.testing.assert_array_equal(got[1], want[1])
