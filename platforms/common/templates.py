"""Token stage, step 0: function templates are instantiated (monomorphised) before parsing.

The front-end models C, not C++; real kernels are nevertheless full of function templates
(``template <int BLOCK> __global__ void k(...)``, ``template <typename T> __device__ T
warp_sum(T)``). This step turns every *used* instantiation into an ordinary function:

==============================================  =============================================
source                                          tokens handed on
==============================================  =============================================
``template <P...> <function definition>``       one copy per instantiation, at the template's
                                                place, the parameters replaced by the
                                                arguments, the name ``<name>_<args>``
                                                (``rmsnorm_kernel_128``, ``warp_sum_float``)
``name<A...>`` (call, launch, ``&name<A>``,     one ID ``<name>_<args>``
``HIP_KERNEL_NAME(name<A>)``)
``name(args)`` without template arguments       deduced from the call's arguments (a
                                                literal, ``x``, ``x[i]``, ``*x`` whose
                                                declaration is visible) or the defaults
``template <decl> name<A...>(...);``            removed (it only requests the instantiation)
(explicit instantiation)
==============================================  =============================================

Instantiation is transitive (a template body that uses another template requests it with its
own arguments substituted). Copied tokens keep the coordinates of the template's text, so
diagnostics point into the template. A template never used is dropped. Not modelled, with an
XP1122 diagnostic at the construct: class/struct templates, explicit specialisations
(``template <>``), template template parameters, parameter packs, and calls whose template
arguments cannot be deduced.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field

from pycparser.c_lexer import Token

CODE = "XP1122"
_SPEC_WITH_ARGS = {"__launch_bounds__", "__attribute__", "__attribute", "alignas", "__align__", "__declspec"}
_KEYWORD_TYPES = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool",
                  "bool"}
_DECL_SKIP = {"CONST", "VOLATILE", "RESTRICT", "STATIC", "EXTERN", "CONSTEXPR", "INLINE"}


def _launch_arguments(toks: list[Token], k: int) -> list[Token] | None:
    """The argument tokens of a launch ``<<<config>>>(args)`` starting at ``toks[k]`` (``<<``
    then ``<``), or None when ``toks[k]`` does not start one."""
    if k + 1 >= len(toks) or toks[k].type != "LSHIFT" or toks[k + 1].type != "LT":
        return None
    depth = 0
    for j in range(k + 2, len(toks)):
        kind = toks[j].type
        if kind in ("LPAREN", "LBRACKET", "LBRACE"):
            depth += 1
        elif kind in ("RPAREN", "RBRACKET", "RBRACE"):
            depth -= 1
        if kind == "SEMI" or depth < 0:
            return None
        if depth == 0 and kind == "RSHIFT" and j + 2 < len(toks) and toks[j + 1].type == "GT" and \
                toks[j + 2].type == "LPAREN":
            return toks[j + 3: _match(toks, j + 2)]
    return None


class TemplateError(Exception):
    def __init__(self, message: str, tok: Token | None, construct: str | None = None):
        super().__init__(message)
        self.message, self.tok, self.construct = message, tok, construct


@dataclass
class Param:
    name: str
    kind: str                        # "type" or "value"
    default: list[Token] | None


@dataclass
class Template:
    name: str
    params: list[Param]
    body: list[Token]                # tokens after the template header (declaration/definition)
    name_index: int                  # index of the function name inside ``body``
    fparams: list[list[Token]]       # function parameter declarations (token lists)
    slot: int                        # position in the output list
    definition: bool
    instances: list[tuple] = field(default_factory=list)


def _close_angle(toks: list[Token], j: int) -> int | None:
    """Index of the '>' closing the '<' at ``j`` (splits '>>'); None when it is not a template
    argument list (a ';' '{' '}' comes first)."""
    depth, k = 0, j
    paren = 0
    end = j + 256                    # as lexer.MAX_TEMPLATE_TOKENS: a bounded scan
    while k < len(toks):
        if k > end:
            return None
        t = toks[k]
        if t.type in ("LPAREN", "LBRACKET"):
            paren += 1
        elif t.type in ("RPAREN", "RBRACKET"):
            paren -= 1
            if paren < 0:
                return None
        elif t.type == "LT" and paren == 0:
            depth += 1
        elif t.type == "RSHIFT" and paren == 0:
            toks[k: k + 1] = [Token("GT", ">", t.lineno, t.column, t.filename),
                              Token("GT", ">", t.lineno, t.column + 1, t.filename)]
            continue
        elif t.type == "GT" and paren == 0:
            depth -= 1
            if depth == 0:
                return k
        elif t.type in ("SEMI", "LBRACE", "RBRACE"):
            return None
        k += 1
    return None


def _match(toks: list[Token], j: int) -> int:
    pairs = {"LPAREN": "RPAREN", "LBRACKET": "RBRACKET", "LBRACE": "RBRACE"}
    want, depth = pairs[toks[j].type], 0
    for k in range(j, len(toks)):
        if toks[k].type == toks[j].type:
            depth += 1
        elif toks[k].type == want:
            depth -= 1
            if depth == 0:
                return k
    raise TemplateError(f"unbalanced '{toks[j].value}'", toks[j])


def _split(toks: list[Token]) -> list[list[Token]]:
    out, cur, depth = [], [], 0
    for t in toks:
        if t.type in ("LT", "LPAREN", "LBRACKET", "LBRACE"):
            depth += 1
        elif t.type in ("GT", "RPAREN", "RBRACKET", "RBRACE"):
            depth -= 1
        if t.type == "COMMA" and depth == 0:
            out.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur:
        out.append(cur)
    return out


def _spelling(toks: list[Token]) -> str:
    return " ".join(t.value for t in toks)


def _mangle(name: str, args: list[list[Token]]) -> str:
    parts = []
    for a in args:
        s = _spelling(a).replace("-", "m").replace("*", "p")
        parts.append(re.sub(r"\W+", "_", s).strip("_") or "x")
    return name + "_" + "_".join(parts)


def mangle_spelling(name: str, args_text: str) -> str:
    """``_mangle`` for template arguments given as source text (the emulator's stubs)."""
    args, cur, depth = [], "", 0
    for ch in args_text:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur)
            cur = ""
        else:
            cur += ch
    args.append(cur)
    parts = []
    for a in args:
        s = " ".join(re.findall(r"\w+|[^\w\s]", a)).replace("-", "m").replace("*", "p")
        parts.append(re.sub(r"\W+", "_", s).strip("_") or "x")
    return name + "_" + "_".join(parts)


