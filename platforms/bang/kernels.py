"""Which kernels a BANG C source defines, and which of them run an MPU participant.

Text-level facts (comments, strings and preprocessor lines masked) shared by the virtual device
(``emulate.py``: launcher stubs, MPU registration) and the lift (``passes/lift/task_recovery.py``:
the MPU participant of a cluster), so both read the source the same way.
"""
from __future__ import annotations

import re

_KERNEL_RES = [
    re.compile(r"\b(?:__mlu_global__|__mlu_entry__)\b[^;{}()]*?\bvoid\s+([A-Za-z_]\w*)\s*\("),
    re.compile(r"\bvoid\s+(?:__mlu_global__|__mlu_entry__)\s+([A-Za-z_]\w*)\s*\("),
]
_MPU_RE = re.compile(r"__is_mpu\s*\(|__is_ipu\s*\(|\bcoreId\s*[!=]=\s*0x80\b|\b0x80\s*[!=]=\s*coreId\b")


def mask_source(text: str, *, directives: bool = False) -> str:
    """Same length as ``text`` with comments, string and char literals (and, if ``directives``,
    preprocessor lines) blanked out; newlines are kept."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True

    def blank(a: int, b: int) -> None:
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if directives and line_start and c == "#":
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                j += 1
            blank(i, j)
            i = j
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c in " \t":
            i += 1
            continue
        line_start = False
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
        elif c in "\"'":
            if c == '"' and i > 0 and text[i - 1] == "R":  # raw string R"d(...)d"
                m = re.match(r'"([^(\s]*)\(', text[i:])
                if m:
                    end = text.find(")" + m.group(1) + '"', i)
                    j = n if end < 0 else end + len(m.group(1)) + 2
                    blank(i + 1, j - 1)
                    i = j
                    continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, min(j, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def kernel_names(source: str) -> list[str]:
    """Names of the ``__mlu_global__``/``__mlu_entry__`` kernels defined or declared in ``source``
    (not templates, not inside macro definitions), in order of appearance."""
    masked = mask_source(source, directives=True)
    found: dict[str, int] = {}
    for rx in _KERNEL_RES:
        for m in rx.finditer(masked):
            if _after_template_head(masked, m.start()):
                continue
            found.setdefault(m.group(1), m.start())
    return sorted(found, key=found.get)


_TEMPLATE_HEAD = re.compile(r"template\s*<[^;{}]*>$")


def _after_template_head(masked: str, start: int) -> bool:
    """``template <...>`` ends just before ``start`` (whitespace apart). Only the text after the
    last ``;``/``{``/``}`` can hold it: a backward scan, not a regex over the whole prefix per
    kernel (quadratic)."""
    end = start
    while end > 0 and masked[end - 1].isspace():
        end -= 1
    if end == 0 or masked[end - 1] != ">":
        return False
    k = end - 1
    while k > 0 and masked[k - 1] not in ";{}":
        k -= 1
    return _TEMPLATE_HEAD.search(masked, k, end) is not None


def uses_mpu(source: str) -> bool:
    return bool(_MPU_RE.search(mask_source(source)))


def _body_span(masked: str, start: int) -> tuple[int, int] | None:
    """Span of the {...} body of the function whose declaration starts at ``start``."""
    i = start
    depth = 0
    while i < len(masked):  # skip the parameter list
        if masked[i] == "(":
            depth += 1
        elif masked[i] == ")":
            depth -= 1
            if depth == 0:
                break
        i += 1
    j = i + 1
    while j < len(masked) and masked[j] not in "{;":
        j += 1
    if j >= len(masked) or masked[j] == ";":
        return None
    depth, k = 0, j
    while k < len(masked):
        if masked[k] == "{":
            depth += 1
        elif masked[k] == "}":
            depth -= 1
            if depth == 0:
                return j, k + 1
        k += 1
    return None


def mpu_kernels(source: str) -> list[str]:
    """Kernels that run an MPU participant: their body tests ``coreId == 0x80`` / ``__is_mpu()``
    (or such a test appears outside every kernel body, e.g. in a helper: then all kernels)."""
    masked = mask_source(source, directives=True)
    spans, hits = {}, []
    for rx in _KERNEL_RES:
        for m in rx.finditer(masked):
            span = _body_span(masked, m.end() - 1)
            if span:
                spans[m.group(1)] = span
    outside = False
    ordered = sorted((a, b, name) for name, (a, b) in spans.items())
    nxt, active = 0, []          # matches come in increasing order: a sweep over the spans
    for m in _MPU_RE.finditer(masked):
        pos = m.start()
        while nxt < len(ordered) and ordered[nxt][0] <= pos:
            active.append(ordered[nxt])
            nxt += 1
        active = [s for s in active if s[1] > pos]
        if active:
            hits += [name for _, _, name in active]
        else:
            outside = True
    hits = set(hits)
    names = kernel_names(source)
    return names if outside else [n for n in names if n in hits]
