"""Run contract: execute any supported kernel file on the CPU virtual device (native for vnni).

``run_kernel(path, entry=None, args=[...], launch=None, platform=None, timeout=60)``

How a run works
1. The front-end parses the file into a ``Program`` (entry, parameter types).
2. ``platforms.<p>.emulate.prepare`` turns the source into one C++ translation unit that
   includes the platform's runtime; g++ builds it into a shared object, cached by content hash
   in the user cache directory (``$XPILER_CACHE_DIR`` or ``~/.cache/xpiler``), kept under
   ``$XPILER_CACHE_MAX_MB`` (default 4096) by deleting the least recently used objects.
3. A forked child process (time limit, address-space limit) loads the object with ctypes,
   configures the device profile, copies the numpy arguments into guarded shared memory (each
   ends at a PROT_NONE page, so an overrun faults and names the argument), calls the entry and
   checks the canaries. The parent copies the results back into the caller's arrays.
4. Errors come back as one ``__XPILER_ERROR__ {json}`` line and become typed exceptions
   (``xpiler.errors``): BuildError, KernelRuntimeError, KernelTimeout, MemoryLimitExceeded,
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
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import platforms
from .errors import (BuildError, Coord, KernelRuntimeError, KernelTimeout, MemoryLimitExceeded,
                     OutOfBoundsAccess, StrictModeViolation, UsageError)
from .program import Param, Program, parse_source

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
class _Options(ctypes.Structure):  # mirrors xp_options_t in platforms/common/runtime/xp_core.h
    _fields_ = [("strict", ctypes.c_int), ("max_threads_per_block", ctypes.c_int),
                ("shared_mem_bytes", ctypes.c_longlong), ("warp_size", ctypes.c_int),
                ("nram_bytes", ctypes.c_longlong), ("wram_bytes", ctypes.c_longlong),
                ("sram_bytes", ctypes.c_longlong), ("ldram_bytes", ctypes.c_longlong),
                ("clusters", ctypes.c_int), ("cores_per_cluster", ctypes.c_int)]


class _Launch(ctypes.Structure):  # mirrors xp_launch_t
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("shmem", ctypes.c_ulonglong), ("dim", ctypes.c_uint * 3), ("ktype", ctypes.c_int)]


_SCALAR_CTYPES = {
    "float32": ctypes.c_float, "float64": ctypes.c_double, "int32": ctypes.c_int32,
    "uint32": ctypes.c_uint32, "int64": ctypes.c_int64, "uint64": ctypes.c_uint64,
    "int16": ctypes.c_int16, "uint16": ctypes.c_uint16, "int8": ctypes.c_int8,
    "uint8": ctypes.c_uint8, "bool": ctypes.c_bool,
}

_BANG_KTYPES = {"block": 1, "union1": 4, "union2": 8, "union4": 16, "union8": 32, "union16": 64}


def numpy_dtype(name: str) -> np.dtype:
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    if name == "void":
        return np.dtype(np.uint8)
    return np.dtype(name)


# ------------------------------------------------------------------------------ build
def cache_dir() -> Path:
    root = os.environ.get("XPILER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "xpiler")
    path = Path(root) / "build"
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_limit_bytes() -> int:
    """The build cache cap in bytes ($XPILER_CACHE_MAX_MB, default 4096; 0 means no cap)."""
    text = os.environ.get("XPILER_CACHE_MAX_MB", "").strip()
    try:
        mb = float(text) if text else DEFAULT_CACHE_MAX_MB
    except ValueError:
        raise UsageError(f"XPILER_CACHE_MAX_MB={text!r} is not a number of megabytes") from None
    return max(0, int(mb * (1 << 20)))


def prune_cache(limit: int | None = None, *, min_age: float = _PRUNE_MIN_AGE) -> tuple[int, int]:
    """Delete least-recently-used build products until the cache is under 80% of ``limit``.

    A cache hit refreshes its file's mtime, so mtime order is use order. Files younger than
    ``min_age`` seconds are kept whatever the size: another process may be about to load one
    it has just built or found (deleting it would make that run fail). A precompiled prefix is
    deleted together with its header. Returns (files deleted, bytes freed).
    """
    limit = cache_limit_bytes() if limit is None else limit
    if limit <= 0:
        return 0, 0
    root = cache_dir()
    entries = []
    total = 0
    for f in root.iterdir():
        try:
            st = f.stat()
        except OSError:
            continue                      # removed by a concurrent pruner
        if not f.is_file():
            continue
        total += st.st_size
        if f.suffix in (".so", ".gch"):
            entries.append((st.st_mtime, f, st.st_size))
    if total <= limit:
        return 0, 0
    target = int(limit * 0.8)
    now = time.time()
    deleted = freed = 0
    for mtime, f, size in sorted(entries, key=lambda e: e[0]):
        if total <= target:
            break
        if now - mtime < min_age:
            break                         # everything after this one is younger still
        victims = [f]
        if f.suffix == ".gch":
            victims.append(f.with_suffix(""))        # prefix-<key>.h.gch -> prefix-<key>.h
        for v in victims:
            try:
                vsize = v.stat().st_size
                v.unlink()
            except OSError:
                continue
            total -= vsize
            freed += vsize
            deleted += 1
    return deleted, freed


_fresh_builds = 0


def _note_fresh_build() -> None:
    """Check the cache size every ``_PRUNE_EVERY`` fresh builds of this process (and on the first)."""
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


def _runtime_digest(include_dirs: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for d in include_dirs:
        for f in sorted(Path(d).rglob("*")):
            if f.is_file() and f.suffix in (".h", ".hpp", ".inc", ".def"):
                h.update(str(f.relative_to(d)).encode())
                h.update(f.read_bytes())
    return h.hexdigest()


def build(platform: str, source: str, path: str, *, strict: bool, profile: dict) -> tuple[Path, float, bool]:
    """Build ``source`` for the virtual device; returns (shared object, build seconds, cached)."""
    emulate = platforms.module(platform, "emulate")
    unit = emulate.prepare(source, path, strict=strict, profile=profile)
    include_dirs = [Path(d) for d in emulate.INCLUDE_DIRS]
    flags = _BASE_FLAGS + list(emulate.compile_flags(strict))
    cxx = _compiler_id()
    key = hashlib.sha256("\0".join([cxx, " ".join(flags), _runtime_digest(include_dirs), unit]).encode()).hexdigest()[:32]
    out = cache_dir() / f"{platform}-{key}.so"
    if out.exists():
        _touch(out)                       # LRU order for prune_cache
        return out, 0.0, True
    _note_fresh_build()
    pch = _precompiled_prefix(cxx, flags, include_dirs, unit)
    with tempfile.TemporaryDirectory(prefix="xpiler-build-") as tmp:
        src = Path(tmp) / "unit.cpp"
        tmp_so = Path(tmp) / "unit.so"
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
        os.replace(tmp_so, out)  # atomic: concurrent builders never see half a file
    return out, seconds, False


def _precompiled_prefix(cxx: str, flags: list[str], include_dirs, unit: str):
    """Precompile the runtime part of ``unit`` (everything before its first ``#line``).

    Every emulated unit starts with the same runtime prefix (profile macros + runtime header),
    which is most of the compile time; g++ loads it from a .gch built once per prefix and flag
    set. Returns (header, rest of the unit) or None when there is no prefix or the header does
    not precompile (the caller then builds the unit as it is).
    """
    cut = unit.find("\n#line ")
    if cut <= 0:
        return None
    prefix, body = unit[: cut + 1], unit[cut + 1:]
    pch_flags = [f for f in flags if f != "-shared"]
    key = hashlib.sha256("\0".join([cxx, " ".join(pch_flags), _runtime_digest(include_dirs),
                                     prefix]).encode()).hexdigest()[:24]
    header = cache_dir() / f"prefix-{key}.h"
    gch = Path(str(header) + ".gch")
    if not gch.exists():
        with tempfile.TemporaryDirectory(prefix="xpiler-pch-", dir=cache_dir()) as tmp:
            tmp_h = Path(tmp) / header.name
            tmp_h.write_text(prefix)
            cmd = [cxx, *pch_flags, *(f"-I{d}" for d in include_dirs), "-x", "c++-header", str(tmp_h),
                   "-o", str(tmp_h) + ".gch"]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=COMPILE_TIMEOUT)
            except subprocess.TimeoutExpired:
                return None
            if proc.returncode != 0:
                return None
            if not header.exists():
                os.replace(tmp_h, header)
            os.replace(str(tmp_h) + ".gch", gch)
    else:
        _touch(gch)
    if not header.exists():          # atomically: a concurrent build may be reading it
        fd, tmp_name = tempfile.mkstemp(prefix=header.name, dir=cache_dir())
        with os.fdopen(fd, "w") as f:
            f.write(prefix)
        os.replace(tmp_name, header)
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
    cfg = _Launch()
    default = dict(profile.get("default_launch") or {})
    for key in ("grid", "block"):  # CUDA/HIP profiles: default_grid / default_block
        if f"default_{key}" in profile:
            default.setdefault(key, profile[f"default_{key}"])
    launch = {**default, **(launch or {})}

    def dims(v, name):
        if v is None:
            return (1, 1, 1)
        if isinstance(v, int):
            v = (v,)
        v = tuple(int(x) for x in v)
        if not 1 <= len(v) <= 3 or any(x < 1 for x in v):
            raise UsageError(f"launch {name} must be 1-3 positive integers, got {v}")
        return v + (1,) * (3 - len(v))

    if platform == "bang":
        clusters = int(launch.get("clusters", profile.get("clusters", 4)))
        cores = int(launch.get("cores", profile.get("cores_per_cluster", 4)))
        kind = str(launch.get("type") or ("block" if cores == 1 and clusters == 1 else f"union{clusters}")).lower()
        kind = kind.replace("cnrt_func_type_", "").replace("cnrtfunctype", "")
        if kind not in _BANG_KTYPES:
            raise UsageError(f"unknown BANG function type '{launch.get('type')}' "
                             f"(choose from {', '.join(_BANG_KTYPES)})")
        cfg.dim[:] = dims(launch.get("dim") or (clusters * cores, 1, 1), "dim")
        cfg.ktype = _BANG_KTYPES[kind]
    else:
        cfg.grid[:] = dims(launch.get("grid"), "grid")
        cfg.block[:] = dims(launch.get("block"), "block")
        cfg.shmem = int(launch.get("shmem", 0))
    return cfg


def _options(platform: str, strict: bool, profile: dict) -> _Options:
    o = _Options()
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
           buffers: list, launch: _Launch, options: _Options, mem_limit: int, out_fd: int) -> int:
    """Runs in the forked child; returns the exit status (never raises)."""
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = _address_space() + mem_limit
        if hard == resource.RLIM_INFINITY or want < hard:
            resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError):
        pass
    lib = ctypes.CDLL(str(so))
    lib.__xp_configure(ctypes.byref(options))
    reg = lib.__xp_register_buffer
    reg.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_char_p]
    for p, buf in zip(params, buffers):
        if buf is not None:
            buf.protect_guard()
            reg(buf.base, buf.map_len, buf.addr, buf.nbytes, p.name.encode())
    t0 = time.perf_counter()
    if is_kernel:
        alloc = lib.__xp_device_alloc
        alloc.restype = ctypes.c_void_p
        alloc.argtypes = [ctypes.c_ulonglong]
        holders, device = [], []
        for p, v, buf in zip(params, values, buffers):
            if buf is not None:
                d = alloc(buf.nbytes)
                ctypes.memmove(d, buf.addr, buf.nbytes)
                device.append((d, buf))
                holders.append(ctypes.c_void_p(d))
            else:
                holders.append(_scalar_ctype(p, v))
        argv = (ctypes.c_void_p * max(1, len(holders)))(*[ctypes.cast(ctypes.pointer(h), ctypes.c_void_p) for h in holders])
        getattr(lib, entry_symbol)(ctypes.byref(launch), argv)
        for d, buf in device:
            ctypes.memmove(buf.addr, d, buf.nbytes)
    else:
        fn = getattr(lib, entry_symbol)
        fn.restype = None
        call = [ctypes.c_void_p(buf.addr) if buf is not None else _scalar_ctype(p, v)
                for p, v, buf in zip(params, values, buffers)]
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


def _host_wrapper(entry) -> str:
    """An ``extern "C"`` forwarder for a host entry with C++ linkage (its symbol is mangled)."""
    params = ", ".join(f"{p.type} __xp_a{i}" for i, p in enumerate(entry.params))
    args = ", ".join(f"__xp_a{i}" for i in range(len(entry.params)))
    return (f'\nextern "C" __attribute__((visibility("default"), used)) void __xp_host_{entry.name}({params}) '
            f'{{ {entry.name}({args}); }}\n')


def _execute(so: Path, program: Program, entry_params, values, launch, options, timeout, mem_limit,
             path: str) -> tuple[float, list[str], str]:
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
            status = 1
            try:
                status = _child(so, symbol, is_kernel, entry_params, values, buffers, launch,
                                options, mem_limit, out.fileno())
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
               program: Program | None = None) -> RunResult:
    """Run ``path``'s entry on the virtual device; pointer arguments are updated in place.

    ``args``: one item per entry parameter — numpy arrays for pointers (dtype must match the
    declared type), numbers for scalars. ``launch``: only for a device-kernel entry:
    ``{"grid": (x,y,z), "block": (x,y,z), "shmem": n}`` or, for BANG,
    ``{"clusters": C, "cores": K, "type": "union1"}``; default from the device profile.
    ``strict``: enforce the target's rules (used for every translation xpiler emits).
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
    emulate = platforms.module(plat, "emulate")
    prof = profile if isinstance(profile, dict) else emulate.load_profile(profile)
    if launch is not None and program.entry.kind != "kernel":
        raise UsageError(f"{path}: launch= applies to a device-kernel entry; {program.entry.name} is a host "
                         "function that launches its kernels itself")
    params = program.entry.params
    values = _check_args(program, params, args)
    unit_source = source
    if program.entry.kind == "host" and not program.entry.extern_c:
        unit_source = source + _host_wrapper(program.entry)
    so, build_s, cached = build(plat, unit_source, path, strict=strict, profile=prof)
    launch_cfg = _launch_struct(plat, launch, prof) if program.entry.kind == "kernel" else _Launch()
    elapsed, warnings, stdout = _execute(so, program, params, values, launch_cfg,
                                         _options(plat, strict, prof), timeout, memory_limit, path)
    return RunResult(plat, program.entry.name, strict, elapsed, build_s, cached, warnings, stdout)