class _Scope:
    """The tokens visible at a use: ``prefix + out`` without copying them (``out`` only grows
    while the view is in use), with the backward declaration lookups memoised per name, so each
    lookup rescans only the tokens added since the last one of that name (a long function with
    many template calls stays linear; a fresh ``prefix + out`` and a full rescan per call were
    quadratic)."""

    __slots__ = ("prefix", "out", "memo")

    def __init__(self, prefix: list[Token], out: list[Token]):
        self.prefix, self.out = prefix, out
        self.memo: dict[tuple[str, str], tuple] = {}

    def __len__(self) -> int:
        return len(self.prefix) + len(self.out)

    def __getitem__(self, k: int) -> Token:
        n = len(self.prefix)
        if k < 0:
            k += n + len(self.out)
        if k < 0:
            raise IndexError(k)
        return self.prefix[k] if k < n else self.out[k - n]


def _retok(tok: Token, at: Token) -> Token:
    return Token(tok.type, tok.value, at.lineno, at.column, at.filename)


class Instantiator:
    def __init__(self, toks: list[Token]):
        self.toks = toks
        self.templates: dict[str, list[Template]] = {}
        self.requests: deque[tuple[str, list[list[Token]], Token]] = deque()

    # -- collection --------------------------------------------------------------------
    def run(self) -> list[Token]:
        if not any(t.type == "ID" and t.value == "template" for t in self.toks):
            return self.toks
        out: list[Token | Template] = []
        toks, i, depth = self.toks, 0, 0
        while i < len(toks):
            t = toks[i]
            if t.type == "ID" and t.value == "template" and depth == 0:
                if i + 1 < len(toks) and toks[i + 1].type == "LT":
                    i = self._template(i, out)
                else:
                    i = self._explicit(i)
                continue
            if t.type == "LBRACE":
                depth += 1
            elif t.type == "RBRACE":
                depth -= 1
            out.append(t)
            i += 1
        # uses in ordinary code
        plain = [x for x in out if isinstance(x, Token)]
        if any(t.type == "ID" and t.value == "template" for t in plain):
            bad = next(t for t in plain if t.type == "ID" and t.value == "template")
            raise TemplateError("'template' inside a block (member or local template) is not supported",
                                bad, "template")
        pieces: list[list[Token] | Template] = []
        cur: list[Token] = []
        for x in out:
            if isinstance(x, Template):
                pieces.append(cur)
                pieces.append(x)
                cur = []
            else:
                cur.append(x)
        pieces.append(cur)
        pieces = [self._uses(p) if isinstance(p, list) else p for p in pieces]
        self._drain()
        result: list[Token] = []
        for p in pieces:
            if isinstance(p, Template):
                for _key, toks_ in p.instances:
                    result.extend(toks_)
            else:
                result.extend(p)
        return result

    def _template(self, i: int, out: list) -> int:
        toks = self.toks
        head = toks[i]
        close = _close_angle(toks, i + 1)
        if close is None:
            raise TemplateError("malformed template parameter list", head, "template")
        if close == i + 2:
            raise TemplateError("explicit specialisation (template <>) is not supported", head, "template <>")
        params = []
        for p in _split(toks[i + 2: close]):
            if not p:
                raise TemplateError("empty template parameter", head, "template")
            eq = next((k for k, x in enumerate(p) if x.type == "EQUALS"), None)
            decl, default = (p[:eq], p[eq + 1:]) if eq is not None else (p, None)
            if any(x.type == "ELLIPSIS" for x in decl):
                raise TemplateError("template parameter packs are not supported", decl[0], "...")
            if decl[0].value == "template":
                raise TemplateError("template template parameters are not supported", decl[0], "template")
            names = [x for x in decl if x.type in ("ID", "TYPEID")]
            if not names:
                raise TemplateError("unnamed template parameter", decl[0], "template")
            kind = "type" if decl[0].value in ("typename", "class") else "value"
            params.append(Param(names[-1].value, kind, default))
        start = close + 1
        # extent: up to the matching '}' of the body or the ';' of a declaration
        k, depth, name_idx, lparen = start, 0, None, None
        while k < len(toks):
            t = toks[k]
            if t.type in ("STRUCT", "UNION") or (t.type == "ID" and t.value == "class"):
                if depth == 0 and lparen is None:
                    raise TemplateError("class templates are not supported", t, t.value)
            if t.type == "LPAREN" and lparen is None:
                prev = toks[k - 1]
                if prev.type in ("ID", "TYPEID") and prev.value not in _SPEC_WITH_ARGS:
                    lparen, name_idx = k, k - 1
                else:
                    k = _match(toks, k) + 1
                    continue
            if t.type == "LBRACE" and lparen is not None:
                end = _match(toks, k)
                definition = True
                break
            if t.type == "SEMI":
                end = k
                definition = False
                break
            k += 1
        else:
            raise TemplateError("template declaration without an end", head, "template")
        if lparen is None:
            raise TemplateError("only function templates are supported", head, "template")
        pclose = _match(toks, lparen)
        fparams = [p for p in _split(toks[lparen + 1: pclose])]
        name = toks[name_idx].value
        tpl = Template(name, params, toks[start: end + 1], name_idx - start, fparams, len(out), definition)
        self.templates.setdefault(name, []).append(tpl)
        out.append(tpl)
        return end + 1

    def _explicit(self, i: int) -> int:
        """``template <decl> name<args>(params);`` requests an instantiation."""
        toks = self.toks
        k = i + 1
        while k < len(toks) and toks[k].type != "SEMI":
            t = toks[k]
            if t.type in ("ID", "TYPEID") and t.value in self.templates and k + 1 < len(toks) \
                    and toks[k + 1].type == "LT":
                close = _close_angle(toks, k + 1)
                if close is None:
                    raise TemplateError("malformed explicit instantiation", t, "template")
                self.requests.append((t.value, _split(toks[k + 2: close]), t))
                k = close + 1
                while k < len(toks) and toks[k].type != "SEMI":
                    k += 1
                return k + 1
            k += 1
        raise TemplateError("explicit instantiation of an unknown template (or one without arguments)",
                            toks[i], "template")

    # -- uses ----------------------------------------------------------------------------
    def _uses(self, toks: list[Token], scope: list[Token] | None = None) -> list[Token]:
        """Replace ``name<args>`` and deducible ``name(args)`` of templates; queue requests."""
        out: list[Token] = []
        view = _Scope(scope or [], out)
        k = 0
        toks = list(toks)
        while k < len(toks):
            t = toks[k]
            if t.type in ("ID", "TYPEID") and t.value in self.templates and \
                    not (out and out[-1].type in ("PERIOD", "ARROW")):
                nxt = toks[k + 1] if k + 1 < len(toks) else None
                if nxt is not None and nxt.type == "LT":
                    close = _close_angle(toks, k + 1)
                    if close is not None:
                        args = [_local_constant(a, view) for a in _split(toks[k + 2: close])]
                        out.append(Token("ID", self._request(t, args), t.lineno, t.column, t.filename))
                        k = close + 1
                        continue
                if nxt is not None and nxt.type == "LPAREN" and not self._is_declarator(out):
                    pclose = _match(toks, k + 1)
                    args = self._deduce(t, _split(toks[k + 2: pclose]), view)
                    out.append(Token("ID", self._request(t, args), t.lineno, t.column, t.filename))
                    k += 1
                    continue
                launch_args = _launch_arguments(toks, k + 1)
                if launch_args is not None:
                    # kernel<<<grid, block>>>(args) of a kernel template: deduced from the
                    # launch's arguments like a call
                    args = self._deduce(t, _split(launch_args), view)
                    out.append(Token("ID", self._request(t, args), t.lineno, t.column, t.filename))
                    k += 1
                    continue
            out.append(t)
            k += 1
        return out

    @staticmethod
    def _is_declarator(out: list[Token]) -> bool:
        # a forward declaration / definition of a non-template overload: the name follows a type
        return bool(out) and (out[-1].type in ("VOID", "INT", "FLOAT", "DOUBLE", "CHAR", "TIMES")
                              and len(out) > 1 and out[-2].type in ("SEMI", "RBRACE", "INLINE", "STATIC"))

    def _request(self, at: Token, args: list[list[Token]]) -> str:
        tpl = self.templates[at.value][0]
        args = self._complete(tpl, args, at)
        self.requests.append((at.value, args, at))
        return _mangle(at.value, args)

    def _complete(self, tpl: Template, args: list[list[Token]], at: Token) -> list[list[Token]]:
        if len(args) > len(tpl.params):
            raise TemplateError(f"too many template arguments for '{tpl.name}'", at, tpl.name)
        args = list(args)
        for p in tpl.params[len(args):]:
            if p.default is None:
                raise TemplateError(f"cannot deduce template parameter '{p.name}' of '{tpl.name}': "
                                    f"give the template arguments explicitly ({tpl.name}<...>(...))", at, tpl.name)
            args.append(self._subst(p.default, tpl.params[:len(args)], args))
        return args

    def _deduce(self, at: Token, call_args: list[list[Token]], scope: list[Token]) -> list[list[Token]]:
        tpl = self.templates[at.value][0]
        found: dict[str, list[Token]] = {}
        for fp, arg in zip(tpl.fparams, call_args):
            words = [x for x in fp if x.type not in _DECL_SKIP and x.value not in ("__restrict__", "__restrict")]
            type_params = [x.value for x in words[:-1] if any(p.name == x.value and p.kind == "type"
                                                              for p in tpl.params)]
            if not type_params:
                continue
            pname = type_params[0]
            ptr = sum(1 for x in words if x.type == "TIMES")
            got = _arg_type(arg, scope)
            if got is None:
                continue
            base, level = got
            if level < ptr:
                continue
            tokens = [Token(_kw(w), w, at.lineno, at.column, at.filename) for w in base.split()]
            if level > ptr:
                tokens += [Token("TIMES", "*", at.lineno, at.column, at.filename)] * (level - ptr)
            found.setdefault(pname, tokens)
        args = []
        for p in tpl.params:
            if p.name in found:
                args.append(found[p.name])
            else:
                break
        return args

    # -- instantiation -----------------------------------------------------------------
    def _drain(self) -> None:
        seen: set[tuple] = set()
        while self.requests:
            name, args, at = self.requests.popleft()
            for tpl in self.templates[name]:
                args_full = self._complete(tpl, args, at)
                key = tuple(_spelling(a) for a in args_full)
                if (id(tpl), key) in seen:
                    continue
                seen.add((id(tpl), key))
                body = self._subst(tpl.body, tpl.params, args_full)
                mangled = _mangle(name, args_full)
                body[tpl.name_index] = Token("ID", mangled, body[tpl.name_index].lineno,
                                             body[tpl.name_index].column, body[tpl.name_index].filename)
                body = body[:tpl.name_index + 1] + self._uses(body[tpl.name_index + 1:], body[:tpl.name_index + 1])
                tpl.instances.append((key, body))

    @staticmethod
    def _subst(toks: list[Token], params: list[Param], args: list[list[Token]]) -> list[Token]:
        m = {p.name: a for p, a in zip(params, args)}
        out: list[Token] = []
        for t in toks:
            if t.type in ("ID", "TYPEID") and t.value in m:
                rep = m[t.value]
                wrap = len(rep) > 1 and not all(x.type in ("ID", "TYPEID", "TIMES", "CONST", "UNSIGNED", "SIGNED",
                                                            "INT", "LONG", "SHORT", "CHAR", "FLOAT", "DOUBLE")
                                                 for x in rep)
                if wrap:
                    out.append(Token("LPAREN", "(", t.lineno, t.column, t.filename))
                out.extend(_retok(x, t) for x in rep)
                if wrap:
                    out.append(Token("RPAREN", ")", t.lineno, t.column, t.filename))
            else:
                out.append(t)
        return out


