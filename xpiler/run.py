"""Run contract: execute any supported kernel file on the CPU virtual device (native for vnni).

``run_kernel(path, entry=None, args=[...], launch=None, platform=None, timeout=60)``

How a run works
1. The front-end parses the file into a ``Program`` (entry, parameter types).
2. ``platforms.<p>.emulate.prepare`` turns the source into one C++ translation unit that
   includes the platform's runtime; g++ builds it into a shared object, cached by content hash
   in the user cache directory (``$XPILER_CACHE_DIR`` or ``~/.cache/xpiler``), kept under
   ``$XPILER_CACHE_MAX_MB`` (default 4096) by deleting the least recently used objects.
3. A forked child process (time limit, address-space limit) loads the object with ctypes,
   configures the device profile, copies the numpy arguments into shared memory, which the
   runtime moves into guarded slots of its reserved arena (at least 4 GiB of PROT_NONE on each
   side, so an out-of-bounds access at any plausible distance faults and names the argument),
   calls the entry and checks the canaries. The parent copies the results back into the caller's arrays.
4. Errors come back as one ``__XPILER_ERROR__ {json}`` line and become typed exceptions
   (``xpiler.ir.errors``): BuildError, KernelRuntimeError, KernelTimeout, MemoryLimitExceeded,
   OutOfBoundsAccess, StrictModeViolation.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import mmap
import os
import re
import resource
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import platforms
from platforms.common.build_cache import TMP_DIR, cache_dir, runtime_digest
from .ir.errors import (BuildError, Coord, KernelRuntimeError, KernelTimeout, MemoryLimitExceeded,
                     OutOfBoundsAccess, StrictModeViolation, UsageError)
from .ir.program import Param, Program
from .parse import parse_source

DEFAULT_MEMORY_LIMIT = 8 << 30      # bytes of address space a kernel may add
DEFAULT_CACHE_MAX_MB = 4096         # build cache cap ($XPILER_CACHE_MAX_MB; 0 = no cap)
_PRUNE_MIN_AGE = 600                # seconds: younger cache files are never pruned (in use)
_PRUNE_EVERY = 50                   # fresh builds between two size checks of the cache
COMPILE_TIMEOUT = 180               # seconds for one g++ build
_BASE_FLAGS = ["-std=c++17", "-O2", "-shared", "-fPIC", "-w", "-fno-strict-aliasing"]


@dataclass
class RunResult:
    """What a run returns; pointer arguments were updated in place."""

    platform: str
    entry: str
    strict: bool
    time_s: float                       # wall time of the kernel call in the child
    build_s: float                      # 0 when the build came from the cache
    cached: bool
    warnings: list[str] = field(default_factory=list)
    stdout: str = ""

    def to_json(self) -> dict:
        return {"platform": self.platform, "entry": self.entry, "strict": self.strict,
                "time_s": self.time_s, "build_s": self.build_s, "cached": self.cached,
                "warnings": self.warnings, "stdout": self.stdout}


# ------------------------------------------------------------------------------ ctypes ABI
class RuntimeOptions(ctypes.Structure):  # mirrors xp_options_t in platforms/common/runtime/xp_core.h
    _fields_ = [("strict", ctypes.c_int), ("max_threads_per_block", ctypes.c_int),
                ("shared_mem_bytes", ctypes.c_longlong), ("warp_size", ctypes.c_int),
                ("nram_bytes", ctypes.c_longlong), ("wram_bytes", ctypes.c_longlong),
                ("sram_bytes", ctypes.c_longlong), ("ldram_bytes", ctypes.c_longlong),
                ("clusters", ctypes.c_int), ("cores_per_cluster", ctypes.c_int),
                ("fresh_fill", ctypes.c_int), ("reverse_blocks", ctypes.c_int)]


class _Launch(ctypes.Structure):  # mirrors xp_launch_t
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shmem", ctypes.c_ulonglong), ("dim", ctypes.c_uint * 3), ("ktype", ctypes.c_int)]


_SCALAR_CTYPES = {
    "float32": ctypes.c_float, "float64": ctypes.c_double, "int32": ctypes.c_int32,
    "uint32": ctypes.c_uint32, "int64": ctypes.c_int64, "uint64": ctypes.c_uint64,
    "int16": ctypes.c_int16, "uint16": ctypes.c_uint16, "int8": ctypes.c_int8,
    "uint8": ctypes.c_uint8, "bool": ctypes.c_bool,
}

# strict-mode rules a run may relax (xp::RelaxableRule in platforms/common/runtime/xp_core.h),
# with the warning text by which a lenient run reports that a program breaks them
RELAXABLE_RULES = {"barrier-divergence": (1, "barrier divergence")}


def numpy_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    if name == "void":
        return np.dtype(np.uint8)
    return np.dtype(name)


# ------------------------------------------------------------------------------ build
# Layout of the cache directory (``cache_dir()``):
#   <platform>-<key>.so, <platform>-<key>.so.sha256      a build and the sha256 of its bytes
#   prefix-<key>.h, prefix-<key>.h.gch, ....h.gch.sha256  a precompiled runtime prefix
#   tmp/xpiler-{build,pch,write}-<pid>-<random>          temporaries of a running build
# An object or .gch is used only when its bytes match the recorded sha256, a prefix header only
# when it holds exactly its prefix; anything else is corrupt and rebuilt. Everything under the
# directory is counted and can be pruned.
_TMP_RE = re.compile(r"^xpiler-(?:build|pch|write)-(\d+)-")
_TMP_GRACE = 600                    # seconds: a temporary whose process is gone is stale after this
_TMP_MAX_AGE = 3600                 # seconds: any older temporary is stale (builds time out at 180 s)
_PRODUCT_RE = re.compile(r"^(?P<main>.+\.so|prefix-[0-9a-f]+\.h(?P<gch>\.gch)?)(?P<sum>\.sha256)?$")


def cache_limit_bytes() -> int:
    """The build cache cap in bytes ($XPILER_CACHE_MAX_MB, default 4096; 0 means no cap)."""
    text = os.environ.get("XPILER_CACHE_MAX_MB", "").strip()
    try:
        mb = float(text) if text else DEFAULT_CACHE_MAX_MB
    except ValueError:
        raise UsageError(f"XPILER_CACHE_MAX_MB={text!r} is not a number of megabytes") from None
    return max(0, int(mb * (1 << 20)))


def _size(path: Path) -> int:
    """Bytes of a file, or of everything below a directory (symbolic links are not followed)."""
    try:
        st = path.lstat()
    except OSError:
        return 0
    if not stat.S_ISDIR(st.st_mode):
        return st.st_size
    total = 0
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode):
                total += st.st_size
    return total


def _remove(path: Path) -> bool:
    """Delete a file or a whole directory; False when it was not there (or could not go)."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
        return True
    except OSError:
        return False


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True                       # another user's process
    except (OverflowError, ValueError):
        return False
    return pid > 0


