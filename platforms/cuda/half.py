"""``_Float16`` -> ``__half`` (``cuda_fp16.h``) in emitted CUDA, with the same numerics.

nvcc 13 stops with an internal compiler error ("unsupported float variant!") on ``_Float16`` in
device code; CUDA spells binary16 ``__half``. The two differ in C++ typing, not in values:

* ``_Float16`` (g++ on x86-64 without AVX512-FP16, which is how the virtual device builds CUDA:
  ``FLT_EVAL_METHOD == 0``) computes ``h op h`` in float and rounds the result to half, like
  ``__half``'s operators (``__hadd`` ...: float operation, one rounding to nearest even);
* mixed operands follow the usual arithmetic conversions: ``h op f`` (float) is a float
  operation, ``h op i`` (integer) converts ``i`` to half first, ``h op= f`` is
  ``h = (half)(h op f)``; ``__half`` has no mixed operators (``h * 2.0f`` is ambiguous in CUDA,
  ``h += f`` would round ``f`` to half first) and several conversion functions (``(long) h`` is
  ambiguous).

``to_half(program)`` returns a copy of the program whose ``_Float16`` is ``__half`` and whose
mixed expressions carry the conversions C applied implicitly: ``(float) h op f``,
``h op (__half) i``, ``h = (__half)((float) h op f)``, ``(T)(float) h`` for other arithmetic
types, both branches of a mixed ``?:`` converted to the common type. Expression types come from
the declarations in scope (parameters, locals, file scope, function return types, the C math
functions). It returns None - the caller keeps ``_Float16`` - when the program names
``_Float16`` outside the AST (preamble, macros), defines one of cuda_fp16.h's names itself, or
combines a half operand with an expression whose type it cannot establish.
"""
from __future__ import annotations

import copy
from dataclasses import replace

from pycparser import c_ast

from platforms.common.analysis import map_children

HALF_NAMES = frozenset({"__half", "half", "__half2", "half2", "__half_raw", "__half2_raw", "__nv_half"})
_INT_WORDS = frozenset("""char short int long unsigned signed bool _Bool int8_t uint8_t int16_t
uint16_t int32_t uint32_t int64_t uint64_t size_t ptrdiff_t intptr_t uintptr_t""".split())
_QUALS = frozenset({"const", "volatile", "static", "constexpr", "restrict", "__restrict__", "__restrict",
                    "register", "inline", "extern", "__shared__", "__device__", "__constant__"})
_FLOAT_FNS = frozenset("""sqrtf cbrtf expf exp2f expm1f logf log2f log10f log1pf sinf cosf tanf asinf
acosf atanf atan2f sinhf coshf tanhf erff erfcf floorf ceilf roundf truncf rintf nearbyintf fabsf powf
fmodf fmaxf fminf copysignf hypotf fmaf rsqrtf __expf __logf __fdividef __saturatef __half2float
__int_as_float __uint_as_float""".split())
_DOUBLE_FNS = frozenset("""sqrt cbrt exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan
atan2 sinh cosh tanh erf erfc floor ceil round trunc rint nearbyint fabs pow fmod fmax fmin copysign
hypot fma""".split())
_ARITH = frozenset({"+", "-", "*", "/"})
_COMPARE = frozenset({"<", ">", "<=", ">=", "==", "!="})

HALF, FLOAT, DOUBLE, INT = "half", "float", "double", "int"
_RANK = {INT: 0, HALF: 1, FLOAT: 2, DOUBLE: 3}


class _Cannot(Exception):
    pass


def _names(t) -> list[str]:
    return [w for w in t.names if w not in _QUALS]


def _tname(cls: str) -> c_ast.Typename:
    word = {HALF: "__half", FLOAT: "float", DOUBLE: "double", INT: "int"}[cls]
    return c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, c_ast.IdentifierType([word])))


def _cast(cls: str, e):
    return c_ast.Cast(_tname(cls), e)


def _pure(e) -> bool:
    """No side effects (may be evaluated twice)."""
    if isinstance(e, (c_ast.ID, c_ast.Constant)):
        return True
    if isinstance(e, c_ast.ArrayRef):
        return _pure(e.name) and _pure(e.subscript)
    if isinstance(e, c_ast.StructRef):
        return _pure(e.name)
    if isinstance(e, c_ast.UnaryOp):
        return e.op not in ("++", "--", "p++", "p--") and _pure(e.expr)
    if isinstance(e, c_ast.BinaryOp):
        return _pure(e.left) and _pure(e.right)
    if isinstance(e, c_ast.Cast):
        return _pure(e.expr)
    return False


