"""Parse a kernel source with clang (libclang) against the virtual device's runtime.

What clang sees
- CUDA, HIP and BANG C are parsed in clang's CUDA mode (``-x cuda --cuda-host-only``), so
  ``__global__`` kernels, ``<<<...>>>`` launches, templates, namespaces and alternative tokens
  are understood as nvcc reads them. The runtime headers are the emulator's own prefix (the part
  of ``platforms.<p>.emulate.prepare``'s unit before the user's first ``#line``); with
  ``XP_CLANG_PARSE`` defined they leave the qualifiers to the prelude below, which spells them as
  clang's CUDA attributes (BANG's ``__mlu_entry__`` is a ``__global__`` kernel, ``__mlu_func__``
  a ``__device__`` function, ``__nram__``/``__wram__``/``__mlu_shared__`` annotated variables).
  The runtime (host code for g++) is parsed inside ``#pragma clang force_cuda_host_device``, so
  device code may call it; errors in device code are reported as nvcc would report them.
- VNNI C++ is parsed as C++17 for the host (``-march=native -fopenmp``).
- Clang's resource headers (``stddef.h``, ``immintrin.h``, ...) come from the clang-tidy wheel
  of the same LLVM release as the libclang wheel (18): libclang ships none.

Errors in the user's files become diagnostics XP1300 (error) / warnings are dropped; the
position is the user's file:line:col.
"""
from __future__ import annotations

import functools
import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path

from xpiler.ir.errors import Coord, Diagnostic, SourceError

LLVM_MAJOR = 18

_GPU_PRELUDE = """\
#define XP_CLANG_PARSE 1
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __constant__ __attribute__((constant))
#define __shared__ __attribute__((shared))
#define __managed__ __attribute__((managed))
"""
# The runtime is host code for g++; in clang's CUDA mode device code may only call device
# functions. The prefix is therefore parsed inside `#pragma clang force_cuda_host_device`, after
# every standard header it uses has been included outside it (host), with device overloads of
# the C math library, and with the runtime's CUDA intrinsics whose names glibc or clang already
# declare for the other side (glibc's internal __expf, clang's builtin __syncthreads) renamed.
_STD_HEADERS = """new vector deque string functional algorithm utility type_traits chrono initializer_list tuple
numeric memory map limits iostream array cstring cstdint cstdlib cstddef cstdio cstdarg climits cfloat
csignal cerrno cassert cmath math.h stdlib.h stdio.h string.h stdint.h unistd.h ucontext.h sys/mman.h
random atomic mutex thread complex""".split()
_RENAMED = """__expf __exp10f __logf __log2f __log10f __sinf __cosf __tanf __sincosf __powf
__syncthreads""".split()
_MATH1 = """acos asin atan cbrt ceil cos cosh erf erfc exp exp2 expm1 fabs floor lgamma log log10 log1p
log2 logb nearbyint rint round sin sinh sqrt tan tanh tgamma trunc acosh asinh atanh j0 j1 y0 y1""".split()
_MATH2 = "atan2 pow fmod fmax fmin hypot copysign fdim remainder nextafter".split()


def _device_math() -> str:
    out = []
    for t, suffix in (("float", "f"), ("double", "")):
        for n in _MATH1:
            out.append(f"__attribute__((device)) {t} {n}{suffix}({t});")
        for n in _MATH2:
            out.append(f"__attribute__((device)) {t} {n}{suffix}({t}, {t});")
        out.append(f"__attribute__((device)) {t} fma{suffix}({t}, {t}, {t});")
        out.append(f"__attribute__((device)) {t} ldexp{suffix}({t}, int);")
        out.append(f"__attribute__((device)) {t} frexp{suffix}({t}, int *);")
        out.append(f"__attribute__((device)) {t} modf{suffix}({t}, {t} *);")
        out.append(f"__attribute__((device)) void sincos{suffix}({t}, {t} *, {t} *);")
    out += ["__attribute__((device)) int abs(int);", "__attribute__((device)) long labs(long);",
            "__attribute__((device)) long long llabs(long long);",
            "__attribute__((device)) int printf(const char *, ...);",
            "__attribute__((device)) void *memcpy(void *, const void *, size_t);",
            "__attribute__((device)) void *memset(void *, int, size_t);",
            "__attribute__((device)) void *malloc(size_t);", "__attribute__((device)) void free(void *);",
            "__attribute__((device)) void __assert_fail(const char *, const char *, unsigned int, const char *);"]
    return "\n".join(out) + "\n"


def _gpu_prologue() -> str:
    std = "".join(f"#include <{h}>\n" for h in _STD_HEADERS)
    renamed = "".join(f"#define {n} __xp_clang{n}\n" for n in _RENAMED)
    return std + _device_math() + renamed + "#pragma clang force_cuda_host_device begin\n"


_GPU_TAIL = """
#pragma clang force_cuda_host_device end
extern "C" int __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0,
                                           void *stream = 0);
"""

