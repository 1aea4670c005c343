"""loop_split: strip-mine one counted loop into a loop over tiles and a loop inside a tile.

Summary
    The loop whose induction variable is ``loop`` (``nth`` picks among several, 0-based in
    program order), ``for (T i = lo; i < hi; ++i) body``, becomes::

        for (T i_o = lo; i_o < hi; i_o += N)
          for (T i = i_o; i < i_o + N && i < hi; ++i) body

    (``<=`` bounds keep ``<=``; when ``lo`` and ``hi`` are constants and ``N`` divides the
    trip count the inner condition is just ``i < i_o + N``). The same values of ``i`` are
    visited in the same order, so the rewrite is always legal for such a loop; a
    ``#pragma omp`` line on the loop (and a ``collapse`` pragma of a loop around it) is
    dropped because it described the old nest.
Requires
    1. The program has an entry function definition (XP-SPLIT-001).
    2. Options ``loop`` and ``factor`` (an integer >= 2) are given (XP-SPLIT-002).
    3. Exactly one loop declares ``loop`` as its induction variable, or ``nth`` selects one
       (XP-SPLIT-003 none / nth out of range, XP-SPLIT-004 several).
    4. The loop is counted: ``for (T i = lo; i < hi | i <= hi; ++i)`` with an integer ``T``
       and step 1, its body does not write ``i``, its bounds are pure (no memory reads, no
       calls other than math functions) and name nothing the body writes, and no ``break`` /
       ``return`` / ``goto`` leaves the body (``continue`` is fine) (XP-SPLIT-005).
Guarantees
    Same outputs on the virtual device: the instances of the body run in the same order with
    the same values of ``i`` (assuming ``hi + N`` fits ``T``). The pass is deterministic and
    pure; the tile variable is a fresh name ``<i>_o``.
Options
    loop (str): induction variable of the loop to split; factor (int): tile extent N;
    nth (int, default -1 = the only one): which loop of that name.
Example
    ``loop_split{loop=i;factor=4}`` on ``for (int i = 0; i < n; ++i) y[i] = x[i];`` ->
    ``for (int i_o = 0; i_o < n; i_o += 4) for (int i = i_o; i < i_o + 4 && i < n; ++i)
    y[i] = x[i];``
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
import passes.schedule.loop_sched as ls
from passes.base import Option, PassInfo, register
from passes.cleanup.unit_loops import const_int

NAME = "loop_split"
CODES = ("XP-SPLIT-001", "XP-SPLIT-002", "XP-SPLIT-003", "XP-SPLIT-004")


def _plan(program, ast, loop: str, factor: int, nth: int):
    got = ls.select(program, NAME, CODES, loop, nth, ast)
    if isinstance(got, list):
        return got
    fdef, f = got
    if factor < 2:
        return [canon.diag(program, NAME, "XP-SPLIT-002", f"option 'factor' must be an integer "
                           f">= 2 (got {factor})", f)]
    cl, why = ls.counted(f)
    if cl is None or cl.step != 1:
        return [canon.diag(program, NAME, "XP-SPLIT-005", f"loop '{loop}' is not a counted "
                           f"step-1 loop: {why or 'the step is not 1'}", f)]
    if cl.var in canon.written_names(f.stmt):
        return [canon.diag(program, NAME, "XP-SPLIT-005", f"the body of loop '{loop}' writes "
                           "its induction variable", f)]
    why = ls.invariant_bounds(cl, f.stmt)
    if why:
        return [canon.diag(program, NAME, "XP-SPLIT-005", why, f)]
    esc = ls.escapes(f.stmt, allow_continue=True)
    if esc is not None:
        return [canon.diag(program, NAME, "XP-SPLIT-005", f"a {type(esc).__name__.lower()} "
                           f"leaves the body of loop '{loop}'", esc)]
    return fdef, f, cl


def _rewrite(program, ast, fdef, f, cl, factor: int):
    outer = ls.fresh(ast, cl.var + "_o")
    o = c_ast.ID(outer)
    tdecl = copy.deepcopy(cl.decl)
    canon.set_declname(tdecl, outer)
    tdecl.init = copy.deepcopy(cl.lo)
    head = c_ast.For(c_ast.DeclList([tdecl]),
                     c_ast.BinaryOp(cl.op, c_ast.ID(outer), copy.deepcopy(cl.hi)),
                     c_ast.Assignment("+=", c_ast.ID(outer), c_ast.Constant("int", str(factor))),
                     None)
    lo, hi = const_int(cl.lo), const_int(cl.hi)
    exact = lo is not None and hi is not None and \
        ((hi + (1 if cl.op == "<=" else 0)) - lo) % factor == 0
    tile = c_ast.BinaryOp("<", c_ast.ID(cl.var),
                          c_ast.BinaryOp("+", o, c_ast.Constant("int", str(factor))))
    cond = tile if exact else c_ast.BinaryOp(
        "&&", tile, c_ast.BinaryOp(cl.op, c_ast.ID(cl.var), copy.deepcopy(cl.hi)))
    idecl = copy.deepcopy(cl.decl)
    idecl.init = c_ast.ID(outer)
    inner = c_ast.For(c_ast.DeclList([idecl]), cond, copy.deepcopy(f.next), f.stmt)
    head.stmt = inner
    ls.drop_omp(fdef, [f])
    ls.replace_stmt(ls.parents(fdef), f, [head])
    return canon.reparse(program, ast)


@register(PassInfo(
    name=NAME,
    summary="strip-mine a counted loop (by induction variable name) into tiles of 'factor' "
            "iterations",
    anchor="loop",
    options={"loop": Option(str, "", "induction variable of the loop to split"),
             "factor": Option(int, 0, "tile extent (>= 2)"),
             "nth": Option(int, -1, "which loop of that name (0-based; -1: the only one)")},
    requires=("an entry function definition (XP-SPLIT-001)",
              "options loop and factor >= 2 (XP-SPLIT-002)",
              "exactly one loop named loop, or nth selects one (XP-SPLIT-003, XP-SPLIT-004)",
              "a counted step-1 loop whose body does not write its variable, with pure "
              "loop-invariant bounds and no break/return/goto out of the body (XP-SPLIT-005)"),
    guarantees=("same outputs on the virtual device (same instances, same order)",
                "#pragma omp on the loop and collapse pragmas around it dropped"),
    introduces=("a tile loop <var>_o",),
))
def loop_split(program, *, loop: str = "", factor: int = 0, nth: int = -1, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program, loop=loop, factor=factor, nth=nth))
    return _rewrite(program, plan.ast, *plan.data, factor)


@loop_split.legality
def _legal(program, *, loop: str = "", factor: int = 0, nth: int = -1):
    """The plan (the loops matched, the dependences proved), found on a copy of the AST that
    the rewrite then changes; diagnostics when refused."""
    ast = copy.deepcopy(program.ast)
    got = _plan(program, ast, loop, factor, nth)
    return got if isinstance(got, list) else canon.Rewritten(ast, got)
