"""localize: file-scope arrays only the entry uses -> ``static`` arrays local to the entry.

Summary
    A VNNI kernel often keeps its quantisation scratch at file scope
    (``alignas(64) static uint8_t Xq[NB * HP * WP * CP];``). The lowering passes analyse and
    move only the entry's own data (parameters and locals), so such an array is moved, as it
    is (alignment, initialiser, qualifiers kept), to the top of the entry's body with
    ``static`` storage: the same object lifetime (the whole program), the same initial value
    and the same persistence between calls, now visible only in the entry. Run it after
    ``inline`` so that helpers that used the array have been inlined into the entry.
Requires
    1. The program has an entry function definition  [XP-LOCALIZE-001].
    2. At least one file-scope array definition (not ``extern``) is referenced in the entry
       and in no other function definition or file-scope declaration initialiser, and the
       entry declares no parameter or local of the same name  [XP-LOCALIZE-002: the entry
       uses no file-scope array, nothing to do; XP-LOCALIZE-003: it uses some, none movable].
Guarantees
    Same outputs on the virtual device (a static-storage object keeps its identity; only its
    scope changes). Arrays used elsewhere stay where they are.
Options
    none.
Example
    ``alignas(64) static int8_t Wp[1152]; extern "C" void k(...) { ... Wp[i] ... }``  ->
    ``extern "C" void k(...) { alignas(64) static int8_t Wp[1152]; ... Wp[i] ... }``
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "localize"


def _ids(node) -> set[str]:
    return {n.name for n in canon.walk(node) if isinstance(n, c_ast.ID)}


def _declared(node) -> set[str]:
    return {n.name for n in canon.walk(node) if isinstance(n, c_ast.Decl) and n.name}


def candidates(ast, entry: str) -> tuple[list[c_ast.Decl], list[tuple[str, c_ast.Node]]]:
    """(file-scope array definitions that can move into ``entry``, [(reason, node)] for the
    ones that cannot) - the legality of the pass."""
    fdef = canon.entry_def(ast, entry)
    used = _ids(fdef.body)
    own = _declared(fdef)
    moving, refused = [], []
    for e in ast.ext:
        if not (isinstance(e, c_ast.Decl) and e.name and isinstance(e.type, c_ast.ArrayDecl)):
            continue
        if e.name not in used:
            continue
        if "extern" in (e.storage or []):
            refused.append((f"'{e.name}' is declared extern (defined elsewhere)", e))
            continue
        if e.name in own:
            refused.append((f"the entry declares its own '{e.name}'", e))
            continue
        others = [x for x in ast.ext if x is not fdef and x is not e and
                  (isinstance(x, c_ast.FuncDef) or isinstance(x, c_ast.Decl))]
        if any(e.name in _ids(x) for x in others):
            refused.append((f"'{e.name}' is also used outside the entry", e))
            continue
        moving.append(e)
    return moving, refused


def _rewrite(ast, entry: str, moving=None) -> int:
    """Move ``moving`` (default: the candidates found in ``ast``) into the entry."""
    if moving is None:
        moving, _ = candidates(ast, entry)
    if not moving:
        return 0
    fdef = canon.entry_def(ast, entry)
    ids = {id(d) for d in moving}
    ast.ext = [e for e in ast.ext if id(e) not in ids]
    for d in moving:
        d.storage = list(d.storage or [])
        if "static" not in d.storage:
            d.storage.append("static")
    fdef.body.block_items = list(moving) + list(fdef.body.block_items or [])
    return len(moving)


@register(PassInfo(
    name=NAME,
    summary="file-scope arrays used only by the entry -> static arrays at the top of the entry",
    requires=("an entry function definition (XP-LOCALIZE-001)",
              "a file-scope array used by the entry only, whose name the entry does not "
              "redeclare (XP-LOCALIZE-002 none used, XP-LOCALIZE-003 none movable)"),
    guarantees=("same outputs on the virtual device", "static storage, alignment and "
                "initialiser kept"),
    introduces=("static local arrays in the entry",),
))
def localize(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    _rewrite(plan.ast, program.entry.name, plan.data)
    return canon.reparse(program, plan.ast)


@localize.legality
def _legal(program):
    """The arrays to move, found on a copy of the AST that the rewrite then changes: the plan."""
    if program.entry is None or canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-LOCALIZE-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    moving, refused = candidates(ast, program.entry.name)
    if not moving:
        if refused:
            why, node = refused[0]
            return [canon.diag(program, NAME, "XP-LOCALIZE-003", why, node)]
        fdef = canon.entry_def(program.ast, program.entry.name)
        own = [n.name for n in canon.walk(fdef.body) if isinstance(n, c_ast.Decl) and
               isinstance(n.type, c_ast.ArrayDecl) and "static" in (n.storage or [])]
        why = "the entry uses no file-scope array"
        if own:          # already where the pass would put them (task_bind / loop_bind take them)
            why += f" (its static arrays {', '.join(own[:3])}{', ...' if len(own) > 3 else ''} " \
                   "are already local to it)"
        return [canon.diag(program, NAME, "XP-LOCALIZE-002", why)]
    return canon.Rewritten(ast, moving)
