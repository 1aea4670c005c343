"""std_calls: C++ ``std::`` math / algorithm / string calls -> their C, device-safe spellings.

Summary
    Real x86 code calls ``std::sqrt``, ``std::exp``, ``std::nearbyint``, ``std::max`` /
    ``std::min`` and ``std::memset`` / ``std::memcpy``. The front-end keeps ``std::sqrt`` as
    one identifier, which the analyses (passes/analysis/affine's pure-function and memory-function
    tables) and the GPU / BANG back-ends do not know (nvcc also rejects the constexpr host
    function ``std::max`` in device code). Every such call, in every function definition, is
    rewritten by the overload C++ would pick for the operand types, established from the
    declarations in scope:

    * math (``sqrt exp log ... nearbyint fabs pow fmod fmax fmin ...``): all floating operands
      ``float`` -> ``sqrtf(x)`` etc.; any ``double`` operand, or an integer one (C++ promotes
      it to ``double``) -> ``sqrt(x)`` etc.; ``std::abs`` of an integer -> ``abs`` / ``labs`` /
      ``llabs`` by width.
    * ``std::lround`` / ``llround`` / ``lrint`` / ``llrint``: ``lroundf(x)`` for a ``float``
      operand, ``lround(x)`` otherwise (the integer they return is ``long`` / ``long long``).
    * ``std::max(a, b)`` -> ``((a) < (b) ? (b) : (a))`` and ``std::min(a, b)`` ->
      ``((b) < (a) ? (b) : (a))``: exactly the definition of the standard library (also for
      NaN operands, where ``fmaxf`` would differ), for any arithmetic type; both operands must
      have the same type (what template deduction requires) and be free of side effects
      (each is evaluated twice).
    * ``std::memset`` / ``std::memcpy`` / ``std::memmove`` -> ``memset`` / ``memcpy`` /
      ``memmove`` (same functions, C spelling).
    * a statement ``std::copy(first, last, out);`` / ``std::copy_n(first, n, out);`` /
      ``std::fill(first, last, v);`` / ``std::fill_n(out, n, v);`` -> the element loop it
      performs, first to last (operands without side effects).
Requires
    1. At least one ``std::`` call of the functions above in a function definition
       [XP-STD-001].
    2. Each operand type of a typed rewrite is established (declarations, casts, literals,
       arithmetic of those) and is an arithmetic type other than ``long double`` / ``half``;
       ``std::max`` / ``std::min`` operands have the same type and no side effects; no other
       ``std::`` function is called [XP-STD-002].
Guarantees
    Same outputs on the virtual device: each rewritten call computes what the C++ overload
    computes (same precision, same NaN behaviour). Nothing else changes.
Options
    none.
Example
    ``float inv = 1.0f / std::sqrt(var + eps);`` (``float var, eps``) ->
    ``float inv = 1.0f / sqrtf(var + eps);``; ``std::min(255, std::max(0, q))`` (``int32_t q``)
    -> ``((0 < q ? q : 0) < 255 ? ... )`` (conditionals).
"""
from __future__ import annotations

import copy
import re
from dataclasses import replace

from pycparser import c_ast
from pycparser.c_parser import ParseError

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "std_calls"

# std:: math functions with float ('f' suffix) and double C spellings
MATH = frozenset("""
sqrt cbrt exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan atan2 sinh cosh tanh
erf erfc floor ceil round trunc rint nearbyint fabs pow fmod fmax fmin copysign hypot fma
asinh acosh atanh tgamma lgamma fdim remainder
""".split())
# std:: rounding to an integer: the C spelling by operand type, and the integer type returned
TO_INTEGER = {"lround": "long", "llround": "long long", "lrint": "long", "llrint": "long long"}
MEM = {"memset": "memset", "memcpy": "memcpy", "memmove": "memmove"}
MINMAX = frozenset({"max", "min"})

FLOATING = ("float", "double")
# integer types by (rank, signed); typedef'd widths resolve through the file's typedefs
_INT_RANK = {
    "bool": 0, "_Bool": 0, "char": 1, "signed char": 1, "unsigned char": 1, "short": 2,
    "short int": 2, "unsigned short": 2, "int": 3, "signed": 3, "signed int": 3, "unsigned": 3,
    "unsigned int": 3, "long": 4, "long int": 4, "unsigned long": 4, "long long": 5,
    "unsigned long long": 5, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 3,
    "uint32_t": 3, "int64_t": 4, "uint64_t": 4, "size_t": 4, "ptrdiff_t": 4,
}
_QUALS = frozenset({"const", "volatile", "static", "constexpr", "restrict", "__restrict__", "__restrict",
                    "register", "inline"})


