"""loop_reorder: interchange two perfectly nested loops, or permute a perfect nest.

Summary
    ``loops=I,J`` names two loops of one perfect nest by their induction variables: their
    headers are swapped (interchange; the order in which the two names are given does not
    matter; loops between them stay in place). With three or more names, ``loops`` is the
    new order of the named loops, outermost first, over the levels they occupy (unnamed loops
    between them stay in place). A perfect nest is a chain of ``for`` loops each of whose body
    is only the next loop (``#pragma omp`` lines between them are dropped); the innermost body
    is unchanged. The rewrite is made when ``passes/analysis/affine/legality.py`` (``reorder_violation``) proves
    with Z3 that no dependence is reversed: for every pair of accesses to one buffer under the
    nest (one a write), no instance ``x`` before ``y`` in the old order (band vectors
    ``x <lex y``) touches the same element as ``y`` while ``y`` comes first in the new order.
Requires
    1. The program has an entry function definition (XP-REORDER-001).
    2. Option ``loops`` lists at least two distinct induction variables (XP-REORDER-002).
    3. Each named loop exists once (or ``nth`` picks the outermost one's occurrence)
       (XP-REORDER-003 none, XP-REORDER-004 several).
    4. The named loops lie in one perfect nest (each body from the outermost named loop
       down to the innermost one is only the next loop) (XP-REORDER-005).
    5. Each is a counted loop (positive constant step) that ``affine`` can analyse, whose
       bounds use none of the other nest variables (rectangular) and nothing the nest
       writes; no ``break`` / ``return`` / ``goto`` in the body; no call of unknown effect or
       unanalysable store (XP-REORDER-006).
    6. No scalar declared outside the innermost loop is assigned in the body (a reduction or
       running value fixes the order) (XP-REORDER-007).
    7. No dependence is reversed by the new order (XP-REORDER-008).
    Loops already in the requested order: nothing to do, the program is left unchanged
    (XP-REORDER-009, not applicable).
Guarantees
    Same outputs on the virtual device: every instance of the body runs once, and each pair
    of instances that touch a common element (one writing) keeps its relative order, so
    results are bit-identical. ``#pragma omp`` lines on the nest (and ``collapse`` pragmas
    around it) are dropped.
    Dependences are those of ``passes/analysis/affine/dependence.py``: pointer parameters do not alias.
Options
    loops (str): comma-separated induction variables; nth (int, default -1): which loop
    named like the first of them, when several.
Example
    ``loop_reorder{loops=i,j}`` on ``for (i < N) for (j < M) c[j*N+i] = a[i*M+j];`` ->
    ``for (j < M) for (i < N) c[j*N+i] = a[i*M+j];``; refused for
    ``a[i][j] = a[i-1][j+1]`` (direction (<, >) would become (>, <)).
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast

import passes.analysis.affine as affine
import passes.canon as canon
import passes.schedule.loop_sched as ls
from passes.base import Option, PassInfo, register

NAME = "loop_reorder"
CODES = ("XP-REORDER-001", "XP-REORDER-002", "XP-REORDER-003", "XP-REORDER-004")


def _names(loops) -> list[str]:
    return [x for x in re.split(r"[,:\s]+", str(loops or "").strip()) if x]


def _inner_loop(f):
    """The loop that is the whole body of ``f`` (omp pragmas aside), else None."""
    s = f.stmt
    if isinstance(s, c_ast.Compound):
        items = [x for x in (s.block_items or []) if not ls.is_omp(x)]
        if len(items) != 1:
            return None
        s = items[0]
    return s if isinstance(s, c_ast.For) else None


def _plan(program, ast, loops, nth: int):
    names = _names(loops)
    fdef = canon.entry_def(ast, program.entry.name) if program.entry and ast else None
    if fdef is None:
        return [canon.diag(program, NAME, "XP-REORDER-001", "no entry function definition")]
    if len(names) < 2 or len(set(names)) != len(names):
        return [canon.diag(program, NAME, "XP-REORDER-002", "option 'loops' is missing or does "
                           "not list two or more distinct induction variables (loops=I,J)")]
    found = {}
    for k, nm in enumerate(names):
        if k == 0:
            got = ls.select(program, NAME, CODES, nm, nth, ast)
            if isinstance(got, list):
                return got
            found[nm] = got[1]
            continue
        first = found[names[0]]
        cands = [c for c in ls.loops_named(fdef, nm)
                 if any(c is n for n in canon.walk(first.stmt)) or
                 any(first is n for n in canon.walk(c.stmt))]
        if not cands:
            return [canon.diag(program, NAME, "XP-REORDER-003", f"no for loop declaring "
                               f"'{nm}' is nested with loop '{names[0]}'", first)]
        if len(cands) > 1:
            return [canon.diag(program, NAME, "XP-REORDER-004", f"{len(cands)} loops declaring "
                               f"'{nm}' are nested with loop '{names[0]}'", cands[1])]
        found[nm] = cands[0]
    # the band: from the outermost named loop down through single-loop bodies
    chain = []
    outer = None
    for f in found.values():
        if not any(f is n for g in found.values() if g is not f for n in canon.walk(g.stmt)):
            outer = f
    if outer is None:
        return [canon.diag(program, NAME, "XP-REORDER-005", "the named loops are not nested")]
    want = {id(x) for x in found.values()}
    f = outer
    while f is not None:
        chain.append(f)
        if want <= {id(x) for x in chain}:
            break
        f = _inner_loop(f)
    if not want <= {id(x) for x in chain}:
        return [canon.diag(program, NAME, "XP-REORDER-005", f"loops {', '.join(names)} do not "
                           "form one perfect nest (each body exactly the next loop)", outer)]
    band_vars = [ls.counted(x)[0].var if ls.counted(x)[0] else None for x in chain]
    body = chain[-1].stmt
    written = canon.written_names(body)
    for x, v in zip(chain, band_vars):
        cl, why = ls.counted(x)
        if cl is None:
            return [canon.diag(program, NAME, "XP-REORDER-006", f"loop is not counted: {why}", x)]
        if cl.var in written:
            return [canon.diag(program, NAME, "XP-REORDER-006", f"the body writes the induction "
                               f"variable '{cl.var}'", x)]
        why = ls.invariant_bounds(cl, body)
        if why:
            return [canon.diag(program, NAME, "XP-REORDER-006", why, x)]
        other = set(band_vars) - {cl.var}
        uses = (canon.ids_in(cl.lo) | canon.ids_in(cl.hi)) & other
        if uses:
            return [canon.diag(program, NAME, "XP-REORDER-006", f"the bounds of '{cl.var}' use "
                               f"'{sorted(uses)[0]}': the nest is not rectangular", x)]
    esc = ls.escapes(body, allow_continue=True)
    if esc is not None:
        return [canon.diag(program, NAME, "XP-REORDER-006", f"a {type(esc).__name__.lower()} "
                           "leaves the body of the nest", esc)]
    info = ls.analysis(program, ast)
    band = [ls.loop_info(info, x) for x in chain]
    if info is None or any(b is None or not b.canonical for b in band):
        return [canon.diag(program, NAME, "XP-REORDER-006", "the dependence analysis cannot "
                           "model the nest", outer)]
    prob = ls.problems_in(info, [outer])
    if prob is not None:
        return [canon.diag(program, NAME, "XP-REORDER-006", prob[1], prob[2])]
    if band[-1].unknown_calls:
        nm, node = band[-1].unknown_calls[0]
        return [canon.diag(program, NAME, "XP-REORDER-006", f"call to '{nm}' has unknown "
                           "effects", node)]
    band_uids = {b.uid for b in band}
    for var, node, hdr in band[-1].scalar_writes:
        if hdr or var.uid in band_uids or any(o is band[-1] for o in var.owners):
            continue
        return [canon.diag(program, NAME, "XP-REORDER-007", f"'{var.name}' is declared outside "
                           f"the nest and assigned in its body (a reduction or running value "
                           "whose order the nest fixes)", node)]
    pos = {id(x): k for k, x in enumerate(chain)}
    named = [pos[id(found[n])] for n in names]
    slots = sorted(named)
    order = list(range(len(chain)))
    if len(names) == 2:
        order[slots[0]], order[slots[1]] = slots[1], slots[0]
    else:
        for slot, old in zip(slots, named):
            order[slot] = old
    if order == list(range(len(chain))):
        return [canon.diag(program, NAME, "XP-REORDER-009", f"loops {', '.join(names)} are "
                           "already in that order", outer)]
    bad = affine.reorder_violation(info, band, order)
    if bad is not None:
        a1, a2 = bad
        return [canon.diag(program, NAME, "XP-REORDER-008", f"reordering the nest "
                           f"({', '.join(band_vars)}) -> ({', '.join(band_vars[k] for k in order)}) "
                           f"may reverse a dependence on '{_buf(info, a1.buffer)}'", a2.node)]
    return fdef, chain, order


def _buf(info, buffer):
    var = info.locals.get(buffer)
    return var.name if var is not None else buffer


def _rewrite(program, ast, fdef, chain, order):
    heads = [(f.init, f.cond, f.next) for f in chain]
    for k, f in enumerate(chain):
        f.init, f.cond, f.next = heads[order[k]]
    for f in chain[:-1]:                      # drop omp pragmas inside the nest
        if isinstance(f.stmt, c_ast.Compound):
            f.stmt.block_items = [x for x in f.stmt.block_items if not ls.is_omp(x)]
    ls.drop_omp(fdef, [chain[0]])
    return canon.reparse(program, ast)


@register(PassInfo(
    name=NAME,
    summary="interchange two perfectly nested loops (or permute a perfect nest) when Z3 "
            "proves no dependence is reversed",
    anchor="loop",
    options={"loops": Option(str, "", "induction variables: two to interchange, or a perfect "
                                      "nest in its new order (outermost first)"),
             "nth": Option(int, -1, "which loop named like the first, when several")},
    requires=("an entry function definition (XP-REORDER-001)",
              "option loops with two or more distinct names (XP-REORDER-002); already in that "
              "order: nothing to do (XP-REORDER-009)",
              "each named loop exists once (XP-REORDER-003, XP-REORDER-004)",
              "the loops form one perfect nest (XP-REORDER-005)",
              "counted, analysable, rectangular loops with invariant bounds, no break/return/"
              "goto, no unknown calls (XP-REORDER-006)",
              "no scalar declared outside the nest assigned in it (XP-REORDER-007)",
              "no dependence reversed (Z3 over the affine accesses) (XP-REORDER-008)"),
    guarantees=("same outputs on the virtual device, bit-identical (dependent instances keep "
                "their order)", "#pragma omp on the nest dropped"),
))
def loop_reorder(program, *, loops: str = "", nth: int = -1, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program, loops=loops, nth=nth))
    return _rewrite(program, plan.ast, *plan.data)


@loop_reorder.legality
def _legal(program, *, loops: str = "", nth: int = -1):
    """The plan (the loops matched, the dependences proved), found on a copy of the AST that
    the rewrite then changes; diagnostics when refused."""
    ast = copy.deepcopy(program.ast)
    got = _plan(program, ast, loops, nth)
    return got if isinstance(got, list) else canon.Rewritten(ast, got)
