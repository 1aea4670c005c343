"""struct_consts: fold a host struct of constants (device properties) into its reads.

Summary
    Lifted HIP/CUDA host code that asks for device properties keeps a local struct filled with
    constants: ``xp_device_prop prop; memset(&prop, 0, sizeof prop); ((xp_device_prop *)
    (&prop))->warpSize = 64; ...`` and reads ``prop.warpSize`` (a launch size). The lowering
    passes cannot see through the struct (a store to a struct field is no access they model).
    When every write of the struct is such a top-level store of a constant (or the zero fill)
    and every read is a field read after those stores, each read becomes the field's constant
    (cast to the field's declared type; zero for a field only the fill wrote) and the struct
    with its stores disappears.
Requires
    1. The program has an entry function definition  [XP-STRUCT-CONSTS-001].
    2. A local struct variable of a typedef'd struct type, declared without initialiser at the
       entry's top level, used only by: a top-level ``memset(&s, 0, ...)``; top-level stores
       (top level: statements of the entry body or of plain blocks in it, in order)
       ``s.f = c`` / ``((T *) &s)->f = c`` / ``...f[k] = c`` of integer or floating constants
       (each field element stored at most once); and reads ``s.f`` / ``s.f[k]`` (constant
       ``k``) of scalar fields in later top-level statements  [XP-STRUCT-CONSTS-002].
Guarantees
    Same outputs on the virtual device: each read yields the value the stores left in the
    field (the struct is written nowhere else and its address does not escape).
Example
    ``prop.warpSize = 64; ... for (t = 0; t < prop.warpSize; ++t)`` ->
    ``for (t = 0; t < ((int) 64); ++t)``
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from . import canon
from .base import PassInfo, PassRefused, register
from .unit_loops import const_int

NAME = "struct_consts"


def _target(e, name: str) -> bool:
    """``s`` / ``&s`` / ``(T *) &s`` for the struct variable ``name``."""
    while isinstance(e, c_ast.Cast):
        e = e.expr
    if isinstance(e, c_ast.UnaryOp) and e.op == "&":
        e = e.expr
    return isinstance(e, c_ast.ID) and e.name == name


def _field(n, name: str):
    """(field, element index or None) of ``s.f`` / ``(&s)->f`` / ``s.f[k]`` (constant k)."""
    if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.StructRef):
        k = const_int(n.subscript)
        got = _field(n.name, name)
        if k is None or got is None or got[1] is not None:
            return None
        return got[0], k
    if isinstance(n, c_ast.StructRef):
        if n.type == "." and isinstance(n.name, c_ast.ID) and n.name.name == name:
            return n.field.name, None
        if n.type == "->" and _target(n.name, name) and not isinstance(n.name, c_ast.ID):
            return n.field.name, None
    return None


def _is_const(e) -> bool:
    if const_int(e) is not None:
        return True
    if isinstance(e, c_ast.UnaryOp) and e.op == "-":
        return _is_const(e.expr)
    return isinstance(e, c_ast.Constant) and e.type in ("float", "double")


def _struct_fields(ast, decl) -> dict | None:
    """field name -> declared type node (TypeDecl or ArrayDecl) of the variable's struct."""
    t = decl.type
    if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType) or \
            len(t.type.names) != 1:
        return None
    td = canon.typedef_map(ast).get(t.type.names[0])
    st = td.type.type if td is not None and isinstance(td.type, c_ast.TypeDecl) else None
    if not isinstance(st, c_ast.Struct) or not st.decls:
        return None
    return {d.name: d.type for d in st.decls if d.name}


class _Plan:
    def __init__(self, decl):
        self.decl = decl
        self.drop: set[int] = set()             # ids of top-level statements to remove
        self.reads: dict[int, c_ast.Node] = {}  # id(read node) -> replacement


