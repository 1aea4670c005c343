"""Monomorphise the C++ of a source from clang's instantiations: templates, classes, constexpr.

clang has already instantiated every template the source uses (``referenced`` of a use leads to
the specialisation, whose body clang instantiated with concrete types). This rewrite prints
each used specialisation as plain C, from the template's own text with the differences clang
knows about applied, so the result keeps the source's spelling (macros, runtime built-ins) and
its coordinates:

======================================  ================================================================
C++                                     C
======================================  ================================================================
``template <...> T f(...)`` used as     one function per used specialisation, ``f_<args>``; the
``f<A>(x)`` or ``f(x)`` (deduced)       template's parameters replaced by clang's arguments (defaults
                                        and deduction are clang's); a parameter pack expands to one
                                        parameter per element (``args_0, args_1``) and every pack
                                        expansion in the body to the list of its elements
``template <...> struct S`` and its     ``typedef struct S_<args> {fields} S_<args>;`` per used
partial specialisations                 specialisation (the specialisation clang selected)
member functions (also of plain         free functions ``S__m``; a non-static one takes
structs)                                ``S *this_`` (``const`` for const methods); ``this`` and
                                        implicit member accesses go through it; calls
                                        ``o.m(a)`` / ``p->m(a)`` / ``S::m(a)`` follow
``if constexpr (c) A else B``           the branch clang kept
``static_assert``, ``[[attr]]``         removed (clang checked the assertion)
variable templates, ``std::is_same_v``  the value clang computed, where used as a value
``std::forward<T>(x)``, ``std::move``   ``(x)``
``enum class E {A}``, ``E::A``          ``typedef enum {E__A} E;``, ``E__A``
``T &x`` parameter                      ``T x`` for ``const T &`` and ``T &&``; ``T *x`` for a non-const
                                        lvalue reference (uses ``(*x)``, arguments ``&(a)``)
======================================  ================================================================

The first instance of a template takes the template's lines; further instances follow it on
the template's last line. A construct this cannot express (constructors with bodies,
overloaded operators, references returned) raises ``Unsupported`` with its position.
"""
from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field

from .driver import ParsedUnit

TEMPLATE_KINDS = frozenset({"FUNCTION_TEMPLATE", "CLASS_TEMPLATE", "CLASS_TEMPLATE_PARTIAL_SPECIALIZATION"})
RECORD_KINDS = frozenset({"STRUCT_DECL", "CLASS_DECL"})
FUNCTION_KINDS = frozenset({"FUNCTION_DECL", "CXX_METHOD", "CONSTRUCTOR", "CONVERSION_FUNCTION"})
OPERATOR_NAMES = {"[]": "index", "()": "call", "+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod",
                  "+=": "add_assign", "-=": "sub_assign", "*=": "mul_assign", "/=": "div_assign",
                  "==": "eq", "!=": "ne", "<": "lt", ">": "gt", "<=": "le", ">=": "ge", "=": "assign",
                  "&": "and", "|": "or", "^": "xor", "<<": "shl", ">>": "shr", "!": "not", "~": "compl",
                  "++": "inc", "--": "dec", "&&": "land", "||": "lor"}


def _member_name(d) -> str:
    name = d.spelling
    if _kind(d) == "CONVERSION_FUNCTION":
        return "op_to_" + sanitize(d.result_type.spelling)
    if name.startswith("operator"):
        sym = name[len("operator"):].strip()
        return "op_" + OPERATOR_NAMES.get(sym, sanitize(sym.encode().hex()))
    return name

IDENTITY_CALLS = frozenset({"forward", "move"})
_IDENT = re.compile(r"[A-Za-z_]\w*")


class Unsupported(Exception):
    def __init__(self, message: str, line: int, col: int, construct: str):
        super().__init__(message)
        self.line, self.col, self.construct = line, col, construct


def _unsupported(c, what: str):
    raise Unsupported(what, c.location.line, c.location.column, c.spelling or _kind(c))


# ------------------------------------------------------------------------------ libclang extras
_LIB_READY = False


def _lib():
    global _LIB_READY
    import clang.cindex as ci

    lib = ci.conf.lib
    if not _LIB_READY:
        void = ctypes.c_void_p
        signatures = {   # name: (result type, argument types); the Python bindings lack these
            "clang_getSpecializedCursorTemplate": (ci.Cursor, [ci.Cursor]),
            "clang_Cursor_Evaluate": (void, [ci.Cursor]),
            "clang_EvalResult_getKind": (ctypes.c_int, [void]),
            "clang_EvalResult_isUnsignedInt": (ctypes.c_uint, [void]),
            "clang_EvalResult_getAsUnsigned": (ctypes.c_ulonglong, [void]),
            "clang_EvalResult_getAsLongLong": (ctypes.c_longlong, [void]),
            "clang_EvalResult_getAsDouble": (ctypes.c_double, [void]),
            "clang_EvalResult_dispose": (None, [void]),
        }
        for name, (res, args) in signatures.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        _LIB_READY = True
    return lib


def specialized_template(c):
    """The template ``c`` was instantiated from: its definition when it has one (clang may
    answer with a forward declaration)."""
    t = _lib().clang_getSpecializedCursorTemplate(c)
    if t is None or _invalid(t):
        return None
    if not any(_kind(k) == "COMPOUND_STMT" for k in t.get_children()):
        d = t.get_definition()
        if d is not None and not _invalid(d):
            return d
        usr = t.get_usr()
        for k in t.translation_unit.cursor.get_children() if usr and _kind(t) == "FUNCTION_TEMPLATE" else ():
            if _kind(k) == "FUNCTION_TEMPLATE" and k.get_usr() == usr and \
                    any(_kind(x) == "COMPOUND_STMT" for x in k.get_children()):
                return k
    return t


def evaluate(c) -> str | None:
    """The value clang computes for a constant expression, as a C literal (None if not one)."""
    lib = _lib()
    res = lib.clang_Cursor_Evaluate(c)
    if not res:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(res)
        if kind == 1:  # CXEval_Int
            if lib.clang_EvalResult_isUnsignedInt(res):
                v = lib.clang_EvalResult_getAsUnsigned(res)
                return f"{v}u" if v <= 0xFFFFFFFF else f"{v}ull"
            v = lib.clang_EvalResult_getAsLongLong(res)
            lit = str(v) if -2**31 <= v < 2**31 else f"{v}ll"
            return f"({lit})" if v < 0 else lit
        if kind == 2:  # CXEval_Float
            v = lib.clang_EvalResult_getAsDouble(res)
            if v != v:
                return "(0.0f / 0.0f)"
            if v in (float("inf"), float("-inf")):
                return "(1.0f / 0.0f)" if v > 0 else "(-1.0f / 0.0f)"
            t = c.type.get_canonical().spelling
            lit = repr(float(v))
            lit = lit if ("e" in lit or "." in lit) else lit + ".0"
            lit = lit + ("f" if t == "float" else "")
            return f"({lit})" if v < 0 else lit
        return None
    finally:
        lib.clang_EvalResult_dispose(res)


def _int_arg(d, i: int) -> int:
    v = d.get_template_argument_value(i)
    if v == -1 and d.get_template_argument_unsigned_value(i) == 1:
        return 1   # a bool 'true' (a one-bit value read as signed)
    return v


# ------------------------------------------------------------------------------ text helpers
def strip_comments(text: str) -> str:
    """Comments -> spaces (newlines kept), strings and characters untouched."""
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            j = i + 1
            while j < n and text[j] != ch and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if c == "\n" else " " for c in text[i:j]))
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _matching_angle(text: str, i: int) -> int:
    """Offset just past the '>' closing the '<' at ``i`` (parentheses nest)."""
    depth, par = 0, 0
    while i < len(text):
        ch = text[i]
        if ch in "([":
            par += 1
        elif ch in ")]":
            par -= 1
        elif par == 0 and ch == "<":
            depth += 1
        elif par == 0 and ch == ">":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def split_template_args(inner: str) -> list[str]:
    """``A, B<C, D>, (E, F)`` -> ``["A", "B<C, D>", "(E, F)"]`` (the text between <>)."""
    if not inner.strip():
        return []
    parts, depth, cur = [], 0, []
    for ch in inner:
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def sanitize(s: str) -> str:
    s = s.replace("*", "p").replace("&", "r").replace("-", "m")
    s = re.sub(r"\bconst\b", "c", s)
    s = re.sub(r"\W+", "_", s).strip("_")
    return s


# ------------------------------------------------------------------------------ the model
@dataclass
class Inst:
    kind: str                 # "function" | "method" | "record"
    decl: object              # the specialisation / method / record
    pattern: object           # the cursor whose text is printed
    name: str
    bindings: dict[str, str] = field(default_factory=dict)
    owner: "Inst | None" = None
    methods: list["Inst"] = field(default_factory=list)
    const_args: dict = field(default_factory=dict)   # parameter index -> function name it is bound to
    plain_uses: list = field(default_factory=list)   # plain functions it calls through those


def _kind(c) -> str:
    try:
        return c.kind.name
    except ValueError:   # a cursor kind newer than the Python bindings
        return "UNKNOWN"


def _invalid(c) -> bool:
    try:
        return c.kind.is_invalid()
    except ValueError:
        return False


def _is_expr(c) -> bool:
    try:
        return c.kind.is_expression()
    except ValueError:
        return False


def _tkind(t) -> str:
    try:
        return t.kind.name
    except ValueError:   # a type kind newer than the Python bindings (e.g. _Float16)
        return "UNKNOWN"