def _stale_temporary(name: str, mtime: float, now: float) -> bool:
    """A temporary is garbage when older than _TMP_MAX_AGE, or when the process named in it
    (xpiler-*-<pid>-...) is gone - or it names none (older versions) - and it is older than
    _TMP_GRACE (a margin for a builder in another pid namespace sharing the directory)."""
    age = now - mtime
    if age > _TMP_MAX_AGE:
        return True
    if age <= _TMP_GRACE:
        return False
    m = _TMP_RE.match(name)
    return m is None or not _pid_running(int(m.group(1)))


def _scan_cache(root: Path):
    """(build groups, temporaries) under ``root``.

    A group is one build product with its companions: ``X.so`` + ``X.so.sha256``, or
    ``prefix-K.h`` + ``.h.gch`` + ``.h.gch.sha256``; it is kept or deleted as a whole and its
    use time is the mtime of the object (``.so`` / ``.gch``, refreshed by each use). Every
    other entry (anything under ``tmp/``, and leftovers of older versions such as
    ``xpiler-pch-*`` directories) is a temporary. Items: (path, bytes, mtime)."""
    groups: dict[str, list] = {}
    temps = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return [], []
    for name in names:
        path = root / name
        try:
            st = path.lstat()
        except OSError:
            continue                      # removed by a concurrent pruner
        if name == TMP_DIR and stat.S_ISDIR(st.st_mode):
            try:
                inner = sorted(os.listdir(path))
            except OSError:
                inner = []
            for sub in inner:
                try:
                    sst = (path / sub).lstat()
                except OSError:
                    continue
                temps.append((path / sub, _size(path / sub), sst.st_mtime))
            continue
        m = _PRODUCT_RE.match(name)
        if m is None:
            temps.append((path, _size(path), st.st_mtime))
            continue
        key = m.group("main")
        if key.endswith(".gch"):
            key = key[:-4]
        groups.setdefault(key, []).append((path, _size(path), st.st_mtime))
    out = []
    for key, items in groups.items():
        main = [i for i in items if i[0].name == (key if key.endswith(".so") else key + ".gch")]
        mtime = max(i[2] for i in (main or items))
        out.append((mtime, items))
    return out, temps


def cache_usage() -> dict:
    """What ``xpiler cache`` shows: every entry under the cache directory is counted."""
    root = cache_dir()
    groups, temps = _scan_cache(root)
    now = time.time()
    build_files = [i for _, items in groups for i in items]
    stale = [t for t in temps if _stale_temporary(t[0].name, t[2], now)]
    return {"directory": str(root),
            "files": len(build_files) + len(temps),
            "bytes": sum(i[1] for i in build_files) + sum(t[1] for t in temps),
            "temporaries": len(temps), "temporary_bytes": sum(t[1] for t in temps),
            "stale_temporaries": len(stale), "stale_temporary_bytes": sum(t[1] for t in stale)}


