"""Reading a source file into a Program: the file checks (directory, unreadable, not UTF-8 text,
each a SourceError with its diagnostic) and the dispatch to the platform's front-end
(``platforms.parse``). The program model itself is ``xpiler.ir.program`` (the ground layer,
which imports no platform)."""
from __future__ import annotations

import os
from pathlib import Path

import platforms

from .ir.errors import Coord, Diagnostic, SourceError
from .ir.program import Program


def parse_source(text: str, platform: str | None = None, path: str = "<input>",
                 entry: str | None = None) -> Program:
    """Parse source text into a Program (front-end of ``platform``, detected if None)."""
    return platforms.parse(text, platform, path, entry=entry)


def parse_file(path: str | Path, platform: str | None = None, entry: str | None = None) -> Program:
    p = Path(path)
    where = Coord(str(p), 1, 1)  # file-level errors point at the start of the file
    if p.is_dir():
        raise SourceError(f"{p} is a directory", diagnostics=[Diagnostic(
            "XP1005", "is a directory, not a source file", where)])
    try:
        raw = p.read_bytes()
    except OSError as exc:
        why = exc.strerror or str(exc)
        if os.path.islink(p) and not p.exists():
            why = f"dangling symbolic link (to {os.readlink(p)})"
        raise SourceError(f"cannot read {p}: {why}",
                          diagnostics=[Diagnostic("XP1001", f"cannot read file: {why}", where)]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SourceError("not a text file", diagnostics=[Diagnostic(
            "XP1002", "file is not UTF-8 text (binary data?)", Coord(str(p), line, 1))]) from None
    return parse_source(text, platform, str(p), entry=entry)
