"""Token stage of the front-end normalisation: C++/dialect tokens -> tokens pycparser accepts.

``XLexer`` subclasses pycparser's ``CLexer`` (dialect ``c23``, so ``bool``, ``true``/``false``,
``nullptr``, ``constexpr``, ``alignas``, ``auto`` and ``[[attributes]]`` are native). It lexes the
whole (preprocessed, length-preserved) text once, rewrites the token list with
``TokenRewriter`` and then serves tokens to the parser. Synthetic tokens carry the coordinates
of the original construct, so every AST node keeps its ORIGINAL file:line:col.

The rewrites (the contract later passes rely on; reversal data goes to ``facts``):

==========================================  ===============================================
source                                      AST after parsing
==========================================  ===============================================
``__global__ __device__ __host__            ``Decl.funcspec`` entries (text kept); token kind
__forceinline__ __noinline__                INLINE
__mlu_global__ __mlu_entry__ __mlu_func__
__mlu_device__``
``__launch_bounds__(N, M)``, ``__align__``  one ``Decl.funcspec`` entry ``"__launch_bounds__(N, M)"``
``__shared__ __constant__ __nram__          ``Decl.storage`` entries (token kind REGISTER)
__wram__ __ldram__ __mlu_shared__
__mlu_const__ __managed__``
``__restrict__``                            pointer qualifier (``PtrDecl.quals``)
``k<<<g, b[, sh[, st]]>>>(args)``           ``FuncCall(FuncCall(ID('__xp_launch'),
(BANG: ``<<<dim, ktype, queue>>>``)         [k, g, b, ...]), args)``
``extern "C"`` (single and block form)      removed; names in ``facts['extern_c']``
``static_cast<T>(e)`` / reinterpret_ /      ``Cast(T, e)``; ``facts['casts']['line:col']`` =
const_ / dynamic_cast                       the keyword
``float(x)`` (functional cast)              ``Cast``; ``facts['casts']`` = ``'functional'``
``dim3(x, y)`` (constructor)                ``FuncCall(ID('dim3'), ...)``
``Op{}``, ``T{a, b}`` (operand)             ``CompoundLiteral``; ``facts['casts']`` = ``'brace'``
``dim3 b(x, y);`` / ``dim3 b{x, y};``       ``Decl(b, init=FuncCall(dim3, ...))`` /
                                            ``init=InitList``; ``facts['ctor_decls']['l:c']``
``ns::name``, ``std::max``,                 one ``ID`` whose name is the spelling
``std::numeric_limits<float>::max``
``nvcuda::wmma::fragment<...>`` (types)     one ``IdentifierType`` name = normalised spelling;
                                            parsed args in ``facts['cxx_types']``
``using namespace nvcuda;``                 removed; kept in ``facts['preamble']``
``using T = U;``                            ``Typedef``; ``facts['using_aliases']``
``__attribute__((a, b(x)))``                C23 ``AttributeSpecifier`` with namespace ``gnu``
``T &x`` (declarator references)            ``PtrDecl(quals=['__xp_ref'])``
``namespace { ... }``, the file's own       the braces are dropped, ``ns::name`` -> ``name``
``namespace ns { ... }``
``[captures](params) { ... }`` (lambda)     XP1120 (not modelled)
``template <...>`` function templates       one function per used instantiation, named
                                            ``<name>_<args>`` (step 0, ``templates.py``)
==========================================  ===============================================
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from pycparser.c_lexer import CLexer, Token

from xpiler.ir.errors import Coord, Diagnostic, SourceError

from .templates import CODE as TEMPLATE_CODE, TemplateError, instantiate
from .dialect import FUNCTION_SPECIFIER, MEMORY_SPACE, POINTER_QUALIFIER, Dialect

LAUNCH = "__xp_launch"
REFERENCE = "__xp_ref"
CAST_KEYWORDS = ("static_cast", "reinterpret_cast", "const_cast", "dynamic_cast")
SPEC_WITH_ARGS = ("__launch_bounds__", "__align__")
TEMPLATE_NAMES = frozenset({"fragment", "numeric_limits", "vector", "array", "complex"})
UNSUPPORTED = frozenset("""template class namespace operator new delete throw try catch typename
virtual asm __asm__ __asm this public private protected friend mutable explicit decltype
""".split())
TYPE_KEYWORDS = frozenset({"VOID", "CHAR", "SHORT", "INT", "LONG", "FLOAT", "DOUBLE", "SIGNED",
                           "UNSIGNED", "_BOOL", "__INT128"})
QUALIFIER_KINDS = frozenset({"CONST", "VOLATILE", "RESTRICT", FUNCTION_SPECIFIER,
                             MEMORY_SPACE, "STATIC", "EXTERN", "CONSTEXPR"})
OPERAND_KINDS = frozenset({"ID", "TYPEID", "RPAREN", "RBRACKET", "STRING_LITERAL",
                           "INT_CONST_DEC", "INT_CONST_HEX", "INT_CONST_OCT", "FLOAT_CONST",
                           "CHAR_CONST", "BOOL_CONST", "NULLPTR"}) | TYPE_KEYWORDS
STATEMENT_START = frozenset({"SEMI", "LBRACE", "RBRACE", None})
# tokens after which ``T{...}`` is an operand, not a declaration or a definition's body
BRACE_TEMPORARY_AFTER = frozenset({"COMMA", "LPAREN", "EQUALS", "RETURN", "QUESTION",
                                   "LBRACKET"})
OPEN = {"LPAREN": "RPAREN", "LBRACKET": "RBRACKET", "LBRACE": "RBRACE"}
_UNKNOWN_QUALIFIER = re.compile(r"__[A-Za-z]\w*__")
# Brackets nested deeper than this are refused at once (XP1104): pycparser's recursive descent
# runs out of Python stack long before (about 60 to 240 levels, by construct), and the token
# rewrites that match brackets would be quadratic on such nests.
MAX_NESTING = 256
MAX_TEMPLATE_TOKENS = 256     # longest template argument list recognised (real ones: < 50 tokens)
INT_KINDS = frozenset({"INT_CONST_DEC", "INT_CONST_HEX", "INT_CONST_OCT", "INT_CONST_BIN"})
_INT_LITERAL = re.compile(r"(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9']+)([uUlLzZ]*)")


def integer_value(text: str) -> int | None:
    """Value of a C integer literal's spelling (suffixes and digit separators ignored)."""
    m = _INT_LITERAL.fullmatch(text)
    if not m:
        return None
    digits = m.group(1).replace("'", "")
    if digits[:2] in ("0x", "0X"):
        return int(digits[2:], 16)
    if digits[:2] in ("0b", "0B"):
        return int(digits[2:], 2)
    if len(digits) > 1 and digits[0] == "0":
        return int(digits, 8) if set(digits) <= set("01234567") else None
    return int(digits)


