"""scalarize_structs: small struct locals of the entry -> one scalar local per field.

Summary
    A *record type* is a file-scope ``typedef struct { T1 a; T2 b; ... } name;`` whose members
    are all scalars (no arrays, no nested structs, no bit-fields) - e.g. the ``dim3`` that the
    GPU lift (``loop_recovery``) keeps for grid and block sizes. Each entry local ``name s``
    whose every use is a field access ``s.f``, a whole copy ``s = t;`` / initialiser
    ``name s = t;`` from another such local of the same type, or an initialiser list, becomes
    the scalars ``T1 s__a; T2 s__b; ...``: ``s.f`` becomes ``s__f`` and a copy becomes one
    assignment per field. The result is plain scalar code that ``const_prop`` can fold into
    loop bounds and ``dce`` can remove.
Requires
    1. The program has an entry function definition (XP-SCALARIZE-001).
    2. At least one entry local of a record type whose uses are all of the forms above and
       whose copies involve only other such locals (XP-SCALARIZE-002: no local of a record
       type, nothing to do; XP-SCALARIZE-003: such locals, each used as a whole). Other struct
       locals are left as they are.
Guarantees
    Same outputs on the virtual device (field values are carried one by one; a record type
    has no padding-dependent behaviour once no address of the whole struct is taken).
Options
    none.
Example
    ``dim3 g; g.x = n; g.y = 1; for (i = 0; i < g.x; ++i) ...``  ->
    ``unsigned int g__x; unsigned int g__y; ...; g__x = n; g__y = 1; for (i = 0; i < g__x; ++i)``
"""
from __future__ import annotations

import copy
from dataclasses import replace

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "scalarize_structs"


def record_types(ast) -> dict[str, list[tuple[str, c_ast.Node]]]:
    """typedef name -> [(field name, field TypeDecl)] for all-scalar struct typedefs."""
    out = {}
    for e in ast.ext:
        if not isinstance(e, c_ast.Typedef) or not isinstance(e.type, c_ast.TypeDecl):
            continue
        st = e.type.type
        if not isinstance(st, c_ast.Struct) or not st.decls:
            continue
        fields = []
        for m in st.decls:
            if not isinstance(m, c_ast.Decl) or m.bitsize is not None or not m.name or \
                    not isinstance(m.type, c_ast.TypeDecl) or \
                    not isinstance(m.type.type, c_ast.IdentifierType):
                break
            fields.append((m.name, m.type))
        else:
            out[e.name] = fields
    return out


def _record_of(decl, records) -> str | None:
    t = decl.type
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType) and \
            len(t.type.names) == 1 and t.type.names[0] in records:
        return t.type.names[0]
    return None


class _Uses:
    """Which candidate locals have only field uses and same-type copies."""

    def __init__(self, cands: dict[str, str], records):
        self.cands = cands                      # name -> record type
        self.records = records
        self.ok_ids: set[int] = set()
        self.bad: set[str] = set()
        self.pairs: list[tuple[str, str]] = []

    def run(self, fdef) -> set[str]:
        self._walk(fdef.body)
        for n in canon.walk(fdef.body):
            if isinstance(n, c_ast.ID) and n.name in self.cands and id(n) not in self.ok_ids:
                self.bad.add(n.name)
        for n in canon.walk(fdef.body):
            if isinstance(n, c_ast.Decl) and n.name in self.cands:
                if isinstance(n.init, c_ast.InitList):
                    fields = self.records[self.cands[n.name]]
                    if len(n.init.exprs) > len(fields) or any(
                            isinstance(x, (c_ast.InitList, c_ast.NamedInitializer))
                            for x in n.init.exprs):
                        self.bad.add(n.name)
                elif n.init is not None and not isinstance(n.init, c_ast.ID):
                    self.bad.add(n.name)
        changed = True
        while changed:
            changed = False
            for a, b in self.pairs:
                if (a in self.bad or b in self.bad or self.cands.get(a) != self.cands.get(b)) \
                        and not (a in self.bad and b in self.bad):
                    self.bad.update((a, b))
                    changed = True
        return {n for n in self.cands if n not in self.bad}

    def _copy_pair(self, a, b) -> bool:
        if isinstance(a, c_ast.ID) and isinstance(b, c_ast.ID) and a.name in self.cands and \
                b.name in self.cands:
            self.ok_ids.update((id(a), id(b)))
            self.pairs.append((a.name, b.name))
            return True
        return False

    def _walk(self, n):
        if isinstance(n, c_ast.Compound):
            for s in n.block_items or []:
                if isinstance(s, c_ast.Assignment) and s.op == "=" and \
                        self._copy_pair(s.lvalue, s.rvalue):
                    continue
                self._walk(s)
            return
        if isinstance(n, c_ast.Decl) and n.name in self.cands and isinstance(n.init, c_ast.ID):
            if n.init.name in self.cands:
                self.ok_ids.add(id(n.init))
                self.pairs.append((n.name, n.init.name))
            return
        if isinstance(n, c_ast.StructRef) and n.type == "." and isinstance(n.name, c_ast.ID) and \
                n.name.name in self.cands:
            self.ok_ids.add(id(n.name))
            return
        for _, c in n.children():
            self._walk(c)


