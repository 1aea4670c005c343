"""Tiny ctypes harness for the CUDA/HIP emulator tests (independent of xpiler/run.py).

``build(platform, source)`` runs ``platforms/<p>/emulate.prepare`` and compiles the unit with g++
into a .so cached by content hash; ``call(so, entry, args, ...)`` runs one entry in a forked child
(so runtime errors, which ``_exit(40+kind)``, cannot kill pytest) and returns the exit code, the
captured stderr and the arrays after the run.

args: numpy arrays (pointers; written back) or ctypes scalars (``ctypes.c_int(5)``). With
``launch=((gx,gy,gz),(bx,by,bz))`` the entry is a kernel: arrays are copied into device
allocations (``__xp_device_alloc``) and the ``__xp_kernel_<entry>`` stub is called.
"""
from __future__ import annotations

import ctypes
import hashlib
import importlib
import multiprocessing
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from xpiler.run import RuntimeOptions

ROOT = Path(__file__).resolve().parents[2]


Options = RuntimeOptions   # xp_options_t, mirrored once (xpiler/run.py)


class Launch(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shmem", ctypes.c_ulonglong),
                ("dim", ctypes.c_uint * 3), ("ktype", ctypes.c_int)]


@dataclass
class Result:
    rc: int
    stderr: str
    arrays: list = field(default_factory=list)

    def error(self) -> dict | None:
        import json
        for line in self.stderr.splitlines():
            if line.startswith("__XPILER_ERROR__ "):
                return json.loads(line[len("__XPILER_ERROR__ "):])
        return None


def cache_dir() -> Path:
    d = Path(os.environ.get("XPILER_CACHE_DIR", tempfile.gettempdir())) / "emu-harness"
    d.mkdir(parents=True, exist_ok=True)
    return d


def prepare(platform: str, source: str, *, strict: bool = False, path: str = "kernel.cu", profile: str | None = None) -> str:
    emu = importlib.import_module(f"platforms.{platform}.emulate")
    return emu.prepare(source, path, strict=strict, profile=emu.load_profile(profile))


def build(platform: str, source: str, *, strict: bool = False, path: str = "kernel.cu", opt: str = "-O1",
          profile: str | None = None) -> Path:
    emu = importlib.import_module(f"platforms.{platform}.emulate")
    unit = emu.prepare(source, path, strict=strict, profile=emu.load_profile(profile))
    flags = ["-std=c++17", opt, "-shared", "-fPIC", "-w"] + [f"-I{d}" for d in emu.INCLUDE_DIRS] + emu.compile_flags(strict)
    h = hashlib.sha256((unit + "\0" + " ".join(flags)).encode())
    for d in emu.INCLUDE_DIRS:  # the runtime headers are part of the build
        for f in sorted(Path(d).rglob("*.h")):
            h.update(f.read_bytes())
    key = h.hexdigest()[:24]
    so = cache_dir() / f"{platform}-{key}.so"
    if so.exists():
        return so
    src = cache_dir() / f"{platform}-{key}.cpp"
    src.write_text(unit)
    tmp = so.with_suffix(f".{os.getpid()}.tmp")
    proc = subprocess.run(["g++", *flags, str(src), "-o", str(tmp)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"g++ failed:\n{proc.stderr[-6000:]}")
    tmp.replace(so)
    return so


def call(so: Path, entry: str, args: list, *, launch=None, strict: bool = False, platform: str = "cuda",
         profile: str | None = None, timeout: float = 60) -> Result:
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    err_path = Path(tempfile.mkstemp(prefix="emu-err-")[1])
    pid = os.fork()
    if pid == 0:  # child: stderr to a file, run, exit
        try:
            fd = os.open(err_path, os.O_WRONLY | os.O_TRUNC)
            os.dup2(fd, 2)
            _child_run(child, so, entry, args, launch, strict, platform, profile)
        except BaseException as e:  # noqa: BLE001
            os.write(2, f"harness child: {e!r}\n".encode())
            os._exit(99)
    child.close()
    arrays = []
    if parent.poll(timeout):
        try:
            arrays = parent.recv()
        except EOFError:
            arrays = []
    else:  # hung (deadlock / endless loop): stop it
        os.kill(pid, 9)
    _, status = os.waitpid(pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    stderr = err_path.read_text(errors="replace")
    err_path.unlink()
    return Result(rc, stderr, arrays)


def _child_run(conn, so, entry, args, launch, strict, platform, profile):
    emu = importlib.import_module(f"platforms.{platform}.emulate")
    prof = emu.load_profile(profile)
    lib = ctypes.CDLL(str(so))
    opts = Options(int(strict), int(prof["max_threads_per_block"]), int(prof["shared_mem_bytes"]),
                   int(prof["warp_size"]), 0, 0, 0, 0, 4, 4)
    lib.__xp_configure(ctypes.byref(opts))
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    if launch is None:
        cargs = [a.ctypes.data_as(ctypes.c_void_p) if isinstance(a, np.ndarray) else a for a in args]
        getattr(lib, entry)(*cargs)
    else:
        lib.__xp_device_alloc.restype = ctypes.c_void_p
        lib.__xp_device_alloc.argtypes = [ctypes.c_ulonglong]
        holders, devs = [], []
        for a in args:
            if isinstance(a, np.ndarray):
                d = lib.__xp_device_alloc(a.nbytes)
                ctypes.memmove(d, a.ctypes.data, a.nbytes)
                devs.append((d, a))
                holders.append(ctypes.c_void_p(d))
            else:
                holders.append(a)
        argv = (ctypes.c_void_p * max(1, len(holders)))(*[ctypes.addressof(h) for h in holders])
        shmem = launch[2] if len(launch) > 2 else 0
        cfg = Launch((ctypes.c_uint * 3)(*launch[0]), (ctypes.c_uint * 3)(*launch[1]), shmem,
                     (ctypes.c_uint * 3)(1, 1, 1), 1)
        getattr(lib, f"__xp_kernel_{entry}")(ctypes.byref(cfg), argv)
        for d, a in devs:
            ctypes.memmove(a.ctypes.data, d, a.nbytes)
    lib.__xp_check_canaries()
    conn.send(arrays)
    conn.close()
    os._exit(0)