class TokenBuffer:
    """The token list of the rewriting loop, as a gap buffer: ``head`` holds the tokens before
    the gap in order, ``tail`` the tokens after it in reverse order. It reads like a list
    (indexes, slices, ``len``); an edit first moves the gap to its start, so replacing tokens
    where the loop stands costs the size of the edit and the distance the gap moves, not the
    length of the rest of the file (a plain list shifts every later token: quadratic over a
    file with one rewrite per line)."""

    __slots__ = ("head", "tail")

    def __init__(self, toks: list[Token]):
        self.head: list[Token] = []
        self.tail: list[Token] = toks[::-1]

    def __len__(self) -> int:
        return len(self.head) + len(self.tail)

    def __iter__(self):
        yield from self.head
        yield from reversed(self.tail)

    def to_list(self) -> list[Token]:
        return self.head + self.tail[::-1]

    def _gap(self, i: int) -> None:
        head, tail = self.head, self.tail
        h = len(head)
        if i > h:
            moved = tail[len(tail) - (i - h):]
            del tail[len(tail) - (i - h):]
            moved.reverse()
            head.extend(moved)
        elif i < h:
            moved = head[i:]
            del head[i:]
            moved.reverse()
            tail.extend(moved)

    def _span(self, k: slice) -> tuple[int, int]:
        start, stop, step = k.indices(len(self))
        if step != 1:
            raise ValueError("TokenBuffer slices take no step")
        return start, max(start, stop)

    def __getitem__(self, k):
        head, tail = self.head, self.tail
        h = len(head)
        if isinstance(k, slice):
            start, stop = self._span(k)
            out = head[start:min(stop, h)] if start < h else []
            if stop > h:
                n = len(tail)
                part = tail[n - (stop - h): n - (max(start, h) - h)]
                part.reverse()
                out += part
            return out
        if k < 0:
            k += h + len(tail)
            if k < 0:
                raise IndexError("token index out of range")
        if k < h:
            return head[k]
        j = len(tail) - 1 - (k - h)
        if j < 0:
            raise IndexError("token index out of range")
        return tail[j]

    def __setitem__(self, k, value) -> None:
        if not isinstance(k, slice):
            n = len(self)
            if k < 0:
                k += n
            if not 0 <= k < n:
                raise IndexError("token index out of range")
            h = len(self.head)
            if k < h:
                self.head[k] = value
            else:
                self.tail[len(self.tail) - 1 - (k - h)] = value
            return
        start, stop = self._span(k)
        self._gap(start)
        tail = self.tail
        if stop > start:
            del tail[len(tail) - (stop - start):]
        tail.extend(reversed(list(value)))

    def __delitem__(self, k) -> None:
        if not isinstance(k, slice):
            n = len(self)
            if k < 0:
                k += n
            if not 0 <= k < n:
                raise IndexError("token index out of range")
            k = slice(k, k + 1)
        self[k] = []


@dataclass(slots=True)
class PinnedToken(Token):
    """A token whose kind the parser must not reclassify (``dim3`` used as a call)."""


def key(line: int, col: int | None) -> str:
    """Key of a position in ``facts`` maps: ``"line:col"``."""
    return f"{line}:{col or 0}"


def _lex(text: str) -> list[Token]:
    """Plain C tokens of a macro body."""
    lexer = CLexer(lambda msg, line, col: None, dialect="c23")
    lexer.input(text)
    out = []
    while (tok := lexer.token()) is not None:
        out.append(tok)
    return out


