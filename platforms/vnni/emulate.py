"""VNNI "emulation" is native execution: the file is compiled with g++ -march=native.

The translation unit includes the shared virtual-device core only for its C ABI (guarded
argument buffers, error reporting); the user's code runs unchanged on the host CPU.
Requires: the CPU has avx512_vnni when the source uses VNNI instructions (checked by
``check_host``, which raises MissingHostFeature naming the missing flag).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import platforms
from xpiler.ir.errors import MissingHostFeature

_HERE = Path(__file__).parent
INCLUDE_DIRS = [_HERE.parent / "common" / "runtime"]

# intrinsic-name prefix -> /proc/cpuinfo flags it needs
_FEATURES = [
    (re.compile(r"\b_mm(?:256|512)?_(?:mask_|maskz_)?dp(?:bus|wss)ds?_epi32\b"), ("avx512_vnni", "avx512f")),
    (re.compile(r"\b_mm(?:256)?_(?:mask_|maskz_)?dp(?:bus|wss)ds?_epi32\b"), ("avx512vl",)),
    (re.compile(r"\b_mm512_\w+"), ("avx512f",)),
    (re.compile(r"\b_mm512_\w+_(?:epi8|epi16|epu8|epu16)\b"), ("avx512bw",)),
]


@lru_cache(maxsize=1)
def host_flags() -> frozenset[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    m = re.search(r"^flags\s*:\s*(.*)$", text, re.M)
    return frozenset(m.group(1).split()) if m else frozenset()


# ISA names of the intrinsic descriptions (Intel's CPUID names) that /proc/cpuinfo spells otherwise
_CPUINFO_NAMES = {"sse3": "pni", "lzcnt": "abm", "bmi": "bmi1"}


def isa_supported(isa) -> bool:
    """This CPU has every extension of ``isa`` (an intrinsic description's ``isa`` list:
    ``avx512bf16`` is cpuinfo's ``avx512_bf16``)."""
    have = {f.replace("_", "").replace(".", "") for f in host_flags()}
    return all(_CPUINFO_NAMES.get(x, x).replace("_", "").replace(".", "") in have for x in isa)


def required_flags(source: str) -> set[str]:
    need: set[str] = set()
    for pattern, flags in _FEATURES:
        if pattern.search(source):
            need.update(flags)
    return need


def check_host(source: str, path: str = "<input>") -> None:
    missing = sorted(required_flags(source) - host_flags())
    if missing:
        raise MissingHostFeature(
            f"{path}: this CPU lacks {', '.join(missing)}, which the kernel's instructions need; "
            "run VNNI kernels on an AVX-512 VNNI machine (e.g. Cascade Lake, Ice Lake, Sapphire Rapids)")


def prepare(source: str, path: str, *, strict: bool, profile: dict) -> str:
    check_host(source, path)
    safe = path.replace("\\", "/").replace('"', '\\"')
    return f'#include "xp_core.h"\n#line 1 "{safe}"\n{source}\n'


def compile_flags(strict: bool) -> list[str]:
    return ["-march=native", "-fopenmp"]


def load_profile(name: str | None = None) -> dict:
    """The host CPU profile, ``platforms/vnni/profile.toml`` (``platforms.profile``)."""
    return platforms.profile("vnni", name)
