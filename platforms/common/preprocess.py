"""Text stage of the front-end normalisation: comments and preprocessor lines.

Every rewrite here is *length preserving*: a removed character becomes a space (newlines are
kept), so each byte of the result sits at the same line and column as in the original file and
pycparser's coordinates are the original ones.

What happens to each construct (recorded in ``Preprocessed``):

- ``//`` and ``/* */`` comments -> blanks.
- ``#include``, ``#define``, ``#undef`` (active regions) -> blanks; kept in ``preamble`` (in file
  order) so that the back-end can print them again. Object-like ``#define NAME body`` and
  function-like ``#define F(a, b) body`` are also kept in ``defines`` (name -> Macro); macro
  *uses* are not expanded: they parse as identifiers / calls.
- ``#if/#ifdef/#ifndef/#elif/#else/#endif`` are evaluated with the file's defines plus the
  dialect's predefined macros; inactive lines are blanked (the back-end prints the active view).
- ``#pragma`` lines are left alone: pycparser turns them into ``Pragma`` nodes.
- ``#line``, ``#warning`` -> blanks; ``#error`` in an active region -> diagnostic.
"""
from __future__ import annotations

import ast as pyast
import re
from dataclasses import dataclass, field

from xpiler.ir.errors import Coord, Diagnostic, SourceError


@dataclass(frozen=True)
class Macro:
    name: str
    params: tuple[str, ...] | None   # None for object-like macros
    body: str
    line: int

    def to_json(self) -> dict:
        return {"params": list(self.params) if self.params is not None else None,
                "body": self.body, "line": self.line}


@dataclass
class Preprocessed:
    text: str                                        # same length and line structure as input
    preamble: list[str] = field(default_factory=list)  # include/define/undef lines, file order
    defines: dict[str, Macro] = field(default_factory=dict)
    includes: list[str] = field(default_factory=list)


_SCAN = re.compile(
    r'"(?:\\.|[^"\\\n])*"?'           # string literal (maybe unterminated)
    r"|'(?:\\.|[^'\\\n])*'?"          # char literal
    r"|//(?:\\\n|[^\n])*"             # line comment (with continuations)
    r"|/\*.*?(?:\*/|\Z)"              # block comment (maybe unterminated)
    r"|^[ \t]*#(?:\\\n|/\*.*?\*/|[^\n])*",  # preprocessor line (with continuations)
    re.M | re.S)
# the same without the comment inside a preprocessor line: used after the last '*/' of the file,
# where that alternative cannot match (each try would scan to the end: quadratic over many
# '#define X /*' lines)
_SCAN_TAIL = re.compile(_SCAN.pattern.replace(r"|/\*.*?\*/|[^\n])*", r"|[^\n])*"), re.M | re.S)
assert _SCAN_TAIL.pattern != _SCAN.pattern
_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(\w*)(.*)", re.S)
_DEFINE = re.compile(r"\s*([A-Za-z_]\w*)(\(([^)]*)\))?(.*)", re.S)


# Characters clang treats as whitespace outside literals (its -Wunicode-whitespace extension,
# checked with libclang 18: U+0085, U+00A0, U+1680, U+180E, U+2000-U+200A, U+2028, U+2029,
# U+202F, U+205F, U+3000; U+200B and U+FEFF stay errors). Real code has them (a no-break space
# pasted after a comma in mmcv's nms_utils.hpp); g++ and pycparser refuse them.
UNICODE_WHITESPACE = ("\u0085\u00a0\u1680\u180e" + "".join(chr(c) for c in range(0x2000, 0x200B))
                      + "\u2028\u2029\u202f\u205f\u3000")
_UNICODE_WS = re.compile("[" + UNICODE_WHITESPACE + "]")
_LITERAL_OR_COMMENT = re.compile(
    r'"(?:\\.|[^"\\\n])*"?'          # string literal (kept)
    r"|'(?:\\.|[^'\\\n])*'?"         # char literal (kept)
    r"|//[^\n]*|/\*.*?(?:\*/|\Z)",       # comments (normalised too: harmless)
    re.S)


