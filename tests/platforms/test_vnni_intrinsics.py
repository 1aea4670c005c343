"""The VNNI intrinsic descriptions against the real instructions, natively and bit for bit.

One C++ file holds, for every described intrinsic (and every immediate value its ``test.imm``
lists), a loop that draws random inputs (floats with ties, zeros, infinities, NaNs, out-of-range
values; integers near INT32_MIN/MAX and 16-bit extremes; random masks), calls the intrinsic and
the scalar reference the knowledge base renders (``Catalog.helpers_c`` — the very code the
detensorize pass emits), and compares results and written memory. Floats compare bit-exactly
except that any NaN equals any NaN (payload propagation of two NaN operands is not described).
Built with ``-ffp-contract=off`` so neither side fuses multiplies and adds on its own.
"""
from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

import pytest

from platforms.vnni.emulate import host_flags, isa_supported
from platforms.vnni.intrinsics import Catalog, IntrinsicsError, _expand, load

ROOT = Path(__file__).resolve().parents[2]
ITERS = 1500
NEEDED_FLAGS = {"avx512f", "avx512bw", "avx512vl", "avx512_vnni"}
native = pytest.mark.skipif(not NEEDED_FLAGS <= host_flags(),
                            reason="this CPU lacks AVX-512 VNNI: the descriptions are checked natively")

_PRELUDE = r"""
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <stdio.h>
"""

_DRIVER = r"""
static uint64_t xpt_s = 0x9E3779B97F4A7C15ull;
static inline uint64_t xpt_next(void) { xpt_s ^= xpt_s << 13; xpt_s ^= xpt_s >> 7; xpt_s ^= xpt_s << 17; return xpt_s; }
static float xpt_f32(void) {
  uint64_t r = xpt_next(); int c = (int)(r % 100); uint32_t bits; float f;
  if (c < 50) { bits = (uint32_t)((r >> 8) & 0x7FFFFF) | ((uint32_t)(112 + (r >> 32) % 30) << 23) | ((uint32_t)((r >> 40) & 1) << 31); memcpy(&f, &bits, 4); return f; }
  if (c < 65) return (float)((int)((r >> 8) % 129) - 64) * 0.5f;
  if (c < 72) return ((r >> 8) & 1) ? 0.0f : -0.0f;
  if (c < 78) return ((r >> 8) & 1) ? INFINITY : -INFINITY;
  if (c < 84) return ((r >> 8) & 1) ? NAN : -NAN;
  if (c < 92) return (((r >> 8) & 1) ? 1.0f : -1.0f) * ldexpf(1.0f + (float)((r >> 16) % 1024) / 1024.0f, 29 + (int)((r >> 30) % 5));
  bits = (uint32_t)(r >> 16); memcpy(&f, &bits, 4); return f;
}
static uint32_t xpt_i32(void) {
  uint64_t r = xpt_next(); int c = (int)(r % 100);
  if (c < 40) return (uint32_t)(r >> 32);
  if (c < 55) return 0x7FFFFFFFu - (uint32_t)((r >> 32) % 70000);
  if (c < 70) return 0x80000000u + (uint32_t)((r >> 32) % 70000);
  if (c < 85) return (uint32_t)((int32_t)((r >> 32) % 601) - 300);
  static const uint16_t w[6] = {0x8000, 0x7FFF, 0xFFFF, 0x0001, 0x0000, 0x8001};
  return (uint32_t)w[(r >> 20) % 6] | ((uint32_t)w[(r >> 40) % 6] << 16);
}
static uint64_t xpt_mask(void) {
  uint64_t r = xpt_next(); int c = (int)(r % 10);
  return c < 2 ? ~0ull : (c < 3 ? 0ull : xpt_next());
}
/* kind: 0 integers, 1 float lanes, 2 double lanes */
static void xpt_fill(void *p, int bytes, int kind) {
  unsigned char *b = (unsigned char *)p;
  for (int i = 0; i + 4 <= bytes; i += 4) {
    if (kind == 1) { float f = xpt_f32(); memcpy(b + i, &f, 4); }
    else if (kind == 2 && i % 8 == 0 && i + 8 <= bytes) { double d = (double)xpt_f32() * (1.0 + 1e-9 * (double)(xpt_next() % 1000)); memcpy(b + i, &d, 8); i += 4; }
    else { uint32_t v = xpt_i32(); memcpy(b + i, &v, 4); }
  }
}
static int xpt_same(const void *x, const void *y, int bytes, int kind) {
  const unsigned char *a = (const unsigned char *)x, *b = (const unsigned char *)y;
  if (kind == 1) {
    for (int i = 0; i + 4 <= bytes; i += 4) {
      float f, g; memcpy(&f, a + i, 4); memcpy(&g, b + i, 4);
      if (memcmp(a + i, b + i, 4) != 0 && !(f != f && g != g)) return 0;
    }
    return 1;
  }
  if (kind == 2) {
    for (int i = 0; i + 8 <= bytes; i += 8) {
      double f, g; memcpy(&f, a + i, 8); memcpy(&g, b + i, 8);
      if (memcmp(a + i, b + i, 8) != 0 && !(f != f && g != g)) return 0;
    }
    return 1;
  }
  return memcmp(a, b, bytes) == 0;
}
/* intrinsics with a `tolerance` (rcp14, rsqrt14): x native, y the description's exactly rounded
   value. A lane matches bit-exactly (any NaN equal to any NaN), or both are finite, nonzero, of
   the same sign and |x - y| <= tol * |y| + ulp(y) (the ulp covers the reference's own rounding).
   Special results (zeros, infinities, NaNs) must match exactly. */
static int xpt_close(const void *x, const void *y, int bytes, int kind, double tol) {
  const unsigned char *a = (const unsigned char *)x, *b = (const unsigned char *)y;
  int w = kind == 2 ? 8 : 4;
  for (int i = 0; i + w <= bytes; i += w) {
    double f, g, u;
    if (kind == 2) { memcpy(&f, a + i, 8); memcpy(&g, b + i, 8); u = fabs(nextafter(g, INFINITY) - g); }
    else { float f4, g4; memcpy(&f4, a + i, 4); memcpy(&g4, b + i, 4); f = f4; g = g4; u = fabs((double)nextafterf(g4, INFINITY) - g); }
    if (memcmp(a + i, b + i, w) == 0 || (f != f && g != g)) continue;
    if (f != f || g != g || f == 0 || g == 0 || isinf(f) || isinf(g) || (f < 0) != (g < 0)) return 0;
    if (fabs(f - g) > tol * fabs(g) + u) return 0;
  }
  return 1;
}
"""