def _local_constant(arg: list[Token], scope) -> list[Token]:
    """A template argument naming a local ``constexpr``/``const`` variable initialised with a
    literal is replaced by that literal (the variable is not visible inside the template).

    The declaration is looked for at depth 0 of the innermost block enclosing the use, scanning
    backward. With a memoising ``_Scope``, the scan stops where the previous lookup of the name
    started, in the same brace state, and takes that lookup's result."""
    if len(arg) != 1 or arg[0].type != "ID":
        return arg
    name = arg[0].value
    n = len(scope)
    memo = getattr(scope, "memo", None)
    # checkpoints of earlier lookups: position -> (depth there, result from there on). The last
    # two tokens are re-examined (their look-ahead grows with the scope): a lookup's checkpoint
    # is the third token from the end, with the depth the scan had there
    seen = memo.setdefault(("const", name), {}) if memo is not None else {}
    check = n - 3
    depth_at_check = None
    found = None
    depth = 0
    for k in range(n - 1, 0, -1):
        hit = seen.get(k)
        if hit is not None and hit[0] == depth:
            found = hit[1]
            break
        if k == check:
            depth_at_check = depth
        t = scope[k]
        if t.type == "RBRACE":
            depth += 1
        elif t.type == "LBRACE":
            if depth == 0:
                found = ("none",)    # reached the start of the enclosing block
                break
            depth -= 1
        if depth == 0 and t.type == "ID" and t.value == name and k + 2 < n and \
                scope[k + 1].type == "EQUALS":
            found = _constant_at(scope, k, n)
            break
    else:
        found = ("none",)
    if memo is not None and depth_at_check is not None and found[0] != "partial":
        seen[check] = (depth_at_check, found)
    if found[0] == "init":
        return [_retok(x, arg[0]) for x in found[1]]
    return arg


