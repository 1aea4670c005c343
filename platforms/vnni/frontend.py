"""x86 AVX-512 VNNI front-end: plain C/C++ with ``immintrin.h`` intrinsics -> Program.

Shared normalisation: ``platforms/common/lexer.py``. Every function is a host function; the
entry is the ``extern "C"`` function (else the single function nothing else calls) and roles
come from the body directly, including ``_mm512_storeu_si512``-style stores and loads.
"""
from __future__ import annotations

from xpiler.ir.program import Program

from platforms.common.dialect import Dialect
from platforms.common.frontend import parse_program

VNNI_TYPES = frozenset("""
__m512i __m512 __m512d __m512h __m256i __m256 __m256d __m128i __m128 __m128d __m128h __mmask8
__mmask16 __mmask32 __mmask64 __bf16
""".split())

DIALECT = Dialect(
    name="vnni",
    kernel_specifiers=frozenset(),
    device_specifiers=frozenset(),
    function_specifiers=frozenset(),
    memory_spaces=frozenset(),
    types=VNNI_TYPES,
    predefined={"__AVX512F__": "1", "__AVX512VNNI__": "1", "__AVX512VL__": "1",
                "__AVX512BW__": "1", "__x86_64__": "1", "__GNUC__": "12", "__cplusplus": "201703"},
)


def parse(text: str, path: str = "<input>", entry: str | None = None) -> Program:
    """Parse VNNI C/C++ source text (raises ``SourceError`` with XP1nnn diagnostics)."""
    return parse_program(text, DIALECT, path=path, entry=entry)
