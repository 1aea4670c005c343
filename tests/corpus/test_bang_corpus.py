"""The BANG C corpus: every kernel runs on the virtual device in strict mode and matches xpiler.ops.

Default run: one shape per operator (the first by name); the other shapes are marked ``slow``
(``pytest -m slow tests/corpus/test_bang_corpus.py``). Kernels run with ``strict=True``:
besides matching the reference they must respect the rules of real hardware (memory spaces,
operand alignment, WRAM operands, capacities, poisoned fresh memory).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import xpiler.ops as ops
from xpiler.corpus import CORPUS_DIR, entries
from xpiler.ir.errors import OutOfBoundsAccess, StrictModeViolation

ROOT = Path(__file__).resolve().parents[2]
BANG = entries("bang")
LAUNCH_TYPES = {"union1", "union4", "block"}


def _default_names() -> set[str]:
    first: dict[str, str] = {}
    for e in BANG:                       # entries() is sorted by name
        first.setdefault(e.op, e.name)
    return set(first.values())


DEFAULT = _default_names()
CASES = [pytest.param(e, id=e.name, marks=() if e.name in DEFAULT else pytest.mark.slow)
         for e in BANG]


def bang_skip_reason() -> str | None:
    try:
        import platforms.bang.emulate  # noqa: F401
        import platforms.bang.frontend  # noqa: F401
    except ImportError as exc:  # the virtual device is not there (yet)
        return f"the BANG virtual device is not available: {exc}"
    if not shutil.which(os.environ.get("CXX", "g++")):
        return f"no C++ compiler ({os.environ.get('CXX', 'g++')}) on PATH"
    return None


@pytest.fixture(scope="module")
def bang_device():
    reason = bang_skip_reason()
    if reason:
        pytest.skip(reason)
    from xpiler import run_kernel

    return run_kernel


def _run(run_kernel, entry, case, seed, *, source=None, strict=True):
    args = ops.make_inputs(case, seed)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_kernel(entry.source, entry=case["entry"], args=args, launch=case.get("launch"),
               strict=strict, source=source, timeout=120)
    return ops.check(case, args, inputs=before)


# ----------------------------------------------------------------------------- corpus shape
def test_every_operator_has_at_least_two_shapes():
    counts: dict[str, int] = {}
    for e in BANG:
        counts[e.op] = counts.get(e.op, 0) + 1
    assert set(counts) == set(ops.REGISTRY), set(ops.REGISTRY) ^ set(counts)
    assert all(n >= 2 for n in counts.values()), {k: v for k, v in counts.items() if v < 2}


def test_every_file_has_a_case_and_vice_versa():
    d = CORPUS_DIR / "bang"
    assert {p.stem for p in d.glob("*.mlu")} == {p.stem for p in d.glob("*.json")}


def test_both_styles_are_present():
    """Kernel-only files (with a launch) and CNRT host wrappers (without) both occur."""
    kinds = {"launch" in e.case for e in BANG}
    assert kinds == {True, False}
    types = {e.case["launch"]["type"] for e in BANG if "launch" in e.case}
    assert types == LAUNCH_TYPES


def test_generator_output_is_committed():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_corpus_bang.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("entry", BANG, ids=[e.name for e in BANG])
def test_case_matches_program(entry):
    """The front-end's view of the file (entry, kind, params) agrees with the case file."""
    bang_skip = bang_skip_reason()
    if bang_skip:
        pytest.skip(bang_skip)
    from xpiler.parse import parse_source

    case = entry.case
    assert case["name"] == entry.name and case["file"] == entry.source.name
    assert [int(v) for v in entry.name.split("_")[1:]] == case["args"]
    text = entry.source.read_text()
    prog = parse_source(text, "bang", str(entry.source))
    assert prog.entry is not None and prog.entry.name == case["entry"]
    got = [(p.name, p.dtype, p.role) for p in prog.entry.params]
    assert got == [(p["name"], p["dtype"], p["role"]) for p in case["params"]]
    if "launch" in case:             # kernel-only file: the entry is the __mlu_global__ kernel
        assert prog.entry.kind == "kernel"
        assert case["launch"]["type"] in LAUNCH_TYPES
        assert case["launch"]["clusters"] * case["launch"]["cores"] == 16
    else:                            # CNRT host wrapper extern "C" <op>_kernel(...)
        assert prog.entry.kind == "host" and case["entry"] == f"{case['op']}_kernel"
        for api in ("cnrtQueueCreate", "cnrtMalloc", "CNRT_MEM_TRANS_DIR_HOST2DEV", "<<<",
                    "cnrtQueueSync", "CNRT_MEM_TRANS_DIR_DEV2HOST", "cnrtFree"):
            assert api in text, api
    assert "__memcpy(" in text and "__nram__" in text


# ----------------------------------------------------------------------------- runs
@pytest.mark.parametrize("entry", CASES)
def test_kernel_matches_reference(entry, bang_device):
    for seed in (0, 1):
        report = _run(bang_device, entry, entry.case, seed)
        assert report.ok, report.summary()


def _mutated(name: str, old: str, new: str) -> tuple:
    e = next(e for e in BANG if e.name == name)
    text = e.source.read_text()
    assert old in text, (name, old)
    return e, text.replace(old, new, 1)


@pytest.mark.parametrize("name,old,new", [
    # wrong fix_position: every product scaled by 2 instead of 1
    ("gemm_32_128_128", "#define FIX_POSITION 0", "#define FIX_POSITION 1"),
    # softmax without the normalisation by the row sums
    ("softmax_512_64", "  __bang_recip(v_nram, v_nram, RP);\n", ""),
    # conv with the window over a stale row: stride 2 read as 1 for the band start
    ("conv2d_2_9_9_64_128_3_3_64_2_0", "oh * STRIDE) * W * C", "oh) * W * C"),
    # gather reading the row after the indexed one
    ("gather_64_256", "data + idx_nram[i] * COLS", "data + (idx_nram[i] + 1) % ROWS * COLS"),
])
def test_broken_kernel_is_caught(name, old, new, bang_device):
    e, text = _mutated(name, old, new)
    report = _run(bang_device, e, e.case, 0, source=text)
    assert not report.ok, report.summary()


def test_tail_overrun_is_caught(bang_device):
    """Storing the padded tail (n_align) instead of n elements runs past the output."""
    e, text = _mutated("sign_45_25", "__memcpy(out + start + off, out_nram, n * sizeof(float)",
                       "__memcpy(out + start + off, out_nram, n_align * sizeof(float)")
    with pytest.raises(OutOfBoundsAccess):
        _run(bang_device, e, e.case, 0, source=text)


def test_matmul_filter_outside_wram_is_a_strict_violation(bang_device):
    """Same numbers, but __bang_matmul's src1 in NRAM: fine in lenient mode, rejected in strict."""
    e, text = _mutated("gemm_32_128_128", "__bang_matmul(c_nram, a_nram, b_wram,",
                       "__bang_matmul(c_nram, a_nram, bt_nram,")
    assert _run(bang_device, e, e.case, 0, source=text, strict=False).ok
    with pytest.raises(StrictModeViolation):
        _run(bang_device, e, e.case, 0, source=text, strict=True)
