"""Every error xpiler raises, with the exit code the CLI maps it to.

One catalogue (cibuildwheel style): the CLI catches ``XpilerError`` and exits with
``exc.exit_code``; nothing else in the package calls ``sys.exit``.

Exit codes
    0  success / verified
    1  translation failed (also: it ran past translate --time-limit), or a differential check
       found a mismatch
    2  bad input or usage (diagnostics with file:line:col)
    3  written but unverified (translate --allow-unverified, check with nothing comparable)
    4  the kernel did not build (compiler message attached)
    5  the kernel crashed or reported a runtime error
    6  the kernel ran past its time limit
    7  the kernel exceeded its memory limit
    8  out-of-bounds access detected
    9  strict-mode violation (target rule broken: alignment, capacity, limits)
   10  the host lacks a required feature (e.g. CPU flag avx512_vnni)
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Coord:
    """A position in a source file; printed ``file:line:col``."""

    file: str = "<input>"
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.col}" if self.col > 0 else f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Diagnostic:
    """One finding. Codes are listed in ``xpiler/ir/diagnostics.toml``."""

    code: str
    message: str
    coord: Coord = field(default_factory=Coord)
    severity: str = "error"  # error | warning | note
    construct: str | None = None
    pass_name: str | None = None

    def render(self) -> str:
        return f"{self.coord}: {self.severity} {self.code}: {self.message}"

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": self.coord.file,
            "line": self.coord.line,
            "col": self.coord.col,
            "construct": self.construct,
            "pass": self.pass_name,
        }


class XpilerError(Exception):
    """Base class; ``exit_code`` is what the CLI returns."""

    exit_code = 1

    def __init__(self, message: str, *, kernel: str | None = None, coord: Coord | None = None,
                 diagnostics: list[Diagnostic] | None = None, detail: str | None = None):
        super().__init__(message)
        self.message = message
        self.kernel = kernel
        self.coord = coord
        self.diagnostics = list(diagnostics or [])
        self.detail = detail

    def render(self) -> str:
        if self.diagnostics:
            lines = [d.render() for d in self.diagnostics]
        else:
            where = f"{self.coord}: " if self.coord else ""
            who = f" (kernel {self.kernel})" if self.kernel else ""
            lines = [f"{where}error: {self.message}{who}"]
        if self.detail:
            lines.append(self.detail.rstrip())
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "error": type(self).__name__,
            "exit_code": self.exit_code,
            "message": self.message,
            "kernel": self.kernel,
            "where": str(self.coord) if self.coord else None,
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "detail": self.detail,
        }


class TranslationFailed(XpilerError):
    exit_code = 1


class TranslationTimeLimit(TranslationFailed):
    """The whole translation ran past its time limit (``translate --time-limit``): nothing was
    written. Exit 1, as any translation that produced no verified output: the input is not at
    fault (exit 2) and no kernel ran past its own limit (exit 6, ``KernelTimeout``)."""

    exit_code = 1


class MismatchError(XpilerError):
    """A differential check found outputs outside tolerance."""

    exit_code = 1


class UsageError(XpilerError):
    exit_code = 2


class SourceError(XpilerError):
    """The input program is malformed or uses an unsupported construct (carries diagnostics)."""

    exit_code = 2


class Unverified(XpilerError):
    exit_code = 3


class BuildError(XpilerError):
    """The (emulated or native) compiler rejected the kernel; ``detail`` holds its message."""

    exit_code = 4


class KernelRuntimeError(XpilerError):
    exit_code = 5


class KernelTimeout(KernelRuntimeError):
    exit_code = 6


class MemoryLimitExceeded(KernelRuntimeError):
    exit_code = 7


class OutOfBoundsAccess(KernelRuntimeError):
    exit_code = 8


class StrictModeViolation(KernelRuntimeError):
    exit_code = 9


class MissingHostFeature(XpilerError):
    exit_code = 10


def debug_enabled() -> bool:
    """``XPILER_DEBUG`` set to anything but empty, 0, false, no or off: show tracebacks."""
    import os

    return os.environ.get("XPILER_DEBUG", "").strip().lower() not in ("", "0", "false", "no", "off")