class _Typer:
    def __init__(self, ast):
        self.typedefs: dict[str, object] = {}
        self.funcs: dict[str, object] = {}
        self.scopes: list[dict] = [{}]
        self.used = False
        for ext in ast.ext:
            if isinstance(ext, c_ast.Typedef):
                if ext.name in HALF_NAMES:
                    raise _Cannot(f"the program defines {ext.name}")
                self.typedefs[ext.name] = ext.type
            elif isinstance(ext, c_ast.FuncDef):
                self.declare(ext.decl.name, ext.decl.type)
            elif isinstance(ext, c_ast.Decl):
                if isinstance(ext.type, c_ast.FuncDecl):
                    self.declare(ext.name, ext.type)
                elif isinstance(ext.type, c_ast.Struct) and ext.type.name in HALF_NAMES:
                    raise _Cannot(f"the program defines struct {ext.type.name}")

    def declare(self, name, fd):
        """Function declarations by name (C++ overloads: several, told apart by parameters)."""
        have = self.funcs.setdefault(name, [])
        key = self.signature(fd)
        if all(self.signature(f) != key for f in have):
            have.append(fd)

    def params(self, fd) -> list:
        if not isinstance(fd, c_ast.FuncDecl) or fd.args is None:
            return []
        ps = [p for p in fd.args.params if isinstance(p, (c_ast.Decl, c_ast.Typename))]
        return [] if len(ps) == 1 and self.decl_type(ps[0].type) is None and \
            isinstance(ps[0].type, c_ast.TypeDecl) and _names(ps[0].type.type) == ["void"] else ps

    def signature(self, fd):
        return tuple(self.decl_type(p.type) for p in self.params(fd))

    # -- declared types -----------------------------------------------------------------
    def words_cls(self, words: list[str], seen=()) -> str | None:
        text = " ".join(words)
        if text == "_Float16":
            return HALF
        if text == "float":
            return FLOAT
        if text == "double":
            return DOUBLE
        if words and all(w in _INT_WORDS for w in words):
            return INT
        if len(words) == 1 and words[0] in self.typedefs and words[0] not in seen:
            t = self.decl_type(self.typedefs[words[0]], seen + (words[0],))
            return t[0] if t and t[1] == 0 else None
        return None

    def decl_type(self, t, seen=()):
        """(class, pointer depth) of a declared type, or None."""
        depth = 0
        while isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl)):
            depth += 1
            t = t.type
        if isinstance(t, c_ast.Typename):
            return self.decl_type(t.type, seen)
        if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
            words = _names(t.type)
            if " ".join(words) == "void":
                return ("void", depth) if depth else None
            c = self.words_cls(words, seen)
            if c is None and len(words) == 1 and words[0] in self.typedefs and words[0] not in seen:
                inner = self.decl_type(self.typedefs[words[0]], seen + (words[0],))
                return (inner[0], inner[1] + depth) if inner else None
            return (c, depth) if c else None
        return None

    def lookup(self, name):
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None

    def add(self, decl):
        if isinstance(decl, c_ast.Decl) and decl.name and not isinstance(decl.type, c_ast.FuncDecl):
            self.scopes[-1][decl.name] = self.decl_type(decl.type)


def _common(a: str, b: str) -> str:
    return a if _RANK[a] >= _RANK[b] else b


