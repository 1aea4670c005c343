"""scalarize_structs: small struct locals of the entry -> one scalar local per (nested) field.

Summary
    A *record type* is a file-scope ``typedef struct { T1 a; T2 b; ... } name;`` whose members
    are scalars (arithmetic, enum, vector or pointer types, typedef names of those, or names the
    program does not define) or other record types (nested) - no arrays, unions, bit-fields,
    or structs that are not record types themselves. The ``dim3`` the GPU lift
    (``loop_recovery``) keeps for grid and block sizes is one, and so is a launch-parameter
    struct holding two ``dim3`` s, a size and a stream. A record type's *leaves* are its scalar
    members, those of nested records flattened recursively (``s.a.x`` is the leaf ``a.x``).

    The pass splits entry locals of a record type: ``name s`` and one-element arrays
    ``name s[1]`` (the C++ constructor lowering builds its object in one: ``T this_[1];
    this_->f = v; ... return this_[0];``). An *access* is ``s``, ``s.f``, ``s.a.x`` ... and,
    for an array, ``s[0]``, ``s->f``, ``s[0].f``, ``s->a.x`` ... . A local is split when each
    of its uses is an access that reaches a leaf (used as any scalar), or an access that
    reaches a record (the whole local or a record-typed field) in a whole copy: the statement
    ``A = B;`` or the initialiser ``name t = B;`` where ``A`` and ``B`` are accesses of the same
    record type, or an initialiser list (nested lists for record members, or accesses of the
    member's record type). Every local on either side of a copy must be split too. Each leaf
    becomes a scalar local ``T s__a__x``, an access to a leaf its name, and a copy one
    assignment (or initialiser) per leaf. The result is plain scalar code that ``const_prop``
    can fold into loop bounds and ``dce`` can remove (a leaf only written, such as a stream
    handle nothing reads, then disappears). Other struct locals are left as they are.
Requires
    1. The program has an entry function definition (XP-SCALARIZE-001).
    2. At least one entry local of a record type (or a one-element array of one) whose uses are
       all of the forms above, copies included (XP-SCALARIZE-002: no local of a record type,
       nothing to do; XP-SCALARIZE-003: such locals, each used otherwise - its address taken,
       passed or returned whole, copied from or to something that is not split, an element
       other than ``[0]``).
Guarantees
    Same outputs on the virtual device: leaf values are carried one by one, and a record
    local whose address (or that of a record-typed part of it) is never taken has no
    layout-dependent behaviour. A pointer leaf is copied as the pointer it is.
Options
    none.
Example
    ``dim3 g; g.x = n; g.y = 1; for (i = 0; i < g.x; ++i) ...``  ->
    ``unsigned int g__x; unsigned int g__y; ...; g__x = n; g__y = 1; for (i = 0; i < g__x; ++i)``;
    ``P p[1]; p->grid = g; P q = p[0]; ... q.grid.x ...``  ->
    ``... p__grid__x = g__x; ...; unsigned int q__grid__x = p__grid__x; ... q__grid__x ...``
"""
from __future__ import annotations

import copy
from dataclasses import replace

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "scalarize_structs"


def _field_kind(ft, typedefs):
    """'scalar', ('record', typedef name) or None (not allowed in a record) for a member's
    declared type."""
    if isinstance(ft, c_ast.PtrDecl):
        return "scalar"                 # any pointer, function pointers included
    if not isinstance(ft, c_ast.TypeDecl):
        return None                     # arrays
    if isinstance(ft.type, c_ast.Enum):
        return "scalar"
    if not isinstance(ft.type, c_ast.IdentifierType):
        return None                     # inline struct / union members
    names = ft.type.names
    if len(names) != 1 or names[0] not in typedefs:
        return "scalar"                 # base types and names the program leaves undefined
    seen, td = set(), typedefs[names[0]]
    while True:                         # follow the typedef chain
        seen.add(td.name)
        t = td.type
        if isinstance(t, c_ast.PtrDecl):
            return "scalar"
        if not isinstance(t, c_ast.TypeDecl):
            return None                 # typedef of an array or a function type
        if isinstance(t.type, c_ast.Struct):
            return ("record", td.name) if t.type.decls else None
        if isinstance(t.type, c_ast.Union):
            return None
        if isinstance(t.type, c_ast.IdentifierType) and len(t.type.names) == 1 and \
                t.type.names[0] in typedefs and t.type.names[0] not in seen:
            td = typedefs[t.type.names[0]]
            continue
        return "scalar"


