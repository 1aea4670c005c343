"""devtemp: device temporaries of a lifted host wrapper -> local arrays of the entry.

Summary
    After ``loop_recovery`` (and ``devcopy``, which removes the buffers mirrored from
    parameters) a host wrapper can still allocate device buffers that only carry values from
    one kernel to the next: ``T *d; xp_malloc((void **) &d, S); k1(.., d, ..); k2(.., d, ..);
    xp_free(d);``. No host data goes in or out of them. Each such buffer becomes the local
    array ``T d[N]`` declared where it was allocated (``N = E`` for ``S = E * sizeof(T)``,
    else ``(S + sizeof(T) - 1) / sizeof(T)``) and its ``xp_free`` is dropped. The dependence
    analysis then sees an array it can size, and the lowering (``task_bind`` / ``loop_bind``)
    turns it into a device scratch buffer.
Requires
    1. The program has an entry function definition (XP-DEVTEMP-001).
    2. At least one local pointer to a scalar type declared in the entry's top-level block,
       allocated exactly once by a top-level ``xp_malloc((void **) &d, S)`` statement after
       its declaration, never assigned or address-taken otherwise, never under ``sizeof``,
       used only after the allocation and, if freed, freed by one top-level ``xp_free(d)``
       after all its uses; ``S`` reads only scalars the entry never assigns
       (XP-DEVTEMP-002: no local allocated once by xp_malloc, nothing to do; XP-DEVTEMP-003:
       such locals, none meeting the conditions).
Guarantees
    Same outputs on the virtual device: the array has at least ``S`` bytes and the same
    (indeterminate) initial contents as a fresh allocation; every use sees the same address
    for the whole lifetime.
Options
    none.
Example
    ``float *d_t; xp_malloc((void **) &d_t, 128 * sizeof(float)); k(x, d_t, ..); xp_free(d_t);``
    -> ``float d_t[128]; k(x, d_t, ..);``
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "devtemp"


def _strip(e):
    while isinstance(e, c_ast.Cast):
        e = e.expr
    return e


def _alloc_target(s) -> tuple[str, c_ast.Node] | None:
    """(buffer name, size expression) of a statement ``xp_malloc((void **) &d, S)``."""
    if canon.call_name(s) != "xp_malloc" or s.args is None or len(s.args.exprs) != 2:
        return None
    a = _strip(s.args.exprs[0])
    if isinstance(a, c_ast.UnaryOp) and a.op == "&" and isinstance(a.expr, c_ast.ID):
        return a.expr.name, s.args.exprs[1]
    return None


def _free_target(s) -> str | None:
    if canon.call_name(s) in ("xp_free", "free") and s.args is not None and \
            len(s.args.exprs) == 1:
        a = _strip(s.args.exprs[0])
        return a.name if isinstance(a, c_ast.ID) else None
    return None


def _elem_words(decl) -> list[str] | None:
    t = decl.type
    if not isinstance(t, c_ast.PtrDecl) or not isinstance(t.type, c_ast.TypeDecl) or \
            not isinstance(t.type.type, c_ast.IdentifierType):
        return None
    return canon.type_words(t.type)


def _sizeof_of(e, words) -> bool:
    return isinstance(e, c_ast.UnaryOp) and e.op == "sizeof" and \
        isinstance(e.expr, c_ast.Typename) and canon.type_words(e.expr.type) == words


def _count(size, words):
    """Element count expression for ``size`` bytes of ``words`` elements."""
    if isinstance(size, c_ast.BinaryOp) and size.op == "*":
        if _sizeof_of(size.right, words):
            return copy.deepcopy(size.left)
        if _sizeof_of(size.left, words):
            return copy.deepcopy(size.right)
    tn = c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None,
                                                       c_ast.IdentifierType(list(words))))
    so = c_ast.UnaryOp("sizeof", tn)
    return c_ast.BinaryOp("/", c_ast.BinaryOp("-", c_ast.BinaryOp(
        "+", copy.deepcopy(size), so), c_ast.Constant("int", "1")), copy.deepcopy(so))


def _plan(fdef, why: list | None = None) -> dict[str, tuple]:
    """name -> (decl, alloc statement, free statement | None, size); a local allocated once by
    xp_malloc that cannot become an array appends ``(reason, decl)`` to ``why``."""
    items = list(fdef.body.block_items or [])
    decls = {s.name: (k, s) for k, s in enumerate(items)
             if isinstance(s, c_ast.Decl) and s.name and _elem_words(s) and
             (s.init is None or (isinstance(_strip(s.init), c_ast.Constant) and
                                 _strip(s.init).value == "0"))}
    assigned = canon.written_names(fdef.body)
    out = {}
    for name, (kd, decl) in decls.items():
        allocs = [(k, s) for k, s in enumerate(items) if (_alloc_target(s) or ("",))[0] == name]
        frees = [(k, s) for k, s in enumerate(items) if _free_target(s) == name]
        if len(allocs) != 1:
            continue

        def reject(r, name=name, decl=decl):
            if why is not None:
                why.append((f"'{name}' {r}", decl))

        if len(frees) > 1:
            reject("is freed more than once")
            continue
        ka, alloc = allocs[0]
        size = alloc.args.exprs[1]
        if ka < kd or canon.has_side_effects(size) or canon.ids_in(size) & assigned:
            reject("is allocated before its declaration or with a size that has side effects or "
                   "names something the entry assigns")
            continue
        kf = frees[0][0] if frees else len(items)
        ok = True
        alloc_ref = _strip(alloc.args.exprs[0])
        declared_twice = sum(1 for n in canon.walk(fdef.body)
                             if isinstance(n, c_ast.Decl) and n.name == name) != 1
        if declared_twice:
            reject("is declared twice")
            continue
        for k, s in enumerate(items):
            if k in (kd, ka) or (frees and k == kf):
                continue
            for n in canon.walk(s):
                if isinstance(n, c_ast.ID) and n.name == name and not (ka < k < kf):
                    ok = False
                if isinstance(n, c_ast.Assignment) and canon.lvalue_root(n.lvalue) == name \
                        and isinstance(n.lvalue, c_ast.ID):
                    ok = False
                if isinstance(n, c_ast.UnaryOp) and n.op in ("&", "sizeof", "++", "--", "p++",
                                                             "p--") and \
                        isinstance(_strip(n.expr), c_ast.ID) and _strip(n.expr).name == name:
                    ok = False
        if ok and alloc_ref is not None:
            out[name] = (decl, alloc, frees[0][1] if frees else None, size)
        else:
            reject("is used outside its allocation and free, assigned, or has its address or "
                   "size taken")
    return out


def _rewrite(fdef, plan) -> None:
    items = []
    drop = {id(v[0]) for v in plan.values()} | {id(v[2]) for v in plan.values() if v[2]}
    at = {id(v[1]): k for k, v in plan.items()}
    for s in fdef.body.block_items or []:
        if id(s) in drop:
            continue
        if id(s) in at:
            name = at[id(s)]
            decl, _, _, size = plan[name]
            words = _elem_words(decl)
            elem = copy.deepcopy(decl.type.type)
            elem.declname = name
            arr = c_ast.ArrayDecl(elem, _count(size, words), [])
            items.append(c_ast.Decl(name, [], [], [], [], arr, None, None, coord=decl.coord))
            continue
        items.append(s)
    fdef.body.block_items = items


@register(PassInfo(
    name=NAME,
    summary="device temporaries (xp_malloc'd, never copied to or from the host) -> local "
            "arrays of the entry",
    requires=("an entry function definition (XP-DEVTEMP-001)",
              "a top-level pointer local allocated once by xp_malloc, otherwise only read "
              "between its allocation and its free, size over unassigned scalars "
              "(XP-DEVTEMP-002 none allocated once, XP-DEVTEMP-003 none replaceable)"),
    guarantees=("same outputs on the virtual device", "each array holds at least the "
                "allocated bytes"),
))
def devtemp(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    _rewrite(canon.entry_def(plan.ast, program.entry.name), plan.data)
    return canon.reparse(program, plan.ast)


@devtemp.legality
def _legal(program):
    """The temporaries, found on a copy of the AST that the rewrite then changes: the plan."""
    fdef = canon.entry_def(program.ast, program.entry.name) if program.entry else None
    if fdef is None:
        return [canon.diag(program, NAME, "XP-DEVTEMP-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    why: list = []
    found = _plan(canon.entry_def(ast, program.entry.name), why)
    if not found:
        if why:         # locals allocated once by xp_malloc, none replaceable
            reason, decl = why[0]
            return [canon.diag(program, NAME, "XP-DEVTEMP-003", f"no device temporary: {reason}", decl)]
        return [canon.diag(program, NAME, "XP-DEVTEMP-002", "no device temporary: no pointer "
                           "local allocated once by xp_malloc")]
    return canon.Rewritten(ast, found)