_BANG_PRELUDE = """\
#define XP_CLANG_PARSE 1
#define __mlu_global__ __attribute__((global))
#define __mlu_entry__ __attribute__((global))
#define __mlu_func__ __attribute__((device)) inline
#define __mlu_device__ __attribute__((device))
#define __mlu_host__ __attribute__((host))
#define __mlu_const__ __attribute__((annotate("xp_mlu_const")))
#define __mlu_builtin__ __attribute__((device)) inline
#define __nram__ __attribute__((annotate("xp_nram")))
#define __wram__ __attribute__((annotate("xp_wram")))
#define __ldram__ __attribute__((annotate("xp_ldram")))
#define __mlu_shared__ __attribute__((annotate("xp_sram")))
"""
_BANG_TAIL = """
#pragma clang force_cuda_host_device end
extern "C" int __cudaPushCallConfiguration(cnrtDim3_t dim, cnrtFunctionType_t ktype,
                                           cnrtQueue_t queue = 0, size_t = 0);
"""


def _hip_tail() -> str:
    """MFMA builtins over clang's native vector types (the emulator's take ``ext_vec``, which
    stands in for them under g++), from platforms/hip/intrinsics/mfma.toml."""
    import platforms

    hip = platforms.module("hip", "emulate")

    def native(t: str) -> str:
        base, _, n = t.partition("x")
        elem = {"float": "float", "half": "_Float16"}[base]
        return f"__xp_native_{elem.strip('_')}x{n}" if n else elem

    out = [f"typedef {e} __xp_native_{e.strip('_')}x{n} __attribute__((ext_vector_type({n})));"
           for e in ("float", "_Float16") for n in (2, 4, 8, 16, 32)]
    for it in hip.load_mfma():
        at, ct = native(it["a_type"]), native(it["c_type"])
        out.append(f"__attribute__((device)) {ct} {it['name']}({at} a, {at} b, {ct} c, int cbsz, int abid, int blgp);")
    return _GPU_TAIL + "\n".join(out) + "\n"


class ClangUnavailable(RuntimeError):
    """libclang or its resource headers are not installed (setup.cfg lists both)."""


def _index():
    """A fresh index per parse: cheap, and nothing of libclang outlives the interpreter's
    shutdown (a cached one is finalised after the bindings are gone)."""
    try:
        import clang.cindex as ci
    except ImportError as exc:
        raise ClangUnavailable("the libclang wheel is not installed (pip install libclang==18.1.1)") from exc
    return ci, ci.Index.create()


@functools.lru_cache(maxsize=1)
def resource_dir() -> str:
    """Clang's builtin headers of LLVM ``LLVM_MAJOR`` (from the clang-tidy wheel)."""
    spec = importlib.util.find_spec("clang_tidy")
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    for root in roots:
        inc = root / "data" / "lib" / "clang" / str(LLVM_MAJOR) / "include"
        if (inc / "stddef.h").is_file():
            return str(inc)
    raise ClangUnavailable(f"clang's resource headers (LLVM {LLVM_MAJOR}) were not found: "
                           f"pip install clang-tidy=={LLVM_MAJOR}.1.8")


@dataclass
class ParsedUnit:
    """A clang translation unit of one source, with the diagnostics in the user's files."""

    tu: object
    path: str
    platform: str
    errors: list[Diagnostic] = field(default_factory=list)

    def cursor(self):
        return self.tu.cursor

    def in_user_file(self, cursor) -> bool:
        loc = cursor.location
        return loc.file is not None and self.in_user_file_name(loc.file.name)

    def in_user_file_name(self, name: str) -> bool:
        return _same_path(name, self.path)

    def user_cursors(self) -> list:
        """Every cursor of the user's file, in preorder: the subtrees of its top-level
        declarations (walking the whole unit visits the runtime and standard headers too:
        about 800k cursors and seconds per walk)."""
        cached = getattr(self, "_user_cursors", None)
        if cached is None:
            cached = [c for top in self.tu.cursor.get_children() if self.in_user_file(top)
                      for c in top.walk_preorder() if self.in_user_file(c)]
            self._user_cursors = cached
        return cached


@functools.lru_cache(maxsize=4096)
def _same_path(a: str, b: str) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


@functools.lru_cache(maxsize=None)
def _prefix(platform: str) -> str:
    """The emulator's runtime prefix for ``platform`` (profile macros + runtime headers): the
    part of a prepared unit before the user's first ``#line``, the same for every source (the
    emulator precompiles it once per platform), so it is taken once from an empty unit."""
    import platforms

    emulate = platforms.module(platform, "emulate")
    unit = emulate.prepare("\n", "prefix.src", strict=False, profile=emulate.load_profile(None))
    cut = unit.find("\n#line ")
    return unit[: cut + 1] if cut > 0 else ""


