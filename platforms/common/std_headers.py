"""Standard-library names used without their header (issue 14 item 5, leniency).

A foreign source may call ``tanh`` or use ``M_PI`` / ``FLT_MAX`` / ``printf`` without including
the header that declares it: it builds on one compiler (where another header brings it in) and
fails on the next. The table ``std_headers.toml`` (one home) maps each name to its header and
says which headers a platform's compiler provides implicitly. ``missing(text, platform)`` lists
the headers a text lacks with the first use of one of their names; ``complete(text, platform)``
adds the ``#include`` lines (the front-end warns with XP1152, the virtual device's build and the
outputs of ``translate`` include them)."""
from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

_TABLE = Path(__file__).with_name("std_headers.toml")
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.M)
_DEFINE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)', re.M)
_WORD = re.compile(r"[A-Za-z_]\w*")
# comments, string and character literals, directive lines: no name in them is a use
_SKIP = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|^[ \t]*#[^\n]*',
                   re.S | re.M)


@dataclass(frozen=True)
class Missing:
    name: str          # the first name used that needs the header
    header: str        # the header to include (its C spelling: valid in C and C++ alike)
    line: int
    col: int


@functools.lru_cache(maxsize=None)
def _table() -> tuple[dict[str, str], dict[str, str], dict[str, frozenset[str]]]:
    data = tomllib.loads(_TABLE.read_text())
    name_to_header = {n: h for h, names in data["headers"].items() for n in names.split()}
    return name_to_header, dict(data["twins"]), {p: frozenset(v) for p, v in data["implied"].items()}


def _blank(m: re.Match) -> str:
    return re.sub(r"[^\n]", " ", m.group(0))


def missing(text: str, platform: str) -> list[Missing]:
    """One entry per header ``text`` needs but neither includes nor gets from its platform."""
    name_to_header, twins, implied = _table()
    included = set(_INCLUDE.findall(text))
    have = set(implied.get(platform, ())) | included
    have |= {c for c, cxx in twins.items() if cxx in included}
    defined = set(_DEFINE.findall(text))
    code = _SKIP.sub(_blank, text)
    declared = {m.group(1) for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\([^;{)]*\)\s*\{", code)}
    out: dict[str, Missing] = {}
    for m in _WORD.finditer(code):
        name = m.group(0)
        header = name_to_header.get(name)
        if header is None or header in have or header in out or name in defined or name in declared:
            continue
        if code[max(0, m.start() - 2):m.start()].endswith(("::", ".", "->")) or \
                code[max(0, m.start() - 1):m.start()] in (".",):
            continue                                   # std::sqrt, s.assert: not the C name
        line = code.count("\n", 0, m.start()) + 1
        col = m.start() - (code.rfind("\n", 0, m.start()) + 1) + 1
        out[header] = Missing(name, header, line, col)
    return list(out.values())


def complete(text: str, platform: str) -> tuple[str, list[Missing]]:
    """``text`` with an ``#include`` for each missing header put first (a ``#line 1`` after
    them keeps every line of the text where it was), and what was missing."""
    found = missing(text, platform)
    if not found:
        return text, []
    head = "".join(f"#include <{m.header}>\n" for m in found)
    return head + "#line 1\n" + text, found


def include_lines(text: str, platform: str) -> tuple[str, list[Missing]]:
    """Like ``complete`` for a file of its own (a translated output): the includes go before
    the first line that is not a comment, without a ``#line``."""
    found = missing(text, platform)
    if not found:
        return text, []
    lines = text.split("\n")
    at = 0
    while at < len(lines) and (lines[at].startswith("//") or not lines[at].strip()):
        at += 1
    head = [f"#include <{m.header}>" for m in found]
    return "\n".join(lines[:at] + head + lines[at:]), found
