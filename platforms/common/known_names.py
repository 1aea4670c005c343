"""Names a platform's code may call without declaring them: its intrinsics and builtins.

``unknown_intrinsic_calls(program)`` finds calls of names that look like a platform intrinsic
(``__name`` on CUDA, HIP and BANG; ``_mm...`` and ``__name`` on VNNI) but that nothing knows:
not the platform's runtime headers (what the virtual device compiles against, so also every
CUDA/HIP device function, BANG ``__bang_*`` intrinsic and runtime call it implements), not its
intrinsic descriptions (``platforms/<p>/intrinsics``), not the host compiler's intrinsic headers
(VNNI runs natively: ``immintrin.h`` and friends), and not the file itself (a definition, a
declaration or a macro). Each gives warning XP1151 at the call: a typo or an intrinsic of
another platform or architecture, which the build would reject.

GCC's ``__builtin_*`` functions are known to the host compiler and never reported (except
``__builtin_amdgcn_*``, which only the HIP runtime and ``mfma.toml`` provide). Names with
``::`` are left alone.
"""
from __future__ import annotations

import os
import re
import subprocess
from functools import lru_cache
from pathlib import Path

from pycparser import c_ast

_HERE = Path(__file__).resolve().parent
_IDENT = re.compile(rb"[A-Za-z_]\w*")
_TOML_NAME = re.compile(rb"""^\s*name\s*=\s*["']([A-Za-z_]\w*)["']""", re.M)
_HEADER_SUFFIXES = ("", ".h", ".hpp", ".inc", ".def", ".cuh")


def looks_intrinsic(platform: str, name: str) -> bool:
    """Spelled like an intrinsic or builtin of ``platform`` (the names XP1151 considers)."""
    if "::" in name or name.startswith("__xp_"):        # __xp_*: the front-end's own (launches)
        return False
    if name.startswith("__builtin_"):
        return name.startswith("__builtin_amdgcn_")
    if platform == "vnni":
        return name.startswith(("_mm", "__"))
    return name.startswith("__")


_PASTED = re.compile(rb"[A-Za-z_]\w*(?:[ \t]*##[ \t]*[A-Za-z_]\w*)+")


class KnownNames:
    """Identifiers, plus the families of names macros paste together (``__ocml_##fn##_f32``:
    pieces starting or ending with ``_`` are taken as literal text, the others as parameters)."""

    def __init__(self, names: set[str], patterns: list[str]):
        self.names = frozenset(names)
        self.pattern = re.compile("|".join(f"(?:{p})" for p in patterns)) if patterns else None

    def __contains__(self, name: str) -> bool:
        return name in self.names or (self.pattern is not None and self.pattern.fullmatch(name) is not None)


def _identifiers(paths, pasted: bool = True) -> KnownNames:
    names: set[str] = set()
    patterns: set[str] = set()
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if path.suffix == ".toml":
            names.update(m.decode() for m in _TOML_NAME.findall(data))
            continue
        names.update(m.decode() for m in _IDENT.findall(data))
        for m in _PASTED.findall(data) if pasted else ():
            pieces = [p.strip().decode() for p in m.split(b"##")]
            literal = [p.startswith("_") or p.endswith("_") for p in pieces]
            if not (literal[0] and literal[-1] and pieces[0].startswith("_")):
                continue            # too broad a family (a prefix alone), or not intrinsic-like
            patterns.add("".join(re.escape(p) if p.startswith("_") or p.endswith("_") else r"\w*"
                                 for p in pieces))
    return KnownNames(names, sorted(patterns))


def _header_files(directory: Path):
    if not directory.is_dir():
        return []
    return [p for p in directory.rglob("*") if p.is_file() and p.suffix in _HEADER_SUFFIXES]


@lru_cache(maxsize=1)
def _compiler_include_dir() -> Path | None:
    """The host C++ compiler's own include directory (``immintrin.h`` lives there)."""
    cxx = os.environ.get("CXX", "g++")
    try:
        out = subprocess.run([cxx, "-print-file-name=include"], capture_output=True, text=True,
                             timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    if out and Path(out, "immintrin.h").is_file():
        return Path(out)
    found = sorted(Path("/usr/lib/gcc").glob("*/*/include/immintrin.h"))
    return found[-1].parent if found else None


@lru_cache(maxsize=None)
def known_names(platform: str) -> KnownNames | None:
    """Every identifier the platform's code can use undeclared (None: cannot tell, e.g. VNNI
    without the compiler's headers)."""
    import platforms

    emulate = platforms.module(platform, "emulate")
    paths: list[Path] = []
    for d in getattr(emulate, "INCLUDE_DIRS", []):
        paths += _header_files(Path(d))
    paths += sorted((_HERE.parent / platform / "intrinsics").glob("*.toml"))
    known = _identifiers(paths)
    if platform == "vnni":
        inc = _compiler_include_dir()
        if inc is None:
            return None
        # the compiler's headers: their names only (their ## families are far too broad)
        system = _identifiers(sorted(inc.glob("*.h")), pasted=False)
        known = KnownNames(set(known.names) | set(system.names),
                           [known.pattern.pattern] if known.pattern is not None else [])
    return known


def declared_names(program) -> set[str]:
    """Names the file itself declares: functions, variables (function pointers), typedefs,
    parameters, macros; and every identifier of the local headers it includes (``#include
    "x.h"`` next to it, as the emulator inlines them: the front-end does not read them)."""
    names = set(program.facts.get("defines", {}))
    if any(inc.strip().startswith('"') for inc in program.facts.get("includes", [])):
        from .emulate_util import INCLUDE, inline_local_includes

        lines = "\n".join(m.group(0) for m in INCLUDE.finditer(program.source))
        try:
            text = inline_local_includes(lines, program.path)   # the headers' text only
        except (OSError, ValueError):
            text = ""
        names.update(m.decode() for m in _IDENT.findall(text.encode()))
    stack = [program.ast] if program.ast is not None else []
    while stack:                       # iterative: deep ASTs must not hit the recursion limit
        node = stack.pop()
        if isinstance(node, (c_ast.Decl, c_ast.Typedef)) and node.name:
            names.add(node.name)
        stack.extend(child for _, child in node.children())
    return names


def unknown_intrinsic_calls(program) -> list[tuple[str, object]]:
    """(name, coord) of each call XP1151 reports, in file order (one per name)."""
    calls: list[tuple[str, object]] = []
    seen: set[str] = set()
    stack = [program.ast] if program.ast is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID):
            name = node.name.name
            if name not in seen and looks_intrinsic(program.platform, name):
                seen.add(name)
                calls.append((name, node.name.coord or node.coord))
        stack.extend(child for _, child in reversed(node.children()))
    if not calls:
        return []
    known = known_names(program.platform)
    if known is None:
        return []
    declared = declared_names(program)
    out = [(n, c) for n, c in calls if n not in known and n not in declared]
    out.sort(key=lambda nc: (getattr(nc[1], "line", 0) or 0, getattr(nc[1], "column", 0) or 0))
    return out
