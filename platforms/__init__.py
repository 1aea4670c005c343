"""Platform plug-ins: one subpackage per platform, looked up by name.

Each subpackage provides (see ``platforms/base.py``): ``frontend`` (source -> Program),
``backend`` (Program -> source), ``emulate`` (source -> C++ for the virtual device),
``intrinsics/`` (data files: one home per special instruction) and ``profile.toml``.
"""
from __future__ import annotations

import importlib
from pathlib import Path

PLATFORMS = ("cuda", "hip", "bang", "vnni")
ALIASES = {"mlu": "bang", "cpp": "vnni", "c": "vnni", "cpu": "vnni", "x86": "vnni"}
EXTENSIONS = {".cu": "cuda", ".cuh": "cuda", ".hip": "hip", ".mlu": "bang", ".cpp": "vnni",
              ".cc": "vnni", ".c": "vnni", ".cxx": "vnni"}
FILE_SUFFIX = {"cuda": ".cu", "hip": ".hip", "bang": ".mlu", "vnni": ".cpp"}


def canonical(name: str) -> str:
    """Return the platform id for ``name`` (``mlu`` -> ``bang``), or raise UsageError."""
    from xpiler.errors import UsageError

    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in PLATFORMS:
        raise UsageError(f"unknown platform '{name}' (choose from {', '.join(PLATFORMS)}; "
                         f"aliases {', '.join(f'{a}={b}' for a, b in ALIASES.items())})")
    return key


def detect(path: str | Path, text: str | None = None) -> str:
    """Guess the platform of a source file from its suffix, then from its contents."""
    p = Path(path)
    if text is None:
        try:
            text = p.read_text(errors="replace")
        except OSError:
            text = ""
    # content wins over a generic suffix: .cpp files are often HIP
    if "hip/hip_runtime" in text or "hipLaunchKernelGGL" in text or "hipMalloc" in text \
            or "__builtin_amdgcn_" in text:
        return "hip"
    if "__mlu_global__" in text or "__mlu_entry__" in text or "__bang_" in text or "cnrt" in text:
        return "bang"
    suffix = EXTENSIONS.get(p.suffix.lower())
    if suffix:
        return suffix
    if "__global__" in text:
        return "cuda"
    return "vnni"


def module(platform: str, part: str):
    """Import ``platforms.<platform>.<part>`` (e.g. ``frontend``, ``emulate``)."""
    return importlib.import_module(f"platforms.{canonical(platform)}.{part}")


def data_dir(platform: str) -> Path:
    return Path(__file__).parent / canonical(platform)
