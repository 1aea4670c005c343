"""sroa: lane-array structs in the entry -> plain local arrays (scalar replacement of aggregates).

Summary
    A *lane struct* is a file-scope ``typedef struct { T v[N]; } name;`` with exactly one
    member, an array of a scalar type with a constant length (the ``xp_m512`` & co. that
    ``detensorize_vnni`` introduces). Each local of such a type declared in the entry becomes
    the array ``T s[N]``: ``s.v`` becomes ``s``, ``&s`` passed to ``memcpy``/``memmove``/
    ``memset`` becomes ``s``, the copy ``s = t;`` and the initialiser ``T s = t;`` become
    ``memcpy(s, t, sizeof(s));`` (``passes/cleanup/memops.py`` turns those into element loops).
    ``sizeof(s)`` keeps its value (one array member: no padding). The affine analysis then sees
    the lanes as a local array it can privatise and index. A name declared several times (one
    helper inlined into each branch of an ``if``) is converted when all its declarations are
    non-static locals of one lane type (each becomes the same array type).
Requires
    1. The program has an entry function definition (XP-SROA-001).
    2. At least one entry local of a lane-struct type whose every use is one of the forms above
       and whose copies involve only other such locals of the same type (XP-SROA-002: no
       lane-struct local, nothing to do; XP-SROA-003: each is used as a whole). Other
       lane-struct locals are left as they are.
Guarantees
    Same outputs on the virtual device; struct layout facts used: a one-member struct has the
    member's size.
Options
    none.
Example
    ``xp_m512 r; memcpy(&r, dst, sizeof(r)); v = r;``  ->
    ``float r[16]; memcpy(r, dst, sizeof(r)); memcpy(v, r, sizeof(v));``
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "sroa"
MEMFUNCS = ("memcpy", "memmove", "memset")


def lane_structs(ast) -> dict[str, tuple[c_ast.Node, str, object]]:
    """typedef name -> (element TypeDecl, member name, dimension node)."""
    out = {}
    for e in ast.ext:
        if not isinstance(e, c_ast.Typedef) or not isinstance(e.type, c_ast.TypeDecl):
            continue
        st = e.type.type
        if not isinstance(st, c_ast.Struct) or not st.decls or len(st.decls) != 1:
            continue
        m = st.decls[0]
        if not isinstance(m.type, c_ast.ArrayDecl) or not isinstance(m.type.type, c_ast.TypeDecl) \
                or not isinstance(m.type.type.type, c_ast.IdentifierType):
            continue
        dim = m.type.dim
        if not (isinstance(dim, c_ast.Constant) and dim.type == "int"):
            continue
        out[e.name] = (m.type.type, m.name, dim)
    return out


def _lane_type(decl, lanes) -> str | None:
    t = decl.type
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and \
            len(t.type.names) == 1 and t.type.names[0] in lanes:
        return t.type.names[0]
    return None


class _Uses:
    """Classify each use of the candidate locals; drop candidates with other uses."""

    def __init__(self, cands: dict, lanes):
        self.cands = cands                      # name -> (Decl, type)
        self.lanes = lanes
        self.bad: dict[str, c_ast.Node] = {}
        self.pairs: list[tuple[str, str]] = []
        self.decl_names = {}

    def run(self, fdef):
        self._walk(fdef.body, None)

    def _cand(self, e) -> str | None:
        return e.name if isinstance(e, c_ast.ID) and e.name in self.cands else None

    def _walk(self, n, parent):
        if isinstance(n, c_ast.Decl):
            if n.name in self.cands and all(d is not n for d in self.cands[n.name][0]):
                self.bad[n.name] = n                   # another declaration: leave alone
            if n.init is not None:
                src = self._cand(n.init)
                if src and n.name in self.cands:
                    self.pairs.append((n.name, src))
                    return
                if n.name in self.cands:
                    self.bad[n.name] = n
                self._walk(n.init, n)
            return
        if isinstance(n, c_ast.StructRef):
            name = self._cand(n.name)
            if name:
                member = self.lanes[self.cands[name][1]][1]
                if n.type != "." or n.field.name != member:
                    self.bad[name] = n
                return
            self._walk(n.name, n)
            return
        if isinstance(n, c_ast.Assignment) and n.op == "=":
            a, b = self._cand(n.lvalue), self._cand(n.rvalue)
            if a or b:
                if a and b and isinstance(parent, c_ast.Compound):
                    self.pairs.append((a, b))
                else:
                    for x in (a, b):
                        if x:
                            self.bad[x] = n
                    self._walk(n.rvalue if a else n.lvalue, n)
                return
        if isinstance(n, c_ast.FuncCall) and canon.call_name(n) in MEMFUNCS and n.args is not None:
            for a in n.args.exprs:
                if isinstance(a, c_ast.UnaryOp) and a.op == "&" and self._cand(a.expr):
                    continue
                self._walk(a, n.args)
            return
        if isinstance(n, c_ast.UnaryOp) and n.op == "sizeof":
            return
        if isinstance(n, c_ast.Cast) and self._cand(n.expr) and \
                canon.type_words(n.to_type.type) == ["void"] and not isinstance(n.to_type.type, c_ast.PtrDecl):
            return                                      # (void) s;
        name = self._cand(n)
        if name:
            self.bad[name] = n
            return
        for _, c in n.children():
            self._walk(c, n)

    def settle(self) -> set[str]:
        ok = set(self.cands) - set(self.bad)
        changed = True
        while changed:
            changed = False
            for a, b in self.pairs:
                if (a in ok) != (b in ok) or self.cands[a][1] != self.cands[b][1]:
                    for x in (a, b):
                        if x in ok:
                            ok.discard(x)
                            changed = True
        return ok


def _candidates(fdef, lanes, outer: set) -> dict:
    """name -> (its declarations, lane type). A name declared more than once (the same
    helper inlined into both branches of an ``if``: ``a_vec__i1`` in each) is a candidate when
    every declaration of it is a non-static local of one lane type: the rewrite then turns
    each declaration into the same array type and each use into the same form, whichever
    declaration it refers to. Names of parameters and file-scope declarations (``outer``) are
    left alone: a use could refer to them."""
    decls: dict[str, list] = {}
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Decl) and n.name:
            decls.setdefault(n.name, []).append(n)
    cands = {}
    for name, ds in decls.items():
        types = {_lane_type(d, lanes) for d in ds}
        if name in outer or len(types) != 1 or None in types or \
                any("static" in (d.storage or []) for d in ds):
            continue
        cands[name] = (ds, types.pop())
    return cands


def _outer_names(ast, fdef) -> set[str]:
    """Names a use in the entry's body could refer to besides its own locals."""
    out = {e.name for e in ast.ext if isinstance(e, (c_ast.Decl, c_ast.Typedef)) and e.name}
    out |= {e.decl.name for e in ast.ext if isinstance(e, c_ast.FuncDef)}
    args = fdef.decl.type.args if isinstance(fdef.decl.type, c_ast.FuncDecl) else None
    for prm in (args.params if args is not None else []) or []:
        if getattr(prm, "name", None):
            out.add(prm.name)
    return out