def record_types(ast) -> dict[str, list[tuple[str, c_ast.Node, str | None]]]:
    """typedef name -> [(member name, member type node, nested record type or None)] for the
    record types (module docstring); a struct typedef reached through a chain of typedefs is
    listed under its own name only."""
    typedefs = canon.typedef_map(ast)
    raw = {}
    for e in ast.ext:
        if not isinstance(e, c_ast.Typedef) or not isinstance(e.type, c_ast.TypeDecl):
            continue
        st = e.type.type
        if not isinstance(st, c_ast.Struct) or not st.decls:
            continue
        fields = []
        for m in st.decls:
            if not isinstance(m, c_ast.Decl) or m.bitsize is not None or not m.name:
                break
            kind = _field_kind(m.type, typedefs)
            if kind is None:
                break
            fields.append((m.name, m.type, None if kind == "scalar" else kind[1]))
        else:
            raw[e.name] = fields
    # a nested member's type must be a record type itself (and not contain its container)
    out = dict(raw)
    changed = True
    while changed:
        changed = False
        for name, fields in list(out.items()):
            if any(r is not None and r not in out for _, _, r in fields):
                del out[name]
                changed = True
    for name in list(out):
        if _cyclic(name, out, ()):
            out.pop(name, None)
    return out


def _cyclic(name, records, stack) -> bool:
    if name in stack:
        return True
    return any(r is not None and (r not in records or _cyclic(r, records, stack + (name,)))
               for _, _, r in records.get(name, ()))


def leaves(records, rec, prefix=()) -> list[tuple[tuple[str, ...], c_ast.Node, list[str]]]:
    """(path, leaf type node, qualifiers of the members on the way) of each leaf of ``rec``."""
    out = []
    for f, ft, r in records[rec]:
        if r is None:
            out.append((prefix + (f,), ft, []))
        else:
            for path, t, quals in leaves(records, r, prefix + (f,)):
                out.append((path, t, list(ft.quals or []) + quals))
    return out


def _type_at(records, rec, path):
    """The record type name at ``path`` of ``rec``, '' for a leaf, None for no such member."""
    for i, f in enumerate(path):
        got = next((m for m in records[rec] if m[0] == f), None)
        if got is None:
            return None
        if got[2] is None:
            return "" if i == len(path) - 1 else None
        rec = got[2]
    return rec


def _record_of(decl, records) -> tuple[str, bool] | None:
    """(record type, is a one-element array) of a local declared as a record or ``T a[1]``."""
    t, arr = decl.type, False
    if isinstance(t, c_ast.ArrayDecl):
        if not (isinstance(t.dim, c_ast.Constant) and t.dim.type == "int" and
                t.dim.value.rstrip("uUlL") == "1"):
            return None
        t, arr = t.type, True
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and \
            len(t.type.names) == 1 and t.type.names[0] in records:
        return t.type.names[0], arr
    return None


def _zero(n) -> bool:
    return isinstance(n, c_ast.Constant) and n.type == "int" and n.value.rstrip("uUlL") in ("0", "00")


def _access(n, cands):
    """(local, member path, the ID node) of an access (module docstring) to a candidate local,
    else None. ``cands``: name -> (record type, is array)."""
    path = []
    while isinstance(n, c_ast.StructRef) and n.type == ".":
        path.append(n.field.name)
        n = n.name
    if isinstance(n, c_ast.StructRef) and n.type == "->" and isinstance(n.name, c_ast.ID) and \
            n.name.name in cands and cands[n.name.name][1]:
        path.append(n.field.name)
        n = n.name
    elif isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and \
            n.name.name in cands and cands[n.name.name][1] and _zero(n.subscript):
        n = n.name
    elif isinstance(n, c_ast.ID) and n.name in cands and cands[n.name][1]:
        return None                     # the array itself
    if not isinstance(n, c_ast.ID) or n.name not in cands:
        return None
    return n.name, tuple(reversed(path)), n


