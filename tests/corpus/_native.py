"""A small native harness for the VNNI corpus: build with g++, call with ctypes.

Interim until ``xpiler.run_kernel`` covers vnni files; kept deliberately small.
Builds are cached by a hash of (source, flags, compiler version) under
``$XPILER_VNNI_CORPUS_CACHE`` or ``<tmp>/xpiler-vnni-corpus-<uid>``, so a cached object can
never be stale.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

import numpy as np

CXX = os.environ.get("CXX", "g++")
FLAGS = ["-O1", "-march=native", "-shared", "-fPIC", "-std=gnu++17"]
REQUIRED_FLAGS = ("avx512f", "avx512bw", "avx512vl", "avx512_vnni")


def missing_cpu_flags() -> list[str]:
    """CPU flags the corpus needs that /proc/cpuinfo does not list (all of them if unreadable)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return list(REQUIRED_FLAGS)
    flags: set[str] = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
            break
    return [f for f in REQUIRED_FLAGS if f not in flags]


@lru_cache(maxsize=None)
def compiler_id() -> str:
    if shutil.which(CXX) is None:
        return ""
    out = subprocess.run([CXX, "--version"], capture_output=True, text=True)
    return out.stdout.splitlines()[0] if out.returncode == 0 and out.stdout else ""


def cache_dir() -> Path:
    d = os.environ.get("XPILER_VNNI_CORPUS_CACHE")
    p = Path(d) if d else Path(tempfile.gettempdir()) / f"xpiler-vnni-corpus-{os.getuid()}"
    p.mkdir(parents=True, exist_ok=True)
    return p


class BuildFailed(RuntimeError):
    pass


def build(src: Path, flags: list[str] | None = None) -> Path:
    """Compile ``src`` to a shared object (cached); raise BuildFailed with g++'s message."""
    flags = list(flags or FLAGS)
    text = Path(src).read_bytes()
    key = hashlib.sha256(text + "\0".join(flags + [compiler_id()]).encode()).hexdigest()[:24]
    out = cache_dir() / f"{Path(src).stem}-{key}.so"
    if out.exists():
        return out
    tmp = out.with_suffix(f".{os.getpid()}.tmp")
    proc = subprocess.run([CXX, *flags, str(src), "-o", str(tmp)], capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BuildFailed(f"{CXX} {' '.join(flags)} {src} failed:\n{proc.stderr[-4000:]}")
    os.replace(tmp, out)
    return out


def build_many(sources, workers: int = 2) -> dict[Path, Path | BuildFailed]:
    """Build several files with ``workers`` parallel compilers; failures are returned."""
    def one(s):
        try:
            return s, build(s)
        except BuildFailed as exc:
            return s, exc
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(pool.map(one, list(sources)))


_CT_SCALARS = {"int8": ctypes.c_int8, "uint8": ctypes.c_uint8, "int16": ctypes.c_int16,
               "uint16": ctypes.c_uint16, "int32": ctypes.c_int32, "uint32": ctypes.c_uint32,
               "int64": ctypes.c_int64, "uint64": ctypes.c_uint64, "float32": ctypes.c_float,
               "float64": ctypes.c_double, "bool": ctypes.c_bool}


def call(lib_path: Path, entry: str, params: list[dict], args: list) -> None:
    """Call ``entry`` of a built object; numpy arrays are passed by pointer (in place)."""
    lib = ctypes.CDLL(str(lib_path))
    fn = getattr(lib, entry)
    fn.restype = None
    cargs, keep = [], []
    for p, a in zip(params, args):
        if p["role"] == "scalar":
            cargs.append(_CT_SCALARS[p["dtype"]](a))
            continue
        if not (isinstance(a, np.ndarray) and a.flags.c_contiguous and a.flags.writeable):
            raise TypeError(f"param {p['name']}: expected a writable C-contiguous array")
        keep.append(a)
        cargs.append(ctypes.c_void_p(a.ctypes.data))
    fn.argtypes = [type(c) for c in cargs]
    fn(*cargs)
