"""HIP on the CPU virtual device (wavefront = 64 lanes). Same API as platforms/cuda/emulate.py::

    prepare(source, path, *, strict, profile) -> str
    INCLUDE_DIRS, compile_flags(strict), load_profile(name=None)

On top of the CUDA rewrites (launches, kernel entry hook, __shared__, stubs) it:

* rewrites clang vector typedefs (``typedef float floatx4 __attribute__((ext_vector_type(4)))``,
  ``using v = T __attribute__((__vector_size__(N)))``) into ``xp::gpu::ext_vec<T, N>``, since g++
  has no ext_vector_type;
* maps ``_Float16`` / ``__fp16`` to the runtime's binary16 type;
* generates the MFMA builtins from ``platforms/hip/intrinsics/mfma.toml`` (lane maps as data).
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import platforms
from platforms.common.emulate_util import apply_edits, mask_code
from platforms.cuda import emulate as _cuda

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
INCLUDE_DIRS: list[Path] = [HERE / "runtime", ROOT / "common" / "gpu_runtime", ROOT / "common" / "runtime"]
PLATFORM = "hip"
MFMA_TOML = HERE / "intrinsics" / "mfma.toml"


def load_profile(name: str | None = None) -> dict:
    """The device profile from ``platforms/hip/profile.toml``."""
    return platforms.profile(PLATFORM, name)


def compile_flags(strict: bool) -> list[str]:
    return _cuda.compile_flags(strict)


# ------------------------------------------------------------------------------------------ MFMA
def load_mfma() -> list[dict]:
    with open(MFMA_TOML, "rb") as f:
        return tomllib.load(f)["intrinsic"]


def _cxx_type(t: str) -> str:
    m = re.fullmatch(r"(float|half)x(\d+)", t)
    if m:
        base = "float" if m.group(1) == "float" else "__half"
        return f"::xp::gpu::ext_vec<{base}, {m.group(2)}>"
    return {"float": "float", "half": "__half"}[t]


_EXPR = re.compile(r"^[\sLr0-9+\-*/%()]+$")


def mfma_code(intrinsics: list[dict] | None = None) -> str:
    """C++ for every MFMA builtin in mfma.toml: a lane-map struct + the builtin wrapper."""
    out = ["// ---- generated from platforms/hip/intrinsics/mfma.toml by platforms/hip/emulate.py"]
    for it in intrinsics or load_mfma():
        name = it["name"]
        short = name.replace("__builtin_amdgcn_", "")
        for key in ("a_map", "b_map", "d_map"):
            for e in it[key]:
                if not _EXPR.match(e):
                    raise ValueError(f"{name}: {key} expression {e!r} may only use L, r, integers, + - * / % ( )")
        at, ct = _cxx_type(it["a_type"]), _cxx_type(it["c_type"])
        fn = lambda nm, e: f"  static int {nm}(int L, int r) {{ (void)L; (void)r; return {e}; }}"  # noqa: E731
        out += [
            f"struct __xp_mfma_map_{short} {{",
            f"  enum {{ M = {int(it['m'])}, N = {int(it['n'])}, K = {int(it['k'])} }};",
            f"  static const char *name() {{ return \"{name}\"; }}",
            fn("a_row", it["a_map"][0]), fn("a_col", it["a_map"][1]),
            fn("b_row", it["b_map"][0]), fn("b_col", it["b_map"][1]),
            fn("d_row", it["d_map"][0]), fn("d_col", it["d_map"][1]),
            "};",
            f"inline {ct} {name}({at} a, {at} b, {ct} c, int cbsz, int abid, int blgp) {{",
            f"  return ::xp::gpu::mfma<__xp_mfma_map_{short}, {at}, {ct}>(a, b, c, cbsz, abid, blgp);",
            "}",
        ]
    return "\n".join(out)


# ------------------------------------------------------------------------------------------ vectors
_VEC_ATTR = re.compile(r"__attribute__\s*\(\(\s*(__ext_vector_type__|ext_vector_type|__vector_size__|vector_size)"
                       r"\s*\((?P<arg>[^()]*(?:\([^()]*\)[^()]*)*)\)\s*\)\)")


def rewrite_vector_types(text: str) -> str:
    """typedef/using declarations with ext_vector_type / vector_size -> xp::gpu::ext_vec<T, N>."""
    masked = mask_code(text)
    edits = []
    end = -1
    for m in re.finditer(r"\b(typedef|using)\b", masked):
        if m.start() < end:
            continue                 # inside the statement just looked at (linear, not quadratic)
        end = masked.find(";", m.end())
        if end < 0:
            break
        stmt_m = masked[m.start():end]
        am = _VEC_ATTR.search(stmt_m)
        if not am:
            continue
        stmt = text[m.start():end]
        arg = stmt[am.start("arg"):am.end("arg")].strip()
        rest = (stmt[:am.start()] + " " + stmt[am.end():]).strip()
        kind = am.group(1)
        if m.group(1) == "typedef":
            mm = re.match(r"typedef\s+(.*?)\s*\b([A-Za-z_]\w*)\s*$", " ".join(rest.split()))
            if not mm:
                continue
            base, name = mm.group(1), mm.group(2)
        else:
            mm = re.match(r"using\s+([A-Za-z_]\w*)\s*=\s*(.*?)\s*$", " ".join(rest.split()))
            if not mm:
                continue
            name, base = mm.group(1), mm.group(2)
        base = base.strip()
        count = f"({arg})" if "ext_vector" in kind else f"(({arg}) / sizeof({base}))"
        repl = f"typedef ::xp::gpu::ext_vec<{base}, {count}> {name}"
        edits.append((m.start(), end, repl + "\n" * stmt.count("\n")))
    return apply_edits(text, edits)


def _hip_transform(text: str) -> str:
    masked = mask_code(text)
    # _Float16 / __fp16 -> __xp_f16 (same length not needed: no newlines involved)
    out, pos = [], 0
    for m in re.finditer(r"\b(_Float16|__fp16)\b", masked):
        out.append(text[pos:m.start()])
        out.append("__xp_f16")
        pos = m.end()
    out.append(text[pos:])
    return rewrite_vector_types("".join(out))


def prepare(source: str, path: str, *, strict: bool, profile: dict) -> str:
    """One C++17 translation unit: runtime + MFMA builtins + the user's code + launcher stubs."""
    arch = str(profile.get("arch", "gfx90a"))
    defines = [f'#define XP_HIP_ARCH_NAME "{arch}"', f"#define __{arch}__ 1", "#define __AMDGCN__ 1",
               f"#define __AMDGCN_WAVEFRONT_SIZE {int(profile.get('warp_size', 64))}"]
    return _cuda.build_unit(source, path, strict=strict, profile=profile, platform=PLATFORM,
                            prologue_header="xp_hip.h", extra_defines=defines, extra_code=mfma_code(),
                            transform=_hip_transform)