_FLOAT_TYPES = {"float": 1, "double": 2}

# Intrinsics GCC 12 miscompiles, called natively through inline assembly of the instruction
# instead: `_mm512_mask_dpbf16_ps` / `_mm512_maskz_dpbf16_ps` load their 16-bit mask with `kmovb`
# (only mask bits 0..7 reach the instruction; fixed in later GCC), so the descriptions follow the
# IIG (all 16 bits) and are compared with VDPBF16PS itself.
_NATIVE = {
    "_mm512_mask_dpbf16_ps": ("xpt_vdpbf16ps_mask", r"""
static inline __m512 xpt_vdpbf16ps_mask(__m512 src, __mmask16 k, __m512bh a, __m512bh b) {
  __asm__("vdpbf16ps %2, %1, %0%{%3%}" : "+v"(src) : "v"(a), "v"(b), "Yk"(k));
  return src;
}"""),
    "_mm512_maskz_dpbf16_ps": ("xpt_vdpbf16ps_maskz", r"""
static inline __m512 xpt_vdpbf16ps_maskz(__mmask16 k, __m512 src, __m512bh a, __m512bh b) {
  __asm__("vdpbf16ps %2, %1, %0%{%3%}%{z%}" : "+v"(src) : "v"(a), "v"(b), "Yk"(k));
  return src;
}"""),
    # GCC 12 declares `_mm_prefetch(const void *, enum _mm_hint)`: C++ does not convert an int to the enum
    "_mm_prefetch": ("xpt_mm_prefetch", r"""
#define xpt_mm_prefetch(p, i) _mm_prefetch((p), (enum _mm_hint)(i))"""),
}