class _Rewriter:
    def __init__(self, typer: _Typer):
        self.t = typer

    # -- expressions: (node, type) ------------------------------------------------------
    def expr(self, e):
        t = self.t
        if e is None:
            return None, None
        if isinstance(e, c_ast.ID):
            return e, t.lookup(e.name)
        if isinstance(e, c_ast.Constant):
            if e.type in ("float", "double"):
                v = e.value.lower()
                return e, ((FLOAT if v.endswith("f") else DOUBLE if not v.endswith("l") else None), 0)
            if e.type == "string":
                return e, ("int", 1)
            return e, (INT, 0)
        if isinstance(e, c_ast.Cast):
            e.expr, st = self.expr(e.expr)
            tt = t.decl_type(e.to_type)
            if st == (HALF, 0) and tt is not None and tt[1] == 0 and tt[0] not in (HALF, FLOAT):
                e.expr = _cast(FLOAT, e.expr)        # (long) h is ambiguous on __half
            if st == (HALF, 0) and tt is None:
                raise _Cannot("a half value cast to a type that is not established")
            return e, tt
        if isinstance(e, c_ast.ArrayRef):
            e.name, bt = self.expr(e.name)
            e.subscript, _ = self.expr(e.subscript)
            return e, ((bt[0], bt[1] - 1) if bt and bt[1] > 0 else None)
        if isinstance(e, c_ast.StructRef):
            e.name, _ = self.expr(e.name)
            return e, None
        if isinstance(e, c_ast.UnaryOp):
            if e.op == "sizeof":
                if not isinstance(e.expr, c_ast.Typename):
                    e.expr, _ = self.expr(e.expr)
                return e, (INT, 0)
            e.expr, xt = self.expr(e.expr)
            if e.op == "*":
                return e, ((xt[0], xt[1] - 1) if xt and xt[1] > 0 else None)
            if e.op == "&":
                return e, ((xt[0], xt[1] + 1) if xt else None)
            if e.op == "!":
                return e, (INT, 0)
            if e.op == "~":
                return e, xt
            return e, xt                              # - + ++ -- p++ p--: __half has them
        if isinstance(e, c_ast.BinaryOp):
            return self.binary(e)
        if isinstance(e, c_ast.TernaryOp):
            e.cond, _ = self.expr(e.cond)
            e.iftrue, a = self.expr(e.iftrue)
            e.iffalse, b = self.expr(e.iffalse)
            if (a == (HALF, 0)) != (b == (HALF, 0)):
                if a is None or b is None or a[1] or b[1]:
                    raise _Cannot("a ?: with a half branch and a branch of unknown type")
                c = _common(a[0], b[0])
                e.iftrue, e.iffalse = self.convert(e.iftrue, a, (c, 0)), self.convert(e.iffalse, b, (c, 0))
                return e, (c, 0)
            return e, a if a == b else (a if b is None else None if a is None else
                                        ((_common(a[0], b[0]), 0) if not a[1] and not b[1] else a))
        if isinstance(e, c_ast.Assignment):
            return self.assign(e)
        if isinstance(e, c_ast.FuncCall):
            return self.call(e)
        if isinstance(e, c_ast.ExprList):
            last = None
            out = []
            for x in e.exprs:
                x, last = self.expr(x)
                out.append(x)
            e.exprs = out
            return e, last
        if isinstance(e, c_ast.InitList):
            e.exprs = [self.fix_expr(x) for x in e.exprs]
            return e, None
        if isinstance(e, c_ast.Typename):
            return e, t.decl_type(e)
        return self.generic(e), None

    def fix_expr(self, e):
        return self.expr(e)[0]

    def convert(self, e, have, want):
        """``e`` (of type ``have``) as a value of ``want`` where C converted it implicitly."""
        if have is None or want is None or have == want or have[1] or want[1]:
            if (have == (HALF, 0)) != (want == (HALF, 0)) and (have is None or want is None):
                raise _Cannot("a half value meets a value of unknown type")
            return e
        if have[0] == HALF:
            return _cast(want[0], e) if want[0] == FLOAT else _cast(want[0], _cast(FLOAT, e))
        if want[0] == HALF:
            return _cast(HALF, e)
        return e

    def binary(self, e):
        e.left, a = self.expr(e.left)
        e.right, b = self.expr(e.right)
        half_a, half_b = a == (HALF, 0), b == (HALF, 0)
        if e.op in ("&&", "||"):
            return e, (INT, 0)                       # contextual bool: explicit operator bool
        if not (half_a or half_b):
            if e.op in _COMPARE:
                return e, (INT, 0)
            if a and b and not a[1] and not b[1]:
                return e, (_common(a[0], b[0]), 0)
            if a and a[1] and b and not b[1]:
                return e, a
            if b and b[1] and a and not a[1] and e.op == "+":
                return e, b
            return e, (INT, 0) if (a and b and a[1] and b[1] and e.op == "-") else None
        if half_a and half_b:
            return e, ((INT, 0) if e.op in _COMPARE else (HALF, 0))
        if e.op not in _ARITH and e.op not in _COMPARE:
            raise _Cannot(f"operator {e.op} on a half value")
        other = b if half_a else a
        if other is None or other[1]:
            raise _Cannot("a half operand meets an operand of unknown type")
        c = _common(HALF, other[0])
        e.left, e.right = self.convert(e.left, a, (c, 0)), self.convert(e.right, b, (c, 0))
        return e, ((INT, 0) if e.op in _COMPARE else (c, 0))

    def assign(self, e):
        e.lvalue, lt = self.expr(e.lvalue)
        e.rvalue, rt = self.expr(e.rvalue)
        if lt != (HALF, 0) and rt != (HALF, 0):
            return e, lt
        if lt is None or rt is None or lt[1] or rt[1]:
            raise _Cannot("an assignment between a half value and a value of unknown type")
        if e.op == "=":
            if lt[0] == HALF and rt[0] in (HALF, FLOAT, DOUBLE):
                return e, lt
            e.rvalue = self.convert(e.rvalue, rt, lt)
            return e, lt
        op = e.op[:-1]
        if op not in _ARITH:
            raise _Cannot(f"operator {e.op} on a half value")
        if lt[0] == HALF and rt[0] in (HALF, INT):
            e.rvalue = self.convert(e.rvalue, rt, lt)          # h op= (__half) i: C's conversion
            return e, lt
        if lt[0] == HALF:                                      # h op= f -> h = (half)((float) h op f)
            if not _pure(e.lvalue):
                raise _Cannot("a compound assignment to a half lvalue with side effects")
            c = rt[0]
            value = c_ast.BinaryOp(op, self.convert(copy.deepcopy(e.lvalue), lt, (c, 0)), e.rvalue)
            return c_ast.Assignment("=", e.lvalue, _cast(HALF, value)), lt
        if lt[0] == INT:
            raise _Cannot("a compound assignment of a half value to an integer")
        e.rvalue = self.convert(e.rvalue, rt, lt)               # f op= (float) h
        return e, lt

    def call(self, e):
        name = e.name.name if isinstance(e.name, c_ast.ID) else None
        args = e.args.exprs if isinstance(e.args, c_ast.ExprList) else []
        typed = [self.expr(a) for a in args]
        params = None
        decls = self.t.funcs.get(name, []) if name else []
        if len(decls) > 1:                         # overloads: the one whose parameters match
            exact = [f for f in decls if self.t.signature(f) == tuple(at for _, at in typed)]
            decls = exact
        fd = decls[0] if len(decls) == 1 else None
        if fd is None and name in self.t.funcs and any(at == (HALF, 0) for _, at in typed):
            raise _Cannot(f"a half argument of the overloaded {name}")
        if fd is not None:
            params = self.t.params(fd)
        out = []
        for i, (node, at) in enumerate(typed):
            if at == (HALF, 0):
                if name in _FLOAT_FNS:
                    node = self.convert(node, at, (FLOAT, 0))
                elif name in _DOUBLE_FNS:
                    node = self.convert(node, at, (DOUBLE, 0))
                elif params is not None and i < len(params):
                    pt = self.t.decl_type(params[i].type)
                    if pt is None:
                        raise _Cannot(f"argument {i + 1} of {name}: parameter type not established")
                    node = self.convert(node, at, pt)
                else:
                    raise _Cannot(f"a half argument of {name or 'a call'} whose parameter is unknown")
            elif params is not None and i < len(params):
                pt = self.t.decl_type(params[i].type)
                if pt == (HALF, 0):
                    node = self.convert(node, at, pt)
            out.append(node)
        if isinstance(e.args, c_ast.ExprList):
            e.args.exprs = out
        if name in _FLOAT_FNS:
            return e, (FLOAT, 0)
        if name in _DOUBLE_FNS:
            return e, (DOUBLE, 0)
        if isinstance(fd, c_ast.FuncDecl):
            return e, self.t.decl_type(fd.type)
        return e, None

    def generic(self, n):
        return map_children(n, self.node)

    # -- statements -------------------------------------------------------------------
    _EXPR = (c_ast.ID, c_ast.Constant, c_ast.Cast, c_ast.ArrayRef, c_ast.StructRef, c_ast.UnaryOp,
             c_ast.BinaryOp, c_ast.TernaryOp, c_ast.Assignment, c_ast.FuncCall, c_ast.ExprList)

    def node(self, n, ret=None):
        t = self.t
        if isinstance(n, self._EXPR):
            return self.fix_expr(n)
        if isinstance(n, c_ast.FuncDef):
            t.scopes.append({})
            fd = n.decl.type
            if isinstance(fd, c_ast.FuncDecl) and fd.args is not None:
                for p in fd.args.params:
                    t.add(p)
            self.ret = t.decl_type(fd.type) if isinstance(fd, c_ast.FuncDecl) else None
            n.body = self.node(n.body)
            t.scopes.pop()
            return n
        if isinstance(n, c_ast.Compound):
            t.scopes.append({})
            n.block_items = [self.node(x) for x in n.block_items or []]
            t.scopes.pop()
            return n
        if isinstance(n, c_ast.For):
            t.scopes.append({})
            n.init = self.node(n.init) if n.init is not None else None
            n.cond = self.fix_expr(n.cond) if n.cond is not None else None
            n.next = self.fix_expr(n.next) if n.next is not None else None
            n.stmt = self.node(n.stmt)
            t.scopes.pop()
            return n
        if isinstance(n, c_ast.Decl):
            if isinstance(n.type, c_ast.FuncDecl):
                return n
            dt = t.decl_type(n.type)
            if n.init is not None and not isinstance(n.init, c_ast.InitList):
                n.init, it = self.expr(n.init)
                if dt == (HALF, 0) or it == (HALF, 0):
                    if dt is None or it is None:
                        raise _Cannot(f"the initialiser of {n.name}: a half value and an unknown type")
                    if not (dt == (HALF, 0) and it[0] in (HALF, FLOAT, DOUBLE) and not it[1]):
                        n.init = self.convert(n.init, it, dt)
            elif isinstance(n.init, c_ast.InitList):
                n.init = self.init_list(n.init, dt)
            t.add(n)
            return n
        if isinstance(n, c_ast.Return):
            if n.expr is not None:
                n.expr, rt = self.expr(n.expr)
                if (rt == (HALF, 0)) != (self.ret == (HALF, 0)):
                    n.expr = self.convert(n.expr, rt, self.ret)
            return n
        return self.generic(n)

    def init_list(self, il, dt):
        elem = (dt[0], dt[1] - 1) if dt and dt[1] > 0 else None
        out = []
        for x in il.exprs:
            if isinstance(x, c_ast.InitList):
                out.append(self.init_list(x, elem))
                continue
            x, xt = self.expr(x)
            if xt == (HALF, 0) or elem == (HALF, 0):
                if xt is None or elem is None:
                    raise _Cannot("an initialiser list mixing half and unknown types")
                if elem == (HALF, 0) and xt[0] == INT and not xt[1]:
                    x = _cast(HALF, x)     # {0} of __half: the int constructor, C's conversion
                elif xt == (HALF, 0) and elem != (HALF, 0):
                    x = self.convert(x, xt, elem)
            out.append(x)
        il.exprs = out
        return il