def _candidates(fdef, records) -> dict[str, str]:
    cands, seen = {}, {}
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Decl) and n.name:
            r = _record_of(n, records)
            if n.name in seen and seen[n.name] != r:
                cands.pop(n.name, None)
                seen[n.name] = "?"
                continue
            seen[n.name] = r
            if r is not None and "static" not in (n.storage or []):
                cands[n.name] = r
    return {k: v for k, v in cands.items() if seen.get(k) == v}


def _plan(program):
    """(entry, record types, the locals to split, the candidate locals of an all-scalar struct
    type); Nones without an entry definition."""
    fdef = canon.entry_def(program.ast, program.entry.name) if program.entry else None
    if fdef is None:
        return None, None, None, None
    records = record_types(program.ast)
    cands = _candidates(fdef, records)
    ok = _Uses(cands, records).run(fdef) if cands else set()
    return fdef, records, {n: cands[n] for n in ok}, cands


class _Rewrite:
    def __init__(self, ok: dict[str, str], records, taken: set[str]):
        self.ok, self.records = ok, records
        self.names: dict[tuple[str, str], str] = {}
        for v, r in sorted(ok.items()):
            for f, _ in records[r]:
                name = f"{v}__{f}"
                k = 1
                while name in taken:
                    name = f"{v}__{f}_{k}"
                    k += 1
                taken.add(name)
                self.names[(v, f)] = name

    def fields(self, v):
        return self.records[self.ok[v]]

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
        if isinstance(s, c_ast.Assignment) and s.op == "=" and isinstance(s.lvalue, c_ast.ID) \
                and s.lvalue.name in self.ok:
            a, b = s.lvalue.name, s.rvalue.name
            return [c_ast.Assignment("=", c_ast.ID(self.names[(a, f)]),
                                     c_ast.ID(self.names[(b, f)]), s.coord)
                    for f, _ in self.fields(a)]
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
        return [self.expr(s)]

    def _decls(self, d) -> list:
        out = []
        fields = self.fields(d.name)
        inits = [None] * len(fields)
        if isinstance(d.init, c_ast.ID):
            inits = [c_ast.ID(self.names[(d.init.name, f)]) for f, _ in fields]
        elif isinstance(d.init, c_ast.InitList):
            inits = [self.expr(x) for x in d.init.exprs] + \
                [c_ast.Constant("int", "0")] * (len(fields) - len(d.init.exprs))
        quals = [q for q in (d.type.quals or []) if q not in ("restrict",)]
        for (f, ft), init in zip(fields, inits):
            t = copy.deepcopy(ft)
            name = self.names[(d.name, f)]
            t.declname = name
            t.quals = list(dict.fromkeys(list(quals) + list(t.quals or [])))
            out.append(c_ast.Decl(name, list(t.quals), [], [], [], t, init, None, coord=d.coord))
        return out

    def expr(self, n):
        if n is None:
            return None
        if isinstance(n, c_ast.StructRef) and n.type == "." and isinstance(n.name, c_ast.ID) \
                and n.name.name in self.ok:
            return c_ast.ID(self.names[(n.name.name, n.field.name)], n.coord)
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
    summary="all-scalar struct locals (dim3 & co.) -> one scalar local per field",
    requires=("an entry function definition (XP-SCALARIZE-001)",
              "an entry local of an all-scalar struct typedef used only through fields, "
              "same-type copies and initialiser lists (XP-SCALARIZE-002 none, XP-SCALARIZE-003 "
              "each used as a whole)"),
    guarantees=("same outputs on the virtual device", "no struct local of the rewritten types "
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
                               "is used other than through its fields, same-type copies and "
                               "initialiser lists")]
        return [canon.diag(program, NAME, "XP-SCALARIZE-002", "the entry declares no local of "
                           "an all-scalar struct type")]
    return canon.Rewritten(ast, (fdef, records, ok))
