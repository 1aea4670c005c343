"""vector_types: GNU/clang vector typedefs -> plain C arrays of the element type.

Summary
    nvcc rejects GNU ``vector_size`` / clang ``ext_vector_type`` types in device code ("is a
    vector, which is not supported in device code"). HIP sources declare them for MFMA operands
    (``typedef float floatx4 __attribute__((ext_vector_type(4)))``) and the GPU lift keeps
    them (``xp_f32x4``), so a lifted HIP kernel re-emitted as CUDA does not compile. This pass
    removes every file-scope vector typedef ``typedef T name __attribute__((vector_size(B)))``
    (N lanes) and gives every declaration, cast and ``sizeof`` of that type the element array
    type ``T [N]`` instead (``floatx4 acc[64]`` -> ``float acc[64][4]``, ``floatx4 *p`` ->
    ``float (*p)[4]``: same size and element layout). The uses become:

    * element access ``x[i]``, ``&x``, ``sizeof x``, pointer casts: unchanged (an array has the
      vector's subscripting and bytes; per-thread arrays stay traceable by ``loop_bind``);
    * ``T x = {a, b, ...}`` / ``T x = (T){...}``: a brace list of the element array;
    * a whole-vector statement ``x = e;`` / ``x op= e;`` (``e`` built from vector values,
      compound literals ``(T){...}``, side-effect-free scalars and ``+ - * /`` / unary ``-``)
      -> one statement per lane ``x[k] = (T)(lane_k(e));``; a declaration initialised by such
      an expression gets the brace list of its lanes. Every lane operation is cast back to the
      element type (vector lane arithmetic rounds / wraps per operation in the element type;
      the casts keep that exactly, also for ``_Float16`` excess precision and narrow integers).
Requires
    1. The file declares at least one vector typedef (XP-VECTYPES-001).
    2. Every vector typedef has a known element type and a power-of-two lane count, and no
       vector attribute is used outside a file-scope typedef (XP-VECTYPES-002).
    3. Every use of a vector value is one of the forms above: no vector comparison, ternary,
       logical or bitwise operator, conversion cast between vector and scalar types, vector
       struct member or typedef alias, vector parameter / return value / call argument (an
       array cannot be passed by value), or element-wise expression outside a statement /
       initialiser (XP-VECTYPES-003); lane expansion needs a side-effect-free target and
       operands (XP-VECTYPES-004) and no target and operand that both reach vectors through
       pointers (they could overlap partially; XP-VECTYPES-005).
Guarantees
    Same outputs on the virtual device; no vector type left in the program (what nvcc accepts
    in device code). ``T [N]`` has the vector's size and element offsets, so ``memcpy`` /
    pointer reinterpretation read the same bytes; only the alignment is weaker (the element
    alignment), which no rewritten use depends on.
Options
    none.
Example
    ``typedef float floatx4 __attribute__((ext_vector_type(4))); floatx4 acc; acc = (floatx4){0, 0, 0, 0}; acc[i] += x;``
    -> ``float acc[4]; acc[0] = (float) 0; ...; acc[3] = (float) 0; acc[i] += x;``
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register
from platforms.common.gpu_vectors import COMPONENTS, VECTOR_TYPES

NAME = "vector_types"
_ELEM_BYTES = {"float": 4, "double": 8, "int": 4, "unsigned int": 4, "unsigned": 4, "short": 2,
               "unsigned short": 2, "char": 1, "signed char": 1, "unsigned char": 1, "_Float16": 2,
               "__fp16": 2, "half": 2, "__half": 2, "long": 8, "long long": 8, "unsigned long": 8,
               "unsigned long long": 8, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2,
               "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8}
_ARITH = ("+", "-", "*", "/")


class _Refuse(Exception):
    def __init__(self, code, message, node=None):
        super().__init__(message)
        self.code, self.message, self.node = code, message, node


def _attr_int(a):
    x = a.arguments
    if isinstance(x, c_ast.ExprList) and len(x.exprs) == 1:
        x = x.exprs[0]
    if isinstance(x, c_ast.Constant):
        try:
            return int(str(x.value).rstrip("uUlL"), 0)
        except ValueError:
            return None
    try:
        return int(str(x).strip(), 0)
    except (TypeError, ValueError):
        return None


def _vec_attrs(node):
    """The vector attributes (``vector_size`` / ``ext_vector_type``) attached to a node."""
    out = []
    for spec in getattr(node, "attributes", None) or []:
        for a in getattr(spec, "attributes", None) or [spec]:
            if isinstance(a, c_ast.Attribute) and a.name.strip("_") in ("vector_size", "ext_vector_type"):
                out.append(a)
    return out


def vector_typedefs(ast) -> dict[str, tuple[list[str], int]]:
    """name -> (element type words, lanes) of the file-scope vector typedefs; raises _Refuse
    for one this pass cannot represent and for vector attributes elsewhere."""
    out, seen = {}, set()
    for e in ast.ext:
        if not isinstance(e, c_ast.Typedef):
            continue
        attrs = _vec_attrs(e) + _vec_attrs(e.type)
        if not attrs:
            continue
        seen.update(id(a) for a in attrs)
        if len(attrs) != 1 or not isinstance(e.type, c_ast.TypeDecl) or \
                not isinstance(e.type.type, c_ast.IdentifierType):
            raise _Refuse("XP-VECTYPES-002", f"vector typedef {e.name!r} of an unsupported form", e)
        words = canon.type_words(e.type)
        size = _ELEM_BYTES.get(" ".join(words))
        n = _attr_int(attrs[0])
        kind = attrs[0].name.strip("_")
        if size is None or n is None:
            raise _Refuse("XP-VECTYPES-002", f"vector typedef {e.name!r}: unknown element type "
                          f"{' '.join(words)!r} or size", e)
        lanes = n if kind == "ext_vector_type" else n // size
        if lanes < 1 or lanes & (lanes - 1) or (kind == "vector_size" and n % size):
            raise _Refuse("XP-VECTYPES-002", f"vector typedef {e.name!r}: {lanes} lanes (only powers "
                          "of two have the size of their element array)", e)
        out[e.name] = (words, lanes)
    for n in canon.walk(ast):
        if isinstance(n, c_ast.Attribute) and n.name.strip("_") in ("vector_size", "ext_vector_type") \
                and id(n) not in seen:
            raise _Refuse("XP-VECTYPES-002", "a vector attribute outside a file-scope typedef", n)
    return out


def _vinfo(t, vecs):
    """(typedef, depth) of a declared type whose base is a vector typedef; depth counts the
    array / pointer layers above it."""
    d = 0
    while isinstance(t, (c_ast.ArrayDecl, c_ast.PtrDecl)):
        d += 1
        t = t.type
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
        names = [w for w in t.type.names if w not in ("const", "volatile")]
        if len(names) == 1 and names[0] in vecs:
            return names[0], d
    return None


class _Rewrite:
    def __init__(self, ast, vecs):
        self.ast, self.vecs = ast, vecs
        self.scopes = canon.Scopes(canon.file_scope_decls(ast))
        self.orig: dict[int, tuple | None] = {}   # id(Decl) -> its vector info before the rewrite
        for d in canon.file_scope_decls(ast).values():
            self.note(d)

    def note(self, d):
        if isinstance(d, c_ast.Decl) and id(d) not in self.orig:
            self.orig[id(d)] = None if isinstance(d.type, c_ast.FuncDecl) else _vinfo(d.type, self.vecs)

    # ---- types --------------------------------------------------------------------------
    def retype(self, holder, attr="type"):
        """Replace the vector base of ``holder.<attr>``'s declared type by ``T [N]``."""
        parent, key, t = holder, attr, getattr(holder, attr)
        while isinstance(t, (c_ast.ArrayDecl, c_ast.PtrDecl, c_ast.FuncDecl)):
            if isinstance(t, c_ast.FuncDecl):
                if _vinfo(t.type, self.vecs) and _vinfo(t.type, self.vecs)[1] == 0:
                    raise _Refuse("XP-VECTYPES-003", "a function returning a vector", t)
                for p in (t.args.params if t.args is not None else []):
                    if isinstance(p, (c_ast.Decl, c_ast.Typename)):
                        v = _vinfo(p.type, self.vecs)
                        if v and v[1] == 0:
                            raise _Refuse("XP-VECTYPES-003", "a vector parameter (an array cannot be "
                                          "passed by value)", p)
                        self.retype(p)
            if isinstance(t, c_ast.ArrayDecl) and t.dim is not None:
                t.dim = self.expr(t.dim)
            parent, key, t = t, "type", t.type
        if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
            names = [w for w in t.type.names if w not in ("const", "volatile")]
            if len(names) == 1 and names[0] in self.vecs:
                elem, lanes = self.vecs[names[0]]
                quals = [w for w in t.type.names if w in ("const", "volatile")]
                inner = c_ast.TypeDecl(t.declname, list(t.quals or []), None,
                                       c_ast.IdentifierType(quals + list(elem)), coord=t.coord)
                setattr(parent, key, c_ast.ArrayDecl(inner, c_ast.Constant("int", str(lanes)), [],
                                                     coord=t.coord))
        elif isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.Struct):
            for m in t.type.decls or []:
                if isinstance(m, c_ast.Decl) and _vinfo(m.type, self.vecs):
                    raise _Refuse("XP-VECTYPES-003", f"a vector struct member {m.name!r}", m)

    # ---- typing -------------------------------------------------------------------------
    def vt(self, e):
        """(typedef, depth) of a vector-typed expression (before the rewrite), else None."""
        if isinstance(e, c_ast.ID):
            d = self.scopes.get(e.name)
            if isinstance(d, c_ast.Decl):
                self.note(d)
                return self.orig[id(d)]
            return None
        if isinstance(e, c_ast.ArrayRef):
            b = self.vt(e.name)
            return (b[0], b[1] - 1) if b and b[1] > 0 else None
        if isinstance(e, c_ast.UnaryOp):
            if e.op in ("sizeof", "_Alignof", "__alignof__"):
                return None
            b = self.vt(e.expr)
            if e.op == "*":
                return (b[0], b[1] - 1) if b and b[1] > 0 else None
            if e.op == "&":
                return (b[0], b[1] + 1) if b else None
            return b if b and b[1] == 0 else None
        if isinstance(e, c_ast.Cast):
            return _vinfo(e.to_type.type, self.vecs)
        if isinstance(e, c_ast.CompoundLiteral):
            return _vinfo(e.type.type, self.vecs)
        if isinstance(e, c_ast.BinaryOp):
            for x in (self.vt(e.left), self.vt(e.right)):
                if x and x[1] == 0:
                    return x
            return None
        if isinstance(e, c_ast.Assignment):
            return self.vt(e.lvalue)
        if isinstance(e, c_ast.TernaryOp):
            return self.vt(e.iftrue) or self.vt(e.iffalse)
        if isinstance(e, c_ast.ExprList) and e.exprs:
            return self.vt(e.exprs[-1])
        return None

    def is_vec(self, e) -> bool:
        v = self.vt(e)
        return bool(v and v[1] == 0)

    def via_pointer(self, e) -> bool:
        """Whether a vector lvalue may be reached through a pointer (not a named vector or an
        element of a named array of vectors)."""
        if isinstance(e, c_ast.ID):
            d = self.scopes.get(e.name)
            return not (isinstance(d, c_ast.Decl) and isinstance(d.type, (c_ast.TypeDecl, c_ast.ArrayDecl)))
        if isinstance(e, c_ast.ArrayRef):
            base = e
            while isinstance(base, c_ast.ArrayRef):
                base = base.name
            if isinstance(base, c_ast.ID):
                d = self.scopes.get(base.name)
                t = d.type if isinstance(d, c_ast.Decl) else None
                while isinstance(t, c_ast.ArrayDecl):
                    t = t.type
                return not isinstance(t, c_ast.TypeDecl)
        return True

    # ---- expressions (value context) ----------------------------------------------------
    def expr(self, e):
        """Rewrite an expression whose value is a scalar or pointer (a whole vector value may
        appear only as the base of a subscript, under ``&`` or ``sizeof``)."""
        if e is None:
            return None
        if self.is_vec(e):
            raise _Refuse("XP-VECTYPES-003", f"a whole vector {type(e).__name__} used as a value "
                          "(call argument, return value, conversion or vector operator)", e)
        if isinstance(e, c_ast.ArrayRef):
            e.name = self.place(e.name)
            e.subscript = self.expr(e.subscript)
            return e
        if isinstance(e, c_ast.UnaryOp):
            if e.op in ("sizeof", "_Alignof", "__alignof__"):
                if e.op != "sizeof" and (isinstance(e.expr, c_ast.Typename) or self.vt(e.expr)):
                    if isinstance(e.expr, c_ast.Typename) and not _vinfo(e.expr.type, self.vecs):
                        return e
                    raise _Refuse("XP-VECTYPES-003", "alignment of a vector", e)
                if isinstance(e.expr, c_ast.Typename):
                    self.retype(e.expr)
                else:
                    e.expr = self.place(e.expr)
                return e
            if e.op in ("&", "*"):
                e.expr = self.place(e.expr)
                return e
        if isinstance(e, c_ast.Cast):
            src = self.vt(e.expr)
            if src and src[1] == 0:
                raise _Refuse("XP-VECTYPES-003", "a conversion cast of a vector", e)
            self.retype(e.to_type)
            e.expr = self.expr(e.expr)
            return e
        if isinstance(e, c_ast.CompoundLiteral):
            self.retype(e.type)
            e.init = self.expr(e.init)
            return e
        if isinstance(e, c_ast.Typename):
            self.retype(e)
            return e
        return canon.map_children(e, self.expr)

    def place(self, e):
        """A vector object used in place (subscript base, ``&``, ``sizeof``): an lvalue atom."""
        if not self.is_vec(e):
            return self.expr(e)
        if isinstance(e, c_ast.ID):
            return e
        if isinstance(e, c_ast.ArrayRef):
            e.name, e.subscript = self.place(e.name), self.expr(e.subscript)
            return e
        if isinstance(e, c_ast.UnaryOp) and e.op == "*":
            e.expr = self.expr(e.expr)
            return e
        raise _Refuse("XP-VECTYPES-003", f"a vector {type(e).__name__} used in place", e)

    # ---- element-wise expansion ---------------------------------------------------------
    def lane(self, e, k, elem):
        if isinstance(e, c_ast.CompoundLiteral) and _vinfo(e.type.type, self.vecs):
            init = e.init
            if not isinstance(init, c_ast.InitList) or any(
                    isinstance(x, (c_ast.InitList, c_ast.NamedInitializer)) for x in init.exprs):
                raise _Refuse("XP-VECTYPES-003", "a nested or designated vector literal", e)
            if canon.has_side_effects(init):
                raise _Refuse("XP-VECTYPES-004", "a vector literal with side effects", e)
            x = init.exprs[k] if k < len(init.exprs) else c_ast.Constant("int", "0")
            return self._elem_cast(self.expr(copy.deepcopy(x)), elem)
        if self.is_vec(e):
            if isinstance(e, c_ast.BinaryOp):
                if e.op not in _ARITH:
                    raise _Refuse("XP-VECTYPES-003", f"vector operator {e.op!r}", e)
                return self._elem_cast(c_ast.BinaryOp(e.op, self.lane(e.left, k, elem),
                                                      self.lane(e.right, k, elem)), elem)
            if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+"):
                return self._elem_cast(c_ast.UnaryOp(e.op, self.lane(e.expr, k, elem)), elem)
            if isinstance(e, c_ast.Cast) and self.vt(e.expr) == self.vt(e):
                return self.lane(e.expr, k, elem)
            if canon.has_side_effects(e):
                raise _Refuse("XP-VECTYPES-004", "an element-wise operand with side effects", e)
            return self.leaf(e, k)
        if self.vt(e) is not None:
            raise _Refuse("XP-VECTYPES-003", "a vector pointer in an element-wise expression", e)
        if canon.has_side_effects(e):
            raise _Refuse("XP-VECTYPES-004", "a scalar operand with side effects in an element-wise "
                          "expression (it would be evaluated once per lane)", e)
        return self._elem_cast(self.expr(copy.deepcopy(e)), elem)

    def leaf(self, e, k):
        """Lane ``k`` of a vector object (a copy of ``e``)."""
        return c_ast.ArrayRef(self.place(copy.deepcopy(e)), c_ast.Constant("int", str(k)))

    @staticmethod
    def _elem_cast(x, elem):
        return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
            None, [], None, c_ast.IdentifierType(list(elem)))), x)

    def _atoms(self, e):
        if isinstance(e, c_ast.BinaryOp):
            return self._atoms(e.left) + self._atoms(e.right)
        if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+"):
            return self._atoms(e.expr)
        if isinstance(e, c_ast.Cast) and self.is_vec(e) and self.vt(e.expr) == self.vt(e):
            return self._atoms(e.expr)
        return [e] if self.is_vec(e) and not isinstance(e, c_ast.CompoundLiteral) else []

    def expand(self, lv, op, rv, node):
        """``lv op rv`` (a vector target) as one statement per lane."""
        tname, _ = self.vt(lv)
        elem, lanes = self.vecs[tname]
        if canon.has_side_effects(lv):
            raise _Refuse("XP-VECTYPES-004", "an element-wise target with side effects", node)
        if op != "=":
            if op[:-1] not in _ARITH:
                raise _Refuse("XP-VECTYPES-003", f"vector operator {op!r}", node)
            rv = c_ast.BinaryOp(op[:-1], copy.deepcopy(lv), rv)
        if self.via_pointer(lv) and any(self.via_pointer(a) and not _same(a, lv) for a in self._atoms(rv)):
            raise _Refuse("XP-VECTYPES-005", "an element-wise target and operand both reached "
                          "through pointers (they could overlap partially)", node)
        lanes_rv = [self.lane(rv, k, elem) for k in range(lanes)]
        return [c_ast.Assignment("=", self.leaf(lv, k), x, coord=node.coord) for k, x in enumerate(lanes_rv)]

    # ---- statements ---------------------------------------------------------------------
    def items(self, stmt) -> list:
        if isinstance(stmt, c_ast.Assignment) and self.is_vec(stmt.lvalue):
            return self.expand(stmt.lvalue, stmt.op, stmt.rvalue, stmt)
        if isinstance(stmt, c_ast.Decl):
            return [self.decl(stmt)]
        if isinstance(stmt, c_ast.DeclList):
            stmt.decls = [self.decl(d) for d in stmt.decls]
            return [stmt]
        if isinstance(stmt, c_ast.Typedef):
            if _vinfo(stmt.type, self.vecs):
                raise _Refuse("XP-VECTYPES-003", f"a typedef {stmt.name!r} of a vector type", stmt)
            self.retype(stmt)
            return [stmt]
        return [self.stmt(stmt)]

    def decl(self, d):
        self.note(d)
        v = self.orig[id(d)]
        init = d.init
        if init is not None and v and v[1] == 0:
            elem, lanes = self.vecs[v[0]]
            if isinstance(init, c_ast.CompoundLiteral) and _vinfo(init.type.type, self.vecs) == v:
                init = init.init
            if isinstance(init, c_ast.InitList):
                if len(init.exprs) > lanes or any(
                        isinstance(x, (c_ast.InitList, c_ast.NamedInitializer)) for x in init.exprs):
                    raise _Refuse("XP-VECTYPES-003", "a nested, designated or oversized vector "
                                  "initialiser", d)
                d.init = c_ast.InitList([self.expr(x) for x in init.exprs], init.coord)
            else:
                d.init = c_ast.InitList([self.lane(init, k, elem) for k in range(lanes)], init.coord)
        elif init is not None:
            if v and isinstance(init, c_ast.InitList):
                raise _Refuse("XP-VECTYPES-003", "an initialiser of a vector array", d)
            d.init = self.expr(init)
        self.retype(d)
        self.scopes.add(d)
        return d

    def block(self, items):
        self.scopes.push()
        out = []
        for s in items or []:
            out.extend(self.items(s))
        self.scopes.pop()
        return out

    def body(self, s):
        if s is None:
            return None
        if isinstance(s, c_ast.Compound):
            return self.stmt(s)
        self.scopes.push()
        got = self.items(s)
        self.scopes.pop()
        return got[0] if len(got) == 1 else c_ast.Compound(got, s.coord)

    def stmt(self, s):
        if isinstance(s, c_ast.Compound):
            s.block_items = self.block(s.block_items)
            return s
        if isinstance(s, c_ast.For):
            self.scopes.push()
            if isinstance(s.init, c_ast.DeclList):
                s.init.decls = [self.decl(d) for d in s.init.decls]
            else:
                s.init = self.expr(s.init)
            s.cond, s.next = self.expr(s.cond), self.expr(s.next)
            s.stmt = self.body(s.stmt)
            self.scopes.pop()
            return s
        if isinstance(s, c_ast.If):
            s.cond = self.expr(s.cond)
            s.iftrue, s.iffalse = self.body(s.iftrue), self.body(s.iffalse)
            return s
        if isinstance(s, (c_ast.While, c_ast.DoWhile)):
            s.cond = self.expr(s.cond)
            s.stmt = self.body(s.stmt)
            return s
        if isinstance(s, c_ast.Label):
            s.stmt = self.body(s.stmt)
            return s
        if isinstance(s, (c_ast.Case, c_ast.Default)):
            s.stmts = self.block(s.stmts)
            return s
        if isinstance(s, c_ast.Switch):
            s.cond = self.expr(s.cond)
            s.stmt = self.body(s.stmt)
            return s
        if isinstance(s, c_ast.Return):
            s.expr = self.expr(s.expr)
            return s
        if isinstance(s, (c_ast.Pragma, c_ast.Break, c_ast.Continue, c_ast.Goto, c_ast.EmptyStatement)):
            return s
        return self.expr(s)

    # ---- file ---------------------------------------------------------------------------
    def run(self):
        ext = []
        for e in self.ast.ext:
            if isinstance(e, c_ast.Typedef) and e.name in self.vecs:
                continue                # every use now spells the element array
            if isinstance(e, c_ast.FuncDef):
                params = e.decl.type.args.params if e.decl.type.args is not None else []
                for p in params:
                    self.note(p)
                self.retype(e.decl)
                self.scopes.push()
                for p in params:
                    if isinstance(p, c_ast.Decl):
                        self.scopes.add(p)
                e.body = self.stmt(e.body)
                self.scopes.pop()
            elif isinstance(e, c_ast.Decl):
                if isinstance(e.type, c_ast.FuncDecl):
                    self.retype(e)
                else:
                    self.decl(e)
            elif isinstance(e, c_ast.Typedef):
                if _vinfo(e.type, self.vecs):
                    raise _Refuse("XP-VECTYPES-003", f"a typedef {e.name!r} of a vector type", e)
                self.retype(e)
            ext.append(e)
        self.ast.ext = ext
        left = [n for n in canon.walk(self.ast) if isinstance(n, c_ast.IdentifierType)
                and any(w in self.vecs for w in n.names)]
        if left:
            raise _Refuse("XP-VECTYPES-003", "a vector type in a position the pass does not "
                          "rewrite", left[0])


