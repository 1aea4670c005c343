"""The AVX-512 VNNI corpus: every kernel builds, runs natively and matches xpiler.ops."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xpiler.ops as ops
from xpiler.corpus import CORPUS_DIR, entries

ROOT = Path(__file__).resolve().parents[2]
VNNI = entries("vnni")
IDS = [e.name for e in VNNI]


def test_every_operator_has_at_least_two_shapes():
    counts: dict[str, int] = {}
    for e in VNNI:
        counts[e.op] = counts.get(e.op, 0) + 1
    assert set(counts) == set(ops.REGISTRY), set(ops.REGISTRY) ^ set(counts)
    assert all(n >= 2 for n in counts.values()), {k: v for k, v in counts.items() if v < 2}


def test_every_file_has_a_case_and_vice_versa():
    d = CORPUS_DIR / "vnni"
    srcs = {p.stem for p in d.glob("*.cpp")}
    cases = {p.stem for p in d.glob("*.json")}
    assert srcs == cases


def test_generator_output_is_committed():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_corpus_vnni.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


_SIG = re.compile(r'extern\s+"C"\s+void\s+(\w+)\s*\(([^)]*)\)')


@pytest.mark.parametrize("entry", VNNI, ids=IDS)
def test_case_matches_source_signature(entry):
    case = entry.case
    assert case["name"] == entry.name and case["file"] == entry.source.name
    assert entry.name.startswith(case["op"] + "_")
    assert [int(v) for v in entry.name.split("_")[1:]] == case["args"]
    sigs = _SIG.findall(entry.source.read_text())
    assert [s[0] for s in sigs] == [case["entry"]] == [f"{case['op']}_kernel"]
    decls = [d.strip() for d in sigs[0][1].split(",")]
    assert len(decls) == len(case["params"])
    ctype = {"float32": "float", "int32": "int32_t", "uint8": "uint8_t", "int8": "int8_t"}
    for decl, p in zip(decls, case["params"]):
        assert decl.split()[-1].lstrip("*") == p["name"], (decl, p["name"])
        if p["role"] == "scalar":
            assert "*" not in decl and decl.split()[0] == "int"
        else:
            assert "*" in decl and ctype[p["dtype"]] in decl, (decl, p)
            assert decl.startswith("const ") == (p["role"] == "input"), decl


def _run(native, so, case, seed):
    args = ops.make_inputs(case, seed)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    native.call(so, case["entry"], case["params"], args)
    return ops.check(case, args, inputs=before), args


@pytest.mark.parametrize("entry", VNNI, ids=IDS)
def test_kernel_matches_reference(entry, vnni_native, vnni_builds):
    so = vnni_builds[entry.source]
    if isinstance(so, Exception):
        pytest.fail(str(so))
    for seed in (0, 1):
        report, _ = _run(vnni_native, so, entry.case, seed)
        assert report.ok, report.summary()


def test_unwritten_output_is_caught(vnni_native, vnni_builds):
    """Outputs start poisoned (NaN): a run that skips the last element fails the check."""
    e = next(e for e in VNNI if e.name == "add_4_1000")
    case = e.case
    args = ops.make_inputs(case, 0)
    args[3] = args[3] - 1                      # the int n parameter
    vnni_native.call(vnni_builds[e.source], case["entry"], case["params"], args)
    report = ops.check(case, args, seed=0)
    assert not report.ok
    assert report.outputs[0].mismatches == 1
    assert report.outputs[0].first_mismatch["index"] == [3, 999]


@pytest.mark.parametrize("name,old,new", [
    # truncating instead of rounding when quantising: the exact reference must notice
    ("gemm_17_60_40", "_mm512_cvtps_epi32(", "_mm512_cvttps_epi32("),
    # forgetting the zero-point compensation of the unsigned activations
    ("dense_10_100_33", "- 128 * rowsum[j]", "- 0 * rowsum[j]"),
    # a float kernel with an off-by-one window
    ("avgpool_2_9_9_20_3_3_2_2", "for (int j = 0; j < KW; ++j)", "for (int j = 0; j < KW - 1; ++j)"),
])
def test_broken_kernel_is_caught(name, old, new, vnni_native, tmp_path):
    e = next(e for e in VNNI if e.name == name)
    text = e.source.read_text()
    assert old in text
    bad = tmp_path / e.source.name
    bad.write_text(text.replace(old, new))
    so = vnni_native.build(bad)
    report, _ = _run(vnni_native, so, e.case, 0)
    assert not report.ok, report.summary()