def _remove_stale_temporaries(temps, now: float) -> tuple[int, int]:
    deleted = freed = 0
    for path, size, mtime in temps:
        if _stale_temporary(path.name, mtime, now) and _remove(path):
            deleted += 1
            freed += size
    return deleted, freed


def prune_cache(limit: int | None = None, *, min_age: float = _PRUNE_MIN_AGE) -> tuple[int, int]:
    """Delete stale temporaries, then least-recently-used builds until the cache (everything
    under its directory) is under 80% of ``limit``.

    Stale temporaries (see ``_stale_temporary``: left by a killed build) are always deleted,
    whatever the cap. A cache hit refreshes its object's mtime, so mtime order is use order.
    Builds younger than ``min_age`` seconds are kept whatever the size: another process may be
    about to load one it has just built or found (deleting it would make that run fail). A
    build is deleted with its companions (hash sidecar; a precompiled prefix with its header).
    Returns (entries deleted, bytes freed).
    """
    limit = cache_limit_bytes() if limit is None else limit
    root = cache_dir()
    groups, temps = _scan_cache(root)
    now = time.time()
    deleted, freed = _remove_stale_temporaries(temps, now)
    if limit <= 0:
        return deleted, freed
    total = sum(i[1] for _, items in groups for i in items) + sum(t[1] for t in temps) - freed
    if total <= limit:
        return deleted, freed
    target = int(limit * 0.8)
    for mtime, items in sorted(groups, key=lambda g: g[0]):
        if total <= target:
            break
        if now - mtime < min_age:
            break                         # everything after this one is younger still
        # the object first: a sidecar or header left behind alone is harmless
        for path, size, _ in sorted(items, key=lambda i: not i[0].name.endswith((".so", ".gch"))):
            if _remove(path):
                total -= size
                freed += size
                deleted += 1
    return deleted, freed


def clear_cache() -> tuple[int, int]:
    """Delete every build and every stale temporary (a running build's are kept)."""
    root = cache_dir()
    groups, temps = _scan_cache(root)
    deleted, freed = _remove_stale_temporaries(temps, time.time())
    for _, items in groups:
        for path, size, _ in items:
            if _remove(path):
                deleted += 1
                freed += size
    return deleted, freed


_fresh_builds = 0


def _note_fresh_build() -> None:
    """Check the cache every ``_PRUNE_EVERY`` fresh builds of this process (and on the first):
    stale temporaries go, and least-recently-used builds when over the cap."""
    global _fresh_builds
    if _fresh_builds % _PRUNE_EVERY == 0:
        try:
            prune_cache()
        except OSError:
            pass                          # pruning is housekeeping; a build never fails for it
    _fresh_builds += 1


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass


def _compiler_id() -> str:
    cxx = os.environ.get("CXX", "g++")
    exe = shutil.which(cxx)
    if not exe:
        raise BuildError(f"C++ compiler '{cxx}' not found; install g++ (the virtual device needs it)")
    return exe


def _sidecar(obj: Path) -> Path:
    return obj.with_name(obj.name + ".sha256")


def _file_sha256(path: Path) -> str:
    with open(path, "rb") as f:          # a directory raises IsADirectoryError
        return hashlib.file_digest(f, "sha256").hexdigest()


def _verified(obj: Path) -> bool:
    """Whether ``obj`` is a regular file whose sha256 is the one recorded when it was built.

    A missing, unreadable or mismatching sidecar, or an object that is not a regular file
    (truncated, overwritten, bit-flipped, replaced by another build or by a directory), is
    corrupt: the caller rebuilds it."""
    try:
        if not stat.S_ISREG(os.stat(obj).st_mode):
            return False
        want = _sidecar(obj).read_text().split()[0]
        return _file_sha256(obj) == want
    except (OSError, UnicodeDecodeError, IndexError):
        return False


def _tmp_name(kind: str) -> str:
    return f"xpiler-{kind}-{os.getpid()}-"


def _write_atomic(dest: Path, data: bytes) -> None:
    """Write ``dest`` via a temporary in the cache's tmp/ and a rename (readers see all or nothing)."""
    fd, name = tempfile.mkstemp(prefix=_tmp_name("write"), dir=dest.parent / TMP_DIR)
    try:
        os.fchmod(fd, 0o644)              # mkstemp's 0600 would hide it from a shared cache's users
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        _make_room(dest)
        os.replace(name, dest)
    except BaseException:
        _remove(Path(name))
        raise


