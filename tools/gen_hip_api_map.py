#!/usr/bin/env python3
"""The generated half of the CUDA <-> HIP name map, and its coverage report.

Reads the API names of both runtimes' headers:

* CUDA: the runtime headers of the toolkit next to ``nvcc``, enumerated by
  ``tools/runtime_coverage.py`` (``cuda_names``), plus the driver API of ``cuda.h``
  (``CUresult CUDAAPI cuXxx(``, its enums and ``CUxxx`` types), the driver-style names that
  kernels' host code uses;
* HIP: ``hip_runtime_api.h``, ``driver_types.h``, ``library_types.h``, ... of the HIP headers
  installed here (``--hip-include``, default ``/usr/include/hip``; Debian's ``libamdhip64-dev``),
  with the same extractors (``strip_comments``, ``top_level``, the enum / struct / typedef
  patterns of ``runtime_coverage``);
* HIP device builtins: the functions of ``amd_detail/amd_device_functions.h`` and
  ``amd_detail/amd_warp_functions.h`` whose names start with ``__``.

Every CUDA name is paired with its HIP name by the naming rules (``cuda`` -> ``hip``, ``CUDA_``
-> ``HIP_``, ``cudaDevAttr`` -> ``hipDeviceAttribute``, ``cu`` -> ``hip`` / ``hipDrv`` /
``hipModule`` for driver functions, ``CU_`` -> ``HIP_``, ``CUxxx`` -> ``hipXxx``, ``__nv_`` ->
``__hip_``, a ``_t`` suffix, then a unique match up to case and underscores:
``CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK`` -> ``hipDeviceAttributeMaxThreadsPerBlock``), after the hand-written
entries of ``platforms/hip/api_map.toml``, which take precedence. A pair is kept only when the
HIP name is in the HIP headers and of the same kind (function, constant, type). Same-name pairs
(``make_float4``, ``__hadd``) need no rename and are only counted. When several CUDA names
find the same HIP name, the first (hand-written, then exact rule, then the header order) goes
to ``[names]`` and the others to ``[cuda_only]`` (cuda -> hip only), so that hip -> cuda stays
one-to-one.

Outputs (all committed: the CI machine has no HIP headers):

* ``platforms/hip/api_map_generated.toml``: ``[names]`` and ``[cuda_only]``, read by
  ``platforms.api_map()`` together with the hand-written ``api_map.toml``;
* ``platforms/hip/api_headers.json``: the name inventory of both header sets (what the report
  is computed from);
* ``docs/cuda-hip-api-coverage.md``: per header, names mapped / total and the names without a
  counterpart; HIP device builtins defined by the virtual device / total.

Usage: python tools/gen_hip_api_map.py [--cuda-include DIR] [--hip-include DIR] [--check]
       python tools/gen_hip_api_map.py --doc-only [--check]   (re-render the report from the
       committed inventory and map; no headers needed)
``--check`` exits 1 when a file on disk differs from what would be written.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = Path(__file__).resolve().parent
for _p in (ROOT, TOOLS):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import runtime_coverage as rc  # noqa: E402  (tools/runtime_coverage.py: the CUDA enumeration)

HIP_DIR = ROOT / "platforms" / "hip"
MAP_OUT = HIP_DIR / "api_map_generated.toml"
INVENTORY_OUT = HIP_DIR / "api_headers.json"
DOC_OUT = ROOT / "docs" / "cuda-hip-api-coverage.md"
DEFAULT_HIP_INCLUDE = Path("/usr/include/hip")

# the runtime headers (the "runtime API names" of the report); cuda.h is the driver API
CUDA_RUNTIME_HEADERS = ("cuda_runtime_api.h", "cuda_runtime.h", "driver_types.h", "library_types.h",
                        "surface_types.h", "texture_types.h", "channel_descriptor.h")
CUDA_DRIVER_HEADER = "cuda.h"

# HIP header (relative to the hip include dir) -> extractors
HIP_HEADERS = {
    "hip_runtime_api.h": ("functions", "enums", "types", "macros"),
    "driver_types.h": ("enums", "types", "macros"),
    "library_types.h": ("enums", "types"),
    "surface_types.h": ("enums", "types"),
    "texture_types.h": ("enums", "types", "macros"),
    "amd_detail/amd_channel_descriptor.h": ("functions",),
    "amd_detail/amd_hip_vector_types.h": ("functions", "types"),
    "amd_detail/amd_hip_fp16.h": ("functions", "types"),
    "hip_bfloat16.h": ("types",),
}
HIP_RUNTIME_HEADERS = ("hip_runtime_api.h", "driver_types.h", "library_types.h", "surface_types.h",
                       "texture_types.h", "amd_detail/amd_channel_descriptor.h")
HIP_DEVICE_HEADERS = ("amd_detail/amd_device_functions.h", "amd_detail/amd_warp_functions.h")

_HIP_FUNC = re.compile(r"(?<![\w.>])((?:hip|__hip)[A-Z_]\w*|make_\w+|__\w+|h[a-z]\w*)\s*\(")
_HIP_FUNC_MACRO = re.compile(r"^\s*#\s*define\s+(hip[A-Z]\w*)\(", re.M)
_HIP_MACRO = re.compile(r"^\s*#\s*define\s+((?:hip|HIP_)\w+)\s+(.+?)\s*$", re.M)
_VALUE = re.compile(r"^\(?\s*(?:\(\w+\s*\*?\)\s*)?-?\s*(?:0x[0-9a-fA-F]+|\d+)[uUlL]*\s*\)?$")
_VECTOR_NAME = re.compile(r"^(?:make_)?(?:u?(?:char|short|int|long|longlong)|float|double)(?:1|2|3|4|8|16)$")
_DEVICE_FUNC = re.compile(r"\b(__[a-z]\w*)\s*\(([^()]*)\)\s*(?:const\s*)?\{")
_DRIVER_FUNC = re.compile(r"\bCUDAAPI\s+(cu[A-Z]\w*)\s*\(")
_DRIVER_MACRO = re.compile(r"^\s*#\s*define\s+(CU_\w+)\s+(.+?)\s*$", re.M)


# ------------------------------------------------------------------------------------ headers
def transparent_top(text: str) -> str:
    """``runtime_coverage.top_level`` for headers that wrap their declarations in
    ``extern "C" {`` or ``namespace x {``: those braces are looked through."""
    out: list[str] = []
    stack: list[bool] = []            # True: a transparent brace
    depth = 0                          # opaque depth
    for i, ch in enumerate(text):
        if ch == "{":
            head = text[max(0, i - 80):i]
            transparent = depth == 0 and bool(re.search(r'(?:extern\s+"C"|\bnamespace(?:\s+\w+)?)\s*$', head))
            stack.append(transparent)
            if transparent:
                out.append(" ")
            else:
                depth += 1
                out.append(ch if depth == 1 else " ")
        elif ch == "}":
            transparent = stack.pop() if stack else False
            if transparent:
                out.append(" ")
            else:
                depth -= 1
                out.append(ch if depth == 0 else " ")
        else:
            out.append(ch if depth == 0 or ch == "\n" else " ")
    return "".join(out)


def _clean(text: str) -> str:
    src = rc.strip_comments(text)
    # attribute-like macros with arguments (DEPRECATED("..."), __attribute__((...)))
    src = re.sub(r"\b(?:__attribute__|DEPRECATED|__declspec|__align__|alignas|__dparm)\s*\((?:[^()]|\([^()]*\))*\)",
                 lambda m: " " * len(m.group(0)), src)
    # attribute macros between a keyword and its name (enum __HIP_NODISCARD hipError_t {)
    src = re.sub(r"\b__HIP_NODISCARD\b", " ", src)
    # the vector types' make_* functions are declared by macros
    src = re.sub(r"\bDECLOP_MAKE_\w+_COMPONENT\(\s*[\w ]+,\s*(\w+)\s*\)\s*;",
                 lambda m: f"inline {m.group(1)} make_{m.group(1)}();", src)
    return src


def hip_names_of(header: str, text: str, what: tuple[str, ...]) -> list[rc.Name]:
    """API names of one HIP header (the extractors of runtime_coverage, HIP spellings)."""
    src = _clean(text)
    top = transparent_top(src)
    code = re.sub(r"^\s*#.*$", "", top, flags=re.M)   # declarations only (no macro bodies)
    found: dict[tuple[str, str], rc.Name] = {}
    runtime = header in HIP_RUNTIME_HEADERS

    def api(n: str) -> bool:
        if runtime:
            return (bool(re.match(r"(?:hip|HIP_|__hip_)[A-Za-z0-9]", n)) and not n.startswith("HIP_INCLUDE")) \
                or n == "dim3"
        if header.endswith("vector_types.h"):
            return bool(_VECTOR_NAME.match(n))
        return not re.fullmatch(r"__[A-Z0-9_]+__", n) and not n.startswith(("__hip_internal", "__internal"))

    def add(n: str, kind: str):
        if api(n):
            found.setdefault((n, kind), rc.Name(n, kind, header))

    if "functions" in what:
        for m in _HIP_FUNC.finditer(code):
            n = m.group(1)
            if n in ("operator", "__attribute__", "sizeof", "decltype", "static_assert") or \
                    n.endswith("__") or (not runtime and n.startswith("__hip")):
                continue
            if runtime and not n.startswith("hip"):
                continue
            if not runtime and not (n.startswith(("__", "make_")) or re.match(r"h[a-z]", n)):
                continue
            add(n, "function")
        for m in _HIP_FUNC_MACRO.finditer(src):
            add(m.group(1), "function")
    if "enums" in what:
        for m in rc._ENUM.finditer(src):
            for mem in rc._enum_members(m.group(2)):
                add(mem, "constant")
    if "types" in what:
        for m in rc._ENUM.finditer(src):
            if m.group(1):
                add(m.group(1), "type")
        for pat in (rc._STRUCT, rc._TYPEDEF_SIMPLE, rc._TYPEDEF_BLOCK):
            for m in pat.finditer(top):
                n = m.group(1)
                if not n.endswith("__"):
                    add(n, "type")
    if "macros" in what:
        for m in _HIP_MACRO.finditer(src):
            if _VALUE.match(m.group(2)) or re.match(r"^\(\(\w+\)\s*-?\w+\)$", m.group(2)):
                add(m.group(1), "constant")
    # one verdict per name: a function beats a type of the same spelling (hipDeviceProp_t is a type)
    out: dict[str, rc.Name] = {}
    for (n, kind), name in found.items():
        if n not in out or kind == "type":
            out[n] = name
    return list(out.values())


def hip_names(include: Path) -> list[rc.Name]:
    out: dict[str, rc.Name] = {}
    for header, what in HIP_HEADERS.items():
        path = include / header
        if not path.is_file():
            continue
        for n in hip_names_of(header, path.read_text(errors="replace"), what):
            out.setdefault(n.name, n)
    order = list(HIP_HEADERS)
    return sorted(out.values(), key=lambda n: (order.index(n.header), n.kind, n.name))


def hip_device_builtins(include: Path) -> list[rc.Name]:
    """``__name(...) {`` definitions of HIP's device-function headers (one per name)."""
    out: dict[str, rc.Name] = {}
    for header in HIP_DEVICE_HEADERS:
        path = include / header
        if not path.is_file():
            continue
        src = rc.strip_comments(path.read_text(errors="replace"))
        for m in _DEVICE_FUNC.finditer(src):
            n = m.group(1)
            if n.startswith(("__hip", "__ockl", "__ocml", "__llvm", "__builtin", "__attribute")) or n.endswith("__") \
                    or n.startswith("__internal"):
                continue
            out.setdefault(n, rc.Name(n, "function", header))
    return sorted(out.values(), key=lambda n: (HIP_DEVICE_HEADERS.index(n.header), n.name))


def cuda_driver_names(include: Path) -> list[rc.Name]:
    """The driver API of ``cuda.h``: ``CUDAAPI cuXxx(`` functions, enum constants, ``CU_``
    value macros and ``CUxxx`` types."""
    path = include / CUDA_DRIVER_HEADER
    if not path.is_file():
        return []
    src = rc.strip_comments(path.read_text(errors="replace"))
    top = transparent_top(src)
    found: dict[str, rc.Name] = {}

    def add(n, kind):
        if n.endswith(("_ptds", "_ptsz")) or re.search(r"_v\d+$", n):
            return
        found.setdefault(n, rc.Name(n, kind, CUDA_DRIVER_HEADER))

    for m in _DRIVER_FUNC.finditer(src):
        add(m.group(1), "function")
    for m in rc._ENUM.finditer(src):
        for mem in rc._enum_members(m.group(2)):
            if mem.startswith("CU"):
                add(mem, "constant")
    for m in _DRIVER_MACRO.finditer(src):
        if _VALUE.match(m.group(2)):
            add(m.group(1), "constant")
    for m in rc._ENUM.finditer(src):
        if m.group(1) and m.group(1).startswith("CU"):
            add(m.group(1), "type")
    for pat in (rc._STRUCT, rc._TYPEDEF_SIMPLE, rc._TYPEDEF_BLOCK):
        for m in pat.finditer(top):
            if re.match(r"CU[a-zA-Z]", m.group(1)) and not m.group(1).startswith("CUDA_"):
                add(m.group(1), "type")
    return sorted(found.values(), key=lambda n: (n.kind, n.name))


# ------------------------------------------------------------------------------------ pairing
def _candidates(c: str, kind: str) -> list[str]:
    """HIP spellings of CUDA name ``c`` by the naming rules, most specific first."""
    out: list[str] = []
    m = re.match(r"cudaDevAttr(\w+)$", c)
    if m:
        out.append("hipDeviceAttribute" + m.group(1))
    m = re.match(r"cudaJit(\w+)$", c)
    if m:
        out.append("hipJitOption" + m.group(1))
    m = re.match(r"cuda(\w+)$", c)
    if m:
        out += ["hip" + m.group(1), "hip" + m.group(1) + "_t"]
    m = re.match(r"CUDA_(\w+)$", c)
    if m:
        out.append("HIP_" + m.group(1))
    m = re.match(r"CU_(\w+)$", c)
    if m:
        out.append("HIP_" + m.group(1))
    m = re.match(r"cu([A-Z]\w*)$", c)
    if m:   # the driver API: HIP's module / driver spellings first (hipModuleLaunchKernel, not hipLaunchKernel)
        out += ["hipModule" + m.group(1), "hipDrv" + m.group(1), "hip" + m.group(1)]
    m = re.match(r"CUDA_ERROR_(\w+)$", c)
    if m:
        out.append("hipError_" + m.group(1))
    m = re.match(r"CU_DEVICE_ATTRIBUTE_(\w+)$", c)
    if m:
        out.append("hipDeviceAttribute_" + m.group(1))
    m = re.match(r"CU_JIT_(\w+)$", c)
    if m:
        out.append("hipJitOption_" + m.group(1))
    m = re.match(r"CU_(\w+)$", c)
    if m:
        out.append("hip_" + m.group(1))
    m = re.match(r"CU([a-z]\w*)$", c)
    if m:
        out += ["hip" + m.group(1)[0].upper() + m.group(1)[1:], "hip" + m.group(1)[0].upper() + m.group(1)[1:] + "_t"]
    m = re.match(r"__nv_(\w+)$", c)
    if m:
        out.append("__hip_" + m.group(1))
    return out


def _fold(name: str) -> str:
    return name.replace("_", "").lower()


def pair(cuda: list[rc.Name], hip: list[rc.Name], hand: dict, same_names: set[str] = frozenset()) -> dict:
    """``{"names": {cuda: hip}, "cuda_only": {cuda: hip}, "same": [names], "how": {cuda: rule}}``
    (hand-written pairs are not repeated in ``names`` but counted in ``how``)."""
    hip_kind = {n.name: n.kind for n in hip}
    lower: dict[tuple[str, str], list[str]] = {}
    for n in hip:
        lower.setdefault((_fold(n.name), n.kind), []).append(n.name)
    hand_names = hand.get("names", {})
    taken = {h: c for c, h in hand_names.items()}
    names: dict[str, str] = {}
    cuda_only: dict[str, str] = {}
    same: list[str] = []
    how: dict[str, str] = {}
    hand_only = hand.get("cuda_only", {})
    fuzzy: list[tuple[str, str]] = []
    for n in cuda:
        c = n.name
        if c in hand_names or c in hand_only:
            how[c] = "hand-written"
            continue
        if c in hip_kind or c in same_names:
            same.append(c)
            how[c] = "same name"
            continue
        hit = next((h for h in _candidates(c, n.kind) if hip_kind.get(h) == n.kind), None)
        if hit is None:
            for h in _candidates(c, n.kind):
                cands = lower.get((_fold(h), n.kind), [])
                if len(cands) == 1:
                    fuzzy.append((c, cands[0]))
                    break
            continue
        if hit in taken:
            cuda_only[c] = hit
        else:
            names[c] = hit
            taken[hit] = c
        how[c] = "rule"
    for c, h in fuzzy:   # matches up to case and underscores come after every exact one
        if h in taken:
            cuda_only[c] = h
        else:
            names[c] = h
            taken[h] = c
        how[c] = "rule (case)"
    return {"names": names, "cuda_only": cuda_only, "same": same, "how": how}


# ------------------------------------------------------------------------------------ outputs
def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_map(pairs: dict, cuda_version: str, hip_version: str) -> str:
    out = [
        "# GENERATED by tools/gen_hip_api_map.py: do not edit; rerun it (it needs the CUDA headers",
        f"# next to nvcc, CUDA {cuda_version}, and the HIP headers, ROCm {hip_version}). Hand-written entries",
        "# (platforms/hip/api_map.toml) take precedence and are not repeated here; platforms.api_map()",
        "# reads both. [names] is one-to-one (hip -> cuda is its inverse); [cuda_only] holds CUDA names",
        "# whose HIP name already has a CUDA counterpart in [names] or api_map.toml (cuda -> hip only).",
        "",
        "[names]",
    ]
    out += [f"{c} = {_toml_str(h)}" for c, h in sorted(pairs["names"].items())]
    out += ["", "[cuda_only]"]
    out += [f"{c} = {_toml_str(h)}" for c, h in sorted(pairs["cuda_only"].items())]
    return "\n".join(out) + "\n"


def hip_version(include: Path) -> str:
    text = (include / "hip_version.h").read_text(errors="replace") if (include / "hip_version.h").is_file() else ""
    major = re.search(r"#define\s+HIP_VERSION_MAJOR\s+(\d+)", text)
    minor = re.search(r"#define\s+HIP_VERSION_MINOR\s+(\d+)", text)
    return f"{major.group(1)}.{minor.group(1)}" if major and minor else "unknown"


def inventory(cuda_inc: Path, hip_inc: Path) -> dict:
    def group(names):
        out: dict[str, dict[str, list[str]]] = {}
        for n in names:
            out.setdefault(n.header, {}).setdefault(n.kind, []).append(n.name)
        return out

    runtime = rc.cuda_names(cuda_inc)
    # the value macros of texture_types.h (cudaTextureType1D ...), which runtime_coverage's
    # HEADERS reads for enums and types only
    have = {n.name for n in runtime}
    tex = cuda_inc / "texture_types.h"
    if tex.is_file():
        runtime += [n for n in rc.names_of("texture_types.h", tex.read_text(errors="replace"), ("macros",))
                    if n.name not in have]
    seen = {n.name for n in runtime}       # one header per name: the runtime's (CUuuid is in both)
    cuda = runtime + [n for n in cuda_driver_names(cuda_inc) if n.name not in seen]
    return {
        "cuda_version": rc.cuda_version(cuda_inc),
        "hip_version": hip_version(hip_inc),
        "cuda": group(cuda),
        "hip": group(hip_names(hip_inc)),
        "hip_device": group(hip_device_builtins(hip_inc)),
    }


def _flatten(group: dict) -> list[rc.Name]:
    return [rc.Name(n, kind, header) for header, kinds in group.items() for kind, ns in kinds.items() for n in ns]


def device_defined(names: list[str]) -> set[str]:
    """HIP device builtins the virtual device defines (a definition in the HIP runtime headers or
    a device function of platforms/common/gpu_runtime)."""
    import platforms

    have = set(platforms.runtime_provided("hip")) | set(platforms.device_functions("hip"))
    return {n for n in names if n in have}


def render_doc(inv: dict, merged: dict) -> str:
    cuda = _flatten(inv["cuda"])
    hip = _flatten(inv["hip"])
    dev = _flatten(inv["hip_device"])
    to_hip = {**merged.get("cuda_only", {}), **merged["names"]}
    to_cuda = {**{h: c for c, h in merged["names"].items()}, **merged.get("hip_only", {})}
    hip_set = {n.name for n in hip} | {n.name for n in dev}
    cuda_set = {n.name for n in cuda}

    def cuda_mapped(n: rc.Name) -> bool:
        return n.name in to_hip or n.name in hip_set

    def hip_mapped(n: rc.Name) -> bool:
        return n.name in to_cuda or n.name in cuda_set

    runtime = [n for n in cuda if n.header in CUDA_RUNTIME_HEADERS]
    hip_runtime = [n for n in hip if n.header in HIP_RUNTIME_HEADERS]
    pct = lambda a, b: f"{100.0 * a / b:.1f}%" if b else "-"  # noqa: E731
    r_got = sum(map(cuda_mapped, runtime))
    h_got = sum(map(hip_mapped, hip_runtime))
    defined = device_defined([n.name for n in dev])
    out = [
        "# CUDA <-> HIP API coverage of the name map",
        "",
        "<!-- generated by tools/gen_hip_api_map.py: do not edit; rerun it after changing the map -->",
        "",
        f"Generated by `python tools/gen_hip_api_map.py` from the CUDA {inv['cuda_version']} headers installed "
        f"with `nvcc` and the HIP {inv['hip_version']} headers of Debian's `libamdhip64-dev` (inventory committed "
        "in `platforms/hip/api_headers.json`; `--doc-only` re-renders this page from it). A CUDA name is "
        "*mapped* when `api_map` renames it (`platforms/hip/api_map.toml`, hand-written, and "
        "`platforms/hip/api_map_generated.toml`, paired by the naming rules) or HIP has the same name; "
        "a HIP name is mapped when hip -> cuda renames it or CUDA has the same name. A pair is kept only "
        "when the HIP name is in the HIP headers, so names of one runtime's newer features (CUDA 13's "
        "graph, library and logging APIs; ROCm's `hipExt*`) stay unmapped.",
        "",
        f"**Runtime API names** (CUDA `{'`, `'.join(CUDA_RUNTIME_HEADERS)}`): **{r_got} / {len(runtime)}** "
        f"CUDA names mapped ({pct(r_got, len(runtime))}); HIP runtime names "
        f"(`{'`, `'.join(HIP_RUNTIME_HEADERS)}`): **{h_got} / {len(hip_runtime)}** mapped ({pct(h_got, len(hip_runtime))}).",
        "",
        f"Renames: {len(merged['names'])} one-to-one pairs ({len(merged.get('hand_names', {}))} hand-written), "
        f"{len(merged.get('cuda_only', {}))} cuda -> hip only, {len(merged.get('hip_only', {}))} hip -> cuda only.",
        "",
        "| side | header | functions | constants | types | all |",
        "|---|---|---|---|---|---|",
    ]

    def rows(side: str, names: list[rc.Name], mapped) -> list[str]:
        lines = []
        for header in dict.fromkeys(n.header for n in names):
            row = [n for n in names if n.header == header]
            cells = []
            for kind in rc.KINDS:
                ks = [n for n in row if n.kind == kind]
                cells.append(f"{sum(map(mapped, ks))} / {len(ks)}" if ks else "-")
            cells.append(f"{sum(map(mapped, row))} / {len(row)}")
            lines.append(f"| {side} | `{header}` | " + " | ".join(cells) + " |")
        return lines

    out += rows("CUDA", cuda, cuda_mapped) + rows("HIP", hip, hip_mapped)
    out += [
        "",
        f"**HIP device builtins** (`__*` functions defined in `{'`, `'.join(HIP_DEVICE_HEADERS)}`): "
        f"**{len(defined)} / {len(dev)}** defined by the virtual device (`platforms/hip/runtime`, "
        "`platforms/common/gpu_runtime`).",
        "",
        "## Names without a counterpart", "",
    ]
    for side, names, mapped in (("CUDA", cuda, cuda_mapped), ("HIP", hip, hip_mapped)):
        for header in dict.fromkeys(n.header for n in names):
            row = [n for n in names if n.header == header]
            miss = [n for n in row if not mapped(n)]
            out.append(f"### {side} `{header}`")
            out.append("")
            for kind in rc.KINDS:
                ks = [n.name for n in miss if n.kind == kind]
                if ks:
                    out.append(f"- {kind}s ({len(ks)}): " + ", ".join(f"`{x}`" for x in sorted(ks)))
            if not miss:
                out.append("- none")
            out.append("")
    out += ["## HIP device builtins", ""]
    for header in HIP_DEVICE_HEADERS:
        ns = sorted(n.name for n in dev if n.header == header)
        if not ns:
            continue
        yes = [n for n in ns if n in defined]
        no = [n for n in ns if n not in defined]
        out.append(f"### `{header}`")
        out.append("")
        out.append(f"- defined ({len(yes)} / {len(ns)}): " + (", ".join(f"`{x}`" for x in yes) or "none"))
        if no:
            out.append(f"- not defined ({len(no)}): " + ", ".join(f"`{x}`" for x in no))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def merged_map() -> dict:
    """The map as ``platforms.api_map()`` reads it, with the hand-written names alongside."""
    import tomllib

    import platforms

    table = dict(platforms.api_map())
    table["hand_names"] = tomllib.loads((HIP_DIR / "api_map.toml").read_text())["names"]
    return table


def _write(path: Path, text: str, check: bool) -> bool:
    if check:
        if not path.is_file() or path.read_text() != text:
            print(f"{path.relative_to(ROOT)} is out of date: rerun python tools/gen_hip_api_map.py", file=sys.stderr)
            return False
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return True


def main(argv: list[str] | None = None) -> int:
    import tomllib

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cuda-include", help="include directory of the CUDA toolkit (default: next to nvcc)")
    ap.add_argument("--hip-include", default=str(DEFAULT_HIP_INCLUDE), help="the hip/ include directory")
    ap.add_argument("--doc-only", action="store_true",
                    help="render the report from the committed inventory and map (no headers needed)")
    ap.add_argument("--check", action="store_true", help="exit 1 when an output file is out of date")
    args = ap.parse_args(argv)
    ok = True
    if not args.doc_only:
        hip_inc = Path(args.hip_include)
        if not (hip_inc / "hip_runtime_api.h").is_file():
            raise SystemExit(f"gen_hip_api_map: no HIP headers in {hip_inc} (apt-get install libamdhip64-dev)")
        cuda_inc = rc.find_cuda_include(args.cuda_include)
        inv = inventory(cuda_inc, hip_inc)
        hand = tomllib.loads((HIP_DIR / "api_map.toml").read_text())
        pairs = pair(_flatten(inv["cuda"]), _flatten(inv["hip"]), hand,
                     {n.name for n in _flatten(inv["hip_device"])})
        ok &= _write(INVENTORY_OUT, json.dumps(inv, indent=1, sort_keys=True) + "\n", args.check)
        ok &= _write(MAP_OUT, render_map(pairs, inv["cuda_version"], inv["hip_version"]), args.check)
        if not args.check:
            import platforms

            platforms.api_map.cache_clear()
        print(f"pairs: {len(pairs['names'])} one-to-one, {len(pairs['cuda_only'])} cuda -> hip only, "
              f"{len(pairs['same'])} same name")
    inv = json.loads(INVENTORY_OUT.read_text())
    ok &= _write(DOC_OUT, render_doc(inv, merged_map()), args.check)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
