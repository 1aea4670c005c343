"""guard_continue: ``if (c) continue;`` at the top level of a loop body -> a guard around the rest.

Summary
    In the entry function, a ``for`` / ``while`` / ``do`` loop whose body block holds, at its
    top level, ``if (c) continue;`` (or ``if (c) { continue; }``, no ``else``) becomes
    ``if (!(c)) { the statements after it }``: the statements that followed run exactly when
    ``c`` is false, as before, and the next iteration starts either way. The early exits of a
    task body after ``inline`` (``if (r < 0 || r >= H) continue;`` in a row loop) then are
    conditions that ``passes/analysis/affine`` records as guards of the accesses below them (their
    subscripts stay within the bounds the condition excludes), instead of control flow it does
    not see.
Requires
    1. The program has an entry function definition (XP-GUARD-001).
    2. At least one such ``if (c) continue;`` whose following statements contain no label
       (XP-GUARD-002).
Guarantees
    Same outputs on the virtual device (the same statements run in the same order; ``c`` is
    evaluated once, as before).
Options
    none.
Example
    ``for (int k = 0; k < 3; ++k) { int r = o + k; if (r < 0 || r >= H) continue; y[k] = x[r]; }``
    -> ``for (...) { int r = o + k; if (!(r < 0 || r >= H)) { y[k] = x[r]; } }``
"""
from __future__ import annotations

import copy
from dataclasses import replace

from pycparser import c_ast

from xpiler.ir.errors import Coord, Diagnostic

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "guard_continue"


def _is_continue_if(s) -> bool:
    if not isinstance(s, c_ast.If) or s.iffalse is not None:
        return False
    t = s.iftrue
    if isinstance(t, c_ast.Compound) and len(t.block_items or []) == 1:
        t = t.block_items[0]
    return isinstance(t, c_ast.Continue)


def _sites(fdef) -> list:
    """Loop body blocks holding a top-level ``if (c) continue;`` with no label after it."""
    out = []
    for n in canon.walk(fdef.body):
        if isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile)) and isinstance(n.stmt, c_ast.Compound):
            items = n.stmt.block_items or []
            for k, s in enumerate(items):
                if _is_continue_if(s) and not any(isinstance(m, c_ast.Label)
                                                  for r in items[k + 1:] for m in canon.walk(r)):
                    out.append(n.stmt)
                    break
    return out


def _rewrite_block(block: c_ast.Compound) -> bool:
    items = list(block.block_items or [])
    for k, s in enumerate(items):
        if _is_continue_if(s):
            rest = c_ast.Compound(items[k + 1:])
            _rewrite_block(rest)                    # later continues of the same body
            guard = c_ast.If(c_ast.UnaryOp("!", s.cond), rest, None, s.coord)
            block.block_items = items[:k] + [guard]
            return True
    return False


@register(PassInfo(
    name=NAME,
    summary="if (c) continue; at the top of a loop body -> if (!(c)) { rest } (guards the affine "
            "analysis sees)",
    options={},
    requires=("an entry function definition (XP-GUARD-001)",
              "a top-level if (c) continue; in a loop body with no label after it (XP-GUARD-002)"),
    guarantees=("same outputs on the virtual device",),
    introduces=(),
))
def guard_continue(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    count = 0
    for block in plan.data:
        count += _rewrite_block(block)
    facts = copy.deepcopy(program.facts)
    facts.setdefault("statistics", {})[NAME] = {"guards": count}
    return replace(program, ast=plan.ast, facts=facts, source="")


@guard_continue.legality
def _legal(program):
    """The loop bodies to rewrite, found on a copy of the AST that the rewrite then changes:
    the plan."""
    fdef = canon.entry_def(program.ast, program.entry.name) if program.entry is not None else None
    if fdef is None:
        return [Diagnostic("XP-GUARD-001", "no entry function definition", Coord(program.path), pass_name=NAME)]
    ast = copy.deepcopy(program.ast)
    sites = _sites(canon.entry_def(ast, program.entry.name))
    if not sites:
        return [Diagnostic("XP-GUARD-002", "no top-level 'if (c) continue;' in a loop body", Coord(program.path),
                           pass_name=NAME)]
    return canon.Rewritten(ast, sites)