def _make_room(dest: Path) -> None:
    """os.replace cannot overwrite a directory: a corrupt entry that is one goes first."""
    if dest.is_dir() and not dest.is_symlink():
        shutil.rmtree(dest, ignore_errors=True)


def _install(tmp_obj: Path, dest: Path) -> None:
    """Move a fresh build into the cache: the object (atomically), then its sha256 sidecar.

    Builds are deterministic (same unit, flags and compiler: same bytes), so concurrent builders
    of one key install the same bytes; a crash between the two steps leaves a mismatch, which
    the next use repairs by rebuilding."""
    digest = _file_sha256(tmp_obj)
    _make_room(dest)
    os.replace(tmp_obj, dest)
    _write_atomic(_sidecar(dest), f"{digest}\n".encode())


def build(platform: str, source: str, path: str, *, strict: bool, profile: dict) -> tuple[Path, float, bool]:
    """Build ``source`` for the virtual device; returns (shared object, build seconds, cached).

    A cached object is returned only after its bytes matched the sha256 recorded when it was
    built (otherwise it is rebuilt in place). Residual window: the run loads the object a few
    milliseconds later, in the forked child; a change made in place (not by rename) in between
    is not seen. Renames are harmless: the child opens whatever complete file is there."""
    from platforms.common.std_headers import complete

    emulate = platforms.module(platform, "emulate")
    # standard headers the source uses names of without including them (warning XP1152)
    source, _ = complete(source, platform)
    unit = emulate.prepare(source, path, strict=strict, profile=profile)
    include_dirs = [Path(d) for d in emulate.INCLUDE_DIRS]
    flags = _BASE_FLAGS + list(emulate.compile_flags(strict))
    cxx = _compiler_id()
    key = hashlib.sha256("\0".join([cxx, " ".join(flags), runtime_digest(include_dirs), unit]).encode()).hexdigest()[:32]
    root = cache_dir()
    out = root / f"{platform}-{key}.so"
    if _verified(out):
        _touch(out)                       # LRU order for prune_cache
        return out, 0.0, True
    _note_fresh_build()
    pch = _precompiled_prefix(cxx, flags, include_dirs, unit)
    tmp = Path(tempfile.mkdtemp(prefix=_tmp_name("build"), dir=root / TMP_DIR))
    try:
        src = tmp / "unit.cpp"
        tmp_so = tmp / "unit.so"
        if pch is not None:
            header, body = pch
            src.write_text(body)
            extra = ["-include", str(header), "-Winvalid-pch"]
        else:
            src.write_text(unit)
            extra = []
        cmd = [cxx, *flags, *(f"-I{d}" for d in include_dirs), *extra, str(src), "-o", str(tmp_so)]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise BuildError(f"{path}: building for the {platform} virtual device took more than "
                             f"{COMPILE_TIMEOUT} s") from None
        seconds = time.perf_counter() - t0
        if proc.returncode != 0:
            raise BuildError(f"{path}: does not build for the {platform} virtual device",
                             detail=_trim_compiler_output(proc.stderr, str(src)))
        _install(tmp_so, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out, seconds, False


def _precompiled_prefix(cxx: str, flags: list[str], include_dirs, unit: str):
    """Precompile the runtime part of ``unit`` (everything before its first ``#line``).

    Every emulated unit starts with the same runtime prefix (profile macros + runtime header),
    which is most of the compile time; g++ loads it from a .gch built once per prefix and flag
    set (the prefix must not depend on the source path, or each path builds its own). The .gch
    is used only when it matches its recorded sha256 and the header holds exactly the prefix;
    otherwise both are rebuilt (g++ ignores a garbage .gch silently, but fails on a truncated
    one). Returns (header, rest of the unit) or None when there is no prefix or the header does
    not precompile (the caller then builds the unit as it is).
    """
    cut = unit.find("\n#line ")
    if cut <= 0:
        return None
    prefix, body = unit[: cut + 1], unit[cut + 1:]
    pch_flags = [f for f in flags if f != "-shared"]
    key = hashlib.sha256("\0".join([cxx, " ".join(pch_flags), runtime_digest(include_dirs),
                                     prefix]).encode()).hexdigest()[:24]
    root = cache_dir()
    header = root / f"prefix-{key}.h"
    gch = Path(str(header) + ".gch")
    if _verified(gch):
        _touch(gch)
    else:
        tmp = Path(tempfile.mkdtemp(prefix=_tmp_name("pch"), dir=root / TMP_DIR))
        try:
            tmp_h = tmp / header.name
            tmp_h.write_text(prefix)
            cmd = [cxx, *pch_flags, *(f"-I{d}" for d in include_dirs), "-x", "c++-header", str(tmp_h),
                   "-o", str(tmp_h) + ".gch"]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
            except subprocess.TimeoutExpired:
                return None
            if proc.returncode != 0:
                return None
            _install(Path(str(tmp_h) + ".gch"), gch)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    try:
        intact = header.read_bytes() == prefix.encode()
    except OSError:
        intact = False
    if not intact:                   # atomically: a concurrent build may be reading it
        _write_atomic(header, prefix.encode())
    return header, body


def _trim_compiler_output(text: str, unit_path: str, limit: int = 40) -> str:
    lines = [l for l in text.splitlines() if l.strip()]
    errors = [l for l in lines if " error" in l or "error:" in l]
    keep = (errors or lines)[:limit]
    return "\n".join(l.replace(unit_path, "<generated>") for l in keep)


# ------------------------------------------------------------------------------ arguments
def _check_args(program: Program, entry_params: Sequence[Param], args: Sequence[Any]) -> list[Any]:
    if len(args) != len(entry_params):
        names = ", ".join(p.name for p in entry_params)
        raise UsageError(f"{program.entry.name} takes {len(entry_params)} argument(s) ({names}); "
                         f"{len(args)} given")
    out = []
    for p, a in zip(entry_params, args):
        if p.kind == "pointer":
            if not isinstance(a, np.ndarray):
                raise UsageError(f"argument '{p.name}' ({p.type}) must be a numpy array, got {type(a).__name__}")
            want = numpy_dtype(p.dtype)
            if p.dtype != "void" and a.dtype != want:
                raise UsageError(f"argument '{p.name}' is declared {p.type} ({want}) but the array has "
                                 f"dtype {a.dtype}; convert it explicitly (no implicit casts)")
            if not a.flags.c_contiguous:
                raise UsageError(f"argument '{p.name}' must be a C-contiguous array")
            out.append(a)
        else:
            if isinstance(a, np.ndarray):
                if a.size != 1:
                    raise UsageError(f"argument '{p.name}' is a scalar ({p.type}); got an array")
                a = a.item()
            if not isinstance(a, (int, float, bool, np.generic)):
                raise UsageError(f"argument '{p.name}' ({p.type}) must be a number")
            if p.dtype not in _SCALAR_CTYPES and p.dtype != "float16":
                raise UsageError(f"scalar parameter '{p.name}' has unsupported type {p.type}")
            if np.dtype(p.dtype).kind in "iu" and float(a) != int(a):
                raise UsageError(f"argument '{p.name}' is {p.type}; {a!r} is not an integer")
            _scalar_ctype(p, a)  # range check now, in the caller's process
            out.append(a)
    return out


def _scalar_ctype(p: Param, value):
    if p.dtype == "float16":
        return ctypes.c_uint16(int(np.array(value, dtype=np.float16).view(np.uint16)))
    ct = _SCALAR_CTYPES[p.dtype]
    if np.dtype(p.dtype).kind in "iub":
        info = np.iinfo(p.dtype) if p.dtype != "bool" else None
        v = int(value)
        if info is not None and not (info.min <= v <= info.max):
            raise UsageError(f"argument '{p.name}' = {v} does not fit {p.type}")
        return ct(v)
    return ct(float(value))


class _GuardedBuffer:
    """A shared anonymous mapping whose data ends right before a PROT_NONE page."""

    _libc = ctypes.CDLL(None, use_errno=True)

    def __init__(self, nbytes: int):
        page = mmap.PAGESIZE
        self.nbytes = nbytes
        self.padded = (max(nbytes, 1) + 15) // 16 * 16
        body = (self.padded + page - 1) // page * page
        self.map = mmap.mmap(-1, body + page, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.map))
        self.map_len = body + page
        self.offset = body - self.padded
        self.addr = self.base + self.offset
        self._body = body
        if self.padded > nbytes:  # canary in the slack, checked by __xp_check_canaries (0xA5)
            self.map[self.offset + nbytes:self.offset + self.padded] = b"\xa5" * (self.padded - nbytes)

    def protect_guard(self):
        self._libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        self._libc.mprotect(ctypes.c_void_p(self.base + self._body), mmap.PAGESIZE, 0)

    def view(self) -> memoryview:
        return memoryview(self.map)[self.offset:self.offset + self.nbytes]


