"""memops: memcpy / memmove / memset statements -> typed element loops.

Summary
    In the entry function, a statement ``memcpy(d, s, bytes)`` / ``memmove(d, s, bytes)``
    becomes ``for (int __xp_mN = 0; __xp_mN < count; ++__xp_mN) D[__xp_mN] = S[__xp_mN];`` and
    ``memset(d, 0, bytes)`` becomes ``D[__xp_mN] = 0`` (any byte value for 1-byte elements; the
    value a literal or a constant expression over the file's named constants),
    where ``D``/``S`` are ``d``/``s`` (cast to ``T *`` when they are ``void *``) and ``count =
    bytes / sizeof(T)``. The element type ``T`` comes from the declarations: arrays, pointer
    parameters, typed pointer locals, ``(T *)`` casts, rows of 2-D arrays, and ``void *``
    locals initialised once from such an expression and never assigned. The byte count must be
    a whole number of elements by its form: ``sizeof(array)``, a constant, ``e * sizeof(T')``
    with ``sizeof(T') % sizeof(T) == 0``, or a never-assigned local initialised with one; for
    1-byte elements any side-effect free count. The
    affine analysis then sees every element access.
Requires
    1. The program has an entry function definition (XP-MEMOPS-001).
    2. At least one mem* call is a statement whose element types are known and equal (same
       byte size for integers) on both sides, whose size is a provable multiple of the element
       size, and - for ``memmove`` - whose operands are different arrays / parameters (no
       overlap); ``memset`` of a non-zero byte only on 1-byte elements (XP-MEMOPS-002: no mem*
       statement, nothing to do; XP-MEMOPS-003: none of them qualifies). Other calls are left as
       they are.
Guarantees
    Same outputs on the virtual device (pointer parameters do not alias, as in
    ``passes/analysis/affine``).
Options
    none.
Example
    ``memcpy(a, &v, sizeof(a));`` (``float a[16]``; ``v`` a ``float[16]``)  ->
    ``for (int __xp_m1 = 0; __xp_m1 < 16; ++__xp_m1) a[__xp_m1] = v[__xp_m1];``
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "memops"
INT_WORDS = frozenset("char short int long unsigned signed int8_t uint8_t int16_t uint16_t "
                      "int32_t uint32_t int64_t uint64_t size_t bool _Bool".split())


class _Cannot(Exception):
    pass


class _Lowerer:
    def __init__(self, program, ast, fdef):
        self.typedefs = canon.typedef_map(ast)
        globals_ = canon.file_scope_decls(ast)
        for p in (fdef.decl.type.args.params if fdef.decl.type.args else []):
            if isinstance(p, c_ast.Decl) and p.name:
                globals_[p.name] = p
        self.scopes = canon.Scopes(globals_)
        self.written = canon.written_names(fdef.body)
        self.constants = dict(program.facts.get("constants", {}))
        self.counter = 0
        self.done = 0
        self.reasons: list[tuple[str, c_ast.Node]] = []

    # -- walk ---------------------------------------------------------------------------
    def items(self, items: list) -> list:
        out = []
        self.scopes.push()
        for s in items:
            out += self.stmt(s)
        self.scopes.pop()
        return out

    def stmt(self, s) -> list:
        if isinstance(s, c_ast.Decl):
            self.scopes.add(s)
            return [s]
        if isinstance(s, c_ast.FuncCall) and canon.call_name(s) in ("memcpy", "memmove", "memset"):
            try:
                loop = self.lower(s)
            except _Cannot as exc:
                self.reasons.append((str(exc), s))
                return [s]
            self.done += 1
            return [loop]
        if isinstance(s, c_ast.Compound):
            s.block_items = self.items(list(s.block_items or []))
            return [s]
        if isinstance(s, c_ast.For):
            self.scopes.push()
            if isinstance(s.init, c_ast.DeclList):
                for d in s.init.decls:
                    self.scopes.add(d)
            s.stmt = self.sub(s.stmt)
            self.scopes.pop()
            return [s]
        if isinstance(s, (c_ast.While, c_ast.DoWhile, c_ast.Switch)):
            s.stmt = self.sub(s.stmt)
            return [s]
        if isinstance(s, c_ast.If):
            s.iftrue = self.sub(s.iftrue)
            s.iffalse = self.sub(s.iffalse)
            return [s]
        return [s]

    def sub(self, s):
        if s is None:
            return None
        if isinstance(s, c_ast.Compound):
            return self.stmt(s)[0]
        self.scopes.push()
        out = self.stmt(s)
        self.scopes.pop()
        return out[0] if len(out) == 1 else c_ast.Compound(out)

    # -- one call -----------------------------------------------------------------------
    def lower(self, call):
        name = canon.call_name(call)
        args = call.args.exprs if call.args is not None else []
        if len(args) != 3:
            raise _Cannot(f"{name} with {len(args)} arguments")
        d, x, n = args
        dt, dexpr = self.typed(d)
        if dt is None:
            raise _Cannot(f"the element type {name} writes through is not known")
        size = canon.scalar_bytes(dt)
        if size is None:
            raise _Cannot(f"unknown size of element type '{' '.join(dt)}'")
        count = self.count(n, size)
        self.counter += 1
        q = f"__xp_m{self.counter}"
        if name == "memset":
            v = self.fold(x)          # a literal or a named constant (memset(q, ZP, ...))
            if v is None or (v != 0 and size != 1):
                raise _Cannot("memset of a non-zero or unknown byte on elements wider than one byte")
            rhs = c_ast.Constant("int", str(v))
        else:
            st, sexpr = self.typed(x)
            if st is None:
                raise _Cannot(f"the element type {name} reads is not known")
            same = st == dt or (canon.scalar_bytes(st) == size and set(st) <= INT_WORDS and
                                set(dt) <= INT_WORDS)
            if not same:
                raise _Cannot(f"{name} between different element types ({' '.join(st)} -> "
                              f"{' '.join(dt)}): a byte reinterpretation")
            if name == "memmove":
                rd, rs = self.root(dexpr), self.root(sexpr)
                if rd is None or rs is None or rd == rs:
                    raise _Cannot("memmove whose operands may overlap")
            rhs = c_ast.ArrayRef(sexpr, c_ast.ID(q))
            if st != dt:
                rhs = c_ast.Cast(_typename(dt), rhs)
        (loop,) = canon.parse_stmts(f"for (int {q} = 0; {q} < __xp_cnt; ++{q}) __xp_body;")
        loop.cond.right = count
        loop.stmt = c_ast.Assignment("=", c_ast.ArrayRef(dexpr, c_ast.ID(q)), rhs)
        return loop

    def typed(self, e):
        """(element type words, expression to index) of a pointer operand, or (None, None)."""
        e0 = e
        if isinstance(e, c_ast.Cast) and _is_void_ptr(e.to_type.type):
            e = e.expr
        # void * locals initialised once
        seen = 0
        while isinstance(e, c_ast.ID) and seen < 8:
            d = self.scopes.get(e.name)
            if not isinstance(d, c_ast.Decl) or not _is_void_ptr(d.type):
                break
            if d.init is None or e.name in self.written or canon.has_side_effects(d.init):
                return None, None
            init = d.init
            if isinstance(init, c_ast.Cast) and _is_void_ptr(init.to_type.type):
                init = init.expr
            if canon.ids_in(init) & self.written:
                # names of the initialiser may change between declaration and use: index the
                # local itself, typed by its initialiser
                t = canon.pointee(init, self.scopes, self.typedefs)
                return (t, _cast(t, e)) if t else (None, None)
            e = init
            seen += 1
        t = canon.pointee(e, self.scopes, self.typedefs)
        if t is None:
            return None, None
        if e is e0 or not isinstance(e, c_ast.ID):
            return t, _paren_ptr(e, t, self)
        return t, e

    def root(self, e) -> str | None:
        while True:
            if isinstance(e, c_ast.ID):
                return e.name
            if isinstance(e, c_ast.Cast):
                e = e.expr
            elif isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
                e = e.left
            elif isinstance(e, c_ast.ArrayRef):
                e = e.name
            elif isinstance(e, c_ast.UnaryOp) and e.op == "&":
                e = e.expr
            else:
                return None

    def const(self, e) -> int | None:
        if isinstance(e, c_ast.Constant) and e.type in ("int", "char"):
            try:
                return int(e.value.rstrip("uUlL"), 0) if e.type == "int" else ord(e.value[1])
            except (ValueError, IndexError):
                return None
        if isinstance(e, c_ast.Cast):
            return self.const(e.expr)
        return None

    def fold(self, e) -> int | None:
        """Value of an integer constant expression over literals and the file's named
        constants (``M * NP``, ``(N + 31) / 32 * 32``), or None."""
        c = self.const(e)
        if c is not None:
            return c
        if isinstance(e, c_ast.ID):
            v = self.constants.get(e.name)
            return int(v) if isinstance(v, int) and not isinstance(v, bool) else None
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-", "*", "/", "%", "<<", ">>"):
            a, b = self.fold(e.left), self.fold(e.right)
            if a is None or b is None:
                return None
            if e.op in ("/", "%"):
                if b == 0:
                    return None
                q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)   # C truncation
                return q if e.op == "/" else a - q * b
            if e.op in ("<<", ">>") and not 0 <= b < 63:
                return None
            return {"+": a + b, "-": a - b, "*": a * b, "<<": a << b if b >= 0 else None,
                    ">>": a >> b}[e.op]
        if isinstance(e, c_ast.UnaryOp) and e.op == "-":
            v = self.fold(e.expr)
            return None if v is None else -v
        return None

    def bytes_of(self, e):
        """(factor expression or None, constant bytes) with value factor * bytes."""
        if isinstance(e, c_ast.Cast) and set(canon.type_words(e.to_type.type)) <= INT_WORDS and \
                not isinstance(e.to_type.type, c_ast.PtrDecl):
            return self.bytes_of(e.expr)
        c = self.const(e)
        if c is not None:
            return None, c
        if isinstance(e, c_ast.UnaryOp) and e.op == "sizeof":
            return None, self.sizeof(e.expr)
        if isinstance(e, c_ast.BinaryOp) and e.op == "*":
            # both factors decomposed (``sizeof(float) * D0 * INNER``: the sizeof may sit in
            # either operand); an operand with no constant form is an opaque factor
            parts = []
            for side in (e.left, e.right):
                try:
                    parts.append(self.bytes_of(side))
                except _Cannot:
                    if canon.has_side_effects(side):
                        raise _Cannot("a size with side effects")
                    parts.append((side, 1))
            (fa, ca), (fb, cb) = parts
            if fa is e.left and fb is e.right:
                raise _Cannot("a byte count that is not e * sizeof(T)")
            if fa is None or fb is None:
                return (fb if fa is None else fa), ca * cb
            return c_ast.BinaryOp("*", fa, fb), ca * cb
        if isinstance(e, c_ast.ID):
            d = self.scopes.get(e.name)
            if isinstance(d, c_ast.Decl) and d.init is not None and e.name not in self.written \
                    and not (canon.ids_in(d.init) & self.written) and isinstance(d.type, c_ast.TypeDecl):
                return self.bytes_of(d.init)
            if e.name in self.constants and self.constants[e.name] is not None:
                try:
                    return None, int(self.constants[e.name])
                except (TypeError, ValueError):
                    pass
        raise _Cannot("a byte count whose form is not a multiple of the element size")

    def sizeof(self, x) -> int:
        if isinstance(x, c_ast.Typename):
            if isinstance(x.type, c_ast.PtrDecl):
                return 8
            b = canon.scalar_bytes(canon.type_words(x.type))
            if b is None:
                raise _Cannot("sizeof of an unknown type")
            return b
        if isinstance(x, c_ast.ID):
            d = self.scopes.get(x.name)
            if isinstance(d, c_ast.Decl):
                t, total = d.type, 1
                while isinstance(t, c_ast.ArrayDecl):
                    dim = self.fold(t.dim) if t.dim is not None else None
                    if dim is None:
                        raise _Cannot(f"sizeof '{x.name}' with a non-constant dimension")
                    total *= int(dim)
                    t = t.type
                if isinstance(t, c_ast.PtrDecl):
                    return 8 * total
                et = canon.elem_type_of_decl_type(t, self.typedefs)
                b = canon.scalar_bytes(et[0]) if et else None
                if b is None:
                    raise _Cannot(f"sizeof '{x.name}' of an unknown type")
                return b * total
        raise _Cannot("sizeof of an expression")

    def count(self, n, size: int):
        if size == 1 and not canon.has_side_effects(n):
            try:
                self.bytes_of(n)
            except _Cannot:         # any byte count is a whole number of 1-byte elements
                return copy.deepcopy(n)
        factor, c = self.bytes_of(n)
        if c % size:
            raise _Cannot(f"{c} bytes per factor is not a multiple of the element size {size}")
        k = c // size
        if factor is None:
            return c_ast.Constant("int", str(k))
        f = copy.deepcopy(factor)
        return f if k == 1 else c_ast.BinaryOp("*", f, c_ast.Constant("int", str(k)))


def _is_void_ptr(t) -> bool:
    return isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.TypeDecl) and \
        canon.type_words(t.type) == ["void"]


def _typename(words, ptr: bool = False):
    t = c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(list(words)))
    return c_ast.Typename(None, [], None, c_ast.PtrDecl([], t) if ptr else t)


def _cast(words, e):
    return c_ast.Cast(_typename(words, ptr=True), e)


def _paren_ptr(e, t, low):
    """``e`` as an indexable pointer expression: ``&a[i]`` -> ``(a + i)`` stays as ``&a[i]``
    wrapped in a cast (the printer parenthesises)."""
    if isinstance(e, c_ast.Cast) and _is_void_ptr(e.to_type.type):
        return _cast(t, e.expr)
    return e


def _run(program, ast):
    fdef = canon.entry_def(ast, program.entry.name) if program.entry else None
    if fdef is None:
        return None
    low = _Lowerer(program, ast, fdef)
    fdef.body.block_items = low.items(list(fdef.body.block_items or []))
    return low


@register(PassInfo(
    name=NAME,
    summary="memcpy/memmove/memset statements with element-multiple sizes -> typed element loops",
    requires=("an entry function definition (XP-MEMOPS-001)",
              "a mem* statement with known equal element types, a size that is a provable "
              "multiple of the element size, memmove operands that cannot overlap, memset of "
              "zero (or any byte on 1-byte elements) (XP-MEMOPS-002 no mem* statement, "
              "XP-MEMOPS-003 none qualifies)"),
    guarantees=("same outputs on the virtual device", "rewritten calls become canonical loops"),
    introduces=("__xp_mN loop variables",),
))
def memops(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@memops.legality
def _legal(program):
    """The lowering, run on a copy of the AST: the plan the rewrite emits."""
    if program.entry is None or canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-MEMOPS-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    low = _run(program, ast)
    if not low.done:
        if low.reasons:     # mem* statements, none of which can become a typed loop
            why, node = low.reasons[0]
            return [canon.diag(program, NAME, "XP-MEMOPS-003", f"no mem* call can be rewritten: "
                               f"{why}", node)]
        return [canon.diag(program, NAME, "XP-MEMOPS-002", "the entry has no mem* statement")]
    return canon.Rewritten(ast)
