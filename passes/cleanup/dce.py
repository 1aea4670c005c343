"""dce: remove dead locals and the statements that only compute them.

Summary
    In the entry function: ``(void) x;`` statements (``(void) E;`` for any ``E`` free of side
    effects) are dropped; then, repeatedly, a local
    (declared in the entry, not ``static``, never address-taken) that is never read - it only
    appears as the root of the left side of plain ``=`` assignments, as the array a ``memset``
    fills and in its own declaration - is removed together with its declaration and those
    assignments (when their right sides and subscripts have no side effects); loops, ``if``s and blocks left empty (with side-effect free
    headers) are removed too. Names are compared as strings over the whole entry, so a name
    declared twice is dead only when no instance is read. What remains is what the outputs
    depend on, which keeps host-side lane temporaries (``const xp_m512 one``) from becoming
    device work.
Requires
    1. The program has an entry function definition (XP-DCE-001).
    2. There is something to remove: a ``(void) x;`` statement or a dead local (XP-DCE-002).
Guarantees
    Same outputs on the virtual device; no statement with a side effect on memory other than a
    dead local is removed.
Options
    none.
Example
    ``float one[16]; for (int j = 0; j < 16; ++j) one[j] = 1.0f; (void) one;``  ->  (nothing)
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "dce"


def _member_type(t, field: str, typedefs):
    """Declared type of member ``field`` of the struct type ``t``, or None."""
    if not isinstance(t, c_ast.TypeDecl):
        return None
    st = t.type
    if isinstance(st, c_ast.IdentifierType) and len(st.names) == 1 and st.names[0] in typedefs:
        inner = typedefs[st.names[0]].type
        st = inner.type if isinstance(inner, c_ast.TypeDecl) else None
    if not isinstance(st, c_ast.Struct) or not st.decls:
        return None
    m = next((d for d in st.decls if d.name == field), None)
    return m.type if m is not None else None


def _stays_local(e, decls, typedefs) -> bool:
    """True when the lvalue ``e`` (ID / ArrayRef / '.'-StructRef chain) names storage of its
    root local itself, not memory reached through a pointer the local holds (``p[i]`` with
    ``float *p``, ``a[0][i]`` with ``float *a[2]``, ``s.p[i]`` with a pointer member)."""
    path = []
    while not isinstance(e, c_ast.ID):
        if isinstance(e, c_ast.ArrayRef):
            path.append("[]")
            e = e.name
        elif isinstance(e, c_ast.StructRef) and e.type == ".":
            path.append(e.field.name)
            e = e.name
        else:
            return False
    if not path:
        return True
    if e.name not in decls:
        return False
    for d in decls[e.name]:
        t = d.type
        for step in reversed(path):
            if step == "[]":
                if not isinstance(t, c_ast.ArrayDecl):
                    return False
                t = t.type
            else:
                t = _member_type(t, step, typedefs)
                if t is None:
                    return False
    return True


def _declarations(fdef) -> dict[str, list]:
    """Every declaration in the function body, by name (a name may be declared twice)."""
    decls: dict[str, list] = {}
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Decl) and n.name:
            decls.setdefault(n.name, []).append(n)
    return decls


def _reads(fdef, typedefs=None) -> tuple[set[str], set[str], set[str]]:
    """(names read, names declared as removable locals, names address-taken). A store through
    a pointer a local holds (``p[i] = v``) reads that local: it wrote memory p points to."""
    reads, declared, addressed = set(), set(), set()
    typedefs = typedefs or {}
    decls = _declarations(fdef)

    def lv(e):                       # an lvalue of '=': its root is written, subscripts read
        root = canon.lvalue_root(e)
        if root is not None and not _stays_local(e, decls, typedefs):
            reads.add(root)
        while True:
            if isinstance(e, c_ast.ArrayRef):
                go(e.subscript)
                e = e.name
            elif isinstance(e, c_ast.StructRef) and e.type == ".":
                e = e.name
            elif isinstance(e, c_ast.ID):
                return
            else:
                go(e)
                return

    def go(n):
        if n is None:
            return
        if _memset_array(n, decls) is not None:          # fills the local array: a write, its operands are read
            for a in n.args.exprs[1:]:
                go(a)
            return
        if isinstance(n, c_ast.Decl):
            if n.name and "static" not in (n.storage or []) and "extern" not in (n.storage or []):
                declared.add(n.name)
            if n.init is not None:
                go(n.init)
            t = n.type
            while isinstance(t, c_ast.ArrayDecl):
                go(t.dim)
                t = t.type
            return
        if isinstance(n, c_ast.Assignment) and n.op == "=":
            lv(n.lvalue)
            go(n.rvalue)
            return
        if isinstance(n, c_ast.UnaryOp) and n.op == "&":
            r = canon.lvalue_root(n.expr)
            if r:
                addressed.add(r)
        if isinstance(n, c_ast.ID):
            reads.add(n.name)
            return
        if isinstance(n, c_ast.StructRef):
            go(n.name)
            return
        for _, c in n.children():
            go(c)

    go(fdef.body)
    return reads, declared, addressed


def _memset_array(n, decls) -> str | None:
    """The local array a ``memset(a, v, n)`` call fills (every declaration of the name an
    array: memory it owns, not memory a pointer reaches), else None."""
    if not (isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and
            n.name.name == "memset" and n.args is not None and len(n.args.exprs) == 3):
        return None
    a = n.args.exprs[0]
    while isinstance(a, c_ast.Cast):
        a = a.expr
    if not isinstance(a, c_ast.ID) or not decls.get(a.name) or \
            not all(isinstance(d.type, c_ast.ArrayDecl) for d in decls[a.name]):
        return None
    return a.name


def _is_void_use(s) -> bool:
    """``(void) E;`` with ``E`` free of side effects: a name kept "used", or what an inlined
    no-op left (``_mm_prefetch(p, hint)`` -> ``(void) ((void *) p); (void) 3;``)."""
    return isinstance(s, c_ast.Cast) and not canon.has_side_effects(s.expr) and \
        canon.type_words(s.to_type.type) == ["void"] and not isinstance(s.to_type.type, c_ast.PtrDecl)


class _Sweep:
    def __init__(self, dead: set[str], decls: dict):
        self.dead = dead
        self.decls = decls
        self.removed = 0

    def items(self, items):
        out = []
        for s in items:
            r = self.stmt(s)
            if r is not None:
                out.append(r)
        # a pragma left without its loop
        out = [s for k, s in enumerate(out) if not (isinstance(s, c_ast.Pragma) and (
            k + 1 >= len(out) or isinstance(out[k + 1], c_ast.Pragma)))
            or not s.string.strip().startswith("omp")]
        return out

    def stmt(self, s):
        if _is_void_use(s):
            self.removed += 1
            return None
        if isinstance(s, c_ast.Decl) and s.name in self.dead and \
                (s.init is None or not canon.has_side_effects(s.init)):
            self.removed += 1
            return None
        if isinstance(s, c_ast.Assignment) and s.op == "=" and canon.lvalue_root(s.lvalue) in self.dead \
                and not canon.has_side_effects(s.rvalue) and not canon.has_side_effects(s.lvalue):
            self.removed += 1
            return None
        if _memset_array(s, self.decls) in self.dead and \
                not any(canon.has_side_effects(a) for a in s.args.exprs[1:]):
            self.removed += 1
            return None
        if isinstance(s, c_ast.Compound):
            s.block_items = self.items(list(s.block_items or []))
            if not s.block_items:
                return None
            return s
        if isinstance(s, c_ast.For):
            body = self.stmt(s.stmt)
            if body is None and self._pure_header(s):
                self.removed += 1
                return None
            s.stmt = body if body is not None else c_ast.Compound([])
            return s
        if isinstance(s, c_ast.If):
            t = self.stmt(s.iftrue)
            f = self.stmt(s.iffalse) if s.iffalse is not None else None
            if t is None and f is None and not canon.has_side_effects(s.cond):
                self.removed += 1
                return None
            if t is None:            # if (c) {} else S  ->  if (!(c)) S
                return c_ast.If(c_ast.UnaryOp("!", s.cond), f, None, s.coord)
            s.iftrue = t
            s.iffalse = f
            return s
        if isinstance(s, (c_ast.While, c_ast.DoWhile)):
            body = self.stmt(s.stmt)
            s.stmt = body if body is not None else c_ast.Compound([])
            return s
        return s

    @staticmethod
    def _pure_header(s: c_ast.For) -> bool:
        if not isinstance(s.init, c_ast.DeclList) or len(s.init.decls) != 1:
            return False
        d = s.init.decls[0]
        var = d.name
        if d.init is not None and canon.has_side_effects(d.init):
            return False
        if s.cond is None or canon.has_side_effects(s.cond):
            return False
        nxt = s.next
        ok_next = (isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++", "--", "p--") and
                   isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == var) or \
            (isinstance(nxt, c_ast.Assignment) and nxt.op in ("+=", "-=") and
             isinstance(nxt.lvalue, c_ast.ID) and nxt.lvalue.name == var and
             isinstance(nxt.rvalue, c_ast.Constant) and nxt.rvalue.value not in ("0",))
        return ok_next


def _dead(fdef, typedefs=None) -> set[str]:
    reads, declared, addressed = _reads(fdef, typedefs)
    return declared - reads - addressed


def _run(fdef, typedefs=None) -> int:
    total = 0
    for _ in range(64):
        sweep = _Sweep(_dead(fdef, typedefs), _declarations(fdef))
        fdef.body.block_items = sweep.items(list(fdef.body.block_items or []))
        total += sweep.removed
        if not sweep.removed:
            break
    return total


@register(PassInfo(
    name=NAME,
    summary="remove (void) x; statements, dead locals and the statements that only compute them",
    requires=("an entry function definition (XP-DCE-001)",
              "a (void) x; statement or a local that is never read (XP-DCE-002)"),
    guarantees=("same outputs on the virtual device", "no memory effect other than on dead locals removed"),
))
def dce(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@dce.legality
def _legal(program):
    """The removal, run on a copy of the AST: the plan the rewrite emits."""
    if program.entry is None or canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-DCE-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    if not _run(canon.entry_def(ast, program.entry.name), canon.typedef_map(ast)):
        return [canon.diag(program, NAME, "XP-DCE-002", "nothing to remove: no (void) x; "
                           "statement and every local is read")]
    return canon.Rewritten(ast)
