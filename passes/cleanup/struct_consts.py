"""struct_consts: fold a host struct of constants (device properties) into its reads.

Summary
    Lifted HIP/CUDA host code that asks for device properties keeps a local struct filled with
    constants: ``xp_device_prop prop; memset(&prop, 0, sizeof prop); ((xp_device_prop *)
    (&prop))->warpSize = 64; ...`` and reads ``prop.warpSize`` (a launch size). The lowering
    passes cannot see through the struct (a store to a struct field is no access they model).
    When every write of the struct is such a top-level store of a constant (or the zero fill)
    and every read is a field read after those stores, each read becomes the field's constant
    (cast to the field's declared type; zero for a field only the fill wrote) and the struct
    with its stores disappears. The struct may be a typedef'd struct or a file-scope
    ``struct S { ... };`` (named ``S`` as in C++ or ``struct S``). A whole copy ``S b = s;``
    after the last store (the lift binds a by-value kernel argument so) makes ``b`` read the
    same constants; it is dropped too. An element of an array field read at a non-constant
    index ``s.f[e]`` is resolved by unrolling the counted loops over the variables of ``e``
    that have constant start, bound (once the field reads in them are folded) and ``++`` /
    ``--`` / ``+= k`` / ``-= k`` / geometric update, at most 32 iterations and no exit from the
    body: each copy then reads a constant element (a permutation's ``for (d = a.rank - 1; d >=
    0; --d) rem % a.out_dims[d]`` becomes straight-line code with constant divisors).
Requires
    1. The program has an entry function definition  [XP-STRUCT-CONSTS-001].
    2. A local struct variable of a typedef'd struct type, declared without initialiser at the
       entry's top level, used only by: a top-level ``memset(&s, 0, ...)``; top-level stores
       (top level: statements of the entry body or of plain blocks in it, in order)
       ``s.f = c`` / ``((T *) &s)->f = c`` / ``...f[k] = c`` of integer or floating constants
       (each field element stored at most once); and reads ``s.f`` / ``s.f[k]`` (constant
       ``k``, or a variable ``k`` resolved by unrolling as above) of scalar fields in later
       top-level statements, and whole copies ``S b = s;`` (``b`` declared once, no store of
       ``s`` after it) used the same way  [XP-STRUCT-CONSTS-002: no struct that a zero fill
       or constant field stores write, nothing to do; XP-STRUCT-CONSTS-003: such structs, none
       used only that way].
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

import passes.canon as canon
from passes.base import PassInfo, register
from passes.cleanup.unit_loops import literal, const_int
from passes.cleanup.unroll_const import values

NAME = "struct_consts"


def _target(e, names) -> bool:
    """``s`` / ``&s`` / ``(T *) &s`` for a struct variable in ``names``."""
    while isinstance(e, c_ast.Cast):
        e = e.expr
    if isinstance(e, c_ast.UnaryOp) and e.op == "&":
        e = e.expr
    return isinstance(e, c_ast.ID) and e.name in names


def _field(n, names, pending=None):
    """(field, element index or None) of ``s.f`` / ``(&s)->f`` / ``s.f[k]`` (constant k).
    ``s.f[e]`` with a non-constant ``e`` is appended to ``pending`` (when given) as
    (node, field, e) and gives None."""
    if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.StructRef):
        k = const_int(n.subscript)
        got = _field(n.name, names)
        if got is None or got[1] is not None:
            return None
        if k is None:
            if pending is not None:
                pending.append((n, got[0], n.subscript))
            return None
        return got[0], k
    if isinstance(n, c_ast.StructRef):
        if n.type == "." and isinstance(n.name, c_ast.ID) and n.name.name in names:
            return n.field.name, None
        if n.type == "->" and _target(n.name, names) and not isinstance(n.name, c_ast.ID):
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
    st = _struct_type(ast, decl)
    if st is None:
        return None
    return {d.name: d.type for d in st.decls if d.name}


def _struct_type(ast, decl):
    """The struct definition of the variable's type: a typedef'd struct, or a file-scope
    ``struct S { ... };`` named as ``S`` (C++) or ``struct S``; else None."""
    t = decl.type
    if not isinstance(t, c_ast.TypeDecl):
        return None
    if isinstance(t.type, c_ast.Struct) and t.type.decls is None and t.type.name:
        tag = t.type.name
    elif isinstance(t.type, c_ast.IdentifierType) and len(t.type.names) == 1:
        td = canon.typedef_map(ast).get(t.type.names[0])
        if td is not None:
            st = td.type.type if isinstance(td.type, c_ast.TypeDecl) else None
            return st if isinstance(st, c_ast.Struct) and st.decls else None
        tag = t.type.names[0]
    else:
        return None
    found = [e.type for e in ast.ext if isinstance(e, c_ast.Decl) and
             isinstance(e.type, c_ast.Struct) and e.type.name == tag and e.type.decls]
    return found[0] if len(found) == 1 else None


def _type_key(decl):
    t = decl.type
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.Struct):
        return ("struct", t.type.name)
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
        return tuple(t.type.names)
    return None


class _Plan:
    def __init__(self, decl):
        self.decl = decl
        self.drop: set[int] = set()             # ids of top-level statements to remove
        self.reads: dict[int, c_ast.Node] = {}  # id(read node) -> replacement
        self.pending: list = []                 # (node, field, index) of s.f[e], e not constant
        self.names: set[str] = {decl.name}      # the struct and its copies


def _declared_once(fdef, name) -> bool:
    return sum(1 for n in canon.walk(fdef.body) if isinstance(n, c_ast.Decl) and
               n.name == name) == 1


def _plan(ast, fdef, decl) -> _Plan | None:
    fields = _struct_fields(ast, decl)
    if fields is None:
        return None
    items = [st for _, st in _seq(fdef.body)]
    plan = _Plan(decl)
    names = plan.names
    values: dict = {}                  # (field, k) -> constant node
    filled = copied = False
    for idx, s in enumerate(items):
        if s is decl:
            continue
        mentions = [n for n in canon.walk(s) if isinstance(n, c_ast.ID) and n.name in names]
        if not mentions:
            continue
        # a copy S b = s; of the whole struct: b holds the same constants (no store follows)
        if isinstance(s, c_ast.Decl) and s.name and isinstance(s.init, c_ast.ID) and \
                s.init.name in names and len(mentions) == 1 and \
                _type_key(s) is not None and _type_key(s) == _type_key(decl) and \
                _declared_once(fdef, s.name):
            names.add(s.name)
            copied = True
            plan.drop.add(id(s))
            continue
        # the zero fill
        if canon.call_name(s) == "memset" and len(s.args.exprs) == 3 and \
                _target(s.args.exprs[0], names) and const_int(s.args.exprs[1]) == 0 and \
                not values and not filled and not copied:
            filled = True
            plan.drop.add(id(s))
            continue
        # a constant store
        if isinstance(s, c_ast.Assignment) and s.op == "=":
            f = _field(s.lvalue, names)
            if f is not None and _is_const(s.rvalue) and f not in values and not copied and \
                    f[0] in fields and not canon.ids_in(s.rvalue) & names:
                values[f] = s.rvalue
                plan.drop.add(id(s))
                continue
            if f is not None:
                return None
        # reads of scalar fields (or constant-indexed elements of array fields); elements
        # read at a variable index are pending (the loop over the index may be unrolled)
        reads, pending = [], []
        for n in canon.walk(s):
            f = _field(n, names, pending) if isinstance(n, (c_ast.StructRef, c_ast.ArrayRef)) \
                else None
            if f is not None and not (isinstance(n, c_ast.StructRef) and
                                      isinstance(fields.get(f[0]), c_ast.ArrayDecl)):
                reads.append((n, f))
        covered = set()
        for n, f in reads:
            covered |= {id(x) for x in canon.walk(n) if isinstance(x, c_ast.ID) and x.name in names}
        for n, f, e in pending:
            if not isinstance(fields.get(f), c_ast.ArrayDecl) or canon.ids_in(e) & names:
                return None
            covered |= {id(x) for x in canon.walk(n.name) if isinstance(x, c_ast.ID) and
                        x.name in names}
        if len(covered) != len(mentions):
            return None                     # some other use: address escapes, whole copy, ...
        plan.pending += pending
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
            if isinstance(n, c_ast.Assignment) and _touches(n.lvalue, names):
                return None
            if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and \
                    _touches(n.expr, names):
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
    canon.replace_nodes(node, lambda n: reads.get(id(n)))


def _touches(lv, names) -> bool:
    """The assigned expression is (an element of) a field of a struct in ``names``."""
    while isinstance(lv, (c_ast.ArrayRef, c_ast.StructRef, c_ast.Cast)) or \
            (isinstance(lv, c_ast.UnaryOp) and lv.op in ("&", "*")):
        lv = lv.name if isinstance(lv, (c_ast.ArrayRef, c_ast.StructRef)) else lv.expr
    return isinstance(lv, c_ast.ID) and lv.name in names


def _unroll_index_loops(body, pending, limit: int = 32) -> int:
    """Unroll the counted loops (constant values) whose variable indexes a pending read."""
    want = {id(n): canon.ids_in(e) for n, _, e in pending}
    done = 0

    def holds(s):
        got = values(s, limit, linear=True)
        if got is None:
            return None
        inner = {id(x) for x in canon.walk(s.stmt)}
        if any(k in inner and got[0] in v for k, v in want.items()):
            return got
        return None

    def stmt(s):
        nonlocal done
        got = holds(s)
        if got is not None:
            var, t, vals = got
            done += 1
            return c_ast.Compound([canon.substitute(c_ast.Compound(canon.as_items(
                copy.deepcopy(s.stmt))), {var: literal(t, k)}) for k in vals])
        if isinstance(s, c_ast.Compound):
            s.block_items = [stmt(x) for x in (s.block_items or [])]
        elif isinstance(s, (c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.Label)):
            s.stmt = stmt(s.stmt)
        elif isinstance(s, c_ast.If):
            s.iftrue = stmt(s.iftrue)
            if s.iffalse is not None:
                s.iffalse = stmt(s.iffalse)
        return s
    stmt(body)
    return done


def _filled_with_constants(ast, fdef, decl) -> bool:
    """The pass's pattern seen (not yet proved): a struct local that a top-level statement zero
    fills (``memset(&s, 0, ...)``) or stores a constant into (``s.f = c``)."""
    if _struct_fields(ast, decl) is None:
        return False
    names = {decl.name}
    for _, s in _seq(fdef.body):
        if canon.call_name(s) == "memset" and len(s.args.exprs) == 3 and \
                _target(s.args.exprs[0], names) and const_int(s.args.exprs[1]) == 0:
            return True
        if isinstance(s, c_ast.Assignment) and s.op == "=" and _field(s.lvalue, names) is not None \
                and _is_const(s.rvalue):
            return True
    return False


def _rewrite(program, ast, why: list | None = None) -> int:
    """Fold the structs of constants of the entry of ``ast``; the number folded. A struct
    filled with constants that cannot be folded appends its declaration to ``why``."""
    fdef = canon.entry_def(ast, program.entry.name)
    done = 0
    tops = [i for i, d in enumerate(fdef.body.block_items or []) if isinstance(d, c_ast.Decl)
            and d.name and d.init is None and isinstance(d.type, c_ast.TypeDecl)]
    names = [fdef.body.block_items[i].name for i in tops]
    for name in names:
        # declared once in the whole entry (no shadowing in nested scopes)
        if not _declared_once(fdef, name):
            continue
        saved = fdef.body
        fdef.body = copy.deepcopy(saved)
        for _ in range(8):
            decl = next((d for d in fdef.body.block_items or [] if isinstance(d, c_ast.Decl) and
                         d.name == name), None)
            plan = _plan(ast, fdef, decl) if decl is not None else None
            if plan is None or not plan.pending:
                break
            # fold what is known, then unroll the loops over the variable indices
            _replace(fdef.body, plan.reads)
            if not _unroll_index_loops(fdef.body, plan.pending):
                plan = None
                break
        if plan is None or plan.pending:
            fdef.body = saved
            decl = next((d for d in saved.block_items or [] if isinstance(d, c_ast.Decl) and
                         d.name == name), None)
            if why is not None and decl is not None and _filled_with_constants(ast, fdef, decl):
                why.append(decl)
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
              "stores, whole copies after them and later field reads (array elements at a "
              "variable index resolved by unrolling its constant-bound loop) "
              "(XP-STRUCT-CONSTS-002 none, XP-STRUCT-CONSTS-003 none foldable)"),
    guarantees=("same outputs on the virtual device", "the struct and its stores are removed"),
))
def struct_consts(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@struct_consts.legality
def _legal(program):
    """The rewrite, run on a copy of the AST: the plan the rewrite emits."""
    if program.entry is None or program.ast is None or \
            canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-STRUCT-CONSTS-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    why: list = []
    if not _rewrite(program, ast, why):
        if why:         # structs filled with constants, none foldable
            return [canon.diag(program, NAME, "XP-STRUCT-CONSTS-003", f"struct '{why[0].name}' is "
                               "filled with constants but also written, escapes, or has a field "
                               "read that nothing wrote or that cannot be resolved", why[0])]
        return [canon.diag(program, NAME, "XP-STRUCT-CONSTS-002",
                           "no local struct that a zero fill or constant field stores write")]
    return canon.Rewritten(ast)