def _rename(node) -> None:
    for _, child in node.children():
        _rename(child)
    if isinstance(node, c_ast.IdentifierType) and "_Float16" in node.names:
        node.names = ["__half" if w == "_Float16" else w for w in node.names]


def _mentions(node) -> bool:
    if isinstance(node, c_ast.IdentifierType) and "_Float16" in node.names:
        return True
    return any(_mentions(c) for _, c in node.children())


def to_half(program):
    """A copy of ``program`` with ``__half`` for ``_Float16`` (see the module docstring), the
    program itself when it does not use ``_Float16``, or None when the rewrite cannot keep the
    numerics exactly."""
    if program.ast is None or not _mentions(program.ast):
        return program
    facts = program.facts or {}
    if any("_Float16" in str(line) for line in facts.get("preamble", [])) or \
            any("_Float16" in str(d) for d in (facts.get("defines") or {}).values()):
        return None
    ast = copy.deepcopy(program.ast)
    try:
        rw = _Rewriter(_Typer(ast))
        for i, ext in enumerate(ast.ext):
            if isinstance(ext, c_ast.FuncDef):
                ast.ext[i] = rw.node(ext)
            elif isinstance(ext, c_ast.Decl) and not isinstance(ext.type, c_ast.FuncDecl):
                ast.ext[i] = rw.node(ext)
                rw.t.scopes[0][ext.name] = rw.t.decl_type(ext.type)
            elif isinstance(ext, c_ast.Decl):
                rw.t.add(ext)
    except (_Cannot, RecursionError):
        return None
    _rename(ast)
    preamble = list(facts.get("preamble", []))
    if not any("cuda_fp16.h" in str(line) for line in preamble):
        at = next((i + 1 for i, line in enumerate(preamble) if "cuda_runtime.h" in str(line)), 0)
        preamble.insert(at, "#include <cuda_fp16.h>")
    return replace(program, ast=ast, facts=dict(facts, preamble=preamble))