def unicode_whitespace_to_spaces(text: str) -> str:
    """``text`` with every Unicode whitespace character that clang accepts as whitespace
    (``UNICODE_WHITESPACE``) replaced by one space, except inside string and character literals.
    Length and lines are preserved (one character for one), so coordinates do not move."""
    if not _UNICODE_WS.search(text):
        return text
    out, pos = [], 0
    for m in _LITERAL_OR_COMMENT.finditer(text):
        out.append(_UNICODE_WS.sub(" ", text[pos:m.start()]))
        tok = m.group(0)
        out.append(tok if tok[0] in "\"'" else _UNICODE_WS.sub(" ", tok))
        pos = m.end()
    out.append(_UNICODE_WS.sub(" ", text[pos:]))
    return "".join(out)


def blank(text: str) -> str:
    """Spaces for every character of ``text`` except newlines."""
    return re.sub(r"[^\n]", " ", text)


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def _logical(text: str) -> str:
    return _strip_comments(text.replace("\\\n", " ")).strip()


class _Preprocessor:
    def __init__(self, text: str, path: str, predefined: dict[str, str]):
        self.text = text
        self.path = path
        self.out: list[str] = []
        self.result = Preprocessed(text="")
        self.predefined = dict(predefined)
        # stack of [active_now, any_branch_taken, parent_active, line]
        self.cond: list[list] = []
        self._line_at = (0, 1)        # (offset, its line): offsets mostly grow, counted on

    # -- helpers -------------------------------------------------------------
    def line_of(self, offset: int) -> int:
        """Line of ``offset``, counted on from the last offset asked (linear over a file)."""
        last, line = self._line_at
        if offset < last:
            last, line = 0, 1
        line += self.text.count("\n", last, offset)
        self._line_at = (offset, line)
        return line

    def coord(self, offset: int) -> Coord:
        line = self.line_of(offset)
        col = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return Coord(self.path, line, col)

    def error(self, code: str, msg: str, offset: int, construct: str | None = None):
        raise SourceError(msg, diagnostics=[Diagnostic(code, msg, self.coord(offset),
                                                       construct=construct)])

    @property
    def active(self) -> bool:
        # a frame is active only when its parent is (``conditional``): the top frame decides
        return self.cond[-1][0] if self.cond else True

    # -- main loop ------------------------------------------------------------
    def run(self) -> Preprocessed:
        pos = 0
        close = self.text.rfind("*/")
        tail = close + 2 if close >= 0 else 0     # no comment can close after this offset
        scan = _SCAN
        while True:
            for m in scan.finditer(self.text, pos):
                if scan is _SCAN and m.start() >= tail:
                    break                           # on with _SCAN_TAIL from pos
                self.emit_code(self.text[pos:m.start()])
                self.handle(m)
                pos = m.end()
            else:
                break
            scan = _SCAN_TAIL
        self.emit_code(self.text[pos:])
        if self.cond:
            self.error("XP1121", "unterminated #if (missing #endif)", self.cond[-1][3], "#if")
        self.result.text = "".join(self.out)
        return self.result

    def emit_code(self, chunk: str) -> None:
        self.out.append(chunk if self.active else blank(chunk))

    def handle(self, m: re.Match) -> None:
        tok = m.group(0)
        stripped = tok.lstrip()
        if stripped.startswith("#"):
            self.directive(tok, m.start())
        elif tok.startswith("//"):
            self.out.append(blank(tok))
        elif tok.startswith("/*"):
            if not tok.endswith("*/") or len(tok) < 4:
                self.error("XP1102", "unterminated /* comment", m.start(), "/*")
            self.out.append(blank(tok))
        else:  # string / char literal: kept verbatim (the lexer checks termination)
            self.emit_code(tok)

    # -- directives ------------------------------------------------------------
    def directive(self, tok: str, offset: int) -> None:
        dm = _DIRECTIVE.match(tok)
        kind, rest = dm.group(1), _logical(dm.group(2))
        if kind in ("if", "ifdef", "ifndef", "elif", "else", "endif"):
            self.conditional(kind, rest, offset)
            self.out.append(blank(tok))
            return
        if not self.active:
            self.out.append(blank(tok))
            return
        if kind == "pragma":
            self.out.append(tok)
            return
        self.out.append(blank(tok))
        line = " ".join(_logical(tok).split())
        if kind == "include":
            self.result.preamble.append(line)
            self.result.includes.append(rest)
        elif kind == "define":
            self.define(rest, offset)
            self.result.preamble.append(_logical(tok))
        elif kind == "undef":
            self.result.defines.pop(rest.strip(), None)
            self.result.preamble.append(line)
        elif kind == "error":
            self.error("XP1121", f"#error {rest}", offset, "#error")
        elif kind not in ("line", "warning", "") and not kind.isdigit():
            self.error("XP1121", f"unsupported preprocessor directive #{kind}", offset,
                       f"#{kind}")

    def define(self, rest: str, offset: int) -> None:
        m = _DEFINE.match(rest)
        if not m:
            self.error("XP1121", "malformed #define", offset, "#define")
        name, params, body = m.group(1), m.group(3), m.group(4).strip()
        plist = None if m.group(2) is None else tuple(
            p.strip() for p in params.split(",") if p.strip())
        self.result.defines[name] = Macro(name, plist, body, self.line_of(offset))

    def conditional(self, kind: str, rest: str, offset: int) -> None:
        if kind in ("if", "ifdef", "ifndef"):
            parent = self.active
            value = self.evaluate(kind, rest, offset) if parent else False
            self.cond.append([value, value, parent, offset])
            return
        if not self.cond:
            self.error("XP1121", f"#{kind} without #if", offset, f"#{kind}")
        frame = self.cond[-1]
        if kind == "endif":
            self.cond.pop()
        elif kind == "else":
            frame[0] = frame[2] and not frame[1]
            frame[1] = True
        else:  # elif
            value = frame[2] and not frame[1] and self.evaluate("if", rest, offset)
            frame[0] = value
            frame[1] = frame[1] or value

    def evaluate(self, kind: str, expr: str, offset: int) -> bool:
        if kind in ("ifdef", "ifndef"):
            known = self.is_defined(expr.strip())
            return known if kind == "ifdef" else not known
        try:
            return bool(eval_pp_expression(expr, self.macro_value, self.is_defined, memo={}))
        except (SyntaxError, ValueError, ZeroDivisionError, TypeError, RecursionError, MemoryError):
            shown = expr if len(expr) <= 200 else expr[:200] + "..."
            self.error("XP1121", f"cannot evaluate #if {shown}", offset, "#if")

    def is_defined(self, name: str) -> bool:
        return name in self.result.defines or name in self.predefined

    def macro_value(self, name: str) -> str | None:
        if name in self.result.defines and self.result.defines[name].params is None:
            return self.result.defines[name].body
        return self.predefined.get(name)


