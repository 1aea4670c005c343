"""Small text helpers shared by the emulators' ``prepare()`` (CUDA, HIP, BANG).

Everything works on *masked* source: :func:`mask_code` blanks comments, string/char literal
contents and preprocessor lines while keeping every offset and newline, so plain regexes and
bracket matching cannot be fooled by them. Edits are applied on the original text with
:func:`apply_edits`; as long as replacements keep the number of newlines, ``#line`` mapping stays
exact (compiler errors and ``__LINE__`` point at the user's file).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

IDENT = re.compile(r"[A-Za-z_]\w*")


def c_string(s: str) -> str:
    """A C string literal for ``s`` (for #line and generated names)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def line_directive(line: int, path: str) -> str:
    """``#line N "path"`` (N is the number of the *next* line)."""
    return f"#line {line} {c_string(str(path))}"


def mask_code(text: str, mask_preprocessor: bool = True) -> str:
    """Same-length copy of ``text`` with comments, literal contents (and preprocessor lines)
    replaced by spaces; newlines are kept."""
    out = list(text)
    n = len(text)
    i = 0
    at_line_start = True

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if at_line_start and c == "#":
            j = i
            while j < n:  # to end of line, following backslash continuations, skipping comments
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 2
                    continue
                if text.startswith("/*", j):
                    e = text.find("*/", j + 2)
                    j = n if e < 0 else e + 2
                    continue
                if text[j] == "\n":
                    break
                j += 1
            if mask_preprocessor:
                blank(i, j)
            i = j
            continue
        at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            blank(i + 2, j - 1)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def match_forward(masked: str, i: int, open_c: str = "(", close_c: str = ")") -> int:
    """Index of the bracket closing the one at ``i`` (-1 if unbalanced)."""
    depth = 0
    for k in range(i, len(masked)):
        ch = masked[k]
        if ch == open_c:
            depth += 1
        elif ch == close_c:
            depth -= 1
            if depth == 0:
                return k
    return -1


def match_backward(masked: str, i: int, open_c: str = "(", close_c: str = ")", stop: str = "") -> int:
    """Index of the bracket opening the one closing at ``i`` (-1 if unbalanced, or when one of
    the characters of ``stop`` comes first: a bound on the scan, e.g. ``";{}"`` for template
    arguments, which never span a statement)."""
    depth = 0
    for k in range(i, -1, -1):
        ch = masked[k]
        if ch in stop:
            return -1
        if ch == close_c:
            depth += 1
        elif ch == open_c:
            depth -= 1
            if depth == 0:
                return k
    return -1


def space_before(masked: str, end: int) -> int:
    r"""``end`` moved back over whitespace: the index just after the last non-space character
    before ``end`` (a backward scan; ``re.search(r"\s*$", masked[:end])`` without the copy)."""
    while end > 0 and masked[end - 1].isspace():
        end -= 1
    return end


def word_before(masked: str, end: int) -> int:
    r"""Start of the identifier ``[A-Za-z_]\w*`` ending exactly at ``end`` (-1 if none): what
    ``re.search(r"[A-Za-z_]\w*$", masked[:end])`` finds, in time linear in the word's length
    (the regex restarts at every character of a long word: quadratic)."""
    k = end
    while k > 0 and (masked[k - 1].isalnum() or masked[k - 1] == "_"):
        k -= 1
    for p in range(k, end):
        if masked[p] == "_" or ("a" <= masked[p] <= "z") or ("A" <= masked[p] <= "Z"):
            return p
    return -1


def endswith_word(masked: str, end: int, words: tuple[str, ...]) -> int:
    r"""Start of one of ``words`` ending at ``end`` after trailing whitespace is skipped (-1 if
    none): ``re.search(r"(w1|w2)\s*$", masked[:end])`` without the copy of the prefix."""
    e = space_before(masked, end)
    for w in words:
        if e >= len(w) and masked.startswith(w, e - len(w)):
            return e - len(w)
    return -1


def split_top(text: str, sep: str = ",") -> list[tuple[int, int]]:
    """Spans of ``text`` split at top-level ``sep`` (outside (), [], {}, <> is not tracked)."""
    spans, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            spans.append((start, k))
            start = k + 1
    spans.append((start, len(text)))
    return spans


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Replace ``text[a:b]`` by ``s`` for every (a, b, s); edits must not overlap."""
    out, pos = [], 0
    for a, b, s in sorted(edits, key=lambda e: (e[0], e[1])):
        if a < pos:
            raise ValueError(f"overlapping edits at offset {a}")
        out.append(text[pos:a])
        out.append(s)
        pos = b
    out.append(text[pos:])
    return "".join(out)


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


@dataclass
class FunctionInfo:
    """A function carrying ``qualifier`` (e.g. ``__global__``), found by :func:`scan_functions`."""

    name: str
    namespaces: list[str]          # enclosing named namespaces, outermost first ("" = anonymous)
    params: str                    # parameter list text (original, without the parentheses)
    params_span: tuple[int, int]   # offsets of the text inside ( )
    body_span: tuple[int, int] | None   # offsets of '{' and matching '}' (None: declaration only)
    is_template: bool
    decl_start: int
    attrs: dict[str, str] = field(default_factory=dict)  # e.g. {"__launch_bounds__": "256, 2"}
    line: int = 0


_SKIP_BACK = {"static", "inline", "__inline__", "__forceinline__", "__noinline__", "__host__", "__device__",
              "extern", "void", "__global__", "__mlu_global__", "__mlu_entry__", "__mlu_func__", "__aicore__",
              "constexpr"}


def _is_template_decl(masked: str, start: int) -> bool:
    # backward scans only (no regex over the prefix: that is quadratic in a long file)
    k = start - 1
    while k >= 0:
        while k >= 0 and masked[k].isspace():
            k -= 1
        if k < 0:
            return False
        if masked[k] == '"':  # extern "C" (masked string)
            q = masked.rfind('"', 0, k)
            k = q - 1
            continue
        if masked[k] == ">":
            o = match_backward(masked, k, "<", ">", stop=";{}")
            if o < 0:
                return False
            return endswith_word(masked, o, ("template",)) >= 0
        w = word_before(masked, k + 1)
        word = masked[w:k + 1] if w >= 0 else None
        if word in _SKIP_BACK or word == "__launch_bounds__":
            k = w - 1
            continue
        if masked[k] == ")":  # __attribute__((...)) / __launch_bounds__(...) before
            o = match_backward(masked, k, stop=";{}")
            if o < 0:
                return False
            a = endswith_word(masked, o, ("__attribute__", "__launch_bounds__", "__declspec", "alignas"))
            if a >= 0:
                k = a - 1
                continue
        return False
    return False


_NAMESPACE_OR_BRACE = re.compile(r"\bnamespace\b\s*([A-Za-z_][\w:]*)?\s*\{|[{}]")


class NamespaceScanner:
    """Named/anonymous namespaces enclosing an offset, for offsets asked in increasing order
    (one pass over the text in all: ``namespace_at`` for every function would be quadratic)."""

    def __init__(self, masked: str):
        self._matches = _NAMESPACE_OR_BRACE.finditer(masked)
        self._pending: re.Match | None = None
        self._stack: list[str | None] = []   # None: a brace that is not a namespace

    def at(self, offset: int) -> list[str]:
        while True:
            m = self._pending or next(self._matches, None)
            self._pending = None
            if m is None:
                break
            if m.end() > offset:
                self._pending = m
                break
            tok = m.group(0)
            if tok == "{":
                self._stack.append(None)
            elif tok == "}":
                if self._stack:
                    self._stack.pop()
            else:
                self._stack.append(m.group(1) or "")
        names: list[str] = []
        for name in self._stack:
            if name is not None:
                names.extend(name.split("::") if name else [""])
        return names


def namespace_at(masked: str, offset: int) -> list[str]:
    """Named/anonymous namespaces enclosing ``offset`` (outermost first; "" = anonymous)."""
    return NamespaceScanner(masked[:offset]).at(offset)


_DECL_STEP = re.compile(r"\s*(?:([A-Za-z_]\w*)|(::)|(\()|([;{}=]))")
_SPACES = re.compile(r"\s*")


def scan_functions(text: str, qualifier: str, masked: str | None = None) -> list[FunctionInfo]:
    """Find every function declared with ``qualifier`` (outside comments/strings/macros)."""
    masked = mask_code(text) if masked is None else masked
    found: list[FunctionInfo] = []
    namespaces = NamespaceScanner(masked)
    line, line_pos = 1, 0          # line of offset line_pos (offsets only grow: linear)
    for m in re.finditer(r"\b" + re.escape(qualifier) + r"\b", masked):
        i = m.end()
        attrs: dict[str, str] = {}
        name = None
        params_open = -1
        while i < len(masked):
            mm = _DECL_STEP.match(masked, i)
            if not mm:
                i = _SPACES.match(masked, i).end() + 1
                continue
            if mm.group(1):
                word = mm.group(1)
                i = mm.end()
                if word in ("__launch_bounds__", "__attribute__", "__declspec", "alignas", "__cluster_dims__"):
                    p = masked.find("(", i)
                    q = match_forward(masked, p)
                    if p < 0 or q < 0:
                        break
                    if word in ("__launch_bounds__", "__cluster_dims__"):
                        attrs[word] = text[p + 1:q]
                    i = q + 1
                    continue
                name = word
                continue
            if mm.group(2):
                i = mm.end()
                continue
            if mm.group(3):
                params_open = mm.end() - 1
                break
            break
        if params_open < 0 or not name:
            continue
        close = match_forward(masked, params_open)
        if close < 0:
            continue
        j = close + 1
        body = None
        while j < len(masked):
            ch = masked[j]
            if ch == "{":
                end = match_forward(masked, j, "{", "}")
                body = (j, end) if end >= 0 else None
                break
            if ch in ";,=":
                break
            j += 1
        line += text.count("\n", line_pos, m.start())
        line_pos = m.start()
        found.append(FunctionInfo(
            name=name, namespaces=namespaces.at(m.start()), params=text[params_open + 1:close],
            params_span=(params_open + 1, close), body_span=body,
            is_template=_is_template_decl(masked, m.start()), decl_start=m.start(), attrs=attrs,
            line=line))
    return found


def param_list_without_defaults(params: str) -> str:
    """``float* a, int n = 4`` -> ``float* a, int n`` (top-level ``=`` only)."""
    masked = mask_code(params)
    parts = []
    for a, b in split_top(masked):
        piece = params[a:b]
        mp = masked[a:b]
        depth = 0
        for k, ch in enumerate(mp):
            if ch in "([{<":
                depth += 1
            elif ch in ")]}>":
                depth -= 1
            elif ch == "=" and depth == 0:
                piece = piece[:k]
                break
        parts.append(piece.strip())
    return ", ".join(p for p in parts if p)


INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[^\n]*$', re.M)


def inline_local_includes(text: str, path: str | Path, *, _seen: set | None = None, _depth: int = 0) -> str:
    """Replace ``#include "x.h"`` of files that exist next to ``path`` by their contents, wrapped
    in ``#line`` directives (each header inlined at most once). The result is what prepare()
    rewrites, so kernels and __shared__ arrays in local headers are handled like the main file."""
    base = Path(path).parent if path else Path(".")
    seen = set() if _seen is None else _seen
    if _depth > 16:
        return text

    def repl(m: re.Match) -> str:
        inc = (base / m.group(1))
        try:
            resolved = inc.resolve()
        except OSError:
            return m.group(0)
        if not inc.is_file():
            return m.group(0)
        if resolved in seen:
            return ""  # include guard / #pragma once semantics
        seen.add(resolved)
        body = inc.read_text(errors="replace")
        body = re.sub(r"^[ \t]*#[ \t]*pragma[ \t]+once[^\n]*$", "", body, flags=re.M)
        body = inline_local_includes(body, inc, _seen=seen, _depth=_depth + 1)
        after = line_of(text, m.end()) + 1
        return f"{line_directive(1, str(inc))}\n{body}\n{line_directive(after, str(path))}"

    return INCLUDE.sub(repl, text)