def _split_tokens(toks: list[Token]) -> list[list[Token]]:
    args, cur, depth = [], [], 0
    for t in toks:
        if t.type in OPEN:
            depth += 1
        elif t.type in ("RPAREN", "RBRACKET", "RBRACE"):
            depth -= 1
        if t.type == "COMMA" and depth == 0:
            args.append(cur)
            cur = []
        else:
            cur.append(t)
    args.append(cur)
    return args


class XLexer(CLexer):
    """CLexer that knows the dialect's qualifiers and hands out rewritten tokens."""

    def __init__(self, error_func, *, dialect="c23"):
        super().__init__(error_func, dialect="c23")
        self.facts: dict = {}
        self.parser_types: set[str] = set()
        self._queue: list[Token] | None = None
        self._index = 0
        self._xdialect: Dialect | None = None
        self._macro_kinds: dict[str, str] = {}

    def configure(self, dialect: Dialect, macro_kinds: dict[str, str], facts: dict) -> None:
        """Set the dialect; ``macro_kinds`` maps object-like macros to token kinds."""
        self._xdialect = dialect
        self.facts = facts
        keywords = {name: FUNCTION_SPECIFIER for name in dialect.function_specifiers}
        keywords.update({name: MEMORY_SPACE for name in dialect.memory_spaces})
        keywords.update({"__restrict__": POINTER_QUALIFIER, "__restrict": POINTER_QUALIFIER,
                         "__inline__": "INLINE", "__inline": "INLINE"})
        keywords.update({k: v for k, v in macro_kinds.items() if v != "TYPEID"})
        self._keyword_map.update(keywords)
        self._macro_kinds = macro_kinds

    def input(self, text: str, filename: str = "") -> None:
        super().input(text, filename)
        self._queue = None
        self._index = 0

    def token(self) -> Token | None:
        if self._queue is None:
            raw = []
            while (tok := super().token()) is not None:
                raw.append(tok)
            rewriter = TokenRewriter(raw, self._lexdata, self._filename, self._xdialect,
                                     self.facts, self._macro_kinds)
            self._queue = rewriter.run()
            self.parser_types |= rewriter.parser_types
        if self._index >= len(self._queue):
            return None
        tok = self._queue[self._index]
        self._index += 1
        return tok


