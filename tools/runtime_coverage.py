#!/usr/bin/env python3
"""CUDA runtime API coverage of the virtual device: which names of the installed CUDA headers
the CUDA prologue (platforms/cuda/runtime/xp_cuda.h and platforms/common/gpu_runtime) declares.

Names come from the CUDA toolkit next to ``nvcc`` (``--cuda-include DIR`` overrides):

* functions: ``extern __host__ ... CUDARTAPI cudaXxx(`` in ``cuda_runtime_api.h``, the inline
  templates of ``cuda_runtime.h``, ``make_*`` of ``vector_functions.h``, the ``__*_DECL__``
  functions of ``cuda_fp16.h`` / ``cuda_bf16.h``, ``cudaCreateChannelDesc`` & co.;
* enum constants: members of every ``enum`` in ``driver_types.h``, ``library_types.h``,
  ``surface_types.h``, ``texture_types.h``, plus value macros ``#define cudaXxx <value>``;
* types: enum / struct / union tags and typedef names of those headers and ``vector_types.h``.

Each name is *compile-probed*: one generated translation unit, built exactly like a user's
``.cu`` file (``platforms/cuda/emulate.prepare``), holds one probe line per name: a function is
``namespace p { using ::name; }`` (any declaration: overload set, template, function-like macro
with a function behind it), a type ``static_assert(sizeof(::name) > 0)`` (complete), a constant
``static_assert(sizeof(name) > 0)`` (an enumerator or an expression macro). g++ reports the lines
that do not compile; they are dropped and the unit is rebuilt until it compiles, so the verdict
of every name is that of a real build. A provided name is *declared*; whether it does what CUDA
documents is what the tests (tests/platforms/test_runtime_api.py ...) check.

A fixed list of common HIP host names (``HIP_FUNCTIONS`` / ``HIP_CONSTANTS`` / ``HIP_TYPES``) is probed the same way against the HIP
prologue (no ROCm headers are installed here to enumerate HIP completely).

Usage: python tools/runtime_coverage.py [--cuda-include DIR] [-o docs/runtime-coverage.md]
       [--check] [--json FILE]
``--check`` exits 1 when the file on disk differs from what would be written.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_OUT = ROOT / "docs" / "runtime-coverage.md"

# header -> which extractors apply
HEADERS = {
    "cuda_runtime_api.h": ("functions", "enums", "types", "macros"),
    "cuda_runtime.h": ("functions",),
    "driver_types.h": ("enums", "types", "macros"),
    "library_types.h": ("enums", "types"),
    "surface_types.h": ("enums", "types"),
    "texture_types.h": ("enums", "types"),
    "vector_types.h": ("types",),
    "vector_functions.h": ("functions",),
    "channel_descriptor.h": ("functions",),
    "cuda_fp16.h": ("functions", "types"),
    "cuda_bf16.h": ("functions", "types"),
}
KINDS = ("function", "constant", "type")

# Common HIP host-API names (the HIP side of the same runtime; probed against xp_hip.h).
HIP_FUNCTIONS = """
hipMalloc hipMallocManaged hipFree hipHostMalloc hipHostFree hipMallocHost hipFreeHost hipMemcpy hipMemcpyAsync
hipMemcpy2D hipMemcpy2DAsync hipMemcpyHtoD hipMemcpyDtoH hipMemcpyDtoD hipMemset hipMemsetAsync hipMemset2D
hipMemset2DAsync hipMemsetD32 hipMemsetD8 hipMemcpyToSymbol hipMemcpyFromSymbol hipMemcpyToSymbolAsync
hipMemcpyFromSymbolAsync hipGetSymbolAddress hipMemGetInfo hipMallocPitch hipMallocAsync hipFreeAsync
hipMemPrefetchAsync hipHostRegister hipHostUnregister hipHostGetDevicePointer
hipGetLastError hipPeekAtLastError hipGetErrorString hipGetErrorName hipDeviceSynchronize hipDeviceReset
hipSetDevice hipGetDevice hipGetDeviceCount hipGetDeviceProperties hipDeviceGetAttribute
hipDeviceGetLimit hipDeviceSetLimit hipDeviceSetCacheConfig hipDeviceGetCacheConfig hipDeviceSetSharedMemConfig
hipDriverGetVersion hipRuntimeGetVersion hipChooseDevice hipDeviceGetName hipDeviceGetPCIBusId
hipFuncSetAttribute hipFuncSetCacheConfig hipFuncSetSharedMemConfig hipFuncGetAttributes
hipOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxPotentialBlockSize
hipStreamCreate hipStreamCreateWithFlags hipStreamCreateWithPriority hipStreamDestroy hipStreamSynchronize
hipStreamQuery hipStreamWaitEvent hipDeviceGetStreamPriorityRange
hipEventCreate hipEventCreateWithFlags hipEventRecord hipEventSynchronize hipEventElapsedTime hipEventDestroy
hipEventQuery hipLaunchKernel hipLaunchCooperativeKernel
"""
HIP_CONSTANTS = """
hipFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributePreferredSharedMemoryCarveout
hipFuncCachePreferNone hipFuncCachePreferShared hipFuncCachePreferL1 hipFuncCachePreferEqual
hipSharedMemBankSizeDefault hipSharedMemBankSizeFourByte hipSharedMemBankSizeEightByte
hipStreamDefault hipStreamNonBlocking hipStreamPerThread hipEventDefault hipEventBlockingSync hipEventDisableTiming
hipMemcpyHostToDevice hipMemcpyDeviceToHost hipMemcpyDeviceToDevice hipMemcpyHostToHost hipMemcpyDefault
hipSuccess hipErrorInvalidValue hipErrorOutOfMemory hipErrorNotReady hipErrorInvalidDevice
hipErrorCooperativeLaunchTooLarge
hipDeviceAttributeMaxThreadsPerBlock hipDeviceAttributeMaxBlockDimX hipDeviceAttributeMaxBlockDimY
hipDeviceAttributeMaxBlockDimZ hipDeviceAttributeMaxGridDimX hipDeviceAttributeMaxGridDimY
hipDeviceAttributeMaxGridDimZ hipDeviceAttributeMaxSharedMemoryPerBlock
hipDeviceAttributeSharedMemPerBlockOptin hipDeviceAttributeWarpSize hipDeviceAttributeMultiprocessorCount
hipDeviceAttributeComputeCapabilityMajor hipDeviceAttributeComputeCapabilityMinor
hipDeviceAttributeMaxThreadsPerMultiProcessor hipDeviceAttributeMaxRegistersPerBlock
hipDeviceAttributeClockRate hipDeviceAttributeL2CacheSize hipDeviceAttributeTotalConstantMemory
hipDeviceAttributeCooperativeLaunch hipDeviceAttributeMemoryBusWidth hipDeviceAttributeMemoryClockRate
hipDeviceAttributeMaxSharedMemoryPerMultiprocessor hipDeviceAttributeConcurrentKernels
hipDeviceAttributeIntegrated hipDeviceAttributeManagedMemory hipDeviceAttributeUnifiedAddressing
hipDeviceAttributePciBusId hipDeviceAttributeComputeMode hipDeviceAttributeWallClockRate
"""
HIP_TYPES = """
hipDeviceProp_t hipFuncAttributes hipMemcpyKind hipError_t hipStream_t hipEvent_t hipDeviceAttribute_t
hipFuncCache_t hipSharedMemConfig __hip_bfloat16 __hip_bfloat162 hip_bfloat16
"""


def hip_names() -> list["Name"]:
    return ([Name(n, "function", "hip") for n in HIP_FUNCTIONS.split()]
            + [Name(n, "constant", "hip") for n in HIP_CONSTANTS.split()]
            + [Name(n, "type", "hip") for n in HIP_TYPES.split()])


@dataclass(frozen=True)
class Name:
    name: str
    kind: str      # function | constant | type
    header: str


# ------------------------------------------------------------------------------------ headers
def find_cuda_include(explicit: str | None = None) -> Path:
    """The include directory of the CUDA toolkit that ``nvcc`` belongs to."""
    cands: list[Path] = []
    if explicit:
        cands.append(Path(explicit))
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            cands.append(Path(os.environ[env]) / "include")
    nvcc = shutil.which("nvcc")
    if nvcc:
        real = Path(nvcc).resolve()
        cands.append(real.parent.parent / "include")
        try:  # a wrapper script: `exec /usr/local/cuda-X/bin/nvcc "$@"`
            text = real.read_text(errors="replace")[:4000]
            for m in re.finditer(r"(/[^\s\"']+)/bin/nvcc\b", text):
                cands.append(Path(m.group(1)) / "include")
        except OSError:
            pass
    cands.append(Path("/usr/local/cuda/include"))
    cands += sorted(Path("/usr/local").glob("cuda-*/include"), reverse=True)
    for c in cands:
        if (c / "cuda_runtime_api.h").is_file():
            return c
    raise SystemExit("runtime_coverage: no CUDA toolkit found (nvcc, $CUDA_HOME, /usr/local/cuda*); "
                     "pass --cuda-include DIR")


def cuda_version(include: Path) -> str:
    """``13.0`` from CUDART_VERSION in cuda_runtime_api.h (the doc is per toolkit release)."""
    m = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", (include / "cuda_runtime_api.h").read_text(errors="replace"))
    if not m:
        return "unknown"
    v = int(m.group(1))
    return f"{v // 1000}.{v % 1000 // 10}"


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


_FUNC_RT = re.compile(r"\bextern\s+__host__\b[^;{}()]*?\b(cuda\w+)\s*\(")
_FUNC_TEMPLATE = re.compile(r"\b(?:static\s+)?__inline__\s+__host__\b[^;{}()]*?\b(cuda\w+)\s*\(")
_FUNC_DECL = re.compile(r"\b__CUDA_\w*DECL__\s+(?:[\w:<>]+\s*[\*&]?\s+)*?[\*&]?\s*(\w+)\s*\(")
_FUNC_MAKE = re.compile(r"\b__VECTOR_FUNCTIONS_DECL__\s+\w+\s+(make_\w+)\s*\(")
_FUNC_CHANNEL = re.compile(r"\b__inline__\s+__host__\s+(?:__device__\s+)?[\w\s]*?\b(cuda\w+)\s*\(")
_ENUM = re.compile(r"\benum\s+(?:__device_builtin__\s+)?(?:class\s+)?(\w+)?\s*(?::\s*\w+\s*)?\{([^{}]*)\}")
_STRUCT = re.compile(r"\b(?:struct|union)\s+([A-Za-z_]\w*)\s*(?:\{|;)")
_TYPEDEF_SIMPLE = re.compile(r"\btypedef\b[^;{}()]*?\b([A-Za-z_]\w*)\s*;")
_TYPEDEF_BLOCK = re.compile(r"\btypedef\s+(?:struct|union|enum)\b[^;{}]*\{\s*\}\s*([A-Za-z_]\w*)\s*[;,]")
_MACRO = re.compile(r"^\s*#\s*define\s+(cuda\w+)\s+(.+?)\s*$", re.M)


def top_level(text: str) -> str:
    """``text`` with everything inside braces blanked (the braces kept): declarations nested in
    a struct or union (``struct { ... } array;`` members) are not top-level names."""
    out, depth = [], 0
    for ch in text:
        if ch == "{":
            depth += 1
            out.append(ch if depth == 1 else " ")
        elif ch == "}":
            depth -= 1
            out.append(ch if depth == 0 else " ")
        else:
            out.append(ch if depth == 0 or ch == "\n" else " ")
    return "".join(out)


def _enum_members(body: str) -> list[str]:
    out = []
    for part in body.split(","):
        m = re.match(r"\s*([A-Za-z_]\w*)", part)
        if m:
            out.append(m.group(1))
    return out


def names_of(header: str, text: str, what: tuple[str, ...]) -> list[Name]:
    src = strip_comments(text)
    # attribute-like macros with arguments (__align__(8), __VECTOR_TYPE_DEPRECATED__("..."))
    src = re.sub(r"\b__\w+__\s*\((?:[^()]|\([^()]*\))*\)", lambda m: " " * len(m.group(0))
                 if not re.match(r"__cuda_builtin_vector", m.group(0)) else m.group(0), src)
    src = re.sub(r"\b__(?:device|cudart)_builtin__\b", " ", src)
    top = top_level(src)
    found: dict[tuple[str, str], Name] = {}

    def add(name: str, kind: str):
        if name.startswith("__cudart") or name.endswith(("_ptds", "_ptsz")) or re.search(r"_v\d+$", name):
            return
        found.setdefault((name, kind), Name(name, kind, header))

    if "functions" in what:
        pats = [_FUNC_RT, _FUNC_TEMPLATE]
        if header in ("cuda_fp16.h", "cuda_bf16.h"):
            pats = [_FUNC_DECL]
        elif header == "vector_functions.h":
            pats = [_FUNC_MAKE]
        elif header == "channel_descriptor.h":
            pats = [_FUNC_CHANNEL]
        for pat in pats:
            for m in pat.finditer(src):
                n = m.group(1)
                if header in ("cuda_fp16.h", "cuda_bf16.h") and not n.startswith(("__", "h", "make_", "atomic")):
                    continue
                if n in ("operator", "__attribute__", "__align__", "if", "return", "sizeof") or \
                        re.fullmatch(r"__[A-Z0-9_]+__", n):
                    continue
                add(n, "function")
    if "enums" in what:
        for m in _ENUM.finditer(src):
            for mem in _enum_members(m.group(2)):
                add(mem, "constant")
    if "types" in what:
        half = header in ("cuda_fp16.h", "cuda_bf16.h")

        def type_ok(n: str) -> bool:  # __half, __nv_bfloat16 are the API; other __names are not
            return not n.endswith("__") and (not n.startswith("__") or half)

        for m in _ENUM.finditer(src):
            if m.group(1) and type_ok(m.group(1)):
                add(m.group(1), "type")
        for pat in (_STRUCT, _TYPEDEF_SIMPLE, _TYPEDEF_BLOCK):
            for m in pat.finditer(top):
                if type_ok(m.group(1)):
                    add(m.group(1), "type")
    if "macros" in what:
        for m in _MACRO.finditer(src):
            val = m.group(2)
            # value-like macros only (numbers, casts, parenthesised expressions), not API renames
            if re.match(r"^\(?\s*(?:\(\w+\s*\*?\)\s*)?(?:0x[0-9a-fA-F]+|\d+)[uUlL]*\s*\)?$", val) or \
                    re.match(r"^\(\(\w+\)\s*0x[0-9a-fA-F]+\)$", val):
                add(m.group(1), "constant")
    return list(found.values())


def cuda_names(include: Path) -> list[Name]:
    out: dict[str, Name] = {}
    for header, what in HEADERS.items():
        path = include / header
        if not path.is_file():
            continue
        for n in names_of(header, path.read_text(errors="replace"), what):
            # one verdict per name: the first header that declares it, functions before types
            out.setdefault(n.name, n)
    return sorted(out.values(), key=lambda n: (list(HEADERS).index(n.header), n.kind, n.name))


# ------------------------------------------------------------------------------------ probing
def _probe_line(i: int, n: Name) -> str:
    if n.kind == "function":
        return f"namespace __xp_probe_{i} {{ using ::{n.name}; }}"
    if n.kind == "type":
        return f"static_assert(sizeof(::{n.name}) > 0, \"{n.name}\");"
    return f"static_assert(sizeof({n.name}) > 0, \"{n.name}\");"


def probe(platform: str, names: list[Name]) -> set[str]:
    """The names the virtual-device prologue of ``platform`` declares (see the module doc)."""
    import importlib

    emu = importlib.import_module(f"platforms.{platform}.emulate")
    profile = emu.load_profile(None)
    alive = list(range(len(names)))
    with tempfile.TemporaryDirectory(prefix="xp-coverage-") as tmp:
        unit_path = Path(tmp) / "probe.cpp"
        for _ in range(12):
            lines = [_probe_line(i, names[i]) for i in alive]
            src = "\n".join(lines) + "\n"
            unit = emu.prepare(src, "probe.cu", strict=False, profile=profile)
            unit_path.write_text(unit)
            cmd = ["g++", "-std=c++17", "-fsyntax-only", "-w", "-fmax-errors=0",
                   *[f"-I{d}" for d in emu.INCLUDE_DIRS], *emu.compile_flags(False), str(unit_path)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode == 0:
                return {names[i].name for i in alive}
            bad = {int(m.group(1)) for m in re.finditer(r"^probe\.cu:(\d+):\d+: error", proc.stderr, re.M)}
            if not bad:
                raise RuntimeError("probe unit failed outside the probe lines:\n" + proc.stderr[-4000:])
            alive = [i for k, i in enumerate(alive, start=1) if k not in bad]
    raise RuntimeError("probe unit did not converge")


# ------------------------------------------------------------------------------------ report
def render(include: Path, names: list[Name], have: set[str], hip: list[Name], hip_have: set[str]) -> str:
    total = len(names)
    got = sum(1 for n in names if n.name in have)
    out = [
        "# CUDA runtime API coverage of the virtual device",
        "",
        "<!-- generated by tools/runtime_coverage.py: do not edit; rerun it after changing the runtime -->",
        "",
        "Generated by `python tools/runtime_coverage.py` from the CUDA headers of the toolkit "
        f"installed with `nvcc` (CUDA {cuda_version(include)}). Each name is compile-probed in one translation "
        "unit built like a user's `.cu` file (`platforms/cuda/emulate.prepare`): a function must be "
        "declared (`using ::name;`), a type complete (`sizeof`), a constant an expression. *Provided* "
        "means declared; the behaviour is what the tests check (`tests/platforms/test_runtime_api.py`, "
        "`tests/platforms/test_cooperative_groups.py`, `tests/platforms/test_cuda_emulator.py`).",
        "",
        f"**{got} / {total}** names provided.",
        "",
        "| header | functions | constants | types | all |",
        "|---|---|---|---|---|",
    ]
    for header in HEADERS:
        row = [n for n in names if n.header == header]
        if not row:
            continue
        cells = []
        for kind in KINDS:
            ks = [n for n in row if n.kind == kind]
            cells.append(f"{sum(n.name in have for n in ks)} / {len(ks)}" if ks else "-")
        cells.append(f"{sum(n.name in have for n in row)} / {len(row)}")
        out.append(f"| `{header}` | " + " | ".join(cells) + " |")
    hip_got = sum(1 for n in hip if n.name in hip_have)
    out += [
        "",
        f"HIP: **{hip_got} / {len(hip)}** of a fixed list of common host names (`HIP_FUNCTIONS`, `HIP_CONSTANTS`, `HIP_TYPES` in the "
        "tool; no ROCm headers are installed to enumerate HIP) are provided by `platforms/hip/runtime/xp_hip.h`.",
    ]
    hip_missing = [n.name for n in hip if n.name not in hip_have]
    if hip_missing:
        out += ["", "Missing HIP names: " + ", ".join(f"`{n}`" for n in hip_missing) + "."]
    out += ["", "## By header", ""]
    for header in HEADERS:
        row = [n for n in names if n.header == header]
        if not row:
            continue
        out += [f"### `{header}`", ""]
        for kind in KINDS:
            ks = [n for n in row if n.kind == kind]
            if not ks:
                continue
            yes = [n.name for n in ks if n.name in have]
            no = [n.name for n in ks if n.name not in have]
            out.append(f"- {kind}s provided ({len(yes)} / {len(ks)}): " + (", ".join(f"`{x}`" for x in yes) or "none"))
            if no:
                out.append(f"- {kind}s missing ({len(no)}): " + ", ".join(f"`{x}`" for x in no))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cuda-include", help="include directory of the CUDA toolkit (default: next to nvcc)")
    ap.add_argument("-o", "--output", default=str(DEFAULT_OUT))
    ap.add_argument("--check", action="store_true", help="exit 1 when the output file is out of date")
    ap.add_argument("--json", help="also write {name: {kind, header, provided}} to this file")
    args = ap.parse_args(argv)
    include = find_cuda_include(args.cuda_include)
    names = cuda_names(include)
    have = probe("cuda", names)
    hip = hip_names()
    hip_have = probe("hip", hip)
    text = render(include, names, have, hip, hip_have)
    out = Path(args.output)
    if args.json:
        Path(args.json).write_text(json.dumps({n.name: {"kind": n.kind, "header": n.header,
                                                        "provided": n.name in have} for n in names}, indent=1))
    got = sum(1 for n in names if n.name in have)
    print(f"cuda: {got} / {len(names)} names provided; hip (common list): "
          f"{sum(n.name in hip_have for n in hip)} / {len(hip)}")
    if args.check:
        if not out.is_file() or out.read_text() != text:
            print(f"{out} is out of date: rerun python tools/runtime_coverage.py", file=sys.stderr)
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