def _plan(ast, fdef, decl) -> _Plan | None:
    name = decl.name
    fields = _struct_fields(ast, decl)
    if fields is None:
        return None
    items = [st for _, st in _seq(fdef.body)]
    plan = _Plan(decl)
    values: dict = {}                  # (field, k) -> constant node
    filled = False
    for idx, s in enumerate(items):
        if s is decl:
            continue
        mentions = [n for n in canon.walk(s) if isinstance(n, c_ast.ID) and n.name == name]
        if not mentions:
            continue
        # the zero fill
        if canon.call_name(s) == "memset" and len(s.args.exprs) == 3 and \
                _target(s.args.exprs[0], name) and const_int(s.args.exprs[1]) == 0 and \
                not values and not filled:
            filled = True
            plan.drop.add(id(s))
            continue
        # a constant store
        if isinstance(s, c_ast.Assignment) and s.op == "=":
            f = _field(s.lvalue, name)
            if f is not None and _is_const(s.rvalue) and f not in values and \
                    f[0] in fields and not canon.ids_in(s.rvalue) & {name}:
                values[f] = s.rvalue
                plan.drop.add(id(s))
                continue
            if f is not None:
                return None
        # reads of scalar fields (or constant-indexed elements of array fields)
        reads = []
        for n in canon.walk(s):
            f = _field(n, name) if isinstance(n, (c_ast.StructRef, c_ast.ArrayRef)) else None
            if f is not None and not (isinstance(n, c_ast.StructRef) and
                                      isinstance(fields.get(f[0]), c_ast.ArrayDecl)):
                reads.append((n, f))
        covered = set()
        for n, f in reads:
            covered |= {id(x) for x in canon.walk(n) if isinstance(x, c_ast.ID) and x.name == name}
        if len(covered) != len(mentions):
            return None                     # some other use: address escapes, whole copy, ...
        for n, f in reads:
            t = fields.get(f[0])
            if t is None:
                return None
            if f[1] is not None:
                if not isinstance(t, c_ast.ArrayDecl):
                    return None
                t = t.type
            if not isinstance(t, c_ast.TypeDecl):
                return None
            v = values.get(f)
            if v is None:
                if not filled:
                    return None             # read of a field nothing wrote
                v = c_ast.Constant("int", "0")
            tt = copy.deepcopy(t)
            tt.declname = None
            tt.quals = []
            plan.reads[id(n)] = c_ast.Cast(c_ast.Typename(None, [], None, tt), copy.deepcopy(v))
        # the written side of an assignment that reads is not a field of the struct
        for n in canon.walk(s):
            if isinstance(n, c_ast.Assignment) and _field(n.lvalue, name) is not None:
                return None
            if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and \
                    _field(n.expr, name) is not None:
                return None
    # the variable appears only at the top level (nested uses were walked above as well)
    return plan


def _seq(block):
    """(owning block, statement) of the statements run in sequence at the entry's top level:
    its items, and the items of plain nested blocks (in order)."""
    for st in list(block.block_items or []):
        if isinstance(st, c_ast.Compound):
            yield from _seq(st)
        else:
            yield block, st


def _replace(node, reads: dict):
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        v = getattr(node, attr, None)
        if isinstance(v, c_ast.Node):
            if id(v) in reads:
                setattr(node, attr, reads[id(v)])
            else:
                _replace(v, reads)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                if isinstance(x, c_ast.Node):
                    if id(x) in reads:
                        v[i] = reads[id(x)]
                    else:
                        _replace(x, reads)


def _rewrite(program, ast) -> int:
    fdef = canon.entry_def(ast, program.entry.name)
    done = 0
    for decl in [d for d in (fdef.body.block_items or []) if isinstance(d, c_ast.Decl)
                 and d.name and d.init is None and isinstance(d.type, c_ast.TypeDecl)]:
        # declared once in the whole entry (no shadowing in nested scopes)
        if sum(1 for n in canon.walk(fdef.body) if isinstance(n, c_ast.Decl) and
               n.name == decl.name) != 1:
            continue
        plan = _plan(ast, fdef, decl)
        if plan is None:
            continue
        _replace(fdef.body, plan.reads)
        for owner, st in list(_seq(fdef.body)):
            if id(st) in plan.drop or st is decl:
                owner.block_items = [x for x in owner.block_items if x is not st]
        done += 1
    return done


@register(PassInfo(
    name=NAME,
    summary="a host struct filled with constants (device properties) -> its field reads folded",
    requires=("an entry function definition (XP-STRUCT-CONSTS-001)",
              "a top-level local struct used only by a zero memset, top-level constant field "
              "stores and later field reads (XP-STRUCT-CONSTS-002)"),
    guarantees=("same outputs on the virtual device", "the struct and its stores are removed"),
))
def struct_consts(program):
    ast = copy.deepcopy(program.ast)
    if not _rewrite(program, ast):
        raise PassRefused("struct_consts: no struct of constants")
    return canon.reparse(program, ast)


@struct_consts.legality
def _legal(program):
    if program.entry is None or program.ast is None or \
            canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-STRUCT-CONSTS-001", "no entry function definition")]
    if not _rewrite(program, copy.deepcopy(program.ast)):
        return [canon.diag(program, NAME, "XP-STRUCT-CONSTS-002",
                           "no local struct that only a zero fill and constant field stores "
                           "write and only field reads read")]
    return []