class _Uses:
    """Which candidate locals have only leaf accesses and whole copies among candidates."""

    def __init__(self, cands: dict[str, tuple[str, bool]], records):
        self.cands = cands                      # name -> (record type, is array)
        self.records = records
        self.ok_ids: set[int] = set()
        self.bad: set[str] = set()
        self.pairs: list[tuple[str, str]] = []

    def type_of(self, acc) -> str | None:
        """Record type name, '' (leaf) or None (no such member) of an access."""
        v, path, _ = acc
        return _type_at(self.records, self.cands[v][0], path) if path else self.cands[v][0]

    def run(self, fdef) -> set[str]:
        self._walk(fdef.body)
        for n in canon.walk(fdef.body):     # declared in a for header: kept whole
            if isinstance(n, c_ast.For) and isinstance(n.init, c_ast.DeclList):
                self.bad.update(d.name for d in n.init.decls if d.name in self.cands)
        fields = {id(n.field) for n in canon.walk(fdef.body) if isinstance(n, c_ast.StructRef)}
        for n in canon.walk(fdef.body):
            if isinstance(n, c_ast.ID) and n.name in self.cands and id(n) not in self.ok_ids \
                    and id(n) not in fields:
                self.bad.add(n.name)
        changed = True
        while changed:
            changed = False
            for a, b in self.pairs:
                if (a in self.bad) != (b in self.bad):
                    self.bad.update((a, b))
                    changed = True
        return {n for n in self.cands if n not in self.bad}

    def _copy(self, owner: str | None, rec: str, src) -> bool:
        """``src`` copied whole into a part of record type ``rec`` of ``owner``: a pair."""
        acc = _access(src, self.cands)
        if acc is None or self.type_of(acc) != rec:
            return False
        self.ok_ids.add(id(acc[2]))
        if owner is not None:
            self.pairs.append((owner, acc[0]))
        return True

    def _init_ok(self, init, rec, owner) -> bool:
        """An initialiser list for a record ``rec``: leaf items walked as expressions, record
        members given as nested lists or whole copies (pairs)."""
        fields = self.records[rec]
        if len(init.exprs) > len(fields):
            return False
        for x, (_, _, r) in zip(init.exprs, fields):
            if isinstance(x, c_ast.NamedInitializer):
                return False
            if r is None:
                if isinstance(x, c_ast.InitList):
                    return False
                self._walk(x)
            elif isinstance(x, c_ast.InitList):
                if not self._init_ok(x, r, owner):
                    return False
            elif not self._copy(owner, r, x):
                return False
        return True

    def _walk(self, n):
        if isinstance(n, c_ast.Compound):
            for s in n.block_items or []:
                if isinstance(s, c_ast.Assignment) and s.op == "=":
                    a, b = _access(s.lvalue, self.cands), _access(s.rvalue, self.cands)
                    if a is not None and b is not None and self.type_of(a) and \
                            self.type_of(a) == self.type_of(b):
                        self.ok_ids.update((id(a[2]), id(b[2])))
                        self.pairs.append((a[0], b[0]))
                        continue
                self._walk(s)
            return
        if isinstance(n, c_ast.Decl) and n.name in self.cands and n.init is not None:
            rec, arr = self.cands[n.name]
            if arr or not (self._init_ok(n.init, rec, n.name)
                           if isinstance(n.init, c_ast.InitList)
                           else self._copy(n.name, rec, n.init)):
                self.bad.add(n.name)
                self._walk(n.init)
            return
        acc = _access(n, self.cands) if isinstance(n, (c_ast.StructRef, c_ast.ArrayRef)) else None
        if acc is not None and self.type_of(acc) == "":
            self.ok_ids.add(id(acc[2]))
            return
        for _, c in n.children():
            self._walk(c)