def _constant_at(scope, k: int, n: int) -> tuple:
    """("init", tokens) when the declaration whose name is at ``k`` is a const/constexpr with a
    literal initialiser, ("none",) when it is not, ("partial", tokens) when its initialiser
    runs to the end of the scope (not memoised: the scope may grow)."""
    j = k - 1
    quals = set()
    while j >= 0 and scope[j].type not in ("SEMI", "LBRACE", "RBRACE"):
        quals.add(scope[j].type)
        j -= 1
    if not quals & {"CONSTEXPR", "CONST"}:
        return ("none",)
    init = []
    ended = False
    for i in range(k + 2, n):
        x = scope[i]
        if x.type in ("SEMI", "COMMA"):
            ended = True
            break
        init.append(x)
    if init and all(x.type.startswith(("INT_CONST", "FLOAT_CONST")) or x.type in
                    ("MINUS", "PLUS", "TIMES", "DIVIDE", "LPAREN", "RPAREN") for x in init):
        return ("init", init) if ended else ("partial", init)
    return ("none",) if ended else ("partial", [])


def _kw(word: str) -> str:
    return word.upper() if word in _KEYWORD_TYPES else "ID"


def _arg_type(arg: list[Token], scope: list[Token]) -> tuple[str, int] | None:
    """(base type spelling, pointer level) of a simple call argument, from the declarations seen
    in ``scope`` (the tokens of the enclosing function up to the call)."""
    if len(arg) == 1 and arg[0].type == "FLOAT_CONST":
        return ("float" if arg[0].value[-1] in "fF" else "double"), 0
    if len(arg) == 1 and arg[0].type.startswith("INT_CONST"):
        return "int", 0
    deref = 0
    a = list(arg)
    while a and a[0].type == "TIMES":
        deref += 1
        a = a[1:]
    if not a or a[0].type != "ID":
        return None
    name = a[0].value
    rest = a[1:]
    while rest and rest[0].type == "LBRACKET":
        try:
            end = _match(rest, 0)
        except TemplateError:
            return None
        deref += 1
        rest = rest[end + 1:]
    if rest:
        return None
    decl = _declared_type(name, scope)
    if decl is None:
        return None
    base, level = decl
    if level < deref:
        return None
    return base, level - deref


