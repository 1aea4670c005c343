"""goto_loop: a backward ``if (c) goto L;`` to a label earlier in the same block -> ``do { } while (c);``.

Summary
    Hand-written SIMD kernels (simsimd and the like) write their main loop as a label and a
    conditional jump back to it::

        L: if (n < 16) { ...masked tail...; n = 0; } else { ...; n -= 16; }
           acc = _mm512_fmadd_ps(a, b, acc);
           if (n) goto L;

    In every function, a label ``L`` that is an item of a block, whose only ``goto L`` is a
    later item ``if (c) goto L;`` (or ``goto L;``: ``c`` is 1) of the same block, becomes
    ``do { <items from the label's statement to the jump> } while (c);``. The loop analyses,
    ``inline`` and the binders then see structured control flow.
Requires
    1. At least one function definition (XP-GOTO-LOOP-001).
    2. At least one such label (XP-GOTO-LOOP-002), where the region between the label and the
       jump has no ``break`` / ``continue`` of its own (they would bind to the new loop), no
       other label or goto, and declares no name that the condition or the statements after the
       jump use (the loop body is a new scope).
Guarantees
    Same outputs on the virtual device: the region runs, then ``c`` is evaluated at the same
    point as the jump's, and the region runs again while it holds.
Options
    none.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "goto_loop"
_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


@dataclass
class Loop:
    """A rewritable label: items ``start`` (the label) to ``end`` (the jump) of ``block``."""

    block: c_ast.Compound
    start: int
    end: int
    cond: c_ast.Node


def _jump_to(stmt, label: str):
    """The condition of ``if (c) goto label;`` / ``goto label;`` (1), else None."""
    if isinstance(stmt, c_ast.Goto) and stmt.name == label:
        return c_ast.Constant("int", "1")
    if isinstance(stmt, c_ast.If) and stmt.iffalse is None:
        body = stmt.iftrue
        if isinstance(body, c_ast.Compound) and len(body.block_items or []) == 1:
            body = body.block_items[0]
        if isinstance(body, c_ast.Goto) and body.name == label:
            return stmt.cond
    return None


def _own_escapes(node, in_loop: bool = False, in_switch: bool = False) -> bool:
    """A break / continue under ``node`` that binds outside it (not in a nested loop / switch)."""
    if isinstance(node, c_ast.Break) and not (in_loop or in_switch):
        return True
    if isinstance(node, c_ast.Continue) and not in_loop:
        return True
    in_loop = in_loop or isinstance(node, _LOOPS)
    in_switch = in_switch or isinstance(node, c_ast.Switch)
    return any(_own_escapes(c, in_loop, in_switch) for _, c in node.children())


def _declared(items) -> set[str]:
    return {s.name for s in items if isinstance(s, c_ast.Decl) and s.name}


def find_loops(fdef) -> list[Loop]:
    """The rewritable labels of one function (the check's plan)."""
    gotos: dict[str, int] = {}
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Goto):
            gotos[n.name] = gotos.get(n.name, 0) + 1
    out = []
    for block in (n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Compound)):
        items = block.block_items or []
        for i, lab in enumerate(items):
            if not isinstance(lab, c_ast.Label) or gotos.get(lab.name) != 1:
                continue
            j = next((k for k in range(i + 1, len(items)) if _jump_to(items[k], lab.name) is not None), None)
            if j is None:
                continue
            region = ([lab.stmt] if lab.stmt is not None else []) + list(items[i + 1:j])
            if any(_own_escapes(s) for s in region):
                continue
            if any(isinstance(n, (c_ast.Label, c_ast.Goto)) for s in region for n in canon.walk(s)):
                continue
            cond = _jump_to(items[j], lab.name)
            after = canon.ids_in(cond) | set().union(*(canon.ids_in(s) for s in items[j + 1:]))
            if _declared(region) & after:
                continue
            out.append(Loop(block, i, j, cond))
    return out


def _rewrite(loops: list[Loop]) -> None:
    # later loops of a block first, so the indices of earlier ones stay valid
    for lp in sorted(loops, key=lambda lp: (id(lp.block), -lp.start)):
        items = list(lp.block.block_items)
        lab = items[lp.start]
        region = ([lab.stmt] if lab.stmt is not None else []) + items[lp.start + 1:lp.end]
        loop = c_ast.DoWhile(lp.cond, c_ast.Compound(region), lab.coord)
        lp.block.block_items = items[:lp.start] + [loop] + items[lp.end + 1:]


@register(PassInfo(
    name=NAME,
    summary="a label and a later 'if (c) goto label;' in the same block -> do { } while (c)",
    requires=("a function definition (XP-GOTO-LOOP-001)",
              "a label whose only goto is a later item of its block, with no break / continue, "
              "label or goto of its own in between and no declaration used after the jump "
              "(XP-GOTO-LOOP-002)"),
    guarantees=("same outputs on the virtual device", "the rewritten labels and gotos are gone"),
))
def goto_loop(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@goto_loop.legality
def _legal(program):
    if program.ast is None or not any(isinstance(e, c_ast.FuncDef) for e in program.ast.ext):
        return [canon.diag(program, NAME, "XP-GOTO-LOOP-001", "no function definition")]
    ast = copy.deepcopy(program.ast)        # the rewrite, run on a copy: the plan it emits
    loops = [lp for e in ast.ext if isinstance(e, c_ast.FuncDef) for lp in find_loops(e)]
    if not loops:
        return [canon.diag(program, NAME, "XP-GOTO-LOOP-002", "no label with a single backward "
                           "conditional goto in its block")]
    _rewrite(loops)
    return canon.Rewritten(ast)