_PP_TOKEN = re.compile(r"\s*(defined\s*\(\s*\w+\s*\)|defined\s+\w+|0[xX][0-9a-fA-F]+|\d+|\w+"
                       r"|&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%()<>!~&|^?:])")


def eval_pp_expression(expr: str, value_of, is_defined, depth: int = 0, memo: dict | None = None) -> int:
    """Evaluate a ``#if`` expression (C semantics on integers; unknown names are 0).

    ``memo`` (one dict per directive) keeps each macro's value at each expansion depth: a macro
    used many times, or macros doubling each other, are evaluated once, not exponentially often."""
    out = []
    pos = 0
    expr = expr.strip()
    while pos < len(expr):
        m = _PP_TOKEN.match(expr, pos)
        if not m:
            raise SyntaxError(expr[pos:])
        tok = m.group(1)
        pos = m.end()
        out.append(_pp_token_to_python(tok, value_of, is_defined, depth, memo))
    text = " ".join(out) or "0"
    return safe_eval(pyast.parse(text, mode="eval").body)


def _pp_token_to_python(tok: str, value_of, is_defined, depth: int, memo: dict | None = None) -> str:
    if tok.startswith("defined"):
        name = re.sub(r"defined|[()\s]", "", tok)
        return "1" if is_defined(name) else "0"
    if re.fullmatch(r"0[xX][0-9a-fA-F]+", tok):
        return str(int(tok, 16))
    if re.fullmatch(r"[A-Za-z_]\w*", tok):
        body = value_of(tok)
        if body is None or depth > 8:
            return "0"
        if memo is not None and (tok, depth) in memo:
            return memo[tok, depth]
        text = f"({eval_pp_expression(body or '1', value_of, is_defined, depth + 1, memo)})"
        if memo is not None:
            memo[tok, depth] = text
        return text
    return {"&&": " and ", "||": " or ", "!": " not ", "/": "//"}.get(tok, tok)