_KEYWORD_KINDS = frozenset(w.upper() for w in _KEYWORD_TYPES)


def _declared_type(name: str, scope) -> tuple[str, int] | None:
    """The declaration of ``name`` nearest before the end of ``scope`` (backward scan). With a
    memoising ``_Scope``, only the tokens added since the last lookup of the name are scanned
    (the last one is re-examined: its look-ahead was cut off then)."""
    n = len(scope)
    memo = getattr(scope, "memo", None)
    seen = memo.get(("decl", name)) if memo is not None else None
    stop = max(seen[0] - 2, 0) if seen is not None else 0   # k = n_then - 1 again
    result = None
    for k in range(n - 1, stop, -1):
        result = _declaration_at(scope, k, name, n)
        if result is not None:
            break
    else:
        if seen is not None:
            result = seen[1]
    if memo is not None:
        memo[("decl", name)] = (n, result)
    return result


def _declaration_at(scope, k: int, name: str, n: int) -> tuple[str, int] | None:
    t = scope[k]
    if t.type != "ID" or t.value != name:
        return None
    nxt = scope[k + 1].type if k + 1 < n else None
    if nxt not in ("COMMA", "RPAREN", "EQUALS", "SEMI", "LBRACKET"):
        return None
    level, j = 0, k - 1
    while j >= 0 and scope[j].type in ("TIMES", "CONST", "RESTRICT", "VOLATILE") or \
            (j >= 0 and scope[j].value in ("__restrict__", "__restrict")):
        level += scope[j].type == "TIMES"
        j -= 1
    words = []
    while j >= 0 and (scope[j].type.upper() in _KEYWORD_KINDS or
                      (scope[j].type in ("ID", "TYPEID") and not words and scope[j].value not in _SPEC_WITH_ARGS)):
        words.insert(0, scope[j].value)
        j -= 1
        if words and scope[j + 1].type in ("ID", "TYPEID"):
            break
    if words:
        if nxt == "LBRACKET" and scope[k + 1].type == "LBRACKET":
            level += 1
        return " ".join(words), level
    return None


def instantiate(toks: list[Token]) -> list[Token]:
    """The token list with every used function-template instantiation expanded (see module doc);
    raises ``TemplateError`` for what is not modelled."""
    return Instantiator(toks).run()