# ------------------------------------------------------------------------------ launch
def _launch_struct(platform: str, launch: dict | None, profile: dict) -> _Launch:
    """The runtime's ``xp_launch_t`` for ``platforms.launch_config`` (the one resolution of a
    kernel entry's launch, shared with the lift)."""
    lc = platforms.launch_config(platform, launch, profile)
    cfg = _Launch()
    cfg.grid[:], cfg.block[:], cfg.shmem = lc.grid, lc.block, lc.shmem
    cfg.dim[:], cfg.ktype = lc.dim, lc.ktype
    return cfg


def _options(platform: str, strict: bool, profile: dict) -> RuntimeOptions:
    o = RuntimeOptions()
    o.strict = 1 if strict else 0
    o.max_threads_per_block = int(profile.get("max_threads_per_block", 1024))
    o.shared_mem_bytes = int(profile.get("shared_mem_bytes", 48 * 1024))
    o.warp_size = int(profile.get("warp_size", 64 if platform == "hip" else 32))
    o.nram_bytes = int(profile.get("nram_bytes", 768 * 1024))
    o.wram_bytes = int(profile.get("wram_bytes", 1024 * 1024))
    o.sram_bytes = int(profile.get("sram_bytes", 4096 * 1024))
    o.ldram_bytes = int(profile.get("ldram_bytes", 1 << 30))
    o.clusters = int(profile.get("clusters", 4))
    o.cores_per_cluster = int(profile.get("cores_per_cluster", 4))
    return o


