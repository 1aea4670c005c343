"""Small ctypes harness for the BANG emulator tests (independent of xpiler/run.py).

build(source) -> .so path        compiles platforms.bang.emulate.prepare()'s unit with g++ (cached
                                 by content hash, several sources compiled concurrently)
run(so, calls, ...) -> Result    runs calls in a forked child (errors _exit the process):
    Kernel("name", args, dim=(16,1,1), ktype=16)  -> __xp_kernel_name stub
    Host("name", args)                            -> extern "C" host function
  args: numpy arrays (kernels: copied to __xp_device_alloc memory and back; host functions get
  the host pointer) or ctypes scalars / Python int (c_int) / float (c_float).
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from platforms.bang import emulate  # noqa: E402
from xpiler.run import RuntimeOptions  # noqa: E402

CACHE = Path(os.environ.get("XPILER_BANG_TEST_CACHE", Path(tempfile.gettempdir()) / "xpiler-bang-tests"))
BASE_FLAGS = ["-std=c++17", "-O2", "-shared", "-fPIC", "-w"]


_Options = RuntimeOptions   # xp_options_t, mirrored once (xpiler/run.py)


class _Launch(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shmem", ctypes.c_ulonglong),
                ("dim", ctypes.c_uint * 3), ("ktype", ctypes.c_int)]


def _runtime_digest() -> str:
    h = hashlib.sha256()
    for d in emulate.INCLUDE_DIRS:
        for f in sorted(Path(d).glob("*.h")):
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def _unit(source: str, path: str, strict: bool, profile: dict | None) -> str:
    return emulate.prepare(source, path, strict=strict, profile=profile or emulate.load_profile())


def _target(unit: str) -> Path:
    key = hashlib.sha256(("\0".join([" ".join(BASE_FLAGS + emulate.compile_flags(False)), _runtime_digest(),
                                     unit])).encode()).hexdigest()[:24]
    return CACHE / f"bang-{key}.so"


def _cmd(src: Path, out: Path) -> list[str]:
    return ["g++", *BASE_FLAGS, *emulate.compile_flags(False), *(f"-I{d}" for d in emulate.INCLUDE_DIRS),
            str(src), "-o", str(out)]


class BuildFailed(AssertionError):
    pass


def build_many(items: list[tuple[str, str]], *, strict: bool = False, profile: dict | None = None,
               jobs: int = 2) -> list[Path]:
    """Build (source, path) pairs, ``jobs`` compilers at a time; returns the .so paths."""
    CACHE.mkdir(parents=True, exist_ok=True)
    outs, pending = [], []
    for source, path in items:
        unit = _unit(source, path, strict, profile)
        out = _target(unit)
        outs.append(out)
        if not out.exists():
            src = out.with_suffix(".cpp")
            src.write_text(unit)
            pending.append((src, out))
    running: list[tuple[subprocess.Popen, Path, Path, Path]] = []
    errors = []

    def finish(item) -> None:
        p, src, tmp, out = item
        _, err = p.communicate()
        if p.returncode != 0:
            errors.append(f"{src}:\n{err.decode()[:6000]}")
        else:
            os.replace(tmp, out)  # atomic: a concurrent reader never sees half a file

    for n, (src, out) in enumerate(pending):
        while len(running) >= jobs:
            finish(running.pop(0))
        tmp = out.with_suffix(f".{os.getpid()}.{n}.tmp")
        p = subprocess.Popen(_cmd(src, tmp), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        running.append((p, src, tmp, out))
    while running:
        finish(running.pop(0))
    if errors:
        raise BuildFailed("\n\n".join(errors))
    return outs


def build(source: str, path: str = "test.mlu", *, strict: bool = False, profile: dict | None = None) -> Path:
    return build_many([(source, path)], strict=strict, profile=profile, jobs=1)[0]


# ------------------------------------------------------------------------------ running
@dataclass
class Kernel:
    name: str
    args: list
    dim: tuple = (16, 1, 1)
    ktype: int = 16


@dataclass
class Host:
    name: str
    args: list


@dataclass
class Result:
    returncode: int
    outputs: list = field(default_factory=list)  # per call: list of arrays (copies) after the call
    stderr: str = ""
    returns: list = field(default_factory=list)
    seconds: list = field(default_factory=list)  # per call: wall time of the launch / host call

    @property
    def error(self) -> dict | None:
        m = re.search(r"^__XPILER_ERROR__ (\{.*\})\s*$", self.stderr, re.M)
        return json.loads(m.group(1)) if m else None

    @property
    def warnings(self) -> list[str]:
        return [json.loads(m)["message"] for m in re.findall(r"^__XPILER_WARNING__ (\{.*\})\s*$", self.stderr, re.M)]

    def ok(self) -> "Result":
        assert self.returncode == 0, f"exit {self.returncode}\n{self.stderr[-4000:]}"
        return self


def _scalar(v):
    if isinstance(v, ctypes._SimpleCData):
        return v
    if isinstance(v, (bool, np.bool_)):
        return ctypes.c_int(int(v))
    if isinstance(v, (int, np.integer)):
        return ctypes.c_int(int(v))
    if isinstance(v, (float, np.floating)):
        return ctypes.c_float(float(v))
    raise TypeError(f"unsupported argument {v!r}")


def _child(so: Path, calls: list, options: _Options, out_path: str) -> int:
    lib = ctypes.CDLL(str(so))
    lib.__xp_configure(ctypes.byref(options))
    lib.__xp_device_alloc.restype = ctypes.c_void_p
    lib.__xp_device_alloc.argtypes = [ctypes.c_ulonglong]
    results, returns, times = [], [], []
    for call in calls:
        t0 = time.perf_counter()
        if isinstance(call, Kernel):
            keep, ptrs, devs = [], [], []
            for a in call.args:
                if isinstance(a, np.ndarray):
                    d = lib.__xp_device_alloc(a.nbytes)
                    ctypes.memmove(d, a.ctypes.data, a.nbytes)
                    v = ctypes.c_void_p(d)
                    devs.append((a, d))
                else:
                    v = _scalar(a)
                keep.append(v)
                ptrs.append(ctypes.cast(ctypes.pointer(v), ctypes.c_void_p))
            argv = (ctypes.c_void_p * max(1, len(ptrs)))(*ptrs)
            cfg = _Launch()
            cfg.dim[:] = list(call.dim)
            cfg.ktype = call.ktype
            t0 = time.perf_counter()
            getattr(lib, f"__xp_kernel_{call.name}")(ctypes.byref(cfg), argv)
            times.append(time.perf_counter() - t0)
            for a, d in devs:
                ctypes.memmove(a.ctypes.data, d, a.nbytes)
            returns.append(None)
        else:
            fn = getattr(lib, call.name)
            argv = [ctypes.c_void_p(a.ctypes.data) if isinstance(a, np.ndarray) else _scalar(a) for a in call.args]
            returns.append(fn(*argv))
            times.append(time.perf_counter() - t0)
        results.append([a.copy() for a in call.args if isinstance(a, np.ndarray)])
        lib.__xp_check_canaries()
    with open(out_path, "wb") as f:
        pickle.dump((results, returns, times), f)
    return 0


def options_for(profile: dict | None, strict: bool) -> _Options:
    prof = profile or emulate.load_profile()
    o = _Options()
    o.strict = int(strict)
    o.max_threads_per_block, o.shared_mem_bytes, o.warp_size = 1024, 48 * 1024, 32
    o.nram_bytes, o.wram_bytes = prof["nram_bytes"], prof["wram_bytes"]
    o.sram_bytes, o.ldram_bytes = prof["sram_bytes"], prof["ldram_bytes"]
    o.clusters, o.cores_per_cluster = prof["clusters"], prof["cores_per_cluster"]
    return o


def run(so: Path, calls: list, *, strict: bool = False, profile: dict | None = None, timeout: float = 60) -> Result:
    options = options_for(profile, strict)
    with tempfile.TemporaryDirectory(prefix="xpb-run-") as tmp:
        out_path, err_path = os.path.join(tmp, "out.pkl"), os.path.join(tmp, "err.txt")
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # child
            code = 99
            try:
                fd = os.open(err_path, os.O_WRONLY | os.O_CREAT)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                code = _child(so, calls, options, out_path)
            except BaseException as e:  # noqa: BLE001
                os.write(2, f"harness: {type(e).__name__}: {e}\n".encode())
                code = 98
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        err = Path(err_path).read_text(errors="replace") if os.path.exists(err_path) else ""
        res = Result(code, stderr=err)
        if code == 0 and os.path.exists(out_path):
            with open(out_path, "rb") as f:
                res.outputs, res.returns, res.seconds = pickle.load(f)
        return res