def _kind(cat: Catalog, spelling: str) -> int:
    vt = cat.vector_of(spelling)
    if vt is not None:
        return _FLOAT_TYPES.get(vt.elem, 0)
    return _FLOAT_TYPES.get(spelling.replace("const", "").strip(), 0)


def _scalar_draw(spelling: str) -> str:
    base = spelling.replace("const", "").strip()
    if base == "float":
        return "xpt_f32()"
    if base == "double":
        return "(double)xpt_f32()"
    if base in ("long long", "unsigned long long", "__mmask64"):
        return f"({base})xpt_mask()"
    if base.startswith("__mmask"):
        return f"({base})xpt_mask()"
    return f"({base})xpt_i32()"


def _imm_combos(it) -> list[dict]:
    imm = it.test.get("imm", {})
    names = list(imm)
    if not names:
        return [{}]
    combos = [{}]
    for n in names:
        combos = [dict(c, **{n: v}) for c in combos for v in imm[n]]
    return combos


def _test_function(cat: Catalog, it, fid: int, imm: dict) -> str:
    lines = [f"static int xpt_{fid}(void) {{", f"  for (int it = 0; it < {ITERS}; ++it) {{"]
    args1, args2, mem = [], [], []
    mem_kind = _FLOAT_TYPES.get(it.test.get("mem", ""), 0)
    # `index`: vector operands whose lanes are element offsets into the memory operand (gathers,
    # scatters): drawn in [lo, hi], the pointer handed over is the middle of the buffer, so that
    # negative indices and every scale stay inside it (and indices collide: scatter order)
    index = it.test.get("index", {})
    offset = 128 if index else (0 if it.rules else 4)
    # `alike`: operands whose 8-byte chunks are each, with probability 1/3, a copy of the first
    # operand's (equal lanes of every width: compares must see their equality cases)
    alike = it.test.get("alike", [])
    for p in it.params:
        vt = cat.vector_of(p.type)
        if p.name in imm:
            args1.append(str(imm[p.name]))
            args2.append(str(imm[p.name]))
        elif vt is not None and p.name in index:
            elem, n = it.views[p.name]
            lo, hi = index[p.name]
            assert -128 <= lo * 8 and (hi + 1) * 8 <= 128, f"{it.name}: index range {lo}..{hi} leaves the buffer"
            lines.append(f"    {vt.name} {p.name}; {{ {elem} l_[{n}]; for (int i = 0; i < {n}; ++i) "
                         f"l_[i] = ({elem})({lo} + (int)(xpt_next() % {hi - lo + 1})); "
                         f"memcpy(&{p.name}, l_, sizeof {p.name}); }}")
            lines.append(f"    {vt.c} {p.name}_x; memcpy(&{p.name}_x, &{p.name}, sizeof {p.name});")
            args1.append(p.name)
            args2.append(f"{p.name}_x")
        elif vt is not None:
            lines.append(f"    {vt.name} {p.name}; xpt_fill(&{p.name}, sizeof {p.name}, {_kind(cat, p.type)});")
            if p.name in alike[1:]:
                lines.append(f"    for (int i_ = 0; i_ + 8 <= (int)sizeof {p.name}; i_ += 8) if (xpt_next() % 3 == 0) "
                             f"memcpy((char *)&{p.name} + i_, (const char *)&{alike[0]} + i_, 8);")
            lines.append(f"    {vt.c} {p.name}_x; memcpy(&{p.name}_x, &{p.name}, sizeof {p.name});")
            args1.append(p.name)
            args2.append(f"{p.name}_x")
        elif "*" in p.type:
            lines.append(f"    alignas(64) unsigned char {p.name}1[256], {p.name}2[256];")
            lines.append(f"    xpt_fill({p.name}1, 256, {mem_kind}); memcpy({p.name}2, {p.name}1, 256);")
            args1.append(f"({p.type})({p.name}1 + {offset})")
            args2.append(f"({p.name}2 + {offset})")
            mem.append(p.name)
        else:
            lines.append(f"    {cat.c_type(p.type).replace('const', '').strip()} {p.name} = "
                         f"{_scalar_draw(cat.c_type(p.type))};")
            args1.append(p.name)
            args2.append(p.name)
    call1 = f"{_NATIVE.get(it.name, (it.name,))[0]}({', '.join(args1)})"
    call2 = f"{cat.helper_name(it.name)}({', '.join(args2)})"
    label = it.name + "".join(f" {k}={v}" for k, v in imm.items())
    if it.ret != "void":
        rk = _kind(cat, it.ret)
        # `defined`: only the low bytes of the result the instruction defines are compared (widening
        # casts leave the upper part undefined; the description zeroes it)
        size = str(int(it.test["defined"])) if "defined" in it.test else "sizeof r1"
        lines.append(f"    {it.ret} r1 = {call1};")
        lines.append(f"    {cat.c_type(it.ret)} r2 = {call2};")
        same = (f"xpt_close(&r1, &r2, {size}, {rk}, {it.tolerance!r})" if it.tolerance is not None
                else f"xpt_same(&r1, &r2, {size}, {rk})")
        lines.append(f"    if (sizeof r1 != sizeof r2 || !{same}) {{"
                     f" printf(\"FAIL {it.name} result differs ({label}, iteration %d)\\n\", it); return 1; }}")
    else:
        lines.append(f"    {call1};")
        lines.append(f"    {call2};")
    for m in mem:
        lines.append(f"    if (!xpt_same({m}1, {m}2, 256, {mem_kind})) {{"
                     f" printf(\"FAIL {it.name} memory differs ({label}, iteration %d)\\n\", it); return 1; }}")
    lines += ["  }", "  return 0;", "}"]
    return "\n".join(lines)


