"""Real-world-style CUDA/HIP kernels (tests/realworld/): run on the virtual device, translate.

The kernels are written the way real projects write them (grid-stride loops, ``size_t`` and
``int64_t`` indices, templates with explicit instantiation, ``float4`` loads, ``__ldg``, warp
shuffles, tiled shared-memory gemm, block reductions, ``atomicAdd``, ``extern __shared__``,
``half``, statement macros such as ``CUDA_KERNEL_LOOP``, ``hipLaunchKernelGGL``, wave64
``warpSize``, ``__ocml_*``), each with an ``xpiler.ops`` case file. Every kernel must match its
numpy reference on the virtual device; translations cuda->hip and cuda->vnni must verify for
all of them (a fast subset runs by default, the full sweep and the hip directions under
``-m slow``).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from xpiler import ops
from xpiler.program import parse_file
from xpiler.run import run_kernel
from xpiler.translate import translate

ROOT = Path(__file__).resolve().parents[1] / "realworld"
SUFFIX = {"cuda": ".cu", "hip": ".hip", "vnni": ".cpp"}


def _kernels(platform: str) -> list[Path]:
    return sorted(p for p in (ROOT / platform).glob(f"*{SUFFIX[platform]}") if p.with_suffix(".json").exists())


CUDA = _kernels("cuda")
HIP = _kernels("hip")
ALL = CUDA + HIP
# one kernel per feature family, kept unmarked (seconds each): templates + warp shuffles,
# float4 + kernel-only launch, tiled shared-memory gemm, statement macro, HIP wave64 + GGL
FAST = {"rmsnorm_template.cu", "relu_float4.cu", "gemm_tiled.cu", "maxpool_nhwc.cu", "softmax_dynsmem.cu"}
FAST_HIP = {"rowsum_wave64.hip", "gelu_ocml.hip"}


def _ids(paths):
    return [f"{p.parent.name}/{p.name}" for p in paths]


def test_realworld_set_is_complete():
    assert 16 <= len(CUDA) <= 24 and 6 <= len(HIP) <= 10
    for p in ALL:
        case = ops.load_case(p.with_suffix(".json"))
        assert case["op"] in ops.REGISTRY and case["file"] == p.name


@pytest.mark.parametrize("path", ALL, ids=_ids(ALL))
def test_runs_and_matches_reference(path):
    case = ops.load_case(path.with_suffix(".json"))
    args = ops.make_inputs(case, seed=0)
    run_kernel(path, args=args, launch=case.get("launch"), timeout=120)
    report = ops.check(case, args, seed=0)
    assert report.ok, report.summary()


# what stays unsupported is refused with a coded diagnostic at the construct (never a crash or a
# wrong translation): a 64-lane wavefront shuffle has no 32-lane CUDA equivalent
EXPECTED_REFUSALS = {("rmsnorm_template.hip", "cuda"): ("XP-APIMAP-002", "rmsnorm_template.hip:14:")}


def _translate(path: Path, to: str, tmp_path: Path):
    rep = translate(str(path), to, str(tmp_path / (path.stem + SUFFIX[to])))
    if (path.name, to) in EXPECTED_REFUSALS:
        code, where = EXPECTED_REFUSALS[(path.name, to)]
        assert rep.status == "failed" and not rep.written
        assert any(code in s.message and where in s.message for s in rep.steps if s.status == "refused"), \
            [s.message for s in rep.steps]
        return rep
    detail = "; ".join(f"{s.name}: {s.status} {s.message[:200]}" for s in rep.steps if s.status != "verified")
    assert rep.status == "verified", f"{path.name} -> {to}: {rep.message} ({detail})"
    assert rep.written and (tmp_path / (path.stem + SUFFIX[to])).exists()
    return rep


def _params(paths, fast):
    return [pytest.param(p, marks=() if p.name in fast else pytest.mark.slow, id=f"{p.parent.name}/{p.name}")
            for p in paths]


@pytest.mark.parametrize("path", _params(CUDA, FAST))
def test_cuda_to_hip(path, tmp_path):
    _translate(path, "hip", tmp_path)


@pytest.mark.parametrize("path", _params(CUDA, FAST))
def test_cuda_to_vnni(path, tmp_path):
    _translate(path, "vnni", tmp_path)


@pytest.mark.parametrize("path", _params(HIP, FAST_HIP))
def test_hip_to_cuda(path, tmp_path):
    _translate(path, "cuda", tmp_path)


@pytest.mark.parametrize("path", _params(HIP, FAST_HIP))
def test_hip_to_vnni(path, tmp_path):
    _translate(path, "vnni", tmp_path)


# ------------------------------------------------------------------ front-end details
def test_template_instances_are_plain_functions():
    prog = parse_file(ROOT / "cuda" / "rmsnorm_template.cu")
    names = {f.decl.name for f in prog.ast.ext if hasattr(f, "decl") and hasattr(f, "body")}
    # explicit instantiation + launch -> one kernel; the device templates it uses, transitively
    assert {"rmsnorm_kernel_128", "block_sum_128", "warp_sum_float"} <= names
    assert not any(n in names for n in ("rmsnorm_kernel", "block_sum", "warp_sum"))


def test_deduced_template_argument():
    prog = parse_file(ROOT / "cuda" / "sign_branchless.cu")
    assert "sgn_float" in {f.decl.name for f in prog.ast.ext if hasattr(f, "body")}


def test_statement_macro_expanded_with_use_coordinates():
    prog = parse_file(ROOT / "cuda" / "maxpool_nhwc.cu")
    kernel = next(f for f in prog.ast.ext if hasattr(f, "body") and f.decl.name == "maxpool_nhwc_kernel")
    loop = kernel.body.block_items[0]
    assert type(loop).__name__ == "For"
    assert loop.coord.line == 12   # the CUDA_KERNEL_LOOP(...) line


def test_kernel_only_lift_uses_case_launch(tmp_path):
    # the case file's launch (2 blocks of 128 over 777 elements with a grid-stride loop) must be
    # the one the lifted entry runs; the default launch would give the same result here, so the
    # check is on the lifted text
    src = ROOT / "cuda" / "sign_branchless.cu"
    _translate(src, "vnni", tmp_path)
    text = (tmp_path / "sign_branchless.cpp").read_text()
    assert "xp_dim3(2, 1, 1), xp_dim3(128, 1, 1)" in text.replace("xp_dim3(2,1,1)", "xp_dim3(2, 1, 1)")


def test_case_files_parse():
    for p in ALL:
        json.loads(p.with_suffix(".json").read_text())
        parse_file(p)