def _candidates(fdef, records) -> dict[str, tuple[str, bool]]:
    cands, seen = {}, {}
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Decl) and n.name:
            r = _record_of(n, records)
            if n.name in seen and seen[n.name] != r:
                cands.pop(n.name, None)
                seen[n.name] = "?"
                continue
            seen[n.name] = r
            if r is not None and not {"static", "extern"} & set(n.storage or []):
                cands[n.name] = r
    return {k: v for k, v in cands.items() if seen.get(k) == v}


def _plan(program):
    """(entry, record types, the locals to split, the candidate locals of a record type);
    Nones without an entry definition."""
    fdef = canon.entry_def(program.ast, program.entry.name) if program.entry else None
    if fdef is None:
        return None, None, None, None
    records = record_types(program.ast)
    cands = _candidates(fdef, records)
    ok = _Uses(cands, records).run(fdef) if cands else set()
    return fdef, records, {n: cands[n] for n in ok}, cands


class _Rewrite:
    def __init__(self, ok: dict[str, tuple[str, bool]], records, taken: set[str]):
        self.ok, self.records = ok, records
        self.names: dict[tuple[str, tuple[str, ...]], str] = {}
        for v, (r, _) in sorted(ok.items()):
            for path, _, _ in leaves(records, r):
                name = "__".join((v,) + path)
                k = 1
                while name in taken:
                    name = "__".join((v,) + path) + f"_{k}"
                    k += 1
                taken.add(name)
                self.names[(v, path)] = name

    def _acc(self, n):
        return _access(n, self.ok)

    def _type(self, acc) -> str:
        v, path, _ = acc
        return _type_at(self.records, self.ok[v][0], path) if path else self.ok[v][0]

    def _leaf_names(self, acc) -> list[str]:
        """The scalar names of the leaves under a record-typed access, in leaf order."""
        v, path, _ = acc
        return [self.names[(v, path + p)] for p, _, _ in leaves(self.records, self._type(acc))]

    def items(self, items):
        out = []
        for s in items:
            out += self.stmt(s)
        return out

    def _body(self, s):
        r = self.stmt(s)
        return r[0] if len(r) == 1 else c_ast.Compound(r)

    def stmt(self, s) -> list:
        if isinstance(s, c_ast.Decl) and s.name in self.ok:
            return self._decls(s)
        if isinstance(s, c_ast.Assignment) and s.op == "=":
            a, b = self._acc(s.lvalue), self._acc(s.rvalue)
            if a is not None and b is not None and self._type(a):
                return [c_ast.Assignment("=", c_ast.ID(x), c_ast.ID(y), s.coord)
                        for x, y in zip(self._leaf_names(a), self._leaf_names(b))]
        if isinstance(s, c_ast.Compound):
            s.block_items = self.items(list(s.block_items or []))
            return [s]
        if isinstance(s, c_ast.For):
            s.init, s.cond, s.next = (self.expr(s.init), self.expr(s.cond), self.expr(s.next))
            s.stmt = self._body(s.stmt)
            return [s]
        if isinstance(s, c_ast.If):
            s.cond = self.expr(s.cond)
            s.iftrue = self._body(s.iftrue)
            if s.iffalse is not None:
                s.iffalse = self._body(s.iffalse)
            return [s]
        if isinstance(s, (c_ast.While, c_ast.DoWhile)):
            s.cond = self.expr(s.cond)
            s.stmt = self._body(s.stmt)
            return [s]
        if isinstance(s, c_ast.Label):
            s.stmt = self._body(s.stmt)
            return [s]
        if isinstance(s, c_ast.Switch):
            s.cond = self.expr(s.cond)
            s.stmt = self._body(s.stmt)
            return [s]
        if isinstance(s, (c_ast.Case, c_ast.Default)):
            if isinstance(s, c_ast.Case):
                s.expr = self.expr(s.expr)
            s.stmts = self.items(list(s.stmts or []))
            return [s]
        return [self.expr(s)]

    def _inits(self, init, rec) -> list:
        """One initialiser (or None) per leaf of ``rec`` from a declaration's initialiser."""
        if init is None:
            return [None] * len(leaves(self.records, rec))
        if not isinstance(init, c_ast.InitList):
            return [c_ast.ID(x) for x in self._leaf_names(self._acc(init))]
        out = []
        exprs = list(init.exprs)
        for i, (_, _, r) in enumerate(self.records[rec]):
            x = exprs[i] if i < len(exprs) else None
            if r is None:
                out.append(self.expr(x) if x is not None else c_ast.Constant("int", "0"))
            elif x is None:
                out += [c_ast.Constant("int", "0")] * len(leaves(self.records, r))
            else:
                out += self._inits(x, r)
        return out

    def _decls(self, d) -> list:
        out = []
        rec = self.ok[d.name][0]
        t0 = d.type.type if isinstance(d.type, c_ast.ArrayDecl) else d.type
        quals = [q for q in (t0.quals or []) if q not in ("restrict",)]
        for (path, ft, fq), init in zip(leaves(self.records, rec), self._inits(d.init, rec)):
            t = copy.deepcopy(ft)
            name = self.names[(d.name, path)]
            td = t
            while not isinstance(td, c_ast.TypeDecl):
                td = td.type
            td.declname = name
            # the local's and the enclosing members' qualifiers qualify the leaf object: the
            # scalar itself, or the pointer (not what it points to) of a pointer leaf
            t.quals = list(dict.fromkeys(quals + fq + list(t.quals or [])))
            out.append(c_ast.Decl(name, list(td.quals or []), [], [], [], t, init, None,
                                  coord=d.coord))
        return out

    def expr(self, n):
        if n is None:
            return None
        if isinstance(n, (c_ast.StructRef, c_ast.ArrayRef)):
            acc = self._acc(n)
            if acc is not None and self._type(acc) == "":
                return c_ast.ID(self.names[(acc[0], acc[1])], n.coord)
        if isinstance(n, c_ast.Decl):
            n.init = self.expr(n.init)
            t = n.type
            while isinstance(t, (c_ast.ArrayDecl, c_ast.PtrDecl)):
                if isinstance(t, c_ast.ArrayDecl):
                    t.dim = self.expr(t.dim)
                t = t.type
            return n
        return canon.map_children(n, self.expr)


