"""Real-world-style kernels (tests/realworld/): run on the virtual device / natively, translate.

The kernels are written the way real projects write them (grid-stride loops, ``size_t`` and
``int64_t`` indices, templates with explicit instantiation, ``float4`` loads, ``__ldg``, warp
shuffles, tiled shared-memory gemm, block reductions, ``atomicAdd``, ``extern __shared__``,
``half``, statement macros such as ``CUDA_KERNEL_LOOP``, ``hipLaunchKernelGGL``, wave64
``warpSize``, ``__ocml_*``), each with an ``xpiler.ops`` case file. Every kernel must match its
numpy reference on the virtual device; translations cuda->hip and cuda->vnni must verify for
all of them (a fast subset runs by default, the full sweep, the hip directions and the directions to
bang under ``-m slow``).

BANG C kernels in the mlu-ops / CNNL style (cnrt host code, ``taskDim`` partitions with a
remainder, ping-pong NRAM buffers, ``__mlu_shared__`` SRAM with ``__sync_cluster``, WRAM
matmul / mlp, strided ``__memcpy``) and x86 kernels in the oneDNN / ggml / MLAS / FBGEMM style
(OpenMP, masked tails, templates, packed sgemm, u8s8 ``dpbusd``) must match their references
too; their translations that verify today are pinned (a fast subset unmarked), the known
misses of the other directions are ``xfail`` with the refusal code that decides them.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from xpiler import ops
from xpiler.parse import parse_file
from xpiler.run import run_kernel
from xpiler.translate import translate

ROOT = Path(__file__).resolve().parents[1] / "realworld"
SUFFIX = {"cuda": ".cu", "hip": ".hip", "bang": ".mlu", "vnni": ".cpp"}


def _kernels(platform: str) -> list[Path]:
    return sorted(p for p in (ROOT / platform).glob(f"*{SUFFIX[platform]}") if p.with_suffix(".json").exists())


CUDA = _kernels("cuda")
HIP = _kernels("hip")
BANG = _kernels("bang")
VNNI = _kernels("vnni")
ALL = CUDA + HIP + BANG + VNNI
# one kernel per feature family, kept unmarked (seconds each): templates + warp shuffles,
# float4 + kernel-only launch, tiled shared-memory gemm, statement macro, HIP wave64 + GGL
FAST = {"rmsnorm_template.cu", "relu_float4.cu", "gemm_tiled.cu", "maxpool_nhwc.cu", "softmax_dynsmem.cu"}
FAST_HIP = {"rowsum_wave64.hip", "gelu_ocml.hip"}


def _ids(paths):
    return [f"{p.parent.name}/{p.name}" for p in paths]


def test_realworld_set_is_complete():
    assert 16 <= len(CUDA) <= 24 and 6 <= len(HIP) <= 10
    assert 10 <= len(BANG) <= 16 and 10 <= len(VNNI) <= 16
    for p in ALL:
        case = ops.load_case(p.with_suffix(".json"))
        assert case["op"] in ops.REGISTRY and case["file"] == p.name


@pytest.mark.parametrize("path", ALL, ids=_ids(ALL))
def test_runs_and_matches_reference(path):
    case = ops.load_case(path.with_suffix(".json"))
    args = ops.make_inputs(case, seed=0)
    # BANG kernels also keep the strict-mode rules (alignment, poisoned uninitialised NRAM) that
    # the verification of BANG outputs applies
    run_kernel(path, args=args, launch=case.get("launch"), timeout=120, strict=path.suffix == ".mlu")
    report = ops.check(case, args, seed=0)
    assert report.ok, report.summary()


# what a structure-preserving plan cannot map is refused with a coded diagnostic at the construct
# (never a crash or a wrong translation): a 64-lane wavefront shuffle has no 32-lane CUDA
# equivalent, so api_map refuses it; the plan's lift alternative (loop_recovery ... loop_bind)
# then translates the kernel, and that output must verify
EXPECTED_REFUSALS = {("rmsnorm_template.hip", "cuda"): ("XP-APIMAP-002", "rmsnorm_template.hip:14:")}


def _translate(path: Path, to: str, tmp_path: Path):
    rep = translate(str(path), to, str(tmp_path / (path.stem + SUFFIX[to])))
    if (path.name, to) in EXPECTED_REFUSALS:
        code, where = EXPECTED_REFUSALS[(path.name, to)]
        assert any(code in s.message and where in s.message for s in rep.steps if s.status == "refused"), \
            [s.message for s in rep.steps]
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


# ------------------------------------------------------------------ BANG and VNNI sources
# Directions from the BANG / VNNI real-world kernels. What verifies today is pinned (one fast
# kernel per direction unmarked, the rest under -m slow); the known misses are xfail (not
# strict) with the diagnostic that decides them, so a pass that starts to handle the construct
# shows up as XPASS. The causes are pass-side (loop_bind / task_bind / devcopy / indvar ...).
# measured 2026-12-03 (xpiler bench --corpus tests/realworld, session 10): 13/13 bang -> cuda / hip,
# 13/13 vnni -> cuda / hip / bang (vnni -> bang sgemm_packed: single translate, session 10)
BANG_TO_GPU: dict = {}
VNNI_TO_GPU: dict = {}
VNNI_TO_BANG: dict = {}
MISSES = {
    ("bang", "cuda"): BANG_TO_GPU,
    ("bang", "hip"): BANG_TO_GPU,
    ("vnni", "cuda"): VNNI_TO_GPU,
    ("vnni", "hip"): VNNI_TO_GPU,
    ("vnni", "bang"): VNNI_TO_BANG,
}
FAST_FROM = {("bang", "vnni"): {"rowsum_sram.mlu", "matmul_wram.mlu"}, ("vnni", "cuda"): {"maxpool_nhwc.cpp"},
             ("bang", "cuda"): {"add_pingpong.mlu"},
             ("vnni", "hip"): {"gelu_ggml.cpp"}}


def _from_params(paths, to):
    out = []
    for p in paths:
        key = (p.parent.name, to)
        miss = MISSES.get(key, {}).get(p.name)
        marks = []
        if miss:
            marks.append(pytest.mark.xfail(reason=miss, strict=False))
        if miss or p.name not in FAST_FROM.get(key, ()):
            marks.append(pytest.mark.slow)
        out.append(pytest.param(p, marks=marks, id=f"{p.parent.name}/{p.name}"))
    return out


# cuda / hip -> bang on the GPU real-world kernels (10-80 s each here: all under -m slow);
# measured 2026-12-03 (session 10): cuda -> bang 24/24, hip -> bang 8/8 (constant_symbols,
# devcopy's status-check wrappers, task_bind's wrapper-name clashes, loop_normalize's guarded
# bound): no known miss
MISSES[("cuda", "bang")] = {}
MISSES[("hip", "bang")] = {}


@pytest.mark.parametrize("path", _from_params(CUDA, "bang"))
def test_cuda_to_bang(path, tmp_path):
    _translate(path, "bang", tmp_path)


@pytest.mark.parametrize("path", _from_params(HIP, "bang"))
def test_hip_to_bang(path, tmp_path):
    _translate(path, "bang", tmp_path)


@pytest.mark.parametrize("path", _from_params(BANG, "vnni"))
def test_bang_to_vnni(path, tmp_path):
    _translate(path, "vnni", tmp_path)


@pytest.mark.parametrize("path", _from_params(BANG, "cuda"))
def test_bang_to_cuda(path, tmp_path):
    _translate(path, "cuda", tmp_path)


@pytest.mark.parametrize("path", _from_params(BANG, "hip"))
def test_bang_to_hip(path, tmp_path):
    _translate(path, "hip", tmp_path)


@pytest.mark.parametrize("path", _from_params(VNNI, "cuda"))
def test_vnni_to_cuda(path, tmp_path):
    _translate(path, "cuda", tmp_path)


@pytest.mark.parametrize("path", _from_params(VNNI, "hip"))
def test_vnni_to_hip(path, tmp_path):
    _translate(path, "hip", tmp_path)


@pytest.mark.parametrize("path", _from_params(VNNI, "bang"))
def test_vnni_to_bang(path, tmp_path):
    _translate(path, "bang", tmp_path)


# ------------------------------------------------------------------ BANG / VNNI source details
def _calls(path: Path, pattern: str) -> set[str]:
    import re

    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", path.read_text(), flags=re.S)
    return set(re.findall(pattern, text))


def test_bang_launch_facts():
    # cnrtDim3_t initialiser vs field assignments; CNRT 4 and CNRT 6 function-type spellings;
    # the CNRT_CHECK(...) statement macro around every host call
    facts = {}
    for name in ("add_pingpong", "relu_half_block", "maxpool_band", "rowsum_sram"):
        prog = parse_file(ROOT / "bang" / f"{name}.mlu")
        (launch,) = prog.launches
        facts[name] = (prog.entry.name, launch.kernel, tuple(int(d) for d in launch.dim), launch.ktype)
    assert facts["add_pingpong"] == ("add_pingpong", "MLUUnion1KernelAdd", (4, 1, 1), "CNRT_FUNC_TYPE_UNION1")
    assert facts["relu_half_block"] == ("relu_half", "relu_half_kernel", (3, 1, 1), "cnrtFuncTypeBlock")
    assert facts["maxpool_band"][2] == (4, 1, 1)
    assert facts["rowsum_sram"][2:] == ((8, 1, 1), "CNRT_FUNC_TYPE_UNION2")
    spaces = {b.name: b.space for b in parse_file(ROOT / "bang" / "rowsum_sram.mlu").buffers}
    assert spaces["sram_part"] == "sram" and spaces["x_nram"] == "nram"
    spaces = {b.name: b.space for b in parse_file(ROOT / "bang" / "dense_mlp.mlu").buffers}
    assert spaces["w_wram"] == "wram"


def test_bang_kernels_use_only_described_intrinsics():
    from platforms.bang import intrinsics as bang_intrinsics

    described = set(bang_intrinsics.names())
    used = set()
    for p in BANG:
        used |= _calls(p, r"\b(__bang_\w+|__memcpy(?:_async)?|__sync\w*)\s*\(")
    assert used - described - {"__sync", "__sync_cluster"} == set()
    assert {"__bang_matmul", "__bang_mlp", "__bang_sumpool", "__bang_maxpool", "__bang_reduce_sum",
            "__bang_active_gelup", "__bang_transpose", "__memcpy_async"} <= used


def test_vnni_kernels_use_only_described_intrinsics():
    from platforms.vnni import intrinsics as vnni_intrinsics

    described = set(vnni_intrinsics.load().intrinsics)
    used = set()
    for p in VNNI:
        used |= _calls(p, r"\b(_mm\d*_\w+|_k\w+_mask\d+)\s*\(")
    assert used and used <= described, sorted(used - described)
    assert {"_mm512_dpbusd_epi32", "_mm512_fmadd_ps", "_mm512_reduce_add_ps", "_mm512_maskz_loadu_epi8"} <= used


def test_vnni_template_instances_are_plain_functions():
    names = {f.name for f in parse_file(ROOT / "vnni" / "relu_template.cpp").functions}
    assert "relu_fwd_0_1" in names
    names = {f.name for f in parse_file(ROOT / "vnni" / "sgemm_packed.cpp").functions}
    assert {"micro_kernel_1", "pack_b_panel", "sgemm_nn"} <= names


def test_sram_partials_need_the_cluster_barrier(tmp_path):
    # the UNION2 row sum exchanges partial sums through SRAM: without __sync_cluster() core 0
    # reads the other cores' slots before they are written, and the virtual device shows it
    src = ROOT / "bang" / "rowsum_sram.mlu"
    text = src.read_text()
    assert text.count("__sync_cluster();") == 1
    bad = tmp_path / src.name
    bad.write_text(text.replace("__sync_cluster();", ";"))
    case = ops.load_case(src.with_suffix(".json"))
    args = ops.make_inputs(case, seed=0)
    run_kernel(bad, args=args, timeout=120)
    assert not ops.check(case, args, seed=0).ok


REALWORLD = Path(__file__).resolve().parents[1] / "realworld"


def _build_cases():
    import shutil

    from xpiler.bench import sources

    out = []
    for src_p, dst_p in (("cuda", "vnni"), ("hip", "vnni"), ("bang", "vnni"), ("vnni", "cuda"),
                         ("bang", "cuda"), ("hip", "cuda"), ("cuda", "hip"), ("bang", "hip"), ("vnni", "hip")):
        if shutil.which({"cuda": "nvcc", "hip": "hipcc", "vnni": "g++"}[dst_p]) is None:
            continue
        out += [pytest.param(str(p), src_p, dst_p, marks=pytest.mark.slow, id=f"{src_p}->{dst_p}/{p.name}")
                for p in sources(src_p, REALWORLD)]
    return out


@pytest.mark.parametrize("src, src_p, dst_p", _build_cases())
def test_verified_outputs_build_with_the_real_toolchain(src, src_p, dst_p, tmp_path):
    """Issue 16 point 4: a verified output builds with the real compiler present here (g++ for
    vnni, nvcc for cuda, hipcc for hip (gfx90a) where Debian's hipcc is installed; `xpiler bench
    --compile-check` does the same for whole sweeps)."""
    from xpiler.bench import run_one

    rec = run_one(src, src_p, dst_p, True, str(tmp_path))
    assert rec["status"] == "verified", rec["message"]
    assert rec["compile"] and rec["compile"]["ok"], rec["compile"]
