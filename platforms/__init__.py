"""Platform plug-ins: one subpackage per platform, looked up by name.

Each subpackage provides (see ``platforms/base.py``): ``frontend`` (source -> Program),
``backend`` (Program -> source), ``emulate`` (source -> C++ for the virtual device),
``intrinsics/`` (data files: one home per special instruction) and ``profile.toml``.
"""
from __future__ import annotations

import importlib
import re
from pathlib import Path

PLATFORMS = ("cuda", "hip", "bang", "vnni")
ALIASES = {"mlu": "bang", "cpp": "vnni", "c": "vnni", "cpu": "vnni", "x86": "vnni"}
EXTENSIONS = {".cu": "cuda", ".cuh": "cuda", ".hip": "hip", ".mlu": "bang", ".cpp": "vnni",
              ".cc": "vnni", ".c": "vnni", ".cxx": "vnni"}
FILE_SUFFIX = {"cuda": ".cu", "hip": ".hip", "bang": ".mlu", "vnni": ".cpp"}


def canonical(name: str) -> str:
    """Return the platform id for ``name`` (``mlu`` -> ``bang``), or raise UsageError."""
    from xpiler.ir.errors import UsageError

    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in PLATFORMS:
        raise UsageError(f"unknown platform '{name}' (choose from {', '.join(PLATFORMS)}; "
                         f"aliases {', '.join(f'{a}={b}' for a, b in ALIASES.items())})")
    return key


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_HIP_MARKERS = ("hip/hip_runtime", "hipLaunchKernelGGL", "hipMalloc", "__builtin_amdgcn_")
_BANG_MARKERS = ("__mlu_global__", "__mlu_entry__", "__bang_", "cnrtMalloc", "cnrtQueue", "__nram__")


def detect(path: str | Path, text: str | None = None) -> str:
    """Guess the platform of a source file: .hip and .mlu decide; a .cu file is CUDA unless its
    code (comments ignored) uses the HIP runtime; for generic C/C++ suffixes the code decides
    between HIP, BANG and vnni."""
    p = Path(path)
    suffix = EXTENSIONS.get(p.suffix.lower())
    if suffix in ("hip", "bang"):
        return suffix
    if text is None:
        try:
            text = p.read_text(errors="replace")
        except OSError:
            text = ""
    code = _COMMENTS.sub(" ", text)
    if any(m in code for m in _HIP_MARKERS):
        return "hip"  # also hipified code that kept its .cu suffix
    if suffix == "cuda":
        return suffix
    if any(m in code for m in _BANG_MARKERS):
        return "bang"
    if suffix:
        return suffix
    if "__global__" in code:
        return "cuda"
    return "vnni"


def module(platform: str, part: str):
    """Import ``platforms.<platform>.<part>`` (e.g. ``frontend``, ``emulate``)."""
    return importlib.import_module(f"platforms.{canonical(platform)}.{part}")


def data_dir(platform: str) -> Path:
    return Path(__file__).parent / canonical(platform)


def parse(text: str, platform: str | None = None, path: str = "<input>", entry: str | None = None):
    """Parse source text into a Program with the front-end of ``platform`` (detected from
    ``path`` and ``text`` when None)."""
    plat = canonical(platform) if platform else detect(path, text)
    return module(plat, "frontend").parse(text, path=path, entry=entry)
