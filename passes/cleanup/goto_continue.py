"""goto_continue: ``goto L`` to a label closing a loop body -> ``continue``.

Summary
    The GPU lift turns an early ``return`` of a thread into ``goto xp_skipN;`` where the label
    ``xp_skipN: ;`` is the last statement of the per-thread loop body. In every function of
    the file, a label ``L: ;`` that ends the body of a ``for`` / ``while`` / ``do`` loop (only
    empty statements after it), all of whose ``goto L`` statements are inside that body and
    not inside a loop or ``switch`` nested in it, is removed and each ``goto L`` becomes
    ``continue``. A ``goto L`` inside exactly one nested loop that is the last statement run
    before the label (a grid-stride loop ``for (i = ..; i < n; i += ..) { if (c) return; .. }``
    of the source) becomes ``break``. Without the jumps, ``inline`` can inline the lifted
    kernel into the host entry and the loop analyses see structured control flow.
Requires
    1. At least one function definition in the file (XP-GOTO-CONTINUE-001).
    2. At least one such label (XP-GOTO-CONTINUE-002).
Guarantees
    Same outputs on the virtual device: ``continue`` jumps to the end of the innermost
    enclosing loop body, which is where the label stood (a ``for`` loop still runs its
    increment); ``break`` leaves the nested loop, after which nothing runs before the label.
Options
    none.
Example
    ``for (..) { if (i >= n) goto s; out[i] = 1; s: ; }`` ->
    ``for (..) { if (i >= n) continue; out[i] = 1; }``
"""
from __future__ import annotations

import copy
from dataclasses import replace

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "goto_continue"
_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


def _closing_label(body) -> c_ast.Label | None:
    if not isinstance(body, c_ast.Compound) or not body.block_items:
        return None
    items = list(body.block_items)
    while items and isinstance(items[-1], c_ast.EmptyStatement):
        items.pop()
    last = items[-1] if items else None
    if isinstance(last, c_ast.Label) and isinstance(last.stmt, (c_ast.EmptyStatement,
                                                                  type(None))):
        return last
    return None


def _gotos(node, label: str, nested, out: list) -> None:
    """Collect (goto, the loops and switches nested in the loop body that enclose it, outermost
    first) under ``node``."""
    if isinstance(node, c_ast.Goto) and node.name == label:
        out.append((node, tuple(nested or ())))
        return
    inner = tuple(nested or ()) + ((node,) if isinstance(node, _LOOPS + (c_ast.Switch,)) else ())
    for _, c in node.children():
        _gotos(c, label, inner, out)


def _tail_loops(node, out: set, label=None) -> None:
    """Ids of the loops after which nothing runs before the end of ``node`` (a loop body, the
    closing ``label`` excluded)."""
    if isinstance(node, c_ast.Compound):
        items = [s for s in (node.block_items or []) if s is not label
                 and not isinstance(s, c_ast.EmptyStatement)]
        if items:
            _tail_loops(items[-1], out)
    elif isinstance(node, c_ast.If):
        _tail_loops(node.iftrue, out)
        if node.iffalse is not None:
            _tail_loops(node.iffalse, out)
    elif isinstance(node, _LOOPS):
        out.add(id(node))


def _rewrite_fn(fdef) -> int:
    done = 0
    loops = [n for n in canon.walk(fdef.body) if isinstance(n, _LOOPS)]
    for lp in loops:
        lab = _closing_label(lp.stmt)
        if lab is None:
            continue
        inside: list = []
        for s in lp.stmt.block_items:
            _gotos(s, lab.name, False, inside)
        everywhere: list = []
        _gotos(fdef.body, lab.name, False, everywhere)
        tails: set = set()
        _tail_loops(lp.stmt, tails, lab)
        if len(everywhere) != len(inside) or any(
                len(nested) > 1 or (nested and id(nested[0]) not in tails) for _, nested in inside):
            continue
        _replace(lp.stmt, {id(g) for g, nested in inside if not nested},
                 {id(g) for g, nested in inside if nested})
        lp.stmt.block_items = [s for s in lp.stmt.block_items if s is not lab]
        done += 1
    return done


def _replace(node, to_continue: set, to_break: set) -> None:
    canon.replace_nodes(node, lambda n: c_ast.Continue(n.coord) if id(n) in to_continue
                        else c_ast.Break(n.coord) if id(n) in to_break else None)


def _run(ast) -> int:
    return sum(_rewrite_fn(e) for e in ast.ext if isinstance(e, c_ast.FuncDef))


@register(PassInfo(
    name=NAME,
    summary="goto to a label that closes a loop body -> continue (break out of a nested loop "
            "that ends the body) (every function)",
    requires=("a function definition (XP-GOTO-CONTINUE-001)",
              "a label ending a loop body whose gotos are all in that body, outside nested "
              "loops and switches (XP-GOTO-CONTINUE-002)"),
    guarantees=("same outputs on the virtual device", "the rewritten labels and gotos are gone"),
))
def goto_continue(program, *, plan=None):
    from platforms import parse as parse_source
    import platforms

    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    draft = replace(program, ast=plan.ast, source="")
    text = platforms.module(program.platform, "backend").emit(draft)
    return parse_source(text, program.platform, program.path,
                        entry=program.entry.name if program.entry else None)


@goto_continue.legality
def _legal(program):
    if program.ast is None or not any(isinstance(e, c_ast.FuncDef) for e in program.ast.ext):
        return [canon.diag(program, NAME, "XP-GOTO-CONTINUE-001", "no function definition")]
    ast = copy.deepcopy(program.ast)        # the rewrite, run on a copy: the plan it emits
    if not _run(ast):
        return [canon.diag(program, NAME, "XP-GOTO-CONTINUE-002", "no label closing a loop "
                           "body that only jumps from that body reach")]
    return canon.Rewritten(ast)