# ------------------------------------------------------------------------------ child process
def _child(so: Path, entry_symbol: str, is_kernel: bool, params: Sequence[Param], values: list,
           buffers: list, launch: _Launch, options: RuntimeOptions, mem_limit: int, out_fd: int,
           relax_mask: int = 0) -> int:
    """Runs in the forked child; returns the exit status (never raises)."""
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    lib = ctypes.CDLL(str(so))
    # the runtime reserves its guarded arena here, before the address-space limit below (the
    # reservation is address space only; the runtime charges committed buffers to mem_limit)
    lib.__xp_configure(ctypes.byref(options))
    lib.__xp_set_memory_limit.argtypes = [ctypes.c_ulonglong]
    lib.__xp_set_memory_limit(mem_limit)
    lib.__xp_relax_rules.argtypes = [ctypes.c_uint]
    lib.__xp_relax_rules(relax_mask)
    reg = lib.__xp_register_buffer
    reg.restype = ctypes.c_void_p
    reg.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_char_p]
    addrs = []
    for p, buf in zip(params, buffers):
        if buf is not None:
            buf.protect_guard()
            # moved into a slot of the arena: far out-of-bounds accesses fault and name it
            addrs.append(reg(buf.base, buf.map_len, buf.addr, buf.nbytes, p.name.encode()))
        else:
            addrs.append(None)
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = _address_space() + mem_limit
        if hard == resource.RLIM_INFINITY or want < hard:
            resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError):
        pass
    try:
        # a host entry's local arrays sized by the data (a canonical-C step before host_heap
        # moves them to the heap) live on the main thread's stack, which grows up to this
        # limit (and the mappings below it): 8 MiB by default overflowed at inferred sizes
        soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
        want = 1 << 30 if hard == resource.RLIM_INFINITY else min(hard, 1 << 30)
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_STACK, (want, hard))
    except (ValueError, OSError):
        pass
    t0 = time.perf_counter()
    if is_kernel:
        alloc = lib.__xp_device_alloc_named
        alloc.restype = ctypes.c_void_p
        alloc.argtypes = [ctypes.c_ulonglong, ctypes.c_char_p]
        holders, device = [], []
        for p, v, buf, addr in zip(params, values, buffers, addrs):
            if buf is not None:
                d = alloc(buf.nbytes, p.name.encode())
                ctypes.memmove(d, addr, buf.nbytes)
                device.append((d, addr, buf))
                holders.append(ctypes.c_void_p(d))
            else:
                holders.append(_scalar_ctype(p, v))
        argv = (ctypes.c_void_p * max(1, len(holders)))(*[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders])
        getattr(lib, entry_symbol)(ctypes.byref(launch), argv)
        for d, addr, buf in device:
            ctypes.memmove(addr, d, buf.nbytes)
    else:
        fn = getattr(lib, entry_symbol)
        fn.restype = None
        call = [ctypes.c_void_p(addr) if buf is not None else _scalar_ctype(p, v)
                for p, v, buf, addr in zip(params, values, buffers, addrs)]
        fn(*call)
    elapsed = time.perf_counter() - t0
    lib.__xp_check_canaries()
    os.write(1, f"\n__XPILER_DONE__ {elapsed!r}\n".encode())
    return 0


def _address_space() -> int:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[0])
        return pages * mmap.PAGESIZE
    except (OSError, ValueError, IndexError):
        return 0


_ERROR_RE = re.compile(r"^__XPILER_ERROR__ (\{.*\})\s*$", re.M)
_WARN_RE = re.compile(r"^__XPILER_WARNING__ (\{.*\})\s*$", re.M)
_DONE_RE = re.compile(r"^__XPILER_DONE__ (\S+)\s*$", re.M)
_ERROR_CLASSES = {"oob": OutOfBoundsAccess, "strict": StrictModeViolation,
                  "memory": MemoryLimitExceeded, "runtime": KernelRuntimeError,
                  "abort": KernelRuntimeError}