def _std_name(call) -> str | None:
    name = canon.call_name(call)
    return name[5:] if name and name.startswith("std::") else None


def _norm(words) -> str | None:
    words = [w for w in words if w not in _QUALS]
    return " ".join(words) if words else None


# fixed-width / library typedefs -> the C type they name on the LP64 targets
_CANON = {"int8_t": "signed char", "uint8_t": "unsigned char", "int16_t": "short", "uint16_t": "unsigned short",
          "int32_t": "int", "uint32_t": "unsigned int", "int64_t": "long", "uint64_t": "unsigned long",
          "size_t": "unsigned long", "ptrdiff_t": "long", "signed": "int", "signed int": "int",
          "unsigned": "unsigned int", "long int": "long", "short int": "short", "_Bool": "bool",
          "long long int": "long long", "unsigned long int": "unsigned long"}


def _resolve(t: str | None, typedefs: dict) -> str | None:
    t = _resolve_td(t, typedefs)
    return _CANON.get(t, t) if t is not None else None


def _resolve_td(t: str | None, typedefs: dict) -> str | None:
    seen = set()
    while t is not None and t in typedefs and t not in seen:
        seen.add(t)
        inner = typedefs[t].type
        if not (isinstance(inner, c_ast.TypeDecl) and isinstance(inner.type, c_ast.IdentifierType)):
            return t if t in _INT_RANK else None
        t = _norm(inner.type.names)
    return t


def _scalar_decl_type(t, typedefs) -> str | None:
    """Scalar type of a declared type (no pointer / array), else None."""
    if isinstance(t, c_ast.Typename):
        t = t.type
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
        return _resolve(_norm(t.type.names), typedefs)
    return None


def _elem_decl_type(t, typedefs) -> str | None:
    """Element type of a one-level pointer / array declaration, else None."""
    if isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl)):
        return _scalar_decl_type(t.type, typedefs)
    return None


def _is_int(t) -> bool:
    return t in _INT_RANK


def _arith(a: str | None, b: str | None) -> str | None:
    """Usual arithmetic conversions (enough to tell float / double / an integer type)."""
    if a is None or b is None:
        return None
    for f in ("long double", "double", "float"):
        if f in (a, b):
            return f
    if _is_int(a) and _is_int(b):
        ra, rb = max(_INT_RANK[a], 3), max(_INT_RANK[b], 3)
        if ra != rb:
            return a if ra > rb else b
        if a == b:
            return a
        return a if ("unsigned" in a or a.startswith("u") or a == "size_t") else b
    return None