class TokenRewriter:
    """Rewrites one file's token list (see the module docstring for the table)."""

    def __init__(self, toks: list[Token], text: str, path: str, dialect: Dialect,
                 facts: dict, macro_kinds: dict[str, str]):
        self.toks = toks
        self.text = text
        self.path = path
        self.dialect = dialect
        self.facts = facts
        self.out: list[Token] = []
        self.i = 0
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        macro_types = {n for n, k in macro_kinds.items() if k == "TYPEID"}
        self.parser_types: set[str] = set(dialect.all_types) | macro_types
        self.types: set[str] = set(self.parser_types) | self._typedef_names()
        for name in ("extern_c_spans", "casts", "ctor_decls", "cxx_types", "using_aliases",
                     "preamble", "namespaces"):
            facts.setdefault(name, [] if name in ("extern_c_spans", "using_aliases",
                                                  "preamble", "namespaces") else {})

    # -- token helpers ------------------------------------------------------
    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if 0 <= j < len(self.toks) else None

    def kind(self, k: int = 0) -> str | None:
        tok = self.peek(k)
        return tok.type if tok else None

    def prev_kind(self) -> str | None:
        return self.out[-1].type if self.out else None

    @staticmethod
    def make(kind: str, value: str, at: Token, pinned: bool = False) -> Token:
        cls = PinnedToken if pinned else Token
        return cls(kind, value, at.lineno, at.column, at.filename)

    def offset(self, tok: Token) -> int:
        return self.line_starts[tok.lineno - 1] + tok.column - 1

    def raw(self, start: Token, end: Token) -> str:
        """Source text from ``start`` to the end of ``end`` (inclusive)."""
        return self.text[self.offset(start): self.offset(end) + len(end.value)]

    def error(self, code: str, msg: str, tok: Token | None, construct: str | None = None):
        coord = Coord(self.path, tok.lineno, tok.column) if tok else Coord(self.path)
        raise SourceError(msg, diagnostics=[Diagnostic(code, msg, coord, construct=construct)])

    def matching(self, j: int) -> int:
        """Index of the bracket closing the one at ``j`` (or an XP1101 error)."""
        stack = []
        for k in range(j, len(self.toks)):
            kind = self.toks[k].type
            if kind in OPEN:
                stack.append(OPEN[kind])
            elif kind in ("RPAREN", "RBRACKET", "RBRACE"):
                if not stack or stack[-1] != kind:
                    break
                stack.pop()
                if not stack:
                    return k
        opener = self.toks[j]
        self.error("XP1101", f"unbalanced '{opener.value}'", opener, opener.value)

    def is_type_token(self, tok: Token | None) -> bool:
        if tok is None:
            return False
        return tok.type in TYPE_KEYWORDS or tok.type == "TYPEID" or tok.value in self.types

    def _typedef_names(self) -> set[str]:
        """Names the file declares as types: typedefs, and C++-style struct/enum tags."""
        names = set()
        for j, tok in enumerate(self.toks):
            if tok.type in ("STRUCT", "UNION", "ENUM") and j + 2 < len(self.toks) and \
                    self.toks[j + 1].type == "ID" and self.toks[j + 2].type == "LBRACE":
                names.add(self.toks[j + 1].value)
                self.parser_types.add(self.toks[j + 1].value)
            if tok.type != "TYPEDEF":
                continue
            depth = 0
            for k in range(j + 1, len(self.toks)):
                t, nxt = self.toks[k], self.toks[k + 1] if k + 1 < len(self.toks) else None
                if t.type == "SEMI":
                    break
                depth += {"LT": 1, "GT": -1, "RSHIFT": -2}.get(t.type, 0)
                if t.type == "ID" and depth <= 0 and nxt is not None and (
                        nxt.type in ("SEMI", "LBRACKET", "COMMA", "RPAREN")
                        or nxt.value in ("__attribute__", "__attribute")):
                    names.add(t.value)
                    break
        return names

    # -- main loop ------------------------------------------------------------
    def check_balance(self) -> None:
        """Every (, [, { closed in order (XP1101), reported at the offending bracket; no nest
        deeper than MAX_NESTING (XP1104); every integer literal fits a C integer type (XP1105)."""
        stack: list[Token] = []
        for tok in self.toks:
            if tok.type in OPEN:
                stack.append(tok)
                if len(stack) > MAX_NESTING:
                    self.error("XP1104", f"brackets nested more than {MAX_NESTING} deep", tok, tok.value)
            elif tok.type in INT_KINDS:
                value = integer_value(tok.value)
                if value is not None and value >= 1 << 64:
                    shown = tok.value if len(tok.value) <= 40 else tok.value[:37] + "..."
                    self.error("XP1105", f"integer literal {shown} does not fit any C integer type "
                               "(the largest is 64-bit unsigned)", tok, tok.value)
            elif tok.type in ("RPAREN", "RBRACKET", "RBRACE"):
                if not stack or OPEN[stack[-1].type] != tok.type:
                    self.error("XP1101", f"unbalanced '{tok.value}'", tok, tok.value)
                stack.pop()
        if stack:
            self.error("XP1103", f"unexpected end of file: '{stack[-1].value}' is never closed",
                       stack[-1], stack[-1].value)

    def run(self) -> list[Token]:
        self.check_balance()
        self.unwrap_anonymous_namespaces()
        self.hip_dynamic_shared()
        self.expand_statement_macros()
        try:
            self.toks = instantiate(self.toks)
        except TemplateError as exc:
            self.error(TEMPLATE_CODE, exc.message, exc.tok, exc.construct)
        self.toks = TokenBuffer(self.toks)   # edits where the loop stands stay cheap
        while self.i < len(self.toks):
            tok = self.toks[self.i]
            handler = self.dispatch(tok)
            if handler is None or not handler(tok):
                self.out.append(self.toks[self.i])
                self.i += 1
        return self.out

    def unwrap_anonymous_namespaces(self) -> None:
        """``namespace { ... }`` only gives its contents internal linkage, and a file's own
        ``namespace a::b { ... }`` only qualifies its names: the braces are dropped, ``a::b::name``
        and ``b::name`` spellings of them lose the qualification and ``using namespace a::b;``
        goes. Two namespaces of the file defining the same name would collide: XP1120."""
        own: set[str] = set()
        k = 0
        while k + 1 < len(self.toks):
            t = self.toks[k]
            if t.type == "ID" and t.value == "namespace" and (k == 0 or self.toks[k - 1].value != "using"):
                j = k + 1
                parts = []
                while j + 1 < len(self.toks) and self.toks[j].type == "ID" and \
                        self.toks[j + 1].type in ("COLONCOLON", "LBRACE"):
                    parts.append(self.toks[j].value)
                    j += 1 if self.toks[j + 1].type == "LBRACE" else 2
                if j < len(self.toks) and self.toks[j].type == "LBRACE":
                    close = self.matching(j)
                    del self.toks[close]
                    del self.toks[k: j + 1]
                    for i in range(len(parts)):
                        own.add("::".join(parts[i:]))
                        own.add("::".join(parts[:i + 1]))
                    continue
            k += 1
        if not own:
            return
        out: list[Token] = []
        k = 0
        while k < len(self.toks):
            t = self.toks[k]
            if t.type == "ID" and t.value == "using" and k + 1 < len(self.toks) and \
                    self.toks[k + 1].value == "namespace":
                j = k + 2
                names = []
                while j < len(self.toks) and self.toks[j].type in ("ID", "COLONCOLON"):
                    names.append(self.toks[j].value)
                    j += 1
                if "".join(names) in own and j < len(self.toks) and self.toks[j].type == "SEMI":
                    k = j + 1
                    continue
            if t.type == "ID" and k + 1 < len(self.toks) and self.toks[k + 1].type == "COLONCOLON" and \
                    (not out or out[-1].type != "COLONCOLON"):
                j, names = k, []
                while j + 1 < len(self.toks) and self.toks[j].type == "ID" and self.toks[j + 1].type == "COLONCOLON":
                    names.append(self.toks[j].value)
                    j += 2
                if names and "::".join(names) in own:
                    k = j
                    continue
            out.append(t)
            k += 1
        self.toks = out

    def hip_dynamic_shared(self) -> None:
        """``HIP_DYNAMIC_SHARED(T, name)`` (HIP's macro) -> ``extern __shared__ T name[];``."""
        k = 0
        while k + 1 < len(self.toks):
            t = self.toks[k]
            if t.type == "ID" and t.value == "HIP_DYNAMIC_SHARED" and self.toks[k + 1].type == "LPAREN":
                close = self.matching(k + 1)
                args = _split_tokens(self.toks[k + 2: close])
                if len(args) != 2 or len(args[1]) != 1 or not args[0]:
                    self.error("XP1100", "HIP_DYNAMIC_SHARED takes (type, name)", t, "HIP_DYNAMIC_SHARED")
                end = close + 1 if close + 1 < len(self.toks) and self.toks[close + 1].type == "SEMI" else close
                new = [self.make("EXTERN", "extern", t), self.make(MEMORY_SPACE, "__shared__", t), *args[0],
                       args[1][0], self.make("LBRACKET", "[", t), self.make("RBRACKET", "]", t),
                       self.make("SEMI", ";", t)]
                self.toks[k: end + 1] = new
                k += len(new)
                continue
            k += 1

    def expand_statement_macros(self) -> None:
        """Uses of function-like macros whose body is a statement head (``#define LOOP(i, n)
        for (...)``, as ``CUDA_KERNEL_LOOP``) are expanded (a call cannot precede a block); the
        expansion's tokens carry the use's coordinate."""
        macros = self.facts.get("_stmt_macros") or {}
        if not macros:
            return
        k = 0
        while k < len(self.toks):
            t = self.toks[k]
            if t.type == "ID" and t.value in macros and k + 1 < len(self.toks) and \
                    self.toks[k + 1].type == "LPAREN":
                params, body = macros[t.value]
                close = self.matching(k + 1)
                args = _split_tokens(self.toks[k + 2: close])
                if len(args) != len(params):
                    self.error("XP1121", f"macro {t.value} takes {len(params)} arguments, "
                               f"{len(args)} given", t, t.value)
                sub = dict(zip(params, args))
                new: list[Token] = []
                for b in _lex(body):
                    if b.type == "ID" and b.value in sub:
                        new.extend(Token(x.type, x.value, t.lineno, t.column, t.filename) for x in sub[b.value])
                    else:
                        new.append(Token(b.type, b.value, t.lineno, t.column, t.filename))
                self.toks[k: close + 1] = new
                k += len(new)
                continue
            k += 1

    def dispatch(self, tok: Token):
        kind, value = tok.type, tok.value
        if kind == "EXTERN" and self.kind(1) == "STRING_LITERAL" and \
                self.peek(1).value in ('"C"', '"C++"'):
            return self.extern_c
        if kind == "LSHIFT" and self.kind(1) == "LT":
            return self.launch
        if kind == "AND":
            return self.reference
        if kind == "LBRACKET" and self.prev_kind() in ("EQUALS", "LPAREN", "RETURN"):
            return self.lambda_expression
        if kind == "COLONCOLON":
            return self.qualified
        if kind in TYPE_KEYWORDS or kind in ("ID", "TYPEID"):
            return self.dispatch_word(tok)
        return None

    def dispatch_word(self, tok: Token):
        value = tok.value
        if tok.type == "ID":
            if value == "using":
                return self.using
            if value in CAST_KEYWORDS:
                return self.cxx_cast
            if value in ("__attribute__", "__attribute"):
                return self.gnu_attribute
            if value in SPEC_WITH_ARGS:
                return self.spec_with_args
            if value in UNSUPPORTED:
                return self.unsupported
            if self.kind(1) == "COLONCOLON" or (value in TEMPLATE_NAMES and self.kind(1) == "LT"):
                return self.qualified
            if _UNKNOWN_QUALIFIER.fullmatch(value) and value not in self.types:
                return self.maybe_unknown_qualifier
        if self.is_type_token(tok) and self.kind(1) in ("LPAREN", "ID", "LBRACE"):
            return self.type_then_paren
        return None

    # -- handlers (return True when they consumed / replaced tokens) -------------
    def extern_c(self, tok: Token) -> bool:
        if self.kind(2) == "LBRACE":
            close = self.matching(self.i + 2)
            end = self.toks[close]
            del self.toks[close]
            del self.toks[self.i: self.i + 3]
        else:
            end = self.declaration_end(self.i + 2)
            del self.toks[self.i: self.i + 2]
        self.facts["extern_c_spans"].append([tok.lineno, tok.column, end.lineno, end.column])
        return True

    def declaration_end(self, j: int) -> Token:
        depth = 0
        for k in range(j, len(self.toks)):
            kind = self.toks[k].type
            if kind == "LBRACE" and depth == 0:
                return self.toks[self.matching(k)]
            if kind in OPEN:
                depth += 1
            elif kind in ("RPAREN", "RBRACKET", "RBRACE"):
                depth -= 1
            elif kind == "SEMI" and depth == 0:
                return self.toks[k]
        return self.toks[-1]

    def launch(self, tok: Token) -> bool:
        if not self.out or self.out[-1].type not in ("ID", "TYPEID"):
            self.error("XP1130", "'<<<' must follow a kernel name", tok, "<<<")
        kernel = self.out.pop()
        depth, close = 0, None
        for k in range(self.i + 2, len(self.toks)):
            kind = self.toks[k].type
            depth += 1 if kind in OPEN else -1 if kind in ("RPAREN", "RBRACKET", "RBRACE") else 0
            if kind == "SEMI" or depth < 0:
                break
            if depth == 0 and kind == "RSHIFT" and k + 1 < len(self.toks) and \
                    self.toks[k + 1].type == "GT":
                close = k
                break
        if close is None or close + 2 >= len(self.toks) or \
                self.toks[close + 2].type != "LPAREN":
            self.error("XP1130", "kernel launch without matching '>>>(...)'", tok, "<<<")
        config = self.toks[self.i + 2: close]
        new = [self.make("ID", LAUNCH, kernel), self.make("LPAREN", "(", kernel),
               kernel, self.make("COMMA", ",", tok), *config,
               self.make("RPAREN", ")", self.toks[close])]
        self.toks[self.i: close + 2] = new
        return True

    def reference(self, tok: Token) -> bool:
        prev = self.out[-1] if self.out else None
        before = self.out[-2] if len(self.out) > 1 else None
        kind = prev.type if prev is not None else None
        typed = self.is_type_token(prev) or kind == "AUTO" or (
            kind in ("CONST", "VOLATILE") and self.is_type_token(before))
        nxt, after = self.peek(1), self.peek(2)
        declarator = nxt is not None and (
            nxt.type in ("RPAREN", "COMMA") or (
                nxt.type == "ID" and after is not None
                and after.type in ("COMMA", "RPAREN", "EQUALS", "SEMI", "LBRACKET")))
        if not (typed and declarator):
            return False
        self.out.append(self.make("TIMES", "*", tok))
        self.out.append(self.make(POINTER_QUALIFIER, REFERENCE, tok))
        self.i += 1
        return True

    def using(self, tok: Token) -> bool:
        end = self.i
        while end < len(self.toks) and self.toks[end].type != "SEMI":
            end += 1
        if end >= len(self.toks):
            self.error("XP1100", "'using' declaration without ';'", tok, "using")
        body = self.toks[self.i + 1: end]
        spelling = " ".join(self.raw(tok, self.toks[end]).split())
        if body and body[0].value == "namespace":
            self.facts["namespaces"].append(self.join(body[1:]))
            self.facts["preamble"].append(spelling)
            del self.toks[self.i: end + 1]
            return True
        if len(body) >= 3 and body[0].type == "ID" and body[1].type == "EQUALS":
            return self.using_alias(tok, body, end)
        self.facts["preamble"].append(spelling)   # using-declaration: using std::max;
        del self.toks[self.i: end + 1]
        return True

    def using_alias(self, tok: Token, body: list[Token], end: int) -> bool:
        name, type_toks = body[0], body[2:]
        attributes, plain, k = [], [], 0
        while k < len(type_toks):
            t = type_toks[k]
            if t.value in ("__attribute__", "__attribute") and k + 1 < len(type_toks):
                close = self._local_match(type_toks, k + 1)
                attributes.extend(type_toks[k: close + 1])
                k = close + 1
                continue
            plain.append(t)
            k += 1
        self.facts["using_aliases"].append(name.value)
        self.types.add(name.value)
        new = [self.make("TYPEDEF", "typedef", tok), *plain, name, *attributes, self.toks[end]]
        self.toks[self.i: end + 1] = new
        return True

    @staticmethod
    def _local_match(toks: list[Token], j: int) -> int:
        depth = 0
        for k in range(j, len(toks)):
            if toks[k].type in OPEN:
                depth += 1
            elif toks[k].type in ("RPAREN", "RBRACKET", "RBRACE"):
                depth -= 1
                if depth == 0:
                    return k
        return len(toks) - 1

    def cxx_cast(self, tok: Token) -> bool:
        if self.kind(1) != "LT":
            return False
        close = self.template_close(self.i + 1)
        if close is None or self.toks[close + 1].type != "LPAREN":
            self.error("XP1100", f"malformed {tok.value}<T>(e)", tok, tok.value)
        type_toks = self.toks[self.i + 2: close]
        arg_close = self.matching(close + 1)
        self.facts["casts"][key(tok.lineno, tok.column)] = tok.value
        new = [self.make("LPAREN", "(", tok), self.make("LPAREN", "(", tok), *type_toks,
               self.make("RPAREN", ")", self.toks[close]),
               *self.toks[close + 1: arg_close + 1],
               self.make("RPAREN", ")", self.toks[arg_close])]
        self.toks[self.i: arg_close + 1] = new
        # the inner '(' carries the cast's coordinate: emit the outer one now
        self.out.append(self.toks[self.i])
        self.i += 1
        return True

    def template_close(self, j: int) -> int | None:
        """Index of the '>' closing the '<' at ``j``; splits '>>' as needed. A '<' not closed
        within MAX_TEMPLATE_TOKENS tokens is no template argument list (a bound: a statement with
        thousands of unclosed '<' would otherwise be scanned once per '<')."""
        depth = 0
        k = j
        end = j + MAX_TEMPLATE_TOKENS
        while k < len(self.toks):
            if k > end:
                return None
            t = self.toks[k]
            if t.type == "LT":
                depth += 1
            elif t.type == "RSHIFT":
                first = self.make("GT", ">", t)
                second = Token("GT", ">", t.lineno, t.column + 1, t.filename)
                self.toks[k: k + 1] = [first, second]
                continue
            elif t.type == "GT":
                depth -= 1
                if depth == 0:
                    return k if k + 1 < len(self.toks) else None
            elif t.type in ("SEMI", "LBRACE", "RBRACE", "LAND", "LOR", "EQUALS"):
                return None
            k += 1
        return None

    def gnu_attribute(self, tok: Token) -> bool:
        if self.kind(1) != "LPAREN" or self.kind(2) != "LPAREN":
            self.error("XP1100", "malformed __attribute__((...))", tok, "__attribute__")
        outer = self.matching(self.i + 1)
        inner = self.matching(self.i + 2)
        new = [self.make("ATTRIBUTE_BEGIN", "[[", tok)]
        k = self.i + 3
        while k < inner:
            item = self.toks[k]
            if item.type == "COMMA":
                new.append(item)
                k += 1
                continue
            new += [self.make("ID", "gnu", item), self.make("COLONCOLON", "::", item),
                    self.make("ID", item.value, item)]
            k += 1
            if k < inner and self.toks[k].type == "LPAREN":
                close = self.matching(k)
                args = self.raw(self.toks[k], self.toks[close])[1:-1]
                new.append(self.make("ATTRIBUTE_ARGUMENTS", args, self.toks[k]))
                k = close + 1
        new.append(self.make("ATTRIBUTE_END", "]]", self.toks[outer]))
        self.toks[self.i: outer + 1] = new
        self.out.extend(new)
        self.i += len(new)
        return True

    def spec_with_args(self, tok: Token) -> bool:
        if self.kind(1) != "LPAREN":
            return False
        close = self.matching(self.i + 1)
        args = " ".join(self.raw(self.toks[self.i + 1], self.toks[close]).split())
        args = re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", args))
        self.out.append(self.make(FUNCTION_SPECIFIER, tok.value + args, tok))
        self.i = close + 1
        return True

    def lambda_expression(self, tok: Token) -> bool:
        close = self.matching(self.i)
        if close + 1 < len(self.toks) and self.toks[close + 1].type in ("LPAREN", "LBRACE"):
            self.error("XP1120", "C++ lambda expression is not supported", tok, "lambda")
        return False

    def unsupported(self, tok: Token) -> bool:
        self.error("XP1120", f"C++ construct '{tok.value}' is not supported", tok, tok.value)

    def maybe_unknown_qualifier(self, tok: Token) -> bool:
        nxt = self.peek(1)
        if nxt is not None and (nxt.type in QUALIFIER_KINDS or self.is_type_token(nxt)
                                or nxt.type in ("STRUCT", "UNION", "ENUM")):
            self.error("XP1110", f"unknown qualifier '{tok.value}'", tok, tok.value)
        return False

    # -- qualified names and templates -------------------------------------------
    def qualified(self, tok: Token) -> bool:
        parts: list[Token] = []
        k = self.i
        template_args: list[str] | None = None
        base = None
        while k < len(self.toks):
            t = self.toks[k]
            if t.type == "COLONCOLON" or (t.type in ("ID", "TYPEID") or t.type in TYPE_KEYWORDS) \
                    and (not parts or parts[-1].type == "COLONCOLON"):
                parts.append(t)
                k += 1
                continue
            if t.type == "LT" and parts and parts[-1].type != "COLONCOLON" and \
                    self.templated(parts):
                close = self.template_close(k)
                if close is None:
                    break
                base = self.join(parts)
                template_args = self.split_args(self.toks[k + 1: close])
                parts.extend(self.toks[k: close + 1])
                k = close + 1
                continue
            break
        if len(parts) < 2:
            return False
        spelling = self.join(parts)
        called = k < len(self.toks) and self.toks[k].type == "LPAREN"
        is_type = (spelling.endswith(">") and not called) or self.is_type_name(spelling)
        if template_args is not None and is_type:
            self.facts["cxx_types"][spelling] = {"template": base, "args": template_args}
        if is_type:
            self.parser_types.add(spelling)
            self.types.add(spelling)
        self.toks[self.i: k] = [self.make("TYPEID" if is_type else "ID", spelling, tok)]
        return True            # the merged token is dispatched again (constructors, casts)

    def templated(self, parts: list[Token]) -> bool:
        last = parts[-1].value
        return last in TEMPLATE_NAMES or any(p.type == "COLONCOLON" for p in parts)

    def is_type_name(self, spelling: str) -> bool:
        last = spelling.rsplit("::", 1)[-1]
        return spelling in self.types or last in self.types or last.endswith("_t")

    def split_args(self, toks: list[Token]) -> list[str]:
        args, current, depth = [], [], 0
        for t in toks:
            if t.type in ("LT", "LPAREN"):
                depth += 1
            elif t.type in ("GT", "RPAREN"):
                depth -= 1
            if t.type == "COMMA" and depth == 0:
                args.append(self.join(current))
                current = []
            else:
                current.append(t)
        if current:
            args.append(self.join(current))
        return args

    @staticmethod
    def join(toks: list[Token]) -> str:
        """Normalised spelling: ``a::b<c, 16>``, ``unsigned int``."""
        out = ""
        for t in toks:
            v = t.value
            if t.type == "COMMA":
                out += ", "
            elif t.type in ("COLONCOLON", "LT", "GT", "TIMES", "AND") or \
                    out.endswith(("::", "<", " ")) or not out:
                out += v
            elif out.endswith((">", "*", "&")) and t.type in ("GT",):
                out += v
            else:
                out += " " + v
        return out

    # -- constructors and functional casts ------------------------------------------
    def type_then_paren(self, tok: Token) -> bool:
        nxt = self.peek(1)
        prev = self.prev_kind()
        if nxt.type == "LBRACE" and prev in BRACE_TEMPORARY_AFTER:
            return self.brace_temporary(tok)
        if nxt.type in ("ID", "LBRACE"):
            return self.ctor_decl(tok, prev)
        if prev in OPERAND_KINDS or prev in STATEMENT_START or prev in QUALIFIER_KINDS:
            return False
        close = self.matching(self.i + 1)
        after = self.peek(close - self.i + 1)
        inside = self.toks[self.i + 2: close]
        if (after is not None and after.type in ("LPAREN", "LBRACKET")) or \
                (inside and inside[0].type == "TIMES"):
            return False                      # a declarator such as float (*f)(int)
        if tok.value in self.dialect.ctor_types or "::" in tok.value or \
                self.top_level_commas(inside):
            self.toks[self.i] = self.make("ID", tok.value, tok, pinned=True)
            return False
        self.facts["casts"][key(tok.lineno, tok.column)] = "functional"
        new = [self.make("LPAREN", "(", tok), self.make("LPAREN", "(", tok),
               self.make(tok.type, tok.value, tok), self.make("RPAREN", ")", tok),
               *self.toks[self.i + 1: close + 1], self.make("RPAREN", ")", self.toks[close])]
        self.toks[self.i: close + 1] = new
        self.out.append(self.toks[self.i])
        self.i += 1
        return True

    def brace_temporary(self, tok: Token) -> bool:
        """``T{a, b}`` as an operand (a functor or struct handed to a call, ``return T{}``) ->
        the compound literal ``(T){a, b}``; ``facts['casts']`` = ``'brace'`` prints it back."""
        self.facts["casts"][key(tok.lineno, tok.column)] = "brace"
        new = [self.make("LPAREN", "(", tok), self.make(tok.type, tok.value, tok),
               self.make("RPAREN", ")", tok)]
        self.toks[self.i: self.i + 1] = new
        self.out.append(self.toks[self.i])
        self.i += 1
        return True

    @staticmethod
    def top_level_commas(toks: list[Token]) -> bool:
        depth = 0
        for t in toks:
            if t.type in OPEN:
                depth += 1
            elif t.type in ("RPAREN", "RBRACKET", "RBRACE"):
                depth -= 1
            elif t.type == "COMMA" and depth == 0:
                return True
        return False

    def ctor_decl(self, tok: Token, prev: str | None) -> bool:
        """``dim3 b(x, y);`` -> ``dim3 b = dim3(x, y);``, ``dim3 b{x};`` -> ``dim3 b = {x};``
        (every declarator of the declaration)."""
        class_type = tok.value in self.dialect.ctor_types or "::" in tok.value
        brace_init = self.kind(1) == "ID" and self.kind(2) == "LBRACE"   # T x{...}; of any type
        if not (class_type or brace_init) or self.kind(1) != "ID" or prev in OPERAND_KINDS:
            return False
        after = self.ctor_declarator(tok, self.i + 1)
        if after is None:
            return False
        while after + 2 < len(self.toks) and self.toks[after].type == "COMMA" and \
                self.toks[after + 1].type == "ID":
            nxt = self.ctor_declarator(tok, after + 1)
            if nxt is None:
                break
            after = nxt
        self.out.append(tok)
        self.i += 1
        return True

    def ctor_declarator(self, type_tok: Token, j: int) -> int | None:
        """Rewrite the declarator ``name(args)`` / ``name{args}`` at ``j``; index after it."""
        if j + 1 >= len(self.toks) or self.toks[j + 1].type not in ("LPAREN", "LBRACE"):
            return None
        name, opener = self.toks[j], self.toks[j + 1]
        close = self.matching(j + 1)
        if close + 1 >= len(self.toks) or self.toks[close + 1].type not in ("SEMI", "COMMA"):
            return None
        brace = opener.type == "LBRACE"
        self.facts["ctor_decls"][key(name.lineno, name.column)] = "brace" if brace else "paren"
        init = [] if brace else [self.make("ID", type_tok.value, type_tok, pinned=True)]
        new = [name, self.make("EQUALS", "=", opener), *init, *self.toks[j + 1: close + 1]]
        self.toks[j: close + 1] = new
        return j + len(new)