_OOB_ARGUMENT_RE = re.compile(r"out-of-bounds (?:read|write) of argument '(\w+)' at byte offset (\d+)")


def oob_argument(exc) -> tuple[str, int] | None:
    """(argument name, byte offset) of an ``OutOfBoundsAccess`` past the end of a pointer
    argument (the runtime's message, xp_core.h), or None (another region, an underrun)."""
    m = _OOB_ARGUMENT_RE.search(getattr(exc, "message", "") or "")
    return (m.group(1), int(m.group(2))) if m else None


def _host_wrapper(entry) -> str:
    """An ``extern "C"`` forwarder for a host entry with C++ linkage (its symbol is mangled)."""
    params = ", ".join(f"{p.type} __xp_a{i}" for i, p in enumerate(entry.params))
    args = ", ".join(f"__xp_a{i}" for i in range(len(entry.params)))
    return (f'\nextern "C" __attribute__((visibility("default"), used)) void __xp_host_{entry.name}({params}) '
            f'{{ {entry.name}({args}); }}\n')


def _execute(so: Path, program: Program, entry_params, values, launch, options, timeout, mem_limit,
             path: str, relax_mask: int = 0) -> tuple[float, list[str], str]:
    entry = program.entry
    is_kernel = entry.kind == "kernel"
    symbol = (f"__xp_kernel_{entry.name}" if is_kernel
              else entry.name if entry.extern_c else f"__xp_host_{entry.name}")
    buffers = []
    for p, v in zip(entry_params, values):
        if p.kind == "pointer":
            buf = _GuardedBuffer(v.nbytes)
            buf.view()[:] = v.reshape(-1).view(np.uint8).data if v.nbytes else b""
            buffers.append(buf)
        else:
            buffers.append(None)
    with tempfile.TemporaryFile() as out:
        pid = os.fork()
        if pid == 0:  # child
            signal.setitimer(signal.ITIMER_REAL, 0)  # no translate --time-limit alarm here (TimeLimit)
            status = 1
            try:
                status = _child(so, symbol, is_kernel, entry_params, values, buffers, launch,
                                options, mem_limit, out.fileno(), relax_mask)
            except MemoryError:
                os.write(2, b'\n__XPILER_ERROR__ {"kind": "memory", "kernel": "", "message": "out of memory"}\n')
                status = 43
            except BaseException as exc:  # report anything, never return into the parent's code
                msg = json.dumps({"kind": "runtime", "kernel": entry.name,
                                  "message": f"{type(exc).__name__}: {exc}"})
                os.write(2, f"\n__XPILER_ERROR__ {msg}\n".encode())
                status = 40
            finally:
                os._exit(status)
        status = _wait(pid, timeout)
        out.seek(0)
        text = out.read().decode(errors="replace")
    warnings = [json.loads(m.group(1)).get("message", "") for m in _WARN_RE.finditer(text)]
    stdout = _ERROR_RE.sub("", _WARN_RE.sub("", _DONE_RE.sub("", text))).strip("\n")
    if status is None:
        raise KernelTimeout(f"{entry.name} did not finish within {timeout:g} s (hang or deadlock?)",
                            kernel=entry.name, coord=Coord(path), detail=stdout[-2000:] or None)
    err = _ERROR_RE.search(text)
    if err:
        info = json.loads(err.group(1))
        cls = _ERROR_CLASSES.get(info.get("kind"), KernelRuntimeError)
        kernel = info.get("kernel") or entry.name
        raise cls(info.get("message", "kernel failed"), kernel=kernel, coord=Coord(path),
                  detail=stdout[-2000:] or None)
    done = _DONE_RE.search(text)
    if status != 0 or not done:
        if status < 0:
            sig = signal.Signals(-status).name
            if -status == signal.SIGKILL:
                raise MemoryLimitExceeded(f"{entry.name} was killed (memory limit {mem_limit >> 20} MiB?)",
                                          kernel=entry.name, coord=Coord(path))
            raise KernelRuntimeError(f"{entry.name} crashed with {sig}", kernel=entry.name,
                                     coord=Coord(path), detail=stdout[-2000:] or None)
        raise KernelRuntimeError(f"{entry.name} exited with status {status}", kernel=entry.name,
                                 coord=Coord(path), detail=stdout[-2000:] or None)
    for p, v, buf in zip(entry_params, values, buffers):
        if buf is not None and v.nbytes:
            v.reshape(-1).view(np.uint8)[:] = np.frombuffer(buf.view(), dtype=np.uint8)
    for buf in buffers:
        if buf is not None:
            buf.map.close()
    return float(done.group(1)), warnings, stdout