class _Env:
    """Names -> declared types visible at a point of a scoped walk of one function (file
    scope, parameters, block and ``for`` scopes)."""

    def __init__(self, file_decls: dict, typedefs: dict, macros: dict | None = None,
                 returns: dict | None = None):
        self.typedefs = typedefs
        self.returns = returns or {}          # the file's functions -> scalar return type
        self.stack: list[dict] = [dict(file_decls)]
        self.macros = macros or {}            # object-like macro name -> body text
        self._expanding: set[str] = set()

    def push(self):
        self.stack.append({})

    def pop(self):
        self.stack.pop()

    def add(self, decl):
        if isinstance(decl, c_ast.Decl) and decl.name and not isinstance(decl.type, c_ast.FuncDecl):
            self.stack[-1][decl.name] = decl.type

    def get(self, name):
        for s in reversed(self.stack):
            if name in s:
                return s[name]
        return None

    def type_of(self, e) -> str | None:
        td = self.typedefs
        match e:
            case c_ast.ID(name=name):
                t = self.get(name)
                if t is None:
                    return self._macro_type(name)
                return _scalar_decl_type(t, td)
            case c_ast.Constant(type=ty, value=v):
                v = v.lower()
                if ty in ("float", "double"):
                    return "float" if v.endswith("f") else ("long double" if v.endswith("l") else "double")
                if ty == "char":
                    return "char"
                if ty in ("int", "unsigned int", "long int", "unsigned long int", "long long int",
                          "unsigned long long int"):
                    return {"int": "int", "unsigned int": "unsigned int", "long int": "long",
                            "unsigned long int": "unsigned long", "long long int": "long long",
                            "unsigned long long int": "unsigned long long"}[ty]
                return None
            case c_ast.Cast(to_type=tt):
                return _scalar_decl_type(tt, td)
            case c_ast.ArrayRef(name=c_ast.ID(name=name)):
                t = self.get(name)
                return _elem_decl_type(t, td) if t is not None else None
            case c_ast.UnaryOp(op=op, expr=x) if op in ("-", "+", "p++", "p--", "++", "--"):
                t = self.type_of(x)
                return _arith(t, "int") if op in ("-", "+") and t is not None and _is_int(t) else t
            case c_ast.UnaryOp(op="!"):
                return "int"
            case c_ast.BinaryOp(op=op) if op in ("<", ">", "<=", ">=", "==", "!=", "&&", "||"):
                return "int"
            case c_ast.BinaryOp(op=op, left=l) if op in ("<<", ">>"):
                return _arith(self.type_of(l), "int")
            case c_ast.BinaryOp(left=l, right=r):
                return _arith(self.type_of(l), self.type_of(r))
            case c_ast.TernaryOp(iftrue=a, iffalse=b):
                return _arith(self.type_of(a), self.type_of(b))
            case c_ast.FuncCall(name=c_ast.ID(name=name)):
                if name.endswith("f") and name[:-1] in MATH:
                    return "float"
                if name in MATH:
                    return "double"
                if name in TO_INTEGER or name.endswith("f") and name[:-1] in TO_INTEGER:
                    return TO_INTEGER[name if name in TO_INTEGER else name[:-1]]
                if name in ("abs", "labs", "llabs"):
                    return {"abs": "int", "labs": "long", "llabs": "long long"}[name]
                return self.returns.get(name)
        return None

    def _macro_type(self, name: str) -> str | None:
        """Type of an object-like macro used as a name (``#define CHUNK 128``): the type of its
        body read as a C expression (the preprocessor puts that text in its place)."""
        body = self.macros.get(name)
        if not body or name in self._expanding:
            return None
        try:
            e = canon.parse_expr(body)
        except ParseError:                  # not an expression (a statement macro, a type)
            return None
        self._expanding.add(name)
        try:
            return self.type_of(e)
        finally:
            self._expanding.discard(name)


RANGES = frozenset({"copy", "copy_n", "fill", "fill_n"})


def _range_statement(st, k: int) -> tuple[c_ast.Node | None, str | None]:
    """(loop, None) for a statement ``std::copy(first, last, out);`` / ``std::copy_n(first, n,
    out);`` / ``std::fill(first, last, v);`` / ``std::fill_n(out, n, v);`` over pointers: the
    element loop it performs, in its order (first to last); (None, reason) when its operands
    have side effects; (None, None) for any other statement."""
    fn = _std_name(st) if isinstance(st, c_ast.FuncCall) else None
    if fn not in RANGES:
        return None, None
    args = list(st.args.exprs) if st.args is not None else []
    if len(args) != 3 or any(canon.has_side_effects(a) for a in args):
        return None, f"std::{fn} with operands that have side effects (or not three operands)"
    a, b, c = (copy.deepcopy(x) for x in args)
    i = f"__xp_k{k}"
    if fn == "copy":
        count, target, value = canon.pointer_difference(b, a), c, c_ast.ArrayRef(a, c_ast.ID(i))
    elif fn == "copy_n":
        count, target, value = b, c, c_ast.ArrayRef(a, c_ast.ID(i))
    elif fn == "fill":
        count, target, value = canon.pointer_difference(b, a), a, c
    else:
        count, target, value = b, a, c
    (loop,) = canon.parse_stmts(f"for (long {i} = 0; {i} < 1; ++{i}) x[{i}] = 0;")
    loop.cond.right = count
    loop.stmt.lvalue.name = target
    loop.stmt.rvalue = value
    return loop, None


