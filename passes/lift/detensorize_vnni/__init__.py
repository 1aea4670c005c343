"""detensorize_vnni: x86 AVX-512 / VNNI intrinsics -> scalar C over lane arrays.

Summary
    Replaces every vector type (``__m512``, ``__m512i``, ``__m256i``, ...) by a small struct
    holding its lane array (``xp_m512`` = ``struct { float v[16]; }``), every mask type by its
    unsigned integer (``__mmask16`` -> ``unsigned short``, as GCC defines it), every immediate
    macro (``_CMP_LT_OQ``) by its value, and every intrinsic call ``_mm512_X(...)`` by a call to
    its scalar C reference ``xp_mm512_X(...)``. The references are rendered from the one
    description of each intrinsic in ``platforms/vnni/intrinsics`` (the code the native
    bit-exact test checks) and are added to the program as ``static inline`` functions whose
    lane loops carry ``#pragma omp simd``. The result is canonical sequential C++: no
    ``<immintrin.h>``, no intrinsic, the ``extern "C"`` entry unchanged, still a vectorisable
    CPU program (GCC turns the lane loops and ``memcpy`` views back into vector code).
Requires
    1. The program is a vnni program (XP-DETENSOR-VNNI-000).
    2. Every intrinsic, immintrin constant and vector type it names has a description
       (XP-DETENSOR-VNNI-001 names the intrinsic and its file:line:col; XP-DETENSOR-VNNI-002 a
       vector type without description, e.g. ``__m512h``).
    3. Vector values are used only through intrinsics, declarations, plain assignment, function
       arguments/returns, ``&`` and ``sizeof``: no GCC vector-extension operators (``a + b``,
       ``v[3]``, ``v += w``), value casts between vector types or brace initialisers of vectors
       (XP-DETENSOR-VNNI-003; their lane meaning is not described).
    4. The program declares none of the names the pass introduces (``xp_m512``, ``xp_mm512_*``,
       support functions) (XP-DETENSOR-VNNI-004).
Guarantees
    Same outputs on the virtual device (each rewritten program is run against its source on the
    same inputs by the driver); every intrinsic behaves as its description, which is bit-exact
    with the instruction (floats: NaN payloads aside); a described rule (64-byte alignment of
    aligned loads/stores) traps when violated, as the instruction faults. Macro bodies
    (``#define``) are rewritten the same way. Input untouched.
Options
    rules (bool, default true): keep the descriptions' rules as ``__builtin_trap()`` checks;
    false drops them (for targets without a trap, or when alignment is proven elsewhere).
Example
    ``__m512 v = _mm512_maskz_loadu_ps(m, x + j);``  ->  ``xp_m512 v = xp_mm512_maskz_loadu_ps(m, x + j);``
    with, added once at the top of the file::

        typedef struct { float v[16]; } xp_m512;
        static inline xp_m512 xp_mm512_maskz_loadu_ps(unsigned short k, const void *mem_addr) {
          float dst[16];
          #pragma omp simd
          for (int j = 0; j < 16; ++j) dst[j] = ((k >> j) & 1) ? ((const float *) mem_addr)[j] : 0.0f;
          xp_m512 r; memcpy(&r, dst, sizeof r); return r;
        }

Limits
    The references are called, not inlined into the caller's loops: the result is canonical C
    for a CPU (GCC inlines and re-vectorises them; float kernels run at 1.1-1.2x the intrinsic
    time, dpbusd GEMMs about 4x since nothing re-forms VPDPBUSD), but a loop-level analysis that
    cannot see through calls (``passes/analysis/affine`` treats helpers with pointer parameters or
    lane-array writes as having unknown effects) does not yet accept them.

Diagnostic codes (pass-local; ``XP-DETENSOR-VNNI-nnn``)
    000 not a vnni program; 001 intrinsic / immintrin constant without description;
    002 vector type without description; 003 vector value used outside intrinsics;
    004 name clash with a name the pass introduces.
"""
from __future__ import annotations

import copy
import re
from dataclasses import replace

from pycparser import c_ast

from xpiler.ir.errors import Coord, Diagnostic

from passes.base import Option, PassInfo, register
from passes.lift.detensorize_vnni.rewrite import (HELPER_FILE, INTRINSIC_LIKE, X86_HEADERS, DeclaredNames, Uses, VectorMisuse,
                           helper_ast, rewrite_ast, rewrite_macro_text)

PASS = "detensorize_vnni"
VECTOR_WORDS = frozenset("""__m512i __m512 __m512d __m512h __m512bh __m256i __m256 __m256d __m256h __m256bh
__m128i __m128 __m128d __m128h __m128bh __m64 __bf16 __mmask8 __mmask16 __mmask32 __mmask64""".split())


def _catalog():
    import platforms

    return platforms.intrinsics("vnni")


def _coord(program, c) -> Coord:
    if c is None:
        return Coord(program.path)
    return Coord(getattr(c, "file", None) or program.path, getattr(c, "line", 0) or 0,
                 getattr(c, "column", 0) or 0)


def _diag(program, code: str, message: str, coord, construct=None) -> Diagnostic:
    return Diagnostic(f"XP-DETENSOR-VNNI-{code}", message, _coord(program, coord), construct=construct,
                      pass_name=PASS)


