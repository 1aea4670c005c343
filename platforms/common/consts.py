"""Compile-time integer constants: ``#define N 128``, ``constexpr int K = 4;``, ``sizeof(half)``.

``ConstantTable`` evaluates C expression *text* (as printed by ``generator.expr_text``) to an
int, or ``None`` when it is not a compile-time constant.
"""
from __future__ import annotations

import ast as pyast
import re

from pycparser import c_ast

from .preprocess import safe_eval

# numpy dtype name -> bytes
ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int8": 1, "uint8": 1,
            "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8,
            "bool": 1}

_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+|\d+|[A-Za-z_]\w*|<<|>>|[-+*/%()&|^~])")
_INT_SUFFIX = re.compile(r"^(0[xX][0-9a-fA-F]+|\d+)[uUlL]*$")
_SIZEOF = re.compile(r"sizeof\s*\(\s*([A-Za-z_][\w\s]*?)\s*\)")
_STD_MIN_MAX = re.compile(r"\b(?:std)?::\s*(min|max)\b")
_MIN_MAX = re.compile(r"\b(?:min|max)\s*\(")
_CONDITIONAL = re.compile(r"[?<>!=]=?|&&|\|\|")      # ?:, comparisons, logic: evaluated as C


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_C_UNARY = {"-": lambda a: -a, "+": lambda a: a, "!": lambda a: int(not a), "~": lambda a: ~a}
_C_BINARY = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
             "/": _c_div, "%": lambda a, b: a - b * _c_div(a, b), "<<": lambda a, b: a << b,
             ">>": lambda a, b: a >> b, "&": lambda a, b: a & b, "|": lambda a, b: a | b,
             "^": lambda a, b: a ^ b, "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b),
             ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b), "==": lambda a, b: int(a == b),
             "!=": lambda a, b: int(a != b)}