def _names(ast) -> set[str]:
    out = set()
    for n in canon.walk(ast):
        if isinstance(n, c_ast.ID):
            out.add(n.name)
        elif isinstance(n, c_ast.Decl) and n.name:
            out.add(n.name)
        elif isinstance(n, c_ast.Typedef):
            out.add(n.name)
    return out


@register(PassInfo(
    name=NAME,
    summary="record-type struct locals (dim3, launch parameters & co.) -> one scalar local per "
            "leaf field",
    requires=("an entry function definition (XP-SCALARIZE-001)",
              "an entry local (or one-element local array) of a record type (scalar and nested "
              "record members) used only through leaf fields, whole copies of records and "
              "record-typed fields between such locals, and initialiser lists (XP-SCALARIZE-002 "
              "none, XP-SCALARIZE-003 each used as a whole)"),
    guarantees=("same outputs on the virtual device", "no local of the rewritten types "
                "left in the entry"),
))
def scalarize_structs(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    fdef, records, ok = plan.data
    _Rewrite(ok, records, _names(plan.ast)).stmt(fdef.body)
    return canon.reparse(program, plan.ast)


@scalarize_structs.legality
def _legal(program):
    """The structs to split, found on a copy of the AST that the rewrite then changes: the plan."""
    ast = copy.deepcopy(program.ast)
    fdef, records, ok, cands = _plan(replace(program, ast=ast))
    if fdef is None:
        return [canon.diag(program, NAME, "XP-SCALARIZE-001", "no entry function definition")]
    if not ok:
        if cands:       # struct locals, each used as a whole somewhere
            return [canon.diag(program, NAME, "XP-SCALARIZE-003", f"struct local '{sorted(cands)[0]}' "
                               "is used other than through its fields, whole copies among such "
                               "locals and initialiser lists")]
        return [canon.diag(program, NAME, "XP-SCALARIZE-002", "the entry declares no local of "
                           "a record (scalar / nested record members) struct type")]
    return canon.Rewritten(ast, (fdef, records, ok))