def _shift(a: int, b: int, left: bool) -> int:
    if not 0 <= b < 128:
        raise ValueError("shift count out of range")
    return a << b if left else a >> b


_BINOPS = {pyast.Add: lambda a, b: a + b, pyast.Sub: lambda a, b: a - b,
           pyast.Mult: lambda a, b: a * b, pyast.FloorDiv: lambda a, b: int(a / b),
           pyast.Mod: lambda a, b: a % b, pyast.LShift: lambda a, b: _shift(a, b, True),
           pyast.RShift: lambda a, b: _shift(a, b, False), pyast.BitAnd: lambda a, b: a & b,
           pyast.BitOr: lambda a, b: a | b, pyast.BitXor: lambda a, b: a ^ b}


def _bounded(v: int) -> int:
    """C evaluates ``#if`` in (u)intmax_t: a value far outside 64 bits is an overflow, not a
    reason to compute huge integers (``#if 99999999 * 99999999 * ...``)."""
    if v.bit_length() > 128:
        raise ValueError("#if arithmetic overflows")
    return v


_CMPOPS = {pyast.Eq: lambda a, b: a == b, pyast.NotEq: lambda a, b: a != b,
           pyast.Lt: lambda a, b: a < b, pyast.LtE: lambda a, b: a <= b,
           pyast.Gt: lambda a, b: a > b, pyast.GtE: lambda a, b: a >= b}


def safe_eval(node) -> int:
    match node:
        case pyast.Constant(value=int() as v):
            return v
        case pyast.BoolOp(op=pyast.And(), values=vals):
            return int(all(safe_eval(v) for v in vals))
        case pyast.BoolOp(op=pyast.Or(), values=vals):
            return int(any(safe_eval(v) for v in vals))
        case pyast.UnaryOp(op=pyast.Not(), operand=x):
            return int(not safe_eval(x))
        case pyast.UnaryOp(op=pyast.USub(), operand=x):
            return -safe_eval(x)
        case pyast.UnaryOp(op=pyast.UAdd(), operand=x):
            return safe_eval(x)
        case pyast.UnaryOp(op=pyast.Invert(), operand=x):
            return ~safe_eval(x)
        case pyast.BinOp(op=op) if type(op) in _BINOPS:
            # a left-nested chain (a + b + c + ...) iteratively: a long one must not exhaust the
            # recursion limit; left to right, as the recursion would
            chain = []
            while isinstance(node, pyast.BinOp) and type(node.op) in _BINOPS:
                chain.append(node)
                node = node.left
            value = safe_eval(node)
            for link in reversed(chain):
                value = _bounded(_BINOPS[type(link.op)](value, safe_eval(link.right)))
            return value
        case pyast.Compare(left=a, ops=[op], comparators=[b]) if type(op) in _CMPOPS:
            return int(_CMPOPS[type(op)](safe_eval(a), safe_eval(b)))
        case pyast.IfExp(test=t, body=a, orelse=b):
            return safe_eval(a) if safe_eval(t) else safe_eval(b)
    raise ValueError("unsupported #if expression")


def preprocess(text: str, path: str, predefined: dict[str, str] | None = None) -> Preprocessed:
    """Blank comments and directives (length preserving) and collect the preamble."""
    return _Preprocessor(unicode_whitespace_to_spaces(text), path, predefined or {}).run()
