"""Issue 17.2: the AVX-512 / VNNI vocabulary against GCC 12's headers.

* docs/vnni-coverage.md is what tools/gen_vnni_coverage.py generates (skipped where GCC 12's x86
  headers are absent: the names come from them);
* the families issue 17 names are described in every form GCC declares;
* every described name GCC 12 declares is counted under some header (the tool reads the headers).
(The descriptions themselves are checked natively in test_vnni_intrinsics.py.)
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "gen_vnni_coverage.py"
sys.path.insert(0, str(ROOT / "tools"))
import gen_vnni_coverage as C  # noqa: E402

from platforms.vnni.intrinsics import load  # noqa: E402

headers = pytest.mark.skipif(not C.headers_present(), reason=f"GCC 12 x86 headers absent ({C.GCC_INCLUDE})")


@headers
def test_coverage_doc_is_current():
    r = subprocess.run([sys.executable, str(TOOL), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@headers
@pytest.mark.parametrize("label, pattern", C.FAMILIES, ids=[p for _, p in C.FAMILIES])
def test_issue_families_are_fully_described(label, pattern):
    described = set(load().intrinsics)
    members = C.family_members(pattern, C.declared())
    assert members, label
    assert [n for n in members if n not in described] == [], label


@headers
def test_tool_finds_functions_macros_and_aliases():
    by_header = C.declared()
    f = set(by_header["avx512fintrin.h"])
    assert {"_mm512_add_ps", "_mm512_cmp_round_ps_mask", "_kand_mask16", "_mm512_setr_epi32"} <= f
    assert "_mm_maskz_rsqrt14_pd" in by_header["avx512vlintrin.h"]
    assert "_mm512_dpbf16_ps" in by_header["avx512bf16intrin.h"]
    # a name declared by several headers counts once
    seen = [n for names in by_header.values() for n in names]
    assert len(seen) == len(set(seen))