def harness(cat: Catalog, names=None) -> str:
    """C++ source comparing each intrinsic of ``names`` (all if None) with its description."""
    names = [n for n in cat.intrinsics if names is None or n in names]
    parts = [_PRELUDE, cat.helpers_c(names), _DRIVER] + [_NATIVE[n][1] for n in names if n in _NATIVE]
    main = ["int main(void) {"]
    fid = 0
    for n in names:
        it = cat.intrinsics[n]
        calls = []
        for imm in _imm_combos(it):
            parts.append(_test_function(cat, it, fid, imm))
            calls.append(f"xpt_{fid}()")
            fid += 1
        main.append(f"  {{ int bad = 0; {' '.join(f'bad |= {c};' for c in calls)} "
                    f"if (!bad) printf(\"OK {n}\\n\"); }}")
    main += ["  return 0;", "}"]
    return "\n".join(parts + ["\n".join(main)]) + "\n"


def run_harness(cat: Catalog, names, workdir: Path) -> dict[str, str]:
    src = workdir / "vnni_intrinsics_check.cpp"
    exe = workdir / "vnni_intrinsics_check"
    src.write_text(harness(cat, names))
    build = subprocess.run(["g++", "-std=c++17", "-O1", "-march=native", "-ffp-contract=off",
                            "-fopenmp-simd", "-w", str(src), "-o", str(exe)],
                           capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stderr[-4000:]
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    status: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        word, name, *rest = line.split(" ", 2)
        if word == "OK":
            status.setdefault(name, "OK")
        else:
            status[name] = line
    return status


def _on_this_cpu(name: str) -> None:
    """Skip unless this CPU runs the intrinsic natively (AVX512_BF16 is not on every
    AVX-512 VNNI machine: g++ -march=native then refuses to inline it)."""
    isa = load().intrinsics[name].isa
    if not isa_supported(isa):
        pytest.skip(f"this CPU lacks {', '.join(isa)}: {name} is checked natively")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    cat = load()
    names = [n for n, it in cat.intrinsics.items() if isa_supported(it.isa)]
    return run_harness(cat, names, tmp_path_factory.mktemp("vnni-intrinsics"))


@native
@pytest.mark.parametrize("name", list(load().intrinsics))
def test_description_matches_the_instruction(results, name):
    _on_this_cpu(name)
    assert results.get(name) == "OK", results.get(name, f"{name}: no result (harness crashed?)")


# --------------------------------------------------------------------------- coverage and schema
_INTRINSIC = re.compile(r"\b(_mm(?:256|512)?_\w+|_k\w+_mask\d+|_cvt\w*mask\d+\w*)\s*\(")
_TYPE = re.compile(r"\b(__m(?:128|256|512)[id]?|__mmask(?:8|16|32|64))\b")
_CONST = re.compile(r"\b(_CMP_\w+|_MM_CMPINT_\w+)\b")


def _corpus_texts():
    for d in (ROOT / "xpiler" / "corpus" / "vnni", ROOT / "tests" / "samples" / "vnni"):
        for path in sorted(d.glob("*.cpp")):
            yield path, path.read_text()


def test_every_intrinsic_type_and_constant_of_the_corpus_is_described():
    cat = load()
    missing = set()
    for path, text in _corpus_texts():
        missing |= {(path.name, n) for n in _INTRINSIC.findall(text) if n not in cat.intrinsics}
        missing |= {(path.name, t) for t in _TYPE.findall(text) if t not in cat.types and t not in cat.masks}
        missing |= {(path.name, c) for c in _CONST.findall(text) if c not in cat.constants}
    assert not missing, sorted(missing)


# the wild kernels (tests/wild/vnni: simsimd, hnswlib, verbatim): every intrinsic their code (not
# their comments) calls is described, except the approximation README.md lists as not described
_WILD_CALL = re.compile(r"\b(_mm(?:256|512)?_\w+|_MM_\w+|_k\w+_mask\d+|_(?:bzhi|bextr|blsr|blsi|blsmsk|tzcnt|lzcnt|"
                        r"pdep|pext)_u\d+)\b")
_NOT_DESCRIBED = re.compile(r"_exp2a23_")


def test_every_intrinsic_of_the_wild_vnni_kernels_is_described():
    cat = load()
    missing = set()
    for path in sorted((ROOT / "tests" / "wild" / "vnni").glob("*.cpp")):
        code = re.sub(r"//[^\n]*", " ", re.sub(r"/\*.*?\*/", " ", path.read_text(), flags=re.S))
        missing |= {(path.name, n) for n in _WILD_CALL.findall(code)
                    if n not in cat.intrinsics and n not in cat.constants and not _NOT_DESCRIBED.search(n)}
    assert not missing, sorted(missing)


def test_catalogue_covers_the_families_the_design_names():
    names = set(load().intrinsics)
    for want in ("_mm512_dpbusd_epi32", "_mm512_dpbusds_epi32", "_mm512_dpwssd_epi32", "_mm512_dpwssds_epi32",
                 "_mm256_dpbusd_epi32", "_mm_dpwssds_epi32", "_mm512_mask_dpbusd_epi32",
                 "_mm512_maskz_dpwssd_epi32", "_mm512_load_si512", "_mm512_maskz_loadu_ps",
                 "_mm512_mask_storeu_ps", "_mm512_reduce_add_ps", "_mm512_reduce_max_ps", "_mm512_reduce_min_ps",
                 "_mm512_cmp_ps_mask", "_mm512_mask_blend_ps", "_kand_mask16", "_mm512_permutexvar_ps",
                 "_mm512_cvtepi32_ps", "_mm512_cvtps_epi32", "_mm512_cvtepu8_epi32", "_mm512_cvtepi8_epi32",
                 "_mm512_cvtepi32_epi8", "_mm512_packs_epi32", "_mm512_abs_ps", "_mm512_sqrt_ps",
                 "_mm512_div_ps", "_mm512_fmadd_ps", "_mm512_fmadd_pd", "_mm512_maskz_loadu_pd",
                 "_mm256_maskz_loadu_epi8", "_mm512_reduce_add_pd", "_mm512_reduce_add_epi64", "_mm512_popcnt_epi64",
                 "_mm512_unpacklo_epi8", "_mm512_subs_epu8", "_mm_hadd_ps", "_mm_cvtss_f32", "_bzhi_u32",
                 "_bzhi_u64", "_MM_SHUFFLE",
                 # the AVX2 vocabulary of 256-bit kernels (integer compares, vector-masked tails, ...)
                 "_mm256_cmpgt_epi32", "_mm256_cmpeq_epi8", "_mm256_maskload_ps", "_mm256_maskstore_epi32",
                 "_mm_maskload_pd", "_mm256_add_epi16", "_mm256_mullo_epi32", "_mm256_max_epu8", "_mm256_and_si256",
                 "_mm256_xor_ps", "_mm256_movemask_epi8", "_mm256_cvtps_epi32", "_mm256_srai_epi32",
                 "_mm256_permute2f128_ps", "_mm256_castps128_ps256", "_mm256_set1_epi64x", "_mm256_madd_epi16",
                 "_mm256_packus_epi16", "_mm256_dpbusd_avx_epi32"):
        assert want in names, want


def test_aligned_forms_carry_the_alignment_rule():
    cat = load()
    for name in ("_mm512_load_si512", "_mm512_store_si512", "_mm512_load_ps", "_mm512_store_ps"):
        assert any("63" in check for check, _ in cat.intrinsics[name].rules), name
        assert "__builtin_trap" in cat.helper_c(name)
        assert "__builtin_trap" not in cat.helper_c(name, rules=False)
    assert not cat.intrinsics["_mm512_loadu_si512"].rules


def test_loader_rejects_unknown_fields_and_bad_views():
    with pytest.raises(IntrinsicsError, match="unknown fields"):
        _expand({"name": "_mm512_x", "bodyy": ""}, {}, "t.toml")
    from platforms.vnni.intrinsics import _intrinsic
    cat = load()
    e = {"name": "_mm512_x", "source": "s", "isa": ["avx512f"], "signature": "__m512 _mm512_x(__m512 a)",
         "views": {"a": "uint8_t[16]"}, "body": "dst[j] = a[j];", "lanes": 16}
    with pytest.raises(IntrinsicsError, match="covers 16 bytes"):
        _intrinsic(e, "t.toml", cat.types, cat.masks)


def test_tolerance_is_a_relative_error_and_only_where_the_iig_leaves_results_open():
    from platforms.vnni.intrinsics import _intrinsic
    cat = load()
    e = {"name": "_mm512_x", "source": "s", "isa": ["avx512f"], "signature": "__m512 _mm512_x(__m512 a)",
         "body": "dst[j] = a[j];", "lanes": 16, "tolerance": 2}
    with pytest.raises(IntrinsicsError, match="tolerance"):
        _intrinsic(e, "t.toml", cat.types, cat.masks)
    loose = {n for n, it in cat.intrinsics.items() if it.tolerance is not None}
    assert "_mm_maskz_rsqrt14_pd" in loose
    assert all(re.search(r"_(?:rcp|rsqrt)14_", n) for n in loose), sorted(loose)
    assert {cat.intrinsics[n].tolerance for n in loose} == {2.0 ** -14}


def _mutated(name: str, **changes) -> Catalog:
    cat = load()
    intrinsics = dict(cat.intrinsics)
    intrinsics[name] = dataclasses.replace(intrinsics[name], **changes)
    return dataclasses.replace(cat, intrinsics=intrinsics)


@native
@pytest.mark.parametrize("name, changes", [
    # a treated as signed bytes (the classic dpbusd mistake)
    ("_mm512_dpbusd_epi32", {"views": {"src": ("int32_t", 16), "a": ("int8_t", 64), "b": ("int8_t", 64),
                                       "dst": ("int32_t", 16)}}),
    # clamping without the exact 64-bit sum
    ("_mm512_dpwssds_epi32", {"body": "dst[j] = xp_sat32((int64_t)src[j] + (int32_t)(a[2*j] * b[2*j] + a[2*j+1] * b[2*j+1]));"}),
    # a sequential reduction instead of GCC's tree
    ("_mm512_reduce_add_ps", {"body": "float s = 0.0f; for (int i = 0; i < 16; ++i) s += a[i]; dst = s;"}),
    # truncation instead of round-to-nearest-even
    ("_mm512_cvtps_epi32", {"needs": ("xp_cvttps_i32",), "body": "dst[j] = xp_cvttps_i32(a[j]);"}),
    # MAXPS operand order
    ("_mm512_max_ps", {"body": "dst[j] = xp_maxf(b[j], a[j]);"}),
    # a tolerance is not a licence: 2^-12 off, or a special value wrong (rsqrt14(+0) = +inf)
    ("_mm_maskz_rsqrt14_pd", {"body": "dst[j] = ((k >> j) & 1) ? (1.0 / sqrt(a[j])) * (1 + 0x1p-12) : 0.0;"}),
    ("_mm512_rsqrt14_ps", {"body": "dst[j] = a[j] == 0 ? 0.0f : (float)(1.0 / sqrt((double)a[j]));"}),
    # rcp14_ss approximates b's lane 0, not a's
    ("_mm_rcp14_ss", {"body": "dst[j] = j ? a[j] : (float)(1.0 / (double)a[0]);"}),
    # VDPBF16PS rounds after each fused step, not after an unfused product
    ("_mm512_dpbf16_ps", {"body": "dst[j] = xp_ftz(xp_ftz(xp_ftz(src[j]) + xp_bf2f_daz((uint32_t)a[2*j+1] << 16) * "
                                  "xp_bf2f_daz((uint32_t)b[2*j+1] << 16)) + xp_bf2f_daz((uint32_t)a[2*j] << 16) * "
                                  "xp_bf2f_daz((uint32_t)b[2*j] << 16));"}),
    # scalef with a directed rounding mode ignored
    ("_mm512_scalef_round_pd", {"body": "dst[j] = xp_scalefd(a[j], b[j], 4);"}),
    # a scatter whose overlapping lanes land from the highest lane down (the last write must be lane 15's)
    ("_mm512_mask_i32scatter_ps", {"body": "for (int j = 15; j >= 0; --j) if ((k >> j) & 1) "
                                           "memcpy((char *)base_addr + (int64_t)vindex[j] * scale, &a[j], sizeof a[j]);"}),
    # a gather that ignores its scale
    ("_mm512_mask_i32gather_ps", {"body": "if ((k >> j) & 1) memcpy(&dst[j], (const char *)base_addr + "
                                          "(int64_t)vindex[j] * 4, sizeof dst[j]); else dst[j] = src[j];"}),
    # roundscale losing the sign of a zero result (-0.3 -> -0.0)
    ("_mm512_roundscale_ps", {"body": "dst[j] = (float)(xp_roundscale(a[j], imm8) + 0.0);"}),
    # AVX2 compares: equal lanes must be drawn (test.alike) for eq, and for gt against ge
    ("_mm256_cmpeq_epi64", {"body": "dst[j] = 0;"}),
    ("_mm256_cmpgt_epi32", {"body": "dst[j] = a[j] >= b[j] ? (uint32_t)-1 : 0;"}),
    # a vector-masked load selecting by the mask lane's low bit instead of its sign bit
    ("_mm256_maskload_ps", {"body": "dst[j] = (mask[j] & 1) ? ((float const*)mem_addr)[j] : 0.0f;"}),
    # a vector-masked store writing every lane
    ("_mm_maskstore_epi64", {"body": "((int64_t*)mem_addr)[j] = a[j];"}),
    # a 256-bit pack across the whole vector instead of per 128-bit lane
    ("_mm256_packs_epi32", {"body": "dst[j] = xp_sat16(a[j]); dst[8 + j] = xp_sat16(b[j]);"}),
    # a widening cast is compared on the bytes it defines (test.defined)
    ("_mm256_castps128_ps256", {"body": "dst[j] = j < 4 ? a[j] ^ 1u : 0u;"}),
])
def test_the_check_catches_wrong_descriptions(tmp_path, name, changes):
    _on_this_cpu(name)
    status = run_harness(_mutated(name, **changes), [name], tmp_path)
    assert status.get(name, "").startswith("FAIL"), status