def _same(a, b) -> bool:
    from pycparser import c_generator

    g = c_generator.CGenerator()
    return g.visit(a) == g.visit(b)


def _rewrite(ast):
    vecs = vector_typedefs(ast)
    if not vecs:
        raise _Refuse("XP-VECTYPES-001", "the file declares no vector typedef")
    _Rewrite(ast, vecs).run()


@register(PassInfo(
    name=NAME,
    summary="GNU/clang vector typedefs -> arrays of the element type (nvcc device code)",
    requires=("a file-scope vector typedef (XP-VECTYPES-001)",
              "vector typedefs of a known element type and a power-of-two lane count, no vector "
              "attribute elsewhere (XP-VECTYPES-002)",
              "vector values used only through elements, &, sizeof, brace initialisers and "
              "whole-vector statements of + - * / (XP-VECTYPES-003); side-effect-free lane "
              "operands (XP-VECTYPES-004); no target and operand both through pointers "
              "(XP-VECTYPES-005)"),
    guarantees=("same outputs on the virtual device", "no vector_size / ext_vector_type type left"),
))
def vector_types(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@vector_types.legality
def _legal(program):
    """The rewrite, run on a copy of the AST: the plan the rewrite emits."""
    ast = copy.deepcopy(program.ast)
    try:
        _rewrite(ast)
    except _Refuse as r:
        return [canon.diag(program, NAME, r.code, r.message, r.node)]
    return canon.Rewritten(ast)


# ------------------------------------------------------------------ CUDA/HIP vector structs
class _StructLanes(_Rewrite):
    """The same lane expansion for the CUDA/HIP vector structs (``float2``: members x, y): HIP
    defines ``+ - * /`` on them element-wise (a scalar operand converted to the element type
    first, ``amd_hip_vector_types.h``), plain C and CUDA do not. Whole-vector statements and
    initialisers become one statement per member; every other use of a vector struct (copies,
    members, calls) is left as it is."""

    def __init__(self, ast, vecs):
        super().__init__(ast, vecs)
        self.changed = False

    def retype(self, holder, attr="type"):
        return None                  # the struct types stay

    def vt(self, e):
        if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID):
            name = e.name.name
            if name.startswith("make_") and name[5:] in self.vecs:
                return name[5:], 0
            d = self.scopes.get(name)
            if isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.FuncDecl):
                return _vinfo(d.type.type, self.vecs)
            return None
        if isinstance(e, c_ast.StructRef):
            return None              # a member: x, y, z, w are scalars
        return super().vt(e)

    def arith(self, e) -> bool:
        """Whether ``e`` is element-wise vector arithmetic (what needs the expansion)."""
        if isinstance(e, c_ast.BinaryOp):
            return e.op in _ARITH and self.is_vec(e)
        if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+"):
            return self.is_vec(e)
        if isinstance(e, c_ast.Cast):
            return self.arith(e.expr)
        return False

    def expr(self, e):
        if e is None:
            return None
        if isinstance(e, c_ast.BinaryOp) and self.is_vec(e):
            raise _Refuse("XP-VECTYPES-003", f"vector operator {e.op!r} outside a whole-vector "
                          "statement or initialiser", e)
        if isinstance(e, c_ast.UnaryOp) and e.op in ("-", "+") and self.is_vec(e):
            raise _Refuse("XP-VECTYPES-003", f"vector operator {e.op!r} outside a whole-vector "
                          "statement or initialiser", e)
        return canon.map_children(e, self.expr)

    def place(self, e):
        return self.expr(e)

    def leaf(self, e, k):
        return c_ast.StructRef(copy.deepcopy(e), ".", c_ast.ID(COMPONENTS[k]))

    def lane(self, e, k, elem):
        if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID) and e.name.name.startswith("make_") \
                and e.name.name[5:] in self.vecs:
            args = e.args.exprs if e.args is not None else []
            if len(args) != self.vecs[e.name.name[5:]][1]:
                raise _Refuse("XP-VECTYPES-003", f"{e.name.name} with {len(args)} arguments", e)
            if canon.has_side_effects(e.args):
                raise _Refuse("XP-VECTYPES-004", "a vector constructor with side effects", e)
            return self._elem_cast(self.expr(copy.deepcopy(args[k])), elem)
        return super().lane(e, k, elem)

    def items(self, stmt) -> list:
        if isinstance(stmt, c_ast.Assignment) and self.is_vec(stmt.lvalue) and (
                stmt.op != "=" or self.arith(stmt.rvalue)):
            self.changed = True
            return self.expand(stmt.lvalue, stmt.op, stmt.rvalue, stmt)
        if isinstance(stmt, c_ast.Typedef):
            return [stmt]
        return super().items(stmt)

    def decl(self, d):
        self.note(d)
        v = self.orig[id(d)]
        if d.init is not None and v and v[1] == 0 and self.arith(d.init):
            elem, lanes = self.vecs[v[0]]
            d.init = c_ast.InitList([self.lane(d.init, k, elem) for k in range(lanes)], d.init.coord)
            self.changed = True
        elif d.init is not None:
            d.init = self.expr(d.init)
        self.scopes.add(d)
        return d

    def run(self):
        for e in self.ast.ext:
            if isinstance(e, c_ast.FuncDef):
                params = e.decl.type.args.params if e.decl.type.args is not None else []
                self.scopes.push()
                for p in params:
                    if isinstance(p, c_ast.Decl):
                        self.note(p)
                        self.scopes.add(p)
                e.body = self.stmt(e.body)
                self.scopes.pop()


def expand_struct_arithmetic(ast) -> tuple[bool, tuple | None]:
    """The lane expansion of ``_StructLanes`` on ``ast`` (in place): (whether anything was
    expanded, the refusal ``(code, message, node)`` or None). The pass lives in the lift stage
    (``passes/lift/vector_struct_ops.py``): it runs on the HIP source, before ``loop_recovery``."""
    rewrite = _StructLanes(ast, {name: (elem.split(), k) for name, (elem, k, _a) in VECTOR_TYPES.items()})
    try:
        rewrite.run()
    except _Refuse as r:
        return rewrite.changed, (r.code, r.message, r.node)
    return rewrite.changed, None