# std::numeric_limits<T>::member() -> the C macro of <float.h> / <limits.h> / <math.h>
_LIMITS = {
    "float": {"lowest": "-FLT_MAX", "max": "FLT_MAX", "min": "FLT_MIN", "epsilon": "FLT_EPSILON",
              "infinity": "INFINITY", "quiet_NaN": "NAN", "denorm_min": "FLT_TRUE_MIN"},
    "double": {"lowest": "-DBL_MAX", "max": "DBL_MAX", "min": "DBL_MIN", "epsilon": "DBL_EPSILON",
               "infinity": "(double) INFINITY", "quiet_NaN": "(double) NAN", "denorm_min": "DBL_TRUE_MIN"},
    "int": {"lowest": "INT_MIN", "min": "INT_MIN", "max": "INT_MAX"},
    "unsigned int": {"lowest": "0u", "min": "0u", "max": "UINT_MAX"},
    "long": {"lowest": "LONG_MIN", "min": "LONG_MIN", "max": "LONG_MAX"},
    "long long": {"lowest": "LLONG_MIN", "min": "LLONG_MIN", "max": "LLONG_MAX"},
    "unsigned long": {"lowest": "0ul", "min": "0ul", "max": "ULONG_MAX"},
    "unsigned long long": {"lowest": "0ull", "min": "0ull", "max": "ULLONG_MAX"},
    "short": {"lowest": "(short) SHRT_MIN", "min": "(short) SHRT_MIN", "max": "(short) SHRT_MAX"},
    "unsigned short": {"lowest": "(unsigned short) 0", "min": "(unsigned short) 0", "max": "(unsigned short) USHRT_MAX"},
    "signed char": {"lowest": "(signed char) SCHAR_MIN", "min": "(signed char) SCHAR_MIN", "max": "(signed char) SCHAR_MAX"},
    "unsigned char": {"lowest": "(unsigned char) 0", "min": "(unsigned char) 0", "max": "(unsigned char) UCHAR_MAX"},
}
_LIMIT_CALL = re.compile(r"numeric_limits\s*<\s*([A-Za-z_][\w ]*?)\s*>\s*::\s*(\w+)")


def _limit(fn: str, env) -> tuple[c_ast.Node | None, str | None] | None:
    """``std::numeric_limits<T>::lowest()`` & co. as the C constant (None: not such a call)."""
    m = _LIMIT_CALL.fullmatch(fn or "")
    if m is None:
        return None
    t = _resolve(" ".join(m.group(1).split()), env.typedefs)
    value = _LIMITS.get(t, {}).get(m.group(2))
    if value is None:
        return None, f"std::numeric_limits<{m.group(1)}>::{m.group(2)} has no C spelling here"
    return canon.parse_expr(value), None


def _rewrite_call(call, env: _Env) -> tuple[c_ast.Node | None, str | None]:
    """(replacement, None) or (None, reason)."""
    fn = _std_name(call)
    args = list(call.args.exprs) if call.args is not None else []
    limit = _limit(fn, env) if not args else None
    if limit is not None:
        return limit
    if fn in MEM:
        return c_ast.FuncCall(c_ast.ID(MEM[fn], call.name.coord), call.args, call.coord), None
    types = [env.type_of(a) for a in args]
    explicit = re.fullmatch(r"(max|min)\s*<\s*([A-Za-z_][\w ]*?)\s*>", fn or "")
    if explicit and len(args) == 2 and not any(canon.has_side_effects(x) for x in args):
        # std::min<T>(a, b): both operands converted to T, then compared as T
        fn, tname = explicit.groups()
        a, b = (c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None,
                                                                          c_ast.IdentifierType(tname.split()))),
                           copy.deepcopy(x), call.coord) for x in args)
        cond = c_ast.BinaryOp("<", a, b) if fn == "max" else c_ast.BinaryOp("<", b, a)
        return c_ast.TernaryOp(cond, copy.deepcopy(b), copy.deepcopy(a), call.coord), None
    if fn in MINMAX:
        if len(args) != 2:
            return None, f"std::{fn} with {len(args)} operands (an initializer list or a comparator)"
        a, b = args
        if None in types:
            return None, f"the operand type of std::{fn} cannot be established"
        if types[0] != types[1]:
            return None, f"std::{fn} operands of different types ({types[0]}, {types[1]})"
        if types[0] not in FLOATING and not _is_int(types[0]):
            return None, f"std::{fn} of {types[0]}"
        if any(canon.has_side_effects(x) for x in args):
            return None, f"an operand of std::{fn} has side effects (it would be evaluated twice)"
        # std::max(a, b) = (a < b) ? b : a ; std::min(a, b) = (b < a) ? b : a
        cond = c_ast.BinaryOp("<", copy.deepcopy(a), copy.deepcopy(b)) if fn == "max" else \
            c_ast.BinaryOp("<", copy.deepcopy(b), copy.deepcopy(a))
        return c_ast.TernaryOp(cond, copy.deepcopy(b), copy.deepcopy(a), call.coord), None
    if fn == "abs" and len(args) == 1 and types[0] is not None and _is_int(types[0]):
        rank = max(_INT_RANK[types[0]], 3)
        if "unsigned" in types[0] or types[0].startswith("u") or types[0] == "size_t":
            return None, f"std::abs of an unsigned {types[0]}"
        name = {3: "abs", 4: "labs", 5: "llabs"}[rank]
        return c_ast.FuncCall(c_ast.ID(name, call.name.coord), call.args, call.coord), None
    if fn == "abs":
        fn = "fabs"
    if fn in MATH or fn in TO_INTEGER:
        if not args:
            return None, f"std::{fn} without operands"
        if None in types:
            return None, f"the operand type of std::{fn} cannot be established"
        bad = [t for t in types if t not in FLOATING and not _is_int(t)]
        if bad:
            return None, f"std::{fn} of {bad[0]} (no C spelling of that overload)"
        name = fn + "f" if all(t == "float" for t in types) else fn
        return c_ast.FuncCall(c_ast.ID(name, call.name.coord), call.args, call.coord), None
    return None, f"std::{fn} is not a std:: function {NAME} knows"


