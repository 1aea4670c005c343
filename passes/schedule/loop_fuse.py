"""loop_fuse: fuse a counted loop with the next sibling loop of identical bounds.

Summary
    The loop whose induction variable is ``loop`` (``nth`` among several), ``A: for (T i =
    lo; i < hi; i += s) SA``, immediately followed (``#pragma omp`` lines aside) by ``B: for
    (T j = lo; j < hi; j += s) SB`` with the same type, bounds and step, becomes
    ``for (T i = lo; i < hi; i += s) { SA SB[j := i] }`` (each body in its own block when
    their top-level declarations would clash). Fusion runs ``B(j)`` before ``A(i)`` exactly
    when ``j < i``; the rewrite is made when Z3 (``affine.may_conflict``) proves that no
    element touched by ``A``'s iteration ``i`` is touched by ``B``'s iteration ``j < i`` for
    every write/read, read/write and write/write pair on one buffer, and no scalar flows
    between the two bodies.
Requires
    1. The program has an entry function definition (XP-FUSE-001).
    2. Option ``loop`` is given (XP-FUSE-002).
    3. Exactly one loop declares ``loop``, or ``nth`` selects one (XP-FUSE-003 none,
       XP-FUSE-004 several).
    4. The next statement is a loop with the same header (type, bounds, positive step, the
       variable renamed) (XP-FUSE-005).
    5. Both loops are counted and analysable: bodies write neither variable nor a name of the
       bounds, bounds are pure, no ``break`` / ``continue`` / ``return`` / ``goto`` in the
       bodies, no call of unknown effect or unanalysable store, and ``A``'s variable is not
       otherwise named in ``SB`` (XP-FUSE-006).
    6. No scalar declared outside the loops is assigned in one body and named in the other
       (XP-FUSE-007).
    7. No dependence from ``A`` to ``B`` is reversed (XP-FUSE-008).
Guarantees
    Same outputs on the virtual device, bit-identical: each pair of instances touching a
    common element (one writing) keeps its order. ``#pragma omp`` lines on both loops (and
    ``collapse`` pragmas around them) are dropped.
    Dependences are those of ``passes/analysis/affine/dependence.py``: pointer parameters do not alias.
Options
    loop (str): induction variable of the first loop; nth (int, default -1).
Example
    ``loop_fuse{loop=i}`` on ``for (i < n) t[i] = x[i] * 2; for (j < n) y[j] = t[j] + 1;`` ->
    ``for (i < n) { t[i] = x[i] * 2; y[i] = t[i] + 1; }``; refused for
    ``for (i < n) t[i] = x[i]; for (j < n) y[j] = t[j + 1];`` (B(j) reads what A(j+1) writes).
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.analysis.affine as affine
import passes.canon as canon
import passes.schedule.loop_sched as ls
from passes.base import Option, PassInfo, register

NAME = "loop_fuse"
CODES = {"entry": "XP-FUSE-001", "option": "XP-FUSE-002", "none": "XP-FUSE-003",
         "several": "XP-FUSE-004", "sibling": "XP-FUSE-005", "form": "XP-FUSE-006",
         "scalar": "XP-FUSE-007", "dep": "XP-FUSE-008"}


def fusion_plan(program, ast, loop: str, nth: int, pass_name: str, codes: dict):
    """(fdef, A, B, clA, clB, info) for fusing loop ``loop`` with its next sibling, or a list
    with one Diagnostic (codes from ``codes``)."""
    got = ls.select(program, pass_name, (codes["entry"], codes["option"], codes["none"],
                                         codes["several"]), loop, nth, ast)
    if isinstance(got, list):
        return got
    fdef, a = got

    def refuse(role, msg, node):
        return [canon.diag(program, pass_name, codes[role], msg, node)]

    par = ls.parents(fdef)
    _blk, _k, b = ls.next_sibling(par, a)
    ca, why = ls.counted(a)
    if ca is None:
        return refuse("form", f"loop '{loop}' is not counted: {why}", a)
    cb = ls.counted(b)[0] if isinstance(b, c_ast.For) else None
    if cb is None or not ls.same_header(ca, cb):
        return refuse("sibling", f"the statement after loop '{loop}' is not a loop with the "
                      "same type, bounds and step", b if b is not None else a)
    written = canon.written_names(a.stmt) | canon.written_names(b.stmt)
    for cl, f in ((ca, a), (cb, b)):
        if cl.var in canon.written_names(f.stmt):
            return refuse("form", f"the body of loop '{cl.var}' writes its induction variable",
                          f)
        why = ls.invariant_bounds(cl, c_ast.Compound([a.stmt, b.stmt]))
        if why:
            return refuse("form", why, f)
        esc = ls.escapes(f.stmt)
        if esc is not None:
            return refuse("form", f"a {type(esc).__name__.lower()} leaves the body of loop "
                          f"'{cl.var}'", esc)
    del written
    if ca.var != cb.var and ca.var in canon.ids_in(b.stmt) | ls.declared(b.stmt):
        return refuse("form", f"the body of the second loop names '{ca.var}' (the fused "
                      "variable would capture it)", b)
    info = ls.analysis(program, ast)
    la, lb = ls.loop_info(info, a), ls.loop_info(info, b)
    if info is None or la is None or lb is None or not la.canonical or not lb.canonical:
        return refuse("form", "the dependence analysis cannot model the loops", a)
    prob = ls.problems_in(info, [a, b])
    if prob is not None:
        return refuse("form", prob[1], prob[2])
    for lp in (la, lb):
        if lp.unknown_calls:
            nm, node = lp.unknown_calls[0]
            return refuse("form", f"call to '{nm}' has unknown effects", node)
    # scalars flowing between the bodies (declared outside both loops)
    for lp, other in ((la, b.stmt), (lb, a.stmt)):
        names = canon.ids_in(other)
        for var, node, hdr in lp.scalar_writes:
            if hdr or any(o is lp for o in var.owners):
                continue
            if var.name in names:
                return refuse("scalar", f"'{var.name}' is assigned in one loop and used in the "
                              "other", node)
    shared = la.ancestors()
    accs_a, accs_b = ls.accesses_under(info, la), ls.accesses_under(info, lb)

    def b_first(z3, e1, e2):
        return e2[lb.uid] < e1[la.uid]

    for x in accs_a:
        for y in accs_b:
            if x.buffer != y.buffer or not (x.write or y.write):
                continue
            if affine.may_conflict(info, x, y, shared, b_first):
                name = info.locals[x.buffer].name if x.buffer in info.locals else x.buffer
                return refuse("dep", f"fusing may reverse a dependence on '{name}': iteration "
                              f"{cb.var} of the second loop may touch an element that "
                              f"iteration {ca.var} > {cb.var} of the first loop touches", y.node)
    return fdef, a, b, ca, cb, info


def fuse_nodes(fdef, a, b, ca, cb):
    """Rewrite: ``b``'s body (variable renamed) appended to ``a``'s, ``b`` removed."""
    sb = canon.substitute(b.stmt, {cb.var: c_ast.ID(ca.var)}) if cb.var != ca.var else b.stmt
    ia, ib = canon.as_items(a.stmt), canon.as_items(sb)
    da = {s.name for s in ia if isinstance(s, c_ast.Decl) and s.name}
    db = {s.name for s in ib if isinstance(s, c_ast.Decl) and s.name}
    if da & (canon.ids_in(c_ast.Compound(ib)) | db) or \
            db & canon.ids_in(c_ast.Compound(ia)):
        items = [c_ast.Compound(ia), c_ast.Compound(ib)]
    else:
        items = ia + ib
    ls.drop_omp(fdef, [a, b])
    a.stmt = c_ast.Compound(items)
    par = ls.parents(fdef)
    blk = par[id(b)]
    blk.block_items = [s for s in blk.block_items if s is not b]
    return a


@register(PassInfo(
    name=NAME,
    summary="fuse a counted loop with the next loop of identical bounds when Z3 proves no "
            "dependence is reversed",
    anchor="loop",
    options={"loop": Option(str, "", "induction variable of the first loop"),
             "nth": Option(int, -1, "which loop of that name (0-based; -1: the only one)")},
    requires=("an entry function definition (XP-FUSE-001)", "option loop (XP-FUSE-002)",
              "exactly one loop named loop, or nth selects one (XP-FUSE-003, XP-FUSE-004)",
              "the next statement is a loop with the same header (XP-FUSE-005)",
              "counted analysable loops, invariant pure bounds, no early exits, no unknown "
              "calls, no name capture (XP-FUSE-006)",
              "no scalar assigned in one body and used in the other (XP-FUSE-007)",
              "no dependence from the first loop to the second reversed (XP-FUSE-008)"),
    guarantees=("same outputs on the virtual device, bit-identical",
                "#pragma omp on the fused loops dropped"),
))
def loop_fuse(program, *, loop: str = "", nth: int = -1, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program, loop=loop, nth=nth))
    fdef, a, b, ca, cb, _info = plan.data
    fuse_nodes(fdef, a, b, ca, cb)
    return canon.reparse(program, plan.ast)


@loop_fuse.legality
def _legal(program, *, loop: str = "", nth: int = -1):
    """The plan (the loops matched, the dependences proved), found on a copy of the AST that
    the rewrite then changes; diagnostics when refused."""
    ast = copy.deepcopy(program.ast)
    got = fusion_plan(program, ast, loop, nth, NAME, CODES)
    return got if isinstance(got, list) else canon.Rewritten(ast, got)