def _wait(pid: int, timeout: float) -> int | None:
    """Wait for the child; returns its exit status (negative: signal), None after a time-out."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


# ------------------------------------------------------------------------------ public API
def run_kernel(path: str | os.PathLike, entry: str | None = None, args: Sequence[Any] = (),
               launch: dict | None = None, platform: str | None = None, timeout: float = 60,
               *, strict: bool = False, profile: str | dict | None = None,
               memory_limit: int = DEFAULT_MEMORY_LIMIT, source: str | None = None,
               program: Program | None = None, relax: Sequence[str] = (),
               fresh_fill: int | None = None, reverse_blocks: bool = False) -> RunResult:
    """Run ``path``'s entry on the virtual device; pointer arguments are updated in place.

    ``args``: one item per entry parameter — numpy arrays for pointers (dtype must match the
    declared type), numbers for scalars. ``launch``: only for a device-kernel entry:
    ``{"grid": (x,y,z), "block": (x,y,z), "shmem": n}`` or, for BANG,
    ``{"clusters": C, "cores": K, "type": "union1"}``; default from the device profile.
    ``strict``: enforce the target's rules (used for every translation xpiler emits).
    ``relax``: names from ``RELAXABLE_RULES`` that strict mode only warns about in this run
    (a translation's output is not held to a rule its source breaks).
    ``fresh_fill``: the byte (0-255) fresh device and on-chip memory holds in this run (default:
    0xFF poison in strict mode, else zeros); two runs with different fills tell the output
    elements that depend on uninitialised memory.
    ``reverse_blocks``: CUDA/HIP blocks and the threads of each block (between barriers), or BANG
    task groups and the tasks of each group, run in reverse order (they run one after another):
    the output elements that change depend on that order (several blocks or tasks write them,
    or threads race on shared memory).
    """
    path = str(path)
    if source is None:
        try:
            source = Path(path).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {path}: {exc}") from None
    if program is None:
        plat = platforms.canonical(platform) if platform else platforms.detect(path, source)
        program = parse_source(source, plat, path, entry=entry)
    plat = program.platform
    if program.entry is None:
        raise UsageError(f"{path}: no entry function found (an extern \"C\" host function or a kernel)")
    prof = profile if isinstance(profile, dict) else platforms.profile(plat, profile)
    if launch is not None and program.entry.kind != "kernel":
        raise UsageError(f"{path}: launch= applies to a device-kernel entry; {program.entry.name} is a host "
                         "function that launches its kernels itself")
    params = program.entry.params
    values = _check_args(program, params, args)
    so, build_s, cached = build(plat, _unit_source(program, source), path, strict=strict, profile=prof)
    launch_cfg = _launch_struct(plat, launch, prof) if program.entry.kind == "kernel" else _Launch()
    options = _options(plat, strict, prof)
    if fresh_fill is not None:
        if not 0 <= fresh_fill <= 255:
            raise UsageError(f"fresh_fill={fresh_fill}: expected a byte value 0-255")
        options.fresh_fill = fresh_fill + 1
    options.reverse_blocks = 1 if reverse_blocks else 0
    elapsed, warnings, stdout = _execute(so, program, params, values, launch_cfg, options, timeout,
                                         memory_limit, path, relax_mask(relax))
    return RunResult(plat, program.entry.name, strict, elapsed, build_s, cached, warnings, stdout)


def _unit_source(program: Program, source: str) -> str:
    """What is built for ``program``: its text, with a C-linkage wrapper for a host entry."""
    if program.entry.kind == "host" and not program.entry.extern_c:
        return source + _host_wrapper(program.entry)
    return source


def build_program(program: Program, path: str | os.PathLike, *, strict: bool = False,
                  profile: str | dict | None = None) -> float:
    """Build ``program`` for the virtual device as ``run_kernel(path, program=program)`` will
    (the text of ``path``), so its runs find the object in the cache; the build's seconds (0
    when it was cached)."""
    path = str(path)
    source = Path(path).read_text()
    prof = profile if isinstance(profile, dict) else platforms.profile(program.platform, profile)
    _so, build_s, _cached = build(program.platform, _unit_source(program, source), path, strict=strict,
                                  profile=prof)
    return build_s


def relax_mask(names: Sequence[str]) -> int:
    mask = 0
    for name in names:
        if name not in RELAXABLE_RULES:
            raise UsageError(f"unknown relaxable rule '{name}' (known: {', '.join(RELAXABLE_RULES)})")
        mask |= RELAXABLE_RULES[name][0]
    return mask


def broken_rules(warnings: Sequence[str]) -> list[str]:
    """The relaxable rules a (lenient) run's warnings say the program breaks."""
    return [name for name, (_, text) in RELAXABLE_RULES.items() if any(text in w for w in warnings)]