def _rewrite(program, apply: bool):
    """(new ast, count, [(reason, node)])."""
    ast = copy.deepcopy(program.ast) if apply else program.ast
    typedefs = canon.typedef_map(ast)
    file_decls = {e.name: e.type for e in ast.ext
                  if isinstance(e, c_ast.Decl) and e.name and not isinstance(e.type, c_ast.FuncDecl)}
    macros = {n: d["body"] for n, d in ((program.facts or {}).get("defines") or {}).items()
              if isinstance(d, dict) and d.get("params") is None and isinstance(d.get("body"), str)}
    returns = {}
    for e in ast.ext:
        d = e.decl if isinstance(e, c_ast.FuncDef) else e
        if isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.FuncDecl):
            t = _scalar_decl_type(d.type.type, typedefs)
            if t is not None:
                returns[d.name] = t
    count, problems = 0, []
    for fdef in ast.ext:
        if not isinstance(fdef, c_ast.FuncDef):
            continue
        env = _Env(file_decls, typedefs, macros, returns)
        env.push()
        for prm in (fdef.decl.type.args.params if isinstance(fdef.decl.type, c_ast.FuncDecl)
                    and fdef.decl.type.args is not None else []):
            env.add(prm)

        def go(node):
            canon.map_children(node, visit)

        def visit(n):
            nonlocal count
            if isinstance(n, c_ast.Compound) and n.block_items:
                items = []
                for st in n.block_items:
                    loop, why = _range_statement(st, count)
                    if why is not None:
                        problems.append((why, st))
                    if loop is not None:
                        count += 1
                    items.append(loop if loop is not None else st)
                n.block_items = items
            scoped = isinstance(n, (c_ast.Compound, c_ast.For))
            if scoped:
                env.push()
            go(n)                                   # operands first: inner std:: calls typed
            if scoped:
                env.pop()
            if isinstance(n, c_ast.Decl):
                env.add(n)
            if isinstance(n, c_ast.FuncCall) and _std_name(n) is not None:
                new, why = _rewrite_call(n, env)
                if new is None:
                    problems.append((why, n))
                    return n
                count += 1
                return new
            return n

        visit(fdef.body) if apply else visit(copy.deepcopy(fdef.body))
    return ast, count, problems


@register(PassInfo(
    name=NAME,
    summary="C++ std:: math / max / min / memset calls -> the C overload C++ picks for the operand "
            "types (sqrtf / sqrt ..., exact conditionals for max / min, memset / memcpy)",
    options={},
    requires=("a std:: call of a known function in a function definition (XP-STD-001)",
              "operand types established, max / min operands of one type without side effects "
              "(XP-STD-002)"),
    guarantees=("same outputs on the virtual device (same overload, same precision and NaN behaviour)",),
    introduces=("C math calls (sqrtf, expf, nearbyintf ...)", "conditional expressions for std::max / std::min"),
))
def std_calls(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    facts = copy.deepcopy(program.facts)
    facts.setdefault("statistics", {})[NAME] = {"calls": plan.data}
    return replace(program, ast=plan.ast, facts=facts, source="")


@std_calls.legality
def _legal(program):
    """The rewrite, run on a copy of the AST: the plan the rewrite emits."""
    ast, count, problems = _rewrite(program, apply=True)
    if problems:
        return [canon.diag(program, NAME, "XP-STD-002", why, node) for why, node in problems]
    if not count:
        return [canon.diag(program, NAME, "XP-STD-001", "no std:: math / max / min / memset / memcpy call")]
    return canon.Rewritten(ast, count)