def _rng(c) -> tuple[int, int]:
    return c.extent.start.offset, c.extent.end.offset


class Monomorphiser:
    def __init__(self, unit: ParsedUnit, rw):
        self.unit, self.rw = unit, rw
        self.text = rw.text
        self.insts: dict[str, Inst] = {}        # key -> instance
        self.names: set[str] = set()
        self.order: list[Inst] = []
        self.work: list[Inst] = []
        self.uses: dict[int, list[Inst]] = {}   # id(instance) -> function instances its body uses
        self.current: Inst | None = None
        self.const_uses: dict[str, list[Inst]] = {}
        self.const_plain: dict[str, list] = {}   # plain functions a const-arg instance calls
        self.lambda_args: dict[int, tuple[str, object]] = {}   # closure hash -> (function name, lambda)

    # -- discovery ------------------------------------------------------------------------------
    def user(self, c) -> bool:
        return c is not None and self.unit.in_user_file(c)

    def key(self, c) -> str:
        return c.get_usr() or f"{c.spelling}@{c.extent.start.offset}"

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def record_of_type(self, t):
        """The user record a type names (through pointers, arrays, references, const)."""
        for _ in range(8):
            k = _tkind(t)
            if k in ("POINTER", "LVALUEREFERENCE", "RVALUEREFERENCE"):
                t = t.get_pointee()
            elif k in ("CONSTANTARRAY", "INCOMPLETEARRAY", "VARIABLEARRAY", "DEPENDENTSIZEDARRAY"):
                t = t.element_type
            else:
                break
        d = t.get_canonical().get_declaration()
        if d is not None and _kind(d) in RECORD_KINDS and self.user(d):
            return d
        return None

    def need_record(self, d) -> Inst | None:
        if d is None or d.spelling.startswith("(lambda"):
            return None   # closures: their call operator is printed where the lambda is
        k = self.key(d)
        if k in self.insts:
            return self.insts[k]
        pattern = self.pattern_of(d)
        if pattern is None:
            # a plain struct: only one with member functions is rewritten
            if not self.has_methods(d):
                return None
            inst = Inst("record", d, d, d.spelling)
            self.names.add(d.spelling)
        else:
            if not self.user(pattern):
                return None
            args = self.template_args(d)
            inst = Inst("record", d, pattern, self.fresh("_".join([d.spelling, *[sanitize(a) for a in args]])))
            inst.bindings = self.bind(pattern, d, args)
        self.insts[k] = inst
        self.order.append(inst)
        for f in d.type.get_fields():
            self.need_record(self.record_of_type(f.type))
        return inst

    def pattern_of(self, d):
        """The text a specialisation is printed from: the template clang instantiated, or the
        specialisation itself when the user wrote it (``template <> struct S<float> {...}``)."""
        pattern = specialized_template(d)
        if pattern is None:
            return None
        ps, pe = _rng(pattern)
        if self.user(d) and not ps <= d.location.offset < pe and d.is_definition():
            return d
        return pattern

    def written_body(self, d) -> bool:
        for k in d.get_children():
            if _kind(k) == "COMPOUND_STMT":
                s, _ = _rng(k)
                return self.text[s:s + 1] == "{"
        return False

    def has_methods(self, d) -> bool:
        return any(_kind(c) in ("CXX_METHOD", "CONSTRUCTOR", "FUNCTION_TEMPLATE", "CONVERSION_FUNCTION")
                   for c in d.get_children())

    def need_function(self, d, call=None) -> Inst | None:
        if d is None or _kind(d) not in FUNCTION_KINDS or not self.user(d):
            return None
        if _kind(d) == "CONSTRUCTOR" and (d.is_copy_constructor() or d.is_move_constructor()):
            return None   # copies are C struct assignments (kernels' copy constructors copy fields)
        if _kind(d) == "CONSTRUCTOR" and not self.written_body(d):
            return None   # an implicit constructor: nothing runs (fields are left as C leaves them)
        k, const_args = self.call_key(d, call)
        if k in self.insts:
            return self.insts[k]
        parent = d.semantic_parent
        if parent is not None and parent.spelling.startswith("(lambda"):
            return None
        owner = self.need_record(parent) if parent is not None and _kind(parent) in RECORD_KINDS else None
        pattern = self.pattern_of(d)
        if owner is None and pattern is None:
            return None  # a plain function: it is in the text already
        if owner is not None:
            pat = pattern if pattern is not None else d
            if _kind(pat) == "FUNCTION_TEMPLATE":
                _unsupported(d, "member function templates")
            base = f"{owner.name}__ctor" if _kind(d) == "CONSTRUCTOR" else f"{owner.name}__{_member_name(d)}"
            inst = Inst("method", d, pat, self.fresh(base), owner=owner)
            inst.bindings = dict(owner.bindings)
            if owner.decl.spelling != owner.name:
                inst.bindings[owner.decl.spelling] = owner.name   # the injected class name
            owner.methods.append(inst)
        else:
            if not self.user(pattern):
                return None
            targs = self.template_args(d)
            args = targs + [fn for _, fn in sorted(const_args.items()) if fn not in targs]
            inst = Inst("function", d, pattern, self.fresh("_".join([d.spelling, *[sanitize(a) for a in args]])))
            inst.bindings = self.bind(pattern, d, self.template_args(d))
            inst.const_args = const_args
            self.uses[id(inst)] = list(self.const_uses.get(self.key(d), []))
            inst.plain_uses = list(self.const_plain.get(self.key(d), []))
        self.insts[k] = inst
        self.order.append(inst)
        self.work.append(inst)
        return inst

    def call_key(self, d, call) -> tuple[str, dict]:
        """The instance key of a use of ``d``; a template specialisation called with a function
        as a function-pointer argument (``launch(kernel, ...)``) is specialised on that function
        too, so that what it calls or launches through the parameter is known."""
        k = self.key(d)
        if call is None or _kind(call) != "CALL_EXPR" or specialized_template(d) is None or \
                _kind(d) != "FUNCTION_DECL":
            return k, {}
        const_args = {}
        params = list(d.get_arguments())
        for i, a in enumerate(call.get_arguments()):
            if i >= len(params):
                break
            t = params[i].type.get_canonical()
            lam = _lambda_in(a)
            if lam is not None and Printer.closure(t) is not None:
                # a lambda as a functor argument: the instance calls the lambda's function
                ch = Printer.closure(t).hash
                if ch not in self.lambda_args:
                    self.lambda_args[ch] = (self.fresh(f"__xp_lambda_{lam.location.line}"), lam)
                const_args[i] = self.lambda_args[ch][0]
                continue
            if _tkind(t) != "POINTER" or _tkind(t.get_pointee()) not in ("FUNCTIONPROTO", "FUNCTIONNOPROTO"):
                continue
            fn = _function_named(a)
            if fn is None:
                continue
            inst = self.need_function(fn, None)
            const_args[i] = inst.name if inst is not None else fn.spelling
            if inst is not None:
                self.const_uses.setdefault(k, []).append(inst)
            elif self.user(fn):
                self.const_plain.setdefault(k, []).append(fn.get_definition() or fn)
        if not const_args:
            return k, {}
        return k + "|" + "|".join(f"{i}={n}" for i, n in sorted(const_args.items())), const_args

    def template_args(self, d) -> list[str]:
        out = []
        n = d.get_num_template_arguments()
        for i in range(max(n, 0)):
            try:
                kind = d.get_template_argument_kind(i).name
            except ValueError:
                kind = "PACK"
            if kind == "TYPE":
                t = d.get_template_argument_type(i)
                closure = Printer.closure(t)
                if closure is not None:   # a lambda's type: named by its function, never by its path
                    got = self.lambda_args.get(closure.hash)
                    out.append(got[0] if got else "lambda")
                    continue
                out.append(self.ctype(t))
            elif kind == "INTEGRAL":
                out.append(str(_int_arg(d, i)))
            elif kind == "PACK":
                continue
            else:
                _unsupported(d, f"a template argument of kind {kind.lower()}")
        return out

    def bind(self, pattern, d, args: list[str]) -> dict[str, str]:
        """Template parameter name -> C text, for the pattern's parameters."""
        params = [c for c in pattern.get_children()
                  if _kind(c) in ("TEMPLATE_TYPE_PARAMETER", "TEMPLATE_NON_TYPE_PARAMETER",
                                  "TEMPLATE_TEMPLATE_PARAMETER")]
        if _kind(pattern) == "CLASS_TEMPLATE_PARTIAL_SPECIALIZATION":
            # the partial specialisation's own parameters: matched against the written pattern
            written = self.written_args(pattern)
            out = {}
            for w, a in zip(written, args):
                if _IDENT.fullmatch(w) and any(p.spelling == w for p in params):
                    out[w] = a
            return out
        out = {}
        n = d.get_num_template_arguments()
        for i, p in enumerate(params):
            if i >= n:
                break
            try:
                kind = d.get_template_argument_kind(i).name
            except ValueError:
                continue  # a pack: its elements are the expanded parameters
            if kind == "TYPE":
                out[p.spelling] = self.ctype(d.get_template_argument_type(i))
            elif kind == "INTEGRAL":
                v = _int_arg(d, i)
                out[p.spelling] = f"({v})" if v < 0 else str(v)
        return out

    def written_args(self, pattern) -> list[str]:
        text = self.text
        s, e = _rng(pattern)
        name = pattern.spelling
        m = re.compile(r"\b" + re.escape(name) + r"\s*<").search(text, pattern.location.offset, e)
        if not m:
            return []
        lt = m.end() - 1
        gt = _matching_angle(text, lt)
        return split_template_args(text[lt + 1:gt - 1])

    def scan(self, root) -> None:
        """Everything under ``root`` that needs an instance."""
        callees: set = set()
        for c in root.walk_preorder():
            k = _kind(c)
            if k == "CALL_EXPR":
                kids = list(c.get_children())
                callee = kids[0] if kids else None
                while callee is not None and _kind(callee) == "UNEXPOSED_EXPR":
                    inner = list(callee.get_children())
                    callee = inner[0] if len(inner) == 1 else None
                if callee is not None:
                    callees.add(callee.hash)
            elif c.hash in callees:
                continue   # named as the callee of a call: instantiated with the call's arguments
            if k in ("CALL_EXPR", "DECL_REF_EXPR", "MEMBER_REF_EXPR", "OVERLOADED_DECL_REF"):
                r = c.referenced
                if r is not None:
                    if _kind(r) in FUNCTION_KINDS:
                        got = self.need_function(r, c)
                        if got is not None and self.current is not None and got.kind != "record":
                            self.uses.setdefault(id(self.current), []).append(got)
            if k in ("VAR_DECL", "PARM_DECL", "FIELD_DECL", "CXX_FUNCTIONAL_CAST_EXPR", "CALL_EXPR",
                     "CSTYLE_CAST_EXPR", "TYPE_REF", "UNEXPOSED_EXPR", "INIT_LIST_EXPR"):
                try:
                    self.need_record(self.record_of_type(c.type))
                except Exception:  # noqa: BLE001 - a cursor without a type
                    pass

    def run(self) -> bool:
        roots = []
        tops = self.top_level()
        for c in tops:
            if _kind(c) in TEMPLATE_KINDS or self.is_template_text(c):
                continue
            roots.append(c)
        for c in roots:
            self.scan(c)
        while self.work:
            inst = self.work.pop()
            self.current = inst
            self.scan(inst.decl)
        self.current = None
        return True

    def top_level(self):
        out = []

        def visit(parent):
            for c in parent.get_children():
                if not self.user(c):
                    continue
                if _kind(c) in ("NAMESPACE", "LINKAGE_SPEC", "UNEXPOSED_DECL") and not self.is_template_text(c):
                    visit(c)
                else:
                    out.append(c)
        visit(self.unit.tu.cursor)
        return out

    def is_template_text(self, c) -> bool:
        s, _ = _rng(c)
        return self.text.startswith("template", s) and not self.text[s + 8:s + 9].isalnum()


