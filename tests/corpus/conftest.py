"""Fixtures for the corpus suites: the VNNI corpus built once per session (2 compilers)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _native  # noqa: E402


def vnni_skip_reason() -> str | None:
    missing = _native.missing_cpu_flags()
    if missing:
        return f"this CPU lacks {', '.join(missing)} (needed to run AVX-512 VNNI kernels natively)"
    if not _native.compiler_id():
        return f"no C++ compiler ({_native.CXX}) on PATH"
    return None


@pytest.fixture(scope="session")
def vnni_native():
    reason = vnni_skip_reason()
    if reason:
        pytest.skip(reason)
    return _native


@pytest.fixture(scope="session")
def vnni_builds(vnni_native):
    """{source path: shared object path | BuildFailed} for every VNNI corpus kernel."""
    from xpiler.corpus import entries

    return vnni_native.build_many([e.source for e in entries("vnni")], workers=2)