def _plan(program, ast):
    """The locals to split, found in ``ast`` (a copy of the program's, which the rewrite then
    changes): ``(plan, None)`` or ``(None, (code, message, node))``."""
    fdef = canon.entry_def(ast, program.entry.name) if program.entry else None
    if fdef is None:
        return None, ("XP-SROA-001", "no entry function definition", None)
    lanes = lane_structs(ast)
    cands = _candidates(fdef, lanes, _outer_names(ast, fdef))
    if not cands:
        return None, ("XP-SROA-002", "the entry declares no local of a lane-struct type", None)
    uses = _Uses(cands, lanes)
    uses.run(fdef)
    ok = uses.settle()
    if not ok:      # lane-struct locals, each used as a whole somewhere
        name, node = next(iter(uses.bad.items()), (next(iter(cands)), None))
        return None, ("XP-SROA-003", f"lane-struct local '{name}' is used as a whole value "
                      "(not only through its lanes, copies and mem* calls)", node)
    return canon.Rewritten(ast, (fdef, ok, cands, lanes)), None


class _Rewrite:
    def __init__(self, ok: set, cands: dict, lanes):
        self.ok, self.cands, self.lanes = ok, cands, lanes

    def _is(self, e) -> bool:
        return isinstance(e, c_ast.ID) and e.name in self.ok

    def items(self, items: list) -> list:
        out = []
        for s in items:
            out += self.stmt(s)
        return out

    def stmt(self, s) -> list:
        if isinstance(s, c_ast.Decl) and s.name in self.ok:
            init = s.init
            d = self._array_decl(s)
            out = [d]
            if init is not None:
                out.append(_memcpy(s.name, init.name))
            return out
        if isinstance(s, c_ast.Assignment) and s.op == "=" and self._is(s.lvalue) and self._is(s.rvalue):
            return [_memcpy(s.lvalue.name, s.rvalue.name)]
        return [self.node(s)]

    def _array_decl(self, s):
        elem, _member, dim = self.lanes[_lane_type(s, self.lanes)]
        t = copy.deepcopy(elem)
        t.declname = s.name
        t.quals = []
        arr = c_ast.ArrayDecl(t, copy.deepcopy(dim), [])
        return c_ast.Decl(s.name, [], s.align, [q for q in s.storage if q != "static"] if s.storage else [],
                          [], arr, None, None, coord=s.coord)

    def node(self, n):
        if isinstance(n, c_ast.Compound):
            n.block_items = self.items(list(n.block_items or []))
            return n
        if isinstance(n, c_ast.StructRef) and self._is(n.name):
            return c_ast.ID(n.name.name)
        if isinstance(n, c_ast.UnaryOp) and n.op == "&" and self._is(n.expr):
            return c_ast.ID(n.expr.name)
        for attr in n.__slots__:
            if attr in ("coord", "__weakref__"):
                continue
            v = getattr(n, attr, None)
            if isinstance(v, c_ast.Compound) or (isinstance(v, c_ast.Node) and attr in ("stmt", "iftrue", "iffalse")):
                if isinstance(v, c_ast.Compound):
                    setattr(n, attr, self.node(v))
                else:
                    items = self.stmt(v)
                    setattr(n, attr, items[0] if len(items) == 1 else c_ast.Compound(items))
            elif isinstance(v, c_ast.Node):
                setattr(n, attr, self.node(v))
            elif isinstance(v, list):
                setattr(n, attr, [self.node(x) if isinstance(x, c_ast.Node) else x for x in v])
        return n


def _memcpy(dst: str, src: str):
    return c_ast.FuncCall(c_ast.ID("memcpy"), c_ast.ExprList([
        c_ast.ID(dst), c_ast.ID(src), c_ast.UnaryOp("sizeof", c_ast.ID(dst))]))


@register(PassInfo(
    name=NAME,
    summary="lane-array struct locals (typedef struct { T v[N]; }) -> local arrays T s[N]",
    requires=("an entry function definition (XP-SROA-001)",
              "a lane-struct local used only through its lanes, whole copies between such "
              "locals, &s in mem* calls, sizeof and (void) (XP-SROA-002 none, XP-SROA-003 "
              "each used as a whole)"),
    guarantees=("same outputs on the virtual device", "converted locals are plain arrays"),
    introduces=("memcpy(dst, src, sizeof(dst)) for whole copies",),
))
def sroa(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    fdef, ok, cands, lanes = plan.data
    _Rewrite(ok, cands, lanes).node(fdef.body)
    return canon.reparse(program, plan.ast)


@sroa.legality
def _legal(program):
    plan, err = _plan(program, copy.deepcopy(program.ast))
    if plan is None:
        return [canon.diag(program, NAME, err[0], err[1], err[2])]
    return plan