@register(PassInfo(
    name=PASS,
    summary="x86 AVX-512/VNNI intrinsics -> scalar C over lane arrays (descriptions in platforms/vnni/intrinsics)",
    options={"rules": Option(bool, True, "keep the descriptions' rules (alignment) as __builtin_trap() checks")},
    requires=("program is vnni",
              "every intrinsic, immintrin constant and vector type has a description",
              "vector values only used through intrinsics, declarations, assignment, calls, & and sizeof",
              "no declared name clashes with xp_* names the pass introduces"),
    guarantees=("same outputs on the virtual device", "no intrinsic and no <immintrin.h> left",
                "extern \"C\" entry unchanged", "lane loops carry #pragma omp simd (reduction "
                "loops none: their clause would name a local that inlining renames)"),
    introduces=("xp_m* lane-array structs", "static inline xp_* scalar reference functions",
                "#pragma omp simd"),
))
def detensorize_vnni(program, *, rules: bool = True):
    cat = _catalog()
    ast = copy.deepcopy(program.ast)
    used_intrinsics, used_types = rewrite_ast(ast, cat)
    facts = copy.deepcopy(program.facts)
    preamble = []
    for line in facts.get("preamble", []):
        if re.match(r"\s*#\s*include\s*[<\"](" + X86_HEADERS + r")[>\"]", line):
            continue
        if re.match(r"\s*#\s*define\b", line):
            line, more_i, more_t = rewrite_macro_text(line, cat)
            used_intrinsics |= more_i
            used_types |= more_t
        preamble.append(line)
    for name, d in facts.get("defines", {}).items():
        if isinstance(d, dict) and isinstance(d.get("body"), str):
            d["body"], _, _ = rewrite_macro_text(d["body"], cat)
    have = {m.group(1) for l in preamble for m in [re.match(r"\s*#\s*include\s*<([^>]+)>", l)] if m}
    needed = [h for h in ("stdint.h", "string.h", "math.h") if h not in have]
    facts["preamble"] = [f"#include <{h}>" for h in needed] + preamble
    if "includes" in facts:
        facts["includes"] = needed + [h for h in facts["includes"]
                                      if not re.fullmatch(X86_HEADERS, str(h))]
    if used_intrinsics or used_types:
        helpers = helper_ast(cat, used_intrinsics, used_types, rules=rules)
        for h in helpers:
            _drop_reduction_pragmas(h)
        ast.ext[0:0] = helpers
    return replace(program, ast=ast, facts=facts, source="", intrinsics=[])


def _drop_reduction_pragmas(node) -> None:
    """Remove ``#pragma omp simd reduction(op:var)`` lines from rendered helpers: the clause
    names a local of the helper, which ``inline`` renames (the pragma text would then name
    an undeclared variable); without the pragma the lane loop is the same sequential loop.
    ``#pragma omp simd`` lines without a clause stay."""
    from pycparser import c_ast as _c
    for _, child in node.children():
        _drop_reduction_pragmas(child)
    if isinstance(node, _c.Compound) and node.block_items:
        node.block_items = [x for x in node.block_items
                            if not (isinstance(x, _c.Pragma) and
                                    re.match(r"\s*omp\s+simd\b.*\breduction\s*\(", x.string))]


@detensorize_vnni.legality
def _legal(program, *, rules: bool = True) -> list[Diagnostic]:
    if program.platform != "vnni":
        return [_diag(program, "000", f"detensorize_vnni rewrites vnni programs, not {program.platform}",
                      None)]
    cat = _catalog()
    problems: list[Diagnostic] = []
    uses = Uses()
    uses.visit(program.ast)
    seen = set()
    for name, coord in uses.ids:
        if INTRINSIC_LIKE.match(name) and name not in cat.intrinsics and name not in cat.constants \
                and (name, str(coord)) not in seen:
            seen.add((name, str(coord)))
            problems.append(_diag(program, "001", f"'{name}' has no description in platforms/vnni/intrinsics "
                                  "(add an entry with its scalar C body, checked natively by "
                                  "tests/platforms/test_vnni_intrinsics.py)", coord, name))
    for name, d in program.facts.get("defines", {}).items():
        body = d.get("body") if isinstance(d, dict) else None
        for word in re.findall(r"\b\w+\b", body or ""):
            if INTRINSIC_LIKE.match(word) and word not in cat.intrinsics and word not in cat.constants:
                problems.append(_diag(program, "001", f"'{word}' (in macro {name}) has no description in "
                                      "platforms/vnni/intrinsics", Coord(program.path, d.get("line", 0), 1),
                                      word))
    for name, coord in uses.types:
        if name in VECTOR_WORDS and name not in cat.types and name not in cat.masks:
            problems.append(_diag(program, "002", f"vector type '{name}' has no description in "
                                  "platforms/vnni/intrinsics/types.toml", coord, name))
    misuse = VectorMisuse(set(cat.types))
    misuse.visit(program.ast)
    for what, coord in misuse.found:
        problems.append(_diag(program, "003", f"{what}: the lane meaning of GCC vector-extension "
                              "operations is not described; write it with intrinsics", coord))
    declared = DeclaredNames()
    declared.visit(program.ast)
    introduced = ({cat.helper_name(n) for n in cat.intrinsics} | {t.c for t in cat.types.values()}
                  | set(cat.support))
    for name, coord in declared.names:
        if name in introduced:
            problems.append(_diag(program, "004", f"'{name}' is declared by the program but is a name "
                                  "detensorize_vnni introduces", coord, name))
    return problems


__all__ = ["detensorize_vnni", "HELPER_FILE"]