def clang_args(platform: str) -> tuple[list[str], str]:
    """(clang arguments, prelude text) for one platform."""
    import platforms

    emulate = platforms.module(platform, "emulate")
    inc = [f"-I{d}" for d in emulate.INCLUDE_DIRS]
    common = ["-std=c++17", "-isystem", resource_dir(), "-w", "-ferror-limit=50"]
    if platform == "vnni":
        # OpenMP pragmas are read as text (they stay in the source): clang ignores them, since
        # with -fopenmp libclang hides a directive's statement in an unexposed captured
        # statement (a static method called in a parallel block would not be seen); _OPENMP
        # keeps the OpenMP branches of conditionals. omp.h: clang's resource headers have none,
        # a declarations-only one is searched last
        omp = ["-D_OPENMP=201511", "-idirafter", str(Path(__file__).resolve().parent / "include")]
        return ["-x", "c++", "-march=native", *common, *inc, *omp], ""
    cuda = ["-x", "cuda", "--cuda-host-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_80",
            "-Wno-unknown-cuda-version"]
    prelude = _BANG_PRELUDE if platform == "bang" else _GPU_PRELUDE
    return [*cuda, *common, *inc], prelude


def _tail(platform: str) -> str:
    return {"bang": _BANG_TAIL, "hip": _hip_tail()}.get(platform, _GPU_TAIL)


def _precompiled_prelude(ci, index, platform: str, text: str, args: list[str]) -> str | None:
    """The prelude (qualifiers + runtime prefix) as a clang PCH in the build cache, built once
    per content: a parse then costs about a quarter of parsing the runtime again. None when it
    cannot be built (the caller includes the text instead)."""
    import hashlib
    import tempfile

    # the build cache's location and the runtime headers' digest have one home, shared with the run driver
    from platforms.common.build_cache import cache_dir, runtime_digest

    import platforms

    # a PCH is only valid for the headers it was built from
    headers = runtime_digest([Path(d) for d in platforms.module(platform, "emulate").INCLUDE_DIRS])
    key = hashlib.sha256("\0".join([str(LLVM_MAJOR), platform, " ".join(args), headers, text]).encode()
                         ).hexdigest()[:24]
    root = cache_dir() / "cxx"
    pch = root / f"{platform}-{key}.pch"
    if pch.is_file() and pch.stat().st_size > 0:
        return str(pch)
    try:
        root.mkdir(parents=True, exist_ok=True)
        header = str(root / f"prelude-{platform}-{key}.h")
        tu = index.parse(header, args=args, unsaved_files=[(header, text)],
                         options=ci.TranslationUnit.PARSE_INCOMPLETE)
        if any(d.severity >= 3 for d in tu.diagnostics):
            return None
        fd, tmp = tempfile.mkstemp(prefix=f".{pch.name}.", dir=root)
        os.close(fd)
        tu.save(tmp)
        os.replace(tmp, pch)   # atomic: concurrent parsers never see half a PCH
    except (OSError, ci.TranslationUnitSaveError, ci.TranslationUnitLoadError):
        return None
    return str(pch)


def parse(source: str, path: str, platform: str) -> ParsedUnit:
    """Parse ``source`` (the text of ``path``) as ``platform`` with clang."""
    ci, index = _index()
    args, prelude = clang_args(platform)
    unsaved = [(path, source)]
    if platform != "vnni":
        text = prelude + _gpu_prologue() + _prefix(platform) + _tail(platform)
        pch = _precompiled_prelude(ci, index, platform, text, args)
        if pch is not None:
            args = [*args, "-include-pch", pch]
        else:
            prelude_name = str(Path(path).resolve().parent / f".xp-clang-prelude-{platform}.h")
            unsaved.append((prelude_name, text))
            args = [*args, "-include", prelude_name]
    opts = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    try:
        try:
            tu = index.parse(path, args=args, unsaved_files=unsaved, options=opts)
        except ci.TranslationUnitLoadError:
            if "-include-pch" not in args:
                raise
            # a PCH clang rejects (removed or replaced meanwhile): parse with the prelude's text
            i = args.index("-include-pch")
            prelude_name = str(Path(path).resolve().parent / f".xp-clang-prelude-{platform}.h")
            unsaved.append((prelude_name, text))
            args = [*args[:i], "-include", prelude_name, *args[i + 2:]]
            tu = index.parse(path, args=args, unsaved_files=unsaved, options=opts)
    except ci.TranslationUnitLoadError as exc:
        raise SourceError(f"clang could not parse {path}: {exc}",
                          diagnostics=[Diagnostic("XP1300", f"clang could not parse the file: {exc}",
                                                  Coord(path, 1, 1))]) from None
    unit = ParsedUnit(tu, path, platform)
    for d in tu.diagnostics:
        if d.severity < 3:  # errors and fatal errors only
            continue
        loc = d.location
        in_user = loc.file is not None and os.path.abspath(loc.file.name) == os.path.abspath(path)
        where = Coord(path, loc.line, loc.column) if in_user else Coord(path, 1, 1)
        msg = d.spelling if in_user else f"{d.spelling} (in {loc.file.name if loc.file else '?'}:{loc.line})"
        unit.errors.append(Diagnostic("XP1300", msg, where, construct=None))
    return unit