class ConstantTable:
    """Named integer constants of one file, with lazy evaluation of macro bodies."""

    def __init__(self, defines: dict[str, dict], dtype_of, functions: dict | None = None):
        self.sources: dict[str, str] = {n: d["body"] for n, d in defines.items()
                                        if d["params"] is None and d["body"]}
        self.values: dict[str, int | None] = {}
        self.dtype_of = dtype_of          # C type spelling -> numpy dtype name
        self._busy: set[str] = set()
        # the file's one-expression functions (``expression_functions``): name -> (params, body)
        self.functions: dict[str, tuple[list[str], str]] = {
            n: (list(f["params"]), f["body"]) for n, f in (functions or {}).items()}
        self._calls = re.compile(r"\b(?:%s)\s*\(" % "|".join(map(re.escape, self.functions))) \
            if self.functions else None

    def add(self, name: str, text: str) -> None:
        self.sources.setdefault(name, text)

    def value(self, name: str) -> int | None:
        if name in self.values:
            return self.values[name]
        if name not in self.sources or name in self._busy:
            return None
        self._busy.add(name)
        self.values[name] = self.evaluate(self.sources[name])
        self._busy.discard(name)
        return self.values[name]

    def evaluate(self, text: str | None) -> int | None:
        if text is None:
            return None
        text = _SIZEOF.sub(self._sizeof, text)
        text = re.sub(r"\(\s*(?:unsigned\s+)?(?:int|long|size_t|int64_t|int32_t)\s*\)", "", text)
        text = _STD_MIN_MAX.sub(r"\1", text)
        if _CONDITIONAL.search(text) or _MIN_MAX.search(text) or \
                (self._calls is not None and self._calls.search(text)):
            return self._evaluate_c(text)
        pieces, pos = [], 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m:
                if text[pos:].strip() == "":
                    break
                return None
            tok, pos = m.group(1), m.end()
            piece = self._piece(tok, text, pos)
            if piece is None:
                return None
            pieces.append(piece)
        try:
            return safe_eval(pyast.parse(" ".join(pieces) or "None", mode="eval").body)
        except (SyntaxError, ValueError, ZeroDivisionError, TypeError):
            return None

    def _evaluate_c(self, text: str) -> int | None:
        """``text`` with conditionals, comparisons or logic (an extent's ``(a) > (b) ? (a) :
        (b)``), parsed as C and evaluated with C's integer rules (division truncates toward
        zero); None when a name has no value or the text is not an integer expression."""
        from pycparser import c_parser

        try:
            tree = c_parser.CParser().parse(f"int __xp_v = ({text});")
            return self._c_value(tree.ext[0].init)
        except Exception:          # not C we can read, or a name without a value
            return None

    def _c_value(self, e) -> int:
        if isinstance(e, c_ast.Constant):
            value = literal_int(e) if e.type != "char" else None
            if value is None:
                raise ValueError(e.value)
            return value
        if isinstance(e, c_ast.ID):
            value = self.value(e.name)
            if not isinstance(value, int):
                raise ValueError(e.name)
            return value
        if isinstance(e, c_ast.Cast):
            return self._c_value(e.expr)
        if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID) and \
                e.name.name in ("min", "max") and e.args is not None and len(e.args.exprs) == 2:
            a, b = (self._c_value(x) for x in e.args.exprs)      # a launch's std::min(128, n)
            return min(a, b) if e.name.name == "min" else max(a, b)
        if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID) and \
                e.name.name in self.functions and e.name.name not in self._busy:
            return self._call_value(e)
        if isinstance(e, c_ast.TernaryOp):
            return self._c_value(e.iftrue if self._c_value(e.cond) else e.iffalse)
        if isinstance(e, c_ast.UnaryOp) and e.op in _C_UNARY:
            return _C_UNARY[e.op](self._c_value(e.expr))
        if isinstance(e, c_ast.BinaryOp):
            if e.op == "&&":
                return int(bool(self._c_value(e.left)) and bool(self._c_value(e.right)))
            if e.op == "||":
                return int(bool(self._c_value(e.left)) or bool(self._c_value(e.right)))
            if e.op in _C_BINARY:
                return _C_BINARY[e.op](self._c_value(e.left), self._c_value(e.right))
        raise ValueError(type(e).__name__)

    def _call_value(self, call) -> int:
        """A call of a one-expression function of the file (``conv_out_size(H, R, s, p)``): its
        body evaluated with the parameters bound to the arguments' values."""
        params, body = self.functions[call.name.name]
        args = call.args.exprs if call.args is not None else []
        if len(args) != len(params):
            raise ValueError(call.name.name)
        inner = ConstantTable({}, self.dtype_of)
        inner.sources, inner.functions, inner._calls = self.sources, self.functions, self._calls
        inner.values = dict(self.values) | {p: self._c_value(a) for p, a in zip(params, args)}
        inner._busy = self._busy | {call.name.name}       # no recursion
        value = inner._evaluate_c(body)
        if value is None:
            raise ValueError(call.name.name)
        return value

    def _piece(self, tok: str, text: str, pos: int) -> str | None:
        if tok[0].isdigit():
            m = _INT_SUFFIX.match(tok + _suffix(text, pos))
            value = c_int(m.group(1)) if m else None
            return None if value is None else str(value)
        if tok[0].isalpha() or tok[0] == "_":
            start = pos - len(tok)
            if tok.lower() in ("u", "l", "ul", "lu", "ull", "llu", "ll") and start > 0 and \
                    text[start - 1] in "0123456789abcdefABCDEF":
                return ""           # an integer literal's suffix (16L); a name L is a name
            value = self.value(tok)
            return None if value is None else f"({value})"
        return "//" if tok == "/" else tok

    def _sizeof(self, m: re.Match) -> str:
        size = ITEMSIZE.get(self.dtype_of(" ".join(m.group(1).split())))
        return str(size) if size else m.group(0)


def _suffix(text: str, pos: int) -> str:
    m = re.match(r"[uUlL]*", text[pos:])
    return m.group(0) if m else ""


def literal_int(node: c_ast.Node) -> int | None:
    """Value of an integer ``Constant`` node, else None."""
    if isinstance(node, c_ast.Constant) and node.type in ("int", "unsigned int", "long",
                                                          "unsigned long", "long long"):
        m = _INT_SUFFIX.match(node.value)
        return c_int(m.group(1)) if m else None
    return None


def c_int(digits: str) -> int | None:
    """Value of a C integer literal without suffix (decimal, 0x hex, 0 octal); None if bad."""
    base = 16 if digits[:2] in ("0x", "0X") else 8 if len(digits) > 1 and digits[0] == "0" \
        else 10
    try:
        return int(digits, base)
    except ValueError:
        return None
