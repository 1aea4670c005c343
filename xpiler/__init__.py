"""xpiler: translate tensor-program kernels between CUDA, HIP, BANG C and AVX-512 VNNI, verified.

Public API (imported lazily so that ``xpiler --help`` stays fast):

- ``xpiler.parse_file(path, platform=None) -> Program``
- ``xpiler.run_kernel(path, entry=None, args=[...], launch=None, platform=None, timeout=60)``
"""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["parse_file", "parse_source", "run_kernel", "__version__"]


def __getattr__(name):  # PEP 562: keep start-up cheap
    if name in ("parse_file", "parse_source"):
        from . import parse

        return getattr(parse, name)
    if name == "run_kernel":
        from .run import run_kernel

        return run_kernel
    raise AttributeError(name)