def _uses_this(method) -> bool:
    """Whether a member function's body reads its object (fields, ``this``, other members)."""
    for c in method.walk_preorder():
        k = _kind(c)
        if k == "CXX_THIS_EXPR":
            return True
        if k == "MEMBER_REF_EXPR" and c.location.offset == c.extent.start.offset:
            r = c.referenced
            if r is not None and (_kind(r) == "FIELD_DECL" or
                                  (_kind(r) in ("CXX_METHOD", "CONVERSION_FUNCTION") and not r.is_static_method())):
                return True
    return False


def capture_parameter(name: str) -> str:
    """The parameter of a template instance holding a functor lambda's captured ``name``."""
    return f"__xp_cap_{name}"


def _lambda_in(expr):
    """The lambda an argument is (``[](float v) {...}``, through implicit conversions), also
    through a local variable it initialises (``auto f = [](...) {...}; k<<<g, b>>>(x, f);``)."""
    c = expr
    for _ in range(6):
        if _kind(c) == "LAMBDA_EXPR":
            return c
        if _kind(c) == "DECL_REF_EXPR" and c.referenced is not None and \
                _kind(c.referenced) == "VAR_DECL":
            return next((x for x in c.referenced.walk_preorder() if _kind(x) == "LAMBDA_EXPR"), None)
        kids = list(c.get_children())
        if _kind(c) not in ("UNEXPOSED_EXPR", "PAREN_EXPR", "CALL_EXPR") or len(kids) != 1:
            return None
        c = kids[0]
    return None


def _function_named(expr):
    """The function an argument names (``k``, ``&k``, ``k<T>``), else None."""
    c = expr
    for _ in range(6):
        k = _kind(c)
        if k == "DECL_REF_EXPR":
            r = c.referenced
            return r if r is not None and _kind(r) == "FUNCTION_DECL" else None
        kids = list(c.get_children())
        if k not in ("UNEXPOSED_EXPR", "PAREN_EXPR", "UNARY_OPERATOR") or len(kids) != 1:
            return None
        c = kids[0]
    return None


def monomorphise(unit: ParsedUnit, rw) -> None:
    """See the module docstring."""
    m = Monomorphiser(unit, rw)
    tops = m.top_level()

    def cxx(c) -> bool:
        k = _kind(c)
        if k in TEMPLATE_KINDS or m.is_template_text(c) or (k in RECORD_KINDS and m.has_methods(c)) or \
                (k == "ENUM_DECL" and c.is_scoped_enum()):
            return True
        # a local lambda (``auto act = [](float x) {...}; act(v)``) becomes a file-scope function
        # range-for and std::array locals become counted loops and C arrays
        return any(_kind(x) in ("STATIC_ASSERT", "LAMBDA_EXPR", "CXX_FOR_RANGE_STMT") or
                   _constexpr_if(m.text, x) or (_kind(x) == "VAR_DECL" and _std_array(x.type) is not None)
                   for x in c.walk_preorder())

    if not any(cxx(c) for c in tops):
        return
    m.run()
    Printer(m).apply(tops)


def _std_array(t):
    """(element type, N) of a ``std::array<T, N>`` type, else None."""
    if t is None:
        return None
    c = t.get_canonical()
    if _tkind(c) in ("LVALUEREFERENCE", "RVALUEREFERENCE"):
        c = c.get_pointee().get_canonical()
    m = re.fullmatch(r"(?:const\s+)?std::(?:__\w+::)?array<.*,\s*(\d+)(?:UL|ul|u|U|L)?>", c.spelling)
    if m is None or c.get_num_template_arguments() < 1:
        return None
    return c.get_template_argument_type(0), int(m.group(1))


def _constexpr_if(text: str, c) -> bool:
    if _kind(c) != "IF_STMT":
        return False
    s = c.extent.start.offset
    return re.match(r"if\s*constexpr\b", text[s:s + 40]) is not None


# ------------------------------------------------------------------------------ C types
def _ctype(m: Monomorphiser, t, name: str = "") -> str:
    """C declarator of ``name`` with clang type ``t`` (references: see the callers)."""
    k = _tkind(t)
    sep = (" " + name) if name else ""
    if k in ("LVALUEREFERENCE", "RVALUEREFERENCE"):
        return _ctype(m, t.get_pointee(), name)
    if k == "ELABORATED":
        inner = t.get_named_type()
        if _tkind(inner) != "INVALID":
            base = _ctype(m, inner, name)
            return ("const " + base) if t.is_const_qualified() and not base.startswith("const ") else base
    if k == "POINTER":
        p = t.get_pointee()
        q = " const" if t.is_const_qualified() else ""
        if _tkind(p) in ("FUNCTIONPROTO", "FUNCTIONNOPROTO"):
            args = ", ".join(_ctype(m, a) for a in p.argument_types()) or "void"
            return f"{_ctype(m, p.get_result())} (*{q}{name})({args})"
        if _tkind(p) in ("CONSTANTARRAY", "INCOMPLETEARRAY"):
            return _ctype(m, p, f"(*{q}{name})")
        return f"{_ctype(m, p)} *{q}{name}"
    if k in ("UNEXPOSED", "AUTO", "DECLTYPE", "TYPEOF") and _tkind(t.get_canonical()) != k:
        return _ctype(m, t.get_canonical(), name)
    if k == "CONSTANTARRAY":
        return _ctype(m, t.element_type, f"{name}[{t.element_count}]")
    if k == "INCOMPLETEARRAY":
        return _ctype(m, t.element_type, f"{name}[]")
    const = "const " if t.is_const_qualified() else ""
    d = t.get_canonical().get_declaration()
    if d is not None and _kind(d) in RECORD_KINDS and m.user(d):
        inst = m.need_record(d)
        if inst is not None:
            return f"{const}{inst.name}{sep}"
    s = t.spelling
    if "<" in s:
        s = t.get_canonical().spelling
    s = re.sub(r"\b(struct|class|enum|union)\s+", "", s)
    s = re.sub(r"(?<![\w:])(?:\w+::)+", "", s)
    if t.is_const_qualified() and not s.startswith("const "):
        s = "const " + s
    return f"{s}{sep}"


Monomorphiser.ctype = lambda self, t, name="": _ctype(self, t, name)


# ------------------------------------------------------------------------------ printing
@dataclass
class Scope:
    inst: Inst | None = None
    bindings: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)     # PARM_DECL hash -> (name, by_pointer)
    points: dict = field(default_factory=dict)     # offset -> (length, replacement)
    packs: dict = field(default_factory=dict)      # pack name -> its elements (C text)
    ref_return: bool = False                       # the function returns a reference (a pointer in C)
    captures: dict = field(default_factory=dict)   # captured variable hash -> its spelling in a lambda
    prelude: list = field(default_factory=list)    # file-scope definitions the rendering needs first
    device: str = ""                               # the enclosing function's execution space
    lambdas: dict = field(default_factory=dict)    # closure hash -> (function name, [(var, by_pointer)])


