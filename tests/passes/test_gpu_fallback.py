"""The cuda <-> hip lift-and-lower fallback (wmma / MFMA kernels api_map cannot map): devcopy's
read-only helper arguments, runtime stand-ins dropped by loop_bind, null-guard folding."""
from __future__ import annotations

from pathlib import Path

import pytest
from pycparser import c_ast

from passes.cleanup import devcopy
from passes.lower import loop_bind
from xpiler.parse import parse_source

CORPUS = Path(__file__).resolve().parents[2] / "xpiler" / "corpus"

KERNEL = '''
static void load_tile(float (*F)[4], const float *p, int ld) {
  for (int r = 0; r < 4; ++r) for (int c = 0; c < 4; ++c) F[r][c] = p[r * ld + c];
}
static void bump(float *p) { p[0] += 1.0f; }
static void k(float *A, float *B, float *out) {
  float F[4][4];
  load_tile(F, &A[4], 8);
  bump(&B[2]);
  out[0] = F[0][0];
}
extern "C" void entry(float *A, float *B, float *out) { k(A, B, out); }
'''


def _defs():
    prog = parse_source(KERNEL, "vnni", "<t>.cpp")
    return {e.decl.name: e for e in prog.ast.ext if isinstance(e, c_ast.FuncDef)}


def test_address_passed_to_a_read_only_helper_is_not_a_write():
    defs = _defs()
    assert not devcopy._param_written(defs["k"], "A", defs, 0)     # &A[4] only read by load_tile
    assert devcopy._param_written(defs["k"], "B", defs, 0)         # bump writes through &B[2]
    assert devcopy._param_written(defs["k"], "out", defs, 0)


def test_runtime_defines_the_lifts_math_stand_ins():
    for to in ("cuda", "hip"):
        names = loop_bind.runtime_functions(to)
        assert {"__expf", "__fdividef", "__float_as_int"} <= names
        assert "xp_malloc" not in names and "expf" not in names


@pytest.mark.parametrize("src,to", [("cuda/bmm_2_32_64_32.cu", "hip")])
def test_wmma_kernel_verified_through_the_fallback(src, to, tmp_path, monkeypatch):
    from xpiler.translate import PLANS, translate

    # the fallback itself: without the structure-preserving plans tried before it
    pair = (src.split("/")[0], to)
    monkeypatch.setitem(PLANS, pair, [p for p in PLANS[pair] if p.startswith("loop_recovery")])
    rep = translate(str(CORPUS / src), to, str(tmp_path / "out"))
    assert rep.status == "verified", [s.to_json() for s in rep.steps]
    assert rep.pipeline.startswith("loop_recovery") and rep.pipeline.endswith(f"loop_bind{{to={to}}},host_heap")


@pytest.mark.slow
@pytest.mark.parametrize("src,to", [("cuda/mha_1_4_32_32.cu", "hip"),      # shuffles: null guards folded
                                    ("cuda/dense_16_128_64.cu", "hip"),
                                    ("hip/mha_1_4_32_32.hip", "cuda")])
def test_more_matrix_kernels_verified_through_the_fallback(src, to, tmp_path, monkeypatch):
    test_wmma_kernel_verified_through_the_fallback(src, to, tmp_path, monkeypatch)
