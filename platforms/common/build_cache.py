"""The build cache's location and the runtime headers' digest: one home for the run driver
(``xpiler/run.py``: objects and precompiled prefixes) and the C++ front-end
(``platforms/common/cxx/driver.py``: clang precompiled preludes). Layout: ``xpiler/run.py``."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Sequence

from xpiler.ir.errors import UsageError

TMP_DIR = "tmp"                    # temporaries of running builds, under the cache directory


def cache_dir() -> Path:
    """The build cache directory (created); a UsageError when it cannot be used."""
    env = os.environ.get("XPILER_CACHE_DIR")
    root = env or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "xpiler")
    path = Path(root) / "build"
    try:
        if (path / TMP_DIR).is_file():   # our own tmp/ clobbered: it holds nothing of value
            (path / TMP_DIR).unlink()
        (path / TMP_DIR).mkdir(parents=True, exist_ok=True)
        problem = None if all(os.access(p, os.W_OK | os.X_OK) for p in (path, path / TMP_DIR)) else \
            "permission denied (not writable)"
    except OSError as exc:
        problem = exc.strerror or str(exc)
    if problem:
        where = (f"XPILER_CACHE_DIR={env}" if env else
                 f"the default build cache {root} (set XPILER_CACHE_DIR to use another directory)")
        raise UsageError(f"{where}: cannot use {path} as the build cache directory: {problem}")
    return path


def runtime_digest(include_dirs: Sequence[Path]) -> str:
    h = hashlib.sha256()
    for d in include_dirs:
        for f in sorted(Path(d).rglob("*")):
            if f.is_file() and f.suffix in (".h", ".hpp", ".inc", ".def"):
                h.update(str(f.relative_to(d)).encode())
                h.update(f.read_bytes())
    return h.hexdigest()