_ATTR = re.compile(r"\[\[[^\[\]]*\]\]")


class Printer:
    def __init__(self, m: Monomorphiser):
        self.m, self.rw, self.text = m, m.rw, m.text
        self.lambda_signatures: dict[str, str] = {}


    # -- text ---------------------------------------------------------------------------------------
    def gap(self, a: int, b: int, sc: Scope) -> str:
        if a >= b:
            return ""
        cuts = sorted(o for o in sc.points if a <= o < b)
        out, pos = [], a
        for o in cuts:
            length, rep = sc.points[o]
            out.append(self.plain(pos, o, sc))
            out.append(rep)
            pos = o + length
        out.append(self.plain(pos, b, sc))
        return "".join(out)

    def plain(self, a: int, b: int, sc: Scope) -> str:
        if a >= b:
            return ""
        t = self.rw.render(a, b) if any(a <= e.start and e.end <= b for e in self.rw.edits) else self.text[a:b]
        t = _ATTR.sub(lambda mm: " " * len(mm.group(0)), strip_comments(t))
        if sc.packs and "..." in t:
            t = self.expand_packs(t, sc.packs)
        if sc.bindings:
            t = self.subst(t, sc.bindings)
        if "<" in t:
            t = self.template_ids_in_text(t)
        if sc.inst is not None and "std::" in t:
            # text clang did not give as cursors (macro arguments): identity calls by spelling
            t = re.sub(r"\bstd\s*::\s*(?:forward\s*<[^<>()]*>|move)\s*\(", "(", t)
        return t

    @staticmethod
    def expand_packs(t: str, packs: dict) -> str:
        """``pattern...`` in text (a macro's arguments, where clang gives no cursors) -> the
        pattern once per pack element."""
        out, pos = [], 0
        for mm in re.finditer(r"\.\.\.", t):
            i = mm.start()
            if i < pos or re.search(r"sizeof\s*$", t[:i]):
                continue
            depth, j = 0, i - 1
            while j >= pos:
                ch = t[j]
                if ch in ")]>":
                    depth += 1
                elif ch in "([<":
                    if depth == 0:
                        break
                    depth -= 1
                elif ch in ",;{" and depth == 0:
                    break
                j -= 1
            pattern = t[j + 1:i]
            names = [w for w in packs if re.search(r"\b" + re.escape(w) + r"\b", pattern)]
            if not names:
                continue
            n = len(packs[names[0]])
            copies = [Printer.subst(pattern, {w: packs[w][k] for w in names if k < len(packs[w])})
                      for k in range(n)]
            out.append(t[pos:j + 1])
            out.append(", ".join(c.strip() for c in copies))
            pos = mm.end()
        out.append(t[pos:])
        return "".join(out)

    @staticmethod
    def subst(t: str, bindings: dict) -> str:
        out, pos = [], 0
        for mm in re.finditer(r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|[A-Za-z_]\w*", t):
            if mm.start() < pos:
                continue
            word = mm.group(0)
            if word[0] in "\"'" or word not in bindings or t[:mm.start()].rstrip().endswith((".", "->")):
                continue
            out.append(t[pos:mm.start()])
            rep = bindings[word]
            pos = mm.end()
            nxt = re.match(r"\s*<", t[pos:])
            if nxt and _IDENT.fullmatch(rep) and rep.startswith(word + "_"):
                pos = _matching_angle(t, pos + nxt.end() - 1)   # Name<args> of a class -> its instance
            out.append(rep)
        out.append(t[pos:])
        return "".join(out)

    def pad(self, out: str, a: int, b: int) -> str:
        lost = self.text.count("\n", a, b) - out.count("\n")
        return out + "\n" * lost if lost > 0 else out

    # -- trees --------------------------------------------------------------------------------------
    def node(self, c, sc: Scope, parent=None) -> str:
        s, e = _rng(c)
        out = self.special(c, sc, parent)
        if out is None:
            out = self.span(s, e, list(c.get_children()), sc, c)
        return self.pad(out, s, e)

    def span(self, s: int, e: int, kids, sc: Scope, parent) -> str:
        kids = [k for k in kids if s <= k.extent.start.offset and k.extent.end.offset <= e
                and k.extent.start.offset < k.extent.end.offset and self.m.user(k)]
        kids.sort(key=lambda k: (k.extent.start.offset, -k.extent.end.offset))
        groups: list[list] = []
        for k in kids:
            if groups and _rng(groups[-1][0]) == _rng(k):
                groups[-1].append(k)
            else:
                groups.append([k])
        out, pos = [], s
        for grp in groups:
            ks, ke = _rng(grp[0])
            if ks < pos:
                continue
            out.append(self.gap(pos, ks, sc))
            first = grp[0]
            if _kind(first) == "NAMESPACE_REF":
                end = self.namespace_qualifier(first)
                if end is not None:
                    pos = end
                    continue
            if _kind(first) == "TEMPLATE_REF" and self.m.user(first.referenced):
                name = self.record_name(parent) or self.record_by_spelling(first)
                lt = self.text.find("<", ke)
                if name is not None and lt >= 0 and not self.text[ke:lt].strip():
                    out.append(name)
                    pos = _matching_angle(self.text, lt)
                    continue
            dots = re.match(r"\s*\.\.\.", self.text[ke:ke + 40])
            if dots:
                out.append(", ".join(self.node(k, sc, parent) for k in grp))
                pos = ke + dots.end()
                continue
            out.append(self.node(first, sc, parent))
            pos = ke
        out.append(self.gap(pos, e, sc))
        return "".join(out)

    def record_name(self, c) -> str | None:
        if c is None:
            return None
        for t in (c.type, getattr(c, "result_type", None)):
            try:
                d = self.m.record_of_type(t)
            except Exception:  # noqa: BLE001
                d = None
            if d is not None:
                inst = self.m.need_record(d)
                if inst is not None:
                    return inst.name
        r = c.referenced
        if r is not None and r.semantic_parent is not None and _kind(r.semantic_parent) in RECORD_KINDS:
            inst = self.m.need_record(r.semantic_parent)
            if inst is not None:
                return inst.name
        return None

    def record_by_spelling(self, tref) -> str | None:
        """``Name<args>`` where clang gives no type (``sizeof(Packed<float>)``): the instance
        whose arguments are spelled the same, or the only instance of that template."""
        ke = tref.extent.end.offset
        lt = self.text.find("<", ke)
        if lt < 0 or self.text[ke:lt].strip():
            return None
        gt = _matching_angle(self.text, lt)
        return self.instance_by_text(tref.spelling, self.text[lt + 1:gt - 1], ("record",))

    def instance_by_text(self, name: str, args_text: str, kinds=("record", "function")) -> str | None:
        args = split_template_args(args_text)
        want = "_".join([name, *[sanitize(a) for a in args]])
        cands = [i for i in self.m.order if i.kind in kinds and i.decl.spelling == name]
        for i in cands:
            if i.name == want or i.name.startswith(want + "_") and i.kind == "function":
                return i.name
        return cands[0].name if len(cands) == 1 else None

    def template_ids_in_text(self, t: str) -> str:
        """``Name<args>`` of a used template in text clang gave no cursors for (the arguments
        of a macro such as ``cudaMalloc(&p, n * sizeof(Packed<float>))``)."""
        names = {i.decl.spelling for i in self.m.order if i.kind in ("record", "function")}
        if not names:
            return t
        out, pos = [], 0
        for mm in re.finditer(r"\b([A-Za-z_]\w*)\s*<", t):
            if mm.start() < pos or mm.group(1) not in names:
                continue
            gt = _matching_angle(t, mm.end() - 1)
            got = self.instance_by_text(mm.group(1), t[mm.end():gt - 1])
            if got is None:
                continue
            out.append(t[pos:mm.start()])
            out.append(got)
            pos = gt
        out.append(t[pos:])
        return "".join(out)

    # -- the rewrites -------------------------------------------------------------------------------
    def special(self, c, sc: Scope, parent) -> str | None:
        k = _kind(c)
        if k == "DECL_REF_EXPR":
            return self.decl_ref(c, sc)
        if k == "CALL_EXPR":
            if c.referenced is not None and _kind(c.referenced) == "CXX_METHOD":
                got = self.std_array_method(c, sc)
                if got is not None:
                    return got
            return self.call(c, sc)
        if k == "MEMBER_REF_EXPR":
            r = c.referenced
            if sc.inst is not None and sc.inst.kind == "method" and r is not None and \
                    _kind(r) == "FIELD_DECL" and not self.explicit_base(c):
                return f"this_->{c.spelling}"
            return None
        if k == "CXX_THIS_EXPR":
            return "this_" if self.text[c.extent.start.offset:c.extent.end.offset] == "this" else None
        if k == "IF_STMT" and _constexpr_if(self.text, c):
            kids = list(c.get_children())
            cond = next((x for x in kids if _is_expr(x)), None)
            stmts = [x for x in kids if x is not cond and not _is_expr(x) and _kind(x) != "VAR_DECL"]
            v = evaluate(cond) if cond is not None else None
            if v is None:
                _unsupported(c, "an 'if constexpr' condition clang cannot evaluate here")
            truthy = v.strip("()").rstrip("uUlLf") not in ("0", "0.0", "-0.0")
            branch = stmts[0] if truthy else (stmts[1] if len(stmts) > 1 else None)
            return self.node(branch, sc, c) if branch is not None else ";"
        if k == "STATIC_ASSERT":
            return ""
        if k == "RETURN_STMT" and sc.ref_return:
            kids = [x for x in c.get_children() if _is_expr(x)]
            if kids:
                return "return &(" + self.node(kids[0], sc, c) + ")"
        if k == "DECL_STMT":
            got = self.std_array_declaration(c, sc)
            return got if got is not None else self.lambda_declaration(c, sc)
        if k == "CXX_FOR_RANGE_STMT":
            return self.range_for(c, sc)
        if k == "TYPE_ALIAS_DECL":
            return f"typedef {_ctype(self.m, c.underlying_typedef_type, c.spelling)}"
        if k == "LAMBDA_EXPR":
            closure = self.closure(c.type)
            if closure is not None and closure.hash in self.m.lambda_args:
                self.lambda_function(c, sc)
                return self.m.lambda_args[closure.hash][0]
            _unsupported(c, "a lambda used other than called or named by a local variable")
        return None

    # -- std::array and range-for ------------------------------------------------------------------
    def std_array_declaration(self, c, sc: Scope) -> str | None:
        """``std::array<T, N> a;`` / ``= {...}`` -> ``T a[N]`` (``= {...}``)."""
        vars_ = [k for k in c.get_children() if _kind(k) == "VAR_DECL"]
        if len(vars_) != 1 or _std_array(vars_[0].type) is None:
            return None
        v = vars_[0]
        elem, n = _std_array(v.type)
        decl = _ctype(self.m, elem, f"{v.spelling}[{n}]")
        if v.type.is_const_qualified() and not decl.startswith("const "):
            decl = "const " + decl
        init = next((x for x in v.walk_preorder() if _kind(x) == "INIT_LIST_EXPR"), None)
        if init is not None:
            return f"{decl} = {self.node(init, sc, c)};"
        return f"{decl};"

    def std_array_method(self, c, sc: Scope) -> str | None:
        """``a.fill(v)``, ``a.size()``, ``a.data()``, ``a.begin()``, ``a.end()`` of a std::array."""
        kids = list(c.get_children())
        member = kids[0] if kids and _kind(kids[0]) == "MEMBER_REF_EXPR" else None
        obj = next(iter(member.get_children()), None) if member is not None else None
        got = _std_array(obj.type) if obj is not None else None
        if got is None:
            return None
        n, name = got[1], self.node(obj, sc, c)
        args = list(c.get_arguments())
        if c.spelling == "size" and not args:
            return f"((size_t) {n})"
        if c.spelling in ("data", "begin") and not args:
            return f"({name})"
        if c.spelling == "end" and not args:
            return f"(({name}) + {n})"
        if c.spelling == "fill" and len(args) == 1:
            k = self.m.fresh("__xp_fill")
            return (f"for (int {k} = 0; {k} < {n}; ++{k}) ({name})[{k}] = "
                    f"({self.node(args[0], sc, c)})")
        _unsupported(c, f"std::array::{c.spelling}")

    def range_for(self, c, sc: Scope) -> str:
        """``for (T v : a) S`` over an array or a std::array of N elements -> ``for (int k = 0; k <
        N; ++k) { T v = a[k]; S }``; a non-const reference ``T &v`` reads and writes ``a[k]``."""
        kids = list(c.get_children())
        var = kids[0] if kids and _kind(kids[0]) == "VAR_DECL" else None
        rng = kids[1] if len(kids) == 3 and _is_expr(kids[1]) else None
        body = kids[2] if len(kids) == 3 else None
        if var is None or rng is None or body is None:
            _unsupported(c, "a range-for this front-end cannot read")
        t = rng.type.get_canonical()
        n = t.element_count if _tkind(t) == "CONSTANTARRAY" else (_std_array(rng.type) or (None, None))[1]
        if n is None:
            _unsupported(c, "a range-for over something other than an array or a std::array")
        k = self.m.fresh("__xp_range")
        arr = self.node(rng, sc, c)
        vt = var.type
        if _tkind(vt) in ("LVALUEREFERENCE", "RVALUEREFERENCE") and not vt.get_pointee().is_const_qualified():
            inner = Scope(inst=sc.inst, bindings=sc.bindings, params=sc.params, packs=sc.packs,
                          captures={**sc.captures, var.hash: f"({arr})[{k}]"}, prelude=sc.prelude,
                          device=sc.device, lambdas=sc.lambdas, ref_return=sc.ref_return)
            head = ""
        else:
            inner = sc
            head = _ctype(self.m, vt, var.spelling) + f" = ({arr})[{k}]; "
        stmt = self.node(body, inner, c) + (";" if _is_expr(body) else "")
        return f"for (int {k} = 0; {k} < {n}; ++{k}) {{ {head}{stmt} }}"

    # -- lambdas --------------------------------------------------------------------------------------
    @staticmethod
    def closure(t):
        d = t.get_canonical().get_declaration() if t is not None else None
        if d is not None and _kind(d) in RECORD_KINDS and d.spelling.startswith("(lambda"):
            return d
        return None

    def lambda_declaration(self, c, sc: Scope) -> str | None:
        """``auto f = [...](...) {...};`` -> a file-scope function; the declaration goes."""
        vars_ = [k for k in c.get_children() if _kind(k) == "VAR_DECL"]
        if len(vars_) != 1 or self.closure(vars_[0].type) is None:
            return None
        lam = next((x for x in vars_[0].walk_preorder() if _kind(x) == "LAMBDA_EXPR"), None)
        if lam is None:
            return None
        self.lambda_function(lam, sc)
        return ""

    def lambda_function(self, lam, sc: Scope) -> tuple[str, list]:
        key = self.closure(lam.type).hash
        if key in sc.lambdas:
            return sc.lambdas[key]
        caps = self.lambda_captures(lam)
        pre = self.m.lambda_args.get(self.closure(lam.type).hash)
        if pre is not None and any(by_ref for _, by_ref in caps):
            _unsupported(lam, "a lambda capturing by reference passed to a function (a functor "
                              "argument)")
        name = pre[0] if pre is not None else self.m.fresh(f"__xp_lambda_{lam.location.line}")
        return self.lambda_definition(lam, sc, key, name, caps)

    def lambda_captures(self, lam) -> list:
        """[(variable, by reference)] a lambda captures: the enclosing function's locals and
        parameters its body names (constants and globals are visible where it is defined)."""
        ls, le = _rng(lam)
        intro = self.text[ls:self.text.find("]", ls) + 1]
        default_ref = re.search(r"\[\s*&\s*[,\]]", intro) is not None
        caps, seen = [], set()
        for x in lam.walk_preorder():
            if _kind(x) != "DECL_REF_EXPR":
                continue
            r = x.referenced
            if r is None or _kind(r) not in ("VAR_DECL", "PARM_DECL") or r.hash in seen:
                continue
            rs, re_ = _rng(r)
            if ls <= rs < le:
                continue   # declared inside the lambda
            parent = r.semantic_parent
            if parent is None or _kind(parent) in ("TRANSLATION_UNIT", "NAMESPACE", "LINKAGE_SPEC"):
                continue   # a global: visible to the generated function too
            if _kind(r) == "VAR_DECL" and (r.storage_class.name == "STATIC" or evaluate(x) is not None
                                           and r.type.is_const_qualified()):
                continue   # a constant: its value is used where it is named
            seen.add(r.hash)
            by_ref = bool(re.search(r"&\s*" + re.escape(r.spelling) + r"\b", intro)) or (
                default_ref and not re.search(r"[\[,]\s*" + re.escape(r.spelling) + r"\s*[,\]]", intro))
            caps.append((r, by_ref))
        return caps

    def lambda_definition(self, lam, sc: Scope, key, name: str, caps: list) -> tuple[str, list]:
        inner = Scope(inst=sc.inst, bindings=dict(sc.bindings), packs=sc.packs, device=sc.device,
                      lambdas=sc.lambdas, prelude=sc.prelude)
        params = []
        for p in (k for k in lam.get_children() if _kind(k) == "PARM_DECL"):
            inner.params[p.hash] = (p.spelling, self.by_pointer(p))
            params.append(self.param_text(p, inner))
        for r, by_ref in caps:
            cname = capture_parameter(r.spelling)
            t = r.type.get_pointee() if _tkind(r.type) in ("LVALUEREFERENCE", "RVALUEREFERENCE") else r.type
            if by_ref:
                params.append(_ctype(self.m, t, f"*{cname}"))
                inner.captures[r.hash] = f"(*{cname})"
            else:
                params.append(_ctype(self.m, t, cname))
                inner.captures[r.hash] = cname
        body = next((k for k in lam.get_children() if _kind(k) == "COMPOUND_STMT"), None)
        if body is None:
            _unsupported(lam, "a lambda without a body")
        method = next((k for k in self.closure(lam.type).get_children() if k.spelling == "operator()"), None)
        ret = _ctype(self.m, method.result_type) if method is not None else "void"
        text = " ".join(self.node(body, inner, lam).split())
        space = self.lambda_space(lam, sc)
        space = f"{space} " if space else ""
        sig = f"static {space}{ret} {name}({', '.join(params) or 'void'})"
        self.lambda_signatures[name] = sig + ";"
        sc.prelude.append(f"{sig} {text}")
        got = (name, caps)
        sc.lambdas[key] = got
        return got

    def lambda_prototype(self, name: str, sc: Scope) -> str | None:
        """Declaration of a functor lambda's function (its definition is in the caller, which
        may come after the template instance that calls it)."""
        lam = next((lam for n, lam in self.m.lambda_args.values() if n == name), None)
        if lam is None:
            return None
        tmp = Scope(bindings=dict(sc.bindings))
        params = []
        for p in (k for k in lam.get_children() if _kind(k) == "PARM_DECL"):
            tmp.params[p.hash] = (p.spelling, self.by_pointer(p))
            params.append(self.param_text(p, tmp))
        for r, _ in self.lambda_captures(lam):           # by value (checked where defined)
            t = r.type.get_pointee() if _tkind(r.type) in ("LVALUEREFERENCE", "RVALUEREFERENCE") else r.type
            params.append(_ctype(self.m, t, capture_parameter(r.spelling)))
        method = next((k for k in self.closure(lam.type).get_children() if k.spelling == "operator()"), None)
        ret = _ctype(self.m, method.result_type) if method is not None else "void"
        space = self.lambda_space(lam, sc)
        space = f"{space} " if space else ""
        return f"static {space}{ret} {name}({', '.join(params) or 'void'});"

    def lambda_space(self, lam, sc: Scope) -> str:
        """Where a lambda's function runs: as annotated (``[] __device__ (...)``), both sides
        for a functor argument (the callee decides), else the enclosing function's side."""
        ls, le = _rng(lam)
        head = self.text[ls:self.text.find("{", ls, le) if self.text.find("{", ls, le) > 0 else le]
        marks = re.findall(r"\b(__device__|__host__)\b", head)
        if marks:
            return " ".join(sorted(set(marks), reverse=True))
        if self.closure(lam.type) is not None and self.closure(lam.type).hash in self.m.lambda_args:
            return "__host__ __device__"
        return sc.device

    def lambda_call(self, c, r, args, sc: Scope) -> str | None:
        """``f(a)`` of a lambda variable, ``[&]{...}()`` -> the generated function."""
        closure = r.semantic_parent
        if closure is None or not closure.spelling.startswith("(lambda"):
            return None
        got = sc.lambdas.get(closure.hash)
        if got is None and closure.hash in self.m.lambda_args:
            # a functor argument: the instance receives its captured values as parameters
            name, lam = self.m.lambda_args[closure.hash]
            caps = self.lambda_captures(lam)
            rendered = [self.node(a, sc, c) for a in
                        (args[1:] if args and self.closure(args[0].type) is not None else args)]
            rendered += [capture_parameter(var.spelling) for var, _ in caps]
            return f"{name}({', '.join(rendered)})"
        if got is None:
            lam = next((x for x in c.walk_preorder() if _kind(x) == "LAMBDA_EXPR"), None)
            if lam is None:
                _unsupported(c, "a call of a lambda that is not a local variable or written in place")
            got = self.lambda_function(lam, sc)
        name, caps = got
        if args and self.closure(args[0].type) is not None:
            args = args[1:]   # the closure object itself
        rendered = [self.node(a, sc, c) for a in args]
        for var, by_ref in caps:
            ref = sc.captures.get(var.hash, var.spelling)
            rendered.append(f"&({ref})" if by_ref else ref)
        return f"{name}({', '.join(rendered)})"

    def explicit_base(self, member_ref) -> bool:
        s = member_ref.extent.start.offset
        name_at = member_ref.location.offset
        return name_at > s

    def decl_ref(self, c, sc: Scope) -> str | None:
        r = c.referenced
        if r is None:
            return None
        rk = _kind(r)
        if r.hash in sc.captures:
            return sc.captures[r.hash]
        if rk == "PARM_DECL":
            got = sc.params.get(r.hash)
            if got is None:
                return None
            name, by_pointer = got
            return f"(*{name})" if by_pointer else name
        if rk in FUNCTION_KINDS:
            inst = self.m.insts.get(self.m.key(r))
            return inst.name if inst is not None else None
        if rk == "ENUM_CONSTANT_DECL":
            e = r.semantic_parent
            if e is not None and self.m.user(e) and e.is_scoped_enum():
                return f"{e.spelling}__{r.spelling}"
            return None
        if rk == "VAR_DECL":
            templated = specialized_template(r) is not None
            member = r.semantic_parent is not None and _kind(r.semantic_parent) in RECORD_KINDS
            if templated or (member and r.storage_class.name == "STATIC"):
                return evaluate(c)
        return None

    def call(self, c, sc: Scope) -> str | None:
        r = c.referenced
        if r is None:
            return None
        args = list(c.get_arguments())
        if _kind(r) == "CXX_METHOD" and r.spelling == "operator()":
            got = self.lambda_call(c, r, args, sc)
            if got is not None:
                return got
        if r.spelling in IDENTITY_CALLS and not self.m.user(r) and len(args) == 1:
            return "(" + self.node(args[0], sc, c) + ")"
        if _kind(r) == "FUNCTION_DECL" and r.spelling.startswith("operator") and self.m.user(r):
            _unsupported(c, f"overloaded '{r.spelling}' as a free function")
        inst = self.m.insts.get(self.m.call_key(r, c)[0]) if _kind(r) in FUNCTION_KINDS else None
        if inst is None and _kind(r) == "CONSTRUCTOR" and not args and self.m.user(r) and \
                self.text[c.extent.end.offset - 1:c.extent.end.offset] in (")", "}"):
            rec = self.m.need_record(r.semantic_parent)
            if rec is not None:
                return f"(({rec.name}){{0}})"   # T(): a value-initialised temporary
        if inst is None:
            if not self.m.user(r) and _kind(r) in FUNCTION_KINDS and r.semantic_parent is not None \
                    and _kind(r.semantic_parent) in RECORD_KINDS | {"CLASS_TEMPLATE"} and r.is_static_method():
                return evaluate(c)   # std::numeric_limits<T>::max() and the like
            return None
        ref_params = [self.by_pointer(p) for p in r.get_arguments()]
        if _kind(r) == "CONSTRUCTOR":
            return self.construct(c, inst, args, sc)
        if inst.kind == "method" and (_kind(r) == "CONVERSION_FUNCTION" or r.spelling.startswith("operator")):
            return self.operator_call(c, inst, r, args, sc)
        method_call = inst.kind == "method" and not r.is_static_method()
        if not method_call and not any(ref_params) and not inst.const_args:
            return None   # the callee is renamed where it is named (launch configurations stay)
        callee = list(c.get_children())[0]
        config = ""
        ce = callee.extent.end.offset
        if "<<<" in self.text[ce:args[0].extent.start.offset if args else c.extent.end.offset]:
            if any(ref_params):
                _unsupported(c, "a kernel with reference parameters")
            close = self.text.find(">>>", ce) + 3
            config = self.span(ce, close, [k for k in c.get_children()
                                            if ce <= k.extent.start.offset < close], sc, c)
        rendered, captured = [], []
        for i, a in enumerate(args):
            if i in inst.const_args:
                lam = _lambda_in(a)
                if lam is not None:
                    self.lambda_function(lam, sc)   # defined in the caller's scope, called by name
                    captured += [sc.captures.get(var.hash, var.spelling)
                                 for var, _ in self.lambda_captures(lam)]
                continue
            txt = self.node(a, sc, c)
            rendered.append(f"&({txt})" if i < len(ref_params) and ref_params[i] else txt)
        rendered += captured          # the instance's capture parameters come last
        if method_call:
            kids = list(c.get_children())
            member = kids[0] if kids and _kind(kids[0]) == "MEMBER_REF_EXPR" else None
            if member is None:
                _unsupported(c, f"call of member function '{r.spelling}' through a pointer to member")
            obj = next(iter(member.get_children()), None)
            if obj is None or not self.explicit_base(member):
                this = self.this_arg(r, "this_", pointer=True, sc=sc)
            else:
                os_, oe = _rng(obj)
                between = self.text[oe:member.location.offset]
                this = self.this_arg(r, self.node(obj, sc, member), pointer="->" in between, sc=sc)
            if this is not None:
                rendered.insert(0, this)
        return self.deref(r, f"{inst.name}{config}({', '.join(rendered)})")

    def this_arg(self, method, obj: str, pointer: bool, sc: Scope) -> str | None:
        """How a method receives its object: not at all when its body never uses it, by
        value when it is const (also works on temporaries), else by address."""
        mode = self.this_mode(method)
        if mode == "none":
            return None
        if obj == "this_" and sc.inst is not None and sc.inst.kind == "method":
            pointer = True
        if mode == "value":
            return f"*({obj})" if pointer else obj
        return obj if pointer else f"&({obj})"

    def this_mode(self, method) -> str:
        if _kind(method) == "CONSTRUCTOR" or method.is_static_method():
            return "none"
        if not _uses_this(method):
            return "none"
        return "value" if method.is_const_method() else "pointer"

    def deref(self, r, call: str) -> str:
        return f"(*{call})" if _tkind(r.result_type) == "LVALUEREFERENCE" else call

    def operator_call(self, c, inst: Inst, r, args, sc: Scope) -> str:
        """``a[i]``, ``a + b``, ``(T *)obj`` on a class with those operators -> calls."""
        if _kind(r) == "CONVERSION_FUNCTION":
            kids = list(c.get_children())
            member = kids[0] if kids and _kind(kids[0]) == "MEMBER_REF_EXPR" else None
            obj = next(iter(member.get_children()), None) if member is not None else None
            rendered = []
            if self.this_mode(r) != "none":
                if obj is None:
                    _unsupported(c, "a conversion of an object clang does not show")
                rendered.append(self.this_arg(r, self.node(obj, sc, member), pointer=False, sc=sc))
            return self.deref(r, f"{inst.name}({', '.join(rendered)})")
        if not args:
            _unsupported(c, f"'{r.spelling}' without its object")
        obj, rest = args[0], args[1:]
        rendered = [self.node(a, sc, c) for a in rest]
        this = self.this_arg(r, self.node(obj, sc, c), pointer=False, sc=sc)
        if this is not None:
            rendered.insert(0, this)
        return self.deref(r, f"{inst.name}({', '.join(rendered)})")

    def construct(self, c, inst: Inst, args, sc: Scope) -> str:
        """``T(a)``, ``T x(a)``, ``T x{a}`` -> ``T__ctor(a)``, ``x = T__ctor(a)``."""
        rendered = ", ".join(self.node(a, sc, c) for a in args)
        s, _ = _rng(c)
        m = _IDENT.match(self.text, s)
        call = f"{inst.name}({rendered})"
        if m and m.group(0) != inst.decl.spelling and m.group(0) != inst.owner.decl.spelling:
            return f"{m.group(0)} = {call}"    # a direct-initialised variable: its name comes first
        return call

    # -- instances ----------------------------------------------------------------------------------
    def scope_for(self, inst: Inst) -> Scope:
        sc = Scope(inst=inst, bindings=dict(inst.bindings))
        d = inst.decl
        parms = list(d.get_arguments())
        counts: dict[tuple, int] = {}
        for p in parms:
            counts[_rng(p)] = counts.get(_rng(p), 0) + 1
        seen: dict[tuple, int] = {}
        for i, p in enumerate(parms):
            if i in inst.const_args:
                sc.params[p.hash] = (inst.const_args[i], False)
                if p.spelling:
                    sc.bindings[p.spelling] = inst.const_args[i]
                continue
            r = _rng(p)
            name = p.spelling or f"__xp_unnamed{len(sc.params)}"
            if counts[r] > 1 or self.pack_param(p):
                j = seen.get(r, 0)
                seen[r] = j + 1
                name = f"{name}_{j}"
                sc.packs.setdefault(p.spelling, []).append(name)
                t = p.type.get_pointee() if _tkind(p.type) in ("LVALUEREFERENCE", "RVALUEREFERENCE") else p.type
                tpack = _IDENT.search(self.text, r[0], r[1])
                if tpack and tpack.group(0) != p.spelling:
                    sc.packs.setdefault(tpack.group(0), []).append(_ctype(self.m, t))
            by_pointer = self.by_pointer(p)
            sc.params[p.hash] = (name, by_pointer)
            if by_pointer and p.spelling and name == p.spelling:
                sc.bindings[p.spelling] = f"(*{name})"
        return sc

    def by_pointer(self, p) -> bool:
        """A non-const lvalue reference parameter becomes a pointer; a forwarding reference
        (``T &&`` of a template parameter, also when it bound an lvalue) is passed by value."""
        if _tkind(p.type) != "LVALUEREFERENCE" or p.type.get_pointee().is_const_qualified():
            return False
        s, e = _rng(p)
        return "&&" not in self.text[s:e]

    def pack_param(self, p) -> bool:
        s, e = _rng(p)
        return "..." in self.text[s:e]

    def param_text(self, p, sc: Scope) -> str:
        name, by_pointer = sc.params[p.hash]
        t = p.type
        if by_pointer:
            return _ctype(self.m, t.get_pointee(), f"*{name}")
        if _tkind(t) in ("LVALUEREFERENCE", "RVALUEREFERENCE"):
            t = t.get_pointee()
        return _ctype(self.m, t, name)

    def function(self, inst: Inst, signature_only: bool = False) -> str:
        """The instance as C text laid over its pattern's text (same lines)."""
        d, pat = inst.decl, inst.pattern
        ps, pe = _rng(pat)
        start = ps
        if _kind(pat) == "FUNCTION_TEMPLATE" or self.m.is_template_text(pat):
            lt = self.text.find("<", ps)
            start = _matching_angle(self.text, lt)
        sc = self.scope_for(inst)
        sc.device = self.space_of(d)
        body = next((k for k in d.get_children() if _kind(k) == "COMPOUND_STMT"), None)
        if body is None:
            _unsupported(d, f"'{d.spelling}' is used but its definition was not instantiated")
        name_at = d.location.offset
        name_end = name_at + len(d.spelling)
        if d.spelling.startswith("operator") or _kind(d) == "CONVERSION_FUNCTION":
            name_end = self.text.find("(", name_at)
            if self.text[name_at:name_end + 1].replace(" ", "").endswith("operator("):
                name_end = self.text.find("(", self.close_paren(name_end) + 1)   # operator()
        new_name = inst.name
        if _kind(d) == "CONVERSION_FUNCTION":
            new_name = f"{_ctype(self.m, d.result_type)} {inst.name}"
        ref_return = _tkind(d.result_type) == "LVALUEREFERENCE"
        if ref_return:
            amp = self.text.rfind("&", start, name_at)
            if amp < 0:
                _unsupported(d, "a returned reference spelled through an alias")
            sc.points[amp] = (1, "*")
            sc.ref_return = True
        explicit = re.match(r"\s*<", self.text[name_end:name_end + 20])
        if explicit and not d.spelling.startswith("operator"):
            name_end = _matching_angle(self.text, name_end + explicit.end() - 1)   # f<float>(...)
        sc.points[name_at] = (name_end - name_at, new_name)
        parms = list(d.get_arguments())
        # the parameter list: printed from the instance (packs expanded, references lowered)
        open_paren = self.text.find("(", name_end)
        close_paren = self.close_paren(open_paren)
        plist = [self.param_text(p, sc) for i, p in enumerate(parms) if i not in inst.const_args]
        for i in sorted(inst.const_args):
            lam = next((lam for n, lam in self.m.lambda_args.values()
                        if n == inst.const_args[i]), None)
            for var, _ in self.lambda_captures(lam) if lam is not None else []:
                t = var.type.get_pointee() if _tkind(var.type) in (
                    "LVALUEREFERENCE", "RVALUEREFERENCE") else var.type
                plist.append(_ctype(self.m, t, capture_parameter(var.spelling)))
        ctor = _kind(d) == "CONSTRUCTOR"
        if ctor:
            sc.points[name_at] = (len(d.spelling), f"{inst.owner.name} {inst.name}")
        mode = self.this_mode(d) if inst.kind == "method" else "none"
        if mode == "pointer":
            plist.insert(0, f"{inst.owner.name} *this_")
        elif mode == "value":
            plist.insert(0, f"{inst.owner.name} self_")
        lines = self.text.count("\n", open_paren, close_paren)
        sc.points[open_paren] = (close_paren + 1 - open_paren,
                                 "(" + (", ".join(plist) or "void") + ")" + "\n" * lines)
        if inst.kind == "method":
            for tok in re.finditer(r"\b(static|virtual|explicit|constexpr)\b", self.text[start:name_at]):
                sc.points[start + tok.start()] = (len(tok.group(0)), "")
            tail = self.text[close_paren + 1:body.extent.start.offset]
            for tok in re.finditer(r"\b(const|override|final|noexcept)\b", tail):
                sc.points[close_paren + 1 + tok.start()] = (len(tok.group(0)), "")
        inits = []
        if ctor:
            inits = self.member_inits(d, close_paren, body, sc)
        if signature_only:
            sig = self.gap(start, body.extent.start.offset, sc)
            return " ".join(sig.split()) + ";"
        body_text = self.node(body, sc, d)
        if mode == "value":
            first = body_text.index("{") + 1
            body_text = body_text[:first] + f" const {inst.owner.name} *this_ = &self_;" + body_text[first:]
        if ctor:
            owner = inst.owner.name
            first = body_text.index("{") + 1
            last = body_text.rindex("}")
            # the object as a one-element local array: ``this_->f`` stays valid C and is a store
            # into a local the access analyses trace (a pointer to a struct local is not)
            body_text = (body_text[:first] + f" {owner} this_[1]; " +
                         " ".join(f"this_->{f} = {v};" for f, v in inits) + body_text[first:last] +
                         " return this_[0]; " + body_text[last:])
        text = self.gap(start, body.extent.start.offset, sc) + body_text + \
            self.gap(body.extent.end.offset, pe, sc)
        protos = [self.lambda_prototype(n, sc) for n in inst.const_args.values() if n.startswith("__xp_lambda_")]
        if protos or sc.prelude:
            text = " ".join([*filter(None, protos), *sc.prelude]) + " " + text
        return "\n" * self.text.count("\n", ps, start) + text

    def member_inits(self, d, close_paren: int, body, sc: Scope) -> list[tuple[str, str]]:
        """``: a(x), b{y}`` of a constructor -> [(field, value)]; the list itself is blanked."""
        bs = body.extent.start.offset
        region = self.text[close_paren + 1:bs]
        sc.points[close_paren + 1] = (len(region), "".join("\n" if ch == "\n" else " " for ch in region))
        kids = list(d.get_children())
        out = []
        for k in kids:
            if _kind(k) == "MEMBER_REF":
                ke = k.extent.end.offset
                m = re.compile(r"\s*([({])").match(self.text, ke)
                if not m:
                    continue
                open_ = m.end() - 1
                close = self.close_bracket(open_)
                inner = [x for x in kids if open_ < x.extent.start.offset < close]
                out.append((k.spelling, "(" + self.span(open_ + 1, close, inner, sc, d).strip() + ")"))
            elif _kind(k) in ("TYPE_REF", "TEMPLATE_REF") and close_paren < k.extent.start.offset < bs:
                _unsupported(k, "base class initialisers")
        return out

    def close_bracket(self, i: int) -> int:
        pairs = {"(": ")", "{": "}", "[": "]"}
        stack = []
        for j in range(i, len(self.text)):
            ch = self.text[j]
            if ch in pairs:
                stack.append(pairs[ch])
            elif stack and ch == stack[-1]:
                stack.pop()
                if not stack:
                    return j
        return len(self.text) - 1

    def close_paren(self, i: int) -> int:
        depth = 0
        for j in range(i, len(self.text)):
            ch = self.text[j]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return j
        return len(self.text) - 1

    def record(self, inst: Inst, lo: int) -> str:
        """``typedef struct`` + prototypes on the first line; member functions at their lines."""
        fields = []
        for f in inst.decl.type.get_fields():
            if _tkind(f.type) in ("LVALUEREFERENCE", "RVALUEREFERENCE"):
                _unsupported(f, "reference members")
            fields.append(_ctype(self.m, f.type, f.spelling) + ";")
        if not fields:
            fields = ["char __xp_empty;"]
        head = f"typedef struct {inst.name} {{ {' '.join(fields)} }} {inst.name}; "
        methods = sorted(inst.methods, key=lambda x: x.pattern.extent.start.offset)
        head += " ".join(self.function(x, signature_only=True) for x in methods)
        out = [head]
        cur = lo
        for x in methods:
            ms = x.pattern.extent.start.offset
            if ms > cur:
                out.append("\n" * self.text.count("\n", cur, ms))
                cur = ms
            out.append(self.function(x).lstrip("\n"))
            cur = max(cur, x.pattern.extent.end.offset)
        return "".join(out)

    def flatten_namespaces(self) -> None:
        """C has one namespace: ``namespace X {`` / ``}`` of the user's namespaces go, with
        ``using namespace X;`` (the qualifiers ``X::`` go where they are used)."""
        def visit(parent):
            for c in parent.get_children():
                if not self.m.user(c):
                    continue
                k = _kind(c)
                if k == "NAMESPACE":
                    s, e = _rng(c)
                    brace = self.text.find("{", s, e)
                    if brace < 0 or self.text[e - 1:e] != "}":
                        continue
                    self.rw.replace(s, brace + 1, "")
                    self.rw.replace(e - 1, e, "")
                    visit(c)
                elif k in ("USING_DIRECTIVE", "NAMESPACE_ALIAS") and self.user_namespace_named(c):
                    s, e = _rng(c)
                    self.rw.replace(s, through_semicolon(self.text, e), "")
                elif k == "LINKAGE_SPEC":
                    visit(c)
        visit(self.m.unit.tu.cursor)

    def user_namespace_named(self, c) -> bool:
        ref = next((x for x in c.get_children() if _kind(x) == "NAMESPACE_REF"), None)
        return ref is not None and ref.referenced is not None and self.m.user(ref.referenced)

    def namespace_qualifier(self, ref) -> int | None:
        """End of ``X::`` for a reference to a user namespace, else None."""
        r = ref.referenced
        if r is None or not self.m.user(r) or _kind(r) != "NAMESPACE":
            return None
        mm = re.compile(r"\s*::").match(self.text, ref.extent.end.offset)
        return mm.end() if mm else None

    def apply(self, tops) -> None:
        self.flatten_namespaces()
        by_pattern: dict[int, list[Inst]] = {}
        for inst in self.m.order:
            if inst.kind == "method":
                continue
            by_pattern.setdefault(inst.pattern.extent.start.offset, []).append(inst)
        for top in tops:
            k = _kind(top)
            s, e = _rng(top)
            templ = k in TEMPLATE_KINDS or self.m.is_template_text(top)
            if templ or (k in RECORD_KINDS and self.m.has_methods(top)):
                e = through_semicolon(self.text, e)
                insts = []
                for off, lst in by_pattern.items():
                    if s <= off < e:
                        insts.extend(lst)
                self.rw.replace(s, e, lambda rw, s=s, e=e, insts=insts: self.top(s, e, insts))
            elif k == "ENUM_DECL" and top.is_scoped_enum():
                self.scoped_enum(top)
            elif k == "TYPE_ALIAS_DECL":
                self.rw.replace(s, through_semicolon(self.text, e),
                                lambda rw, top=top: f"typedef {_ctype(self.m, top.underlying_typedef_type, top.spelling)};")
            else:
                self.root_edits(top)

    def top(self, s: int, e: int, insts: list[Inst]) -> str:
        copies = []
        for inst in insts:
            if inst.kind == "record":
                copies.append(self.record(inst, s))
            else:
                copies.append(self.function(inst))
        if not copies:
            return "\n" * self.text.count("\n", s, e)
        later = []
        for inst in insts:
            for used in self.m.uses.get(id(inst), []):
                if used.kind == "function" and used.pattern.extent.start.offset >= e and used not in later:
                    later.append(used)
        protos = [self.function(x, signature_only=True) for x in later]
        for inst in insts:
            for fn in inst.plain_uses:
                if fn.extent.start.offset >= e:
                    protos.append(self.plain_prototype(fn))
        if protos:   # used here, defined further down (C++ instantiates at the end of the file)
            copies[0] = " ".join(dict.fromkeys(protos)) + " " + copies[0]
        first = copies[0]
        rest = [" ".join(ln for ln in c.split("\n") if not ln.lstrip().startswith("#")) for c in copies[1:]]
        out = first.rstrip("\n")
        if rest:
            out += " " + " ".join(" ".join(r.split()) for r in rest)
        return self.pad(out, s, e)

    def plain_prototype(self, fn) -> str:
        """``static __global__ void k(float *x, int n);`` from a plain function's own text."""
        body = next((k for k in fn.get_children() if _kind(k) == "COMPOUND_STMT"), None)
        end = body.extent.start.offset if body is not None else fn.extent.end.offset
        head = strip_comments(self.rw.render(fn.extent.start.offset, end))
        return " ".join(head.split()) + ";"

    def scoped_enum(self, c) -> None:
        s, e = _rng(c)
        text = self.text
        brace = text.find("{", s, e)
        if brace < 0:
            return
        self.rw.replace(s, brace + 1, "typedef enum {")
        for k in c.get_children():
            if _kind(k) == "ENUM_CONSTANT_DECL":
                at = k.location.offset
                self.rw.replace(at, at + len(k.spelling), f"{c.spelling}__{k.spelling}")
        close = text.rfind("}", s, e)
        self.rw.replace(close, close + 1, f"}} {c.spelling}")

    def space_of(self, fn) -> str:
        s = fn.extent.start.offset
        head = self.text[s:fn.location.offset]
        dev = re.search(r"\b(__device__|__global__|__mlu_func__|__mlu_global__|__mlu_entry__)\b", head)
        host = re.search(r"\b__host__\b", head)
        if dev and host:
            return "__host__ __device__"
        if dev:
            return "__mlu_func__" if dev.group(1).startswith("__mlu") else "__device__"
        return ""

    def root_edits(self, top) -> None:
        sc = Scope(device=self.space_of(top) if _kind(top) in FUNCTION_KINDS else "")

        def visit(c, parent):
            for k in c.get_children():
                if not self.m.user(k):
                    continue
                ks, ke = _rng(k)
                if _kind(k) == "NAMESPACE_REF":
                    end = self.namespace_qualifier(k)
                    if end is not None:
                        self.rw.replace(ks, end, "")
                    continue
                if _kind(k) == "TEMPLATE_REF" and self.m.user(k.referenced):
                    name = self.record_name(c) or self.record_by_spelling(k)
                    lt = self.text.find("<", ke)
                    if name is not None and lt >= 0 and not self.text[ke:lt].strip():
                        self.rw.replace(ks, _matching_angle(self.text, lt), name)
                    continue
                if ks < ke and any(x.extent.start.offset == x.extent.end.offset for x in k.get_children()):
                    # a macro's expansion (clang's cursors all sit at its start): by text
                    new = self.template_ids_in_text(self.text[ks:ke])
                    if new != self.text[ks:ke]:
                        self.rw.replace(ks, ke, new)
                    continue
                out = self.special(k, sc, c)
                if out is not None:
                    self.rw.replace(ks, ke, out)
                    continue
                visit(k, c)
        visit(top, None)
        if sc.prelude:
            at = top.extent.start.offset
            linkage = re.search(r"extern\s*\"C\"\s*$", self.text[max(0, at - 40):at])
            if linkage:   # before 'extern "C"', or the helpers would take its linkage
                at -= len(linkage.group(0))
            self.rw.replace(at, at, " ".join(sc.prelude) + " ")
        for mm in _ATTR.finditer(strip_comments(self.text[top.extent.start.offset:top.extent.end.offset])):
            a = top.extent.start.offset + mm.start()
            self.rw.replace(a, a + len(mm.group(0)), "")


def through_semicolon(text: str, end: int) -> int:
    k = end
    while k < len(text) and text[k] in " \t":
        k += 1
    return k + 1 if k < len(text) and text[k] == ";" else end
