"""loop_expansion: distribute a loop over its body (S1; S2 -> two loops), expanding scalars.

Summary
    The loop whose induction variable is ``loop`` (``nth`` among several), ``for (T i = lo;
    i < hi; ++i) { S1 S2 }`` where ``S1`` is the first ``at`` top-level statements of the
    body, becomes ``for (...) { S1 } for (...) { S2 }``. A scalar declared at the top level of
    ``S1`` and used in ``S2`` (a value live from S1 to S2 in one iteration) is expanded into a
    new local array ``T x_x[TRIP]`` declared before the loops and indexed by ``i - lo`` (its
    declaration becomes a store ``x_x[i - lo] = init;``): that is the scalar expansion. The
    rewrite is made when Z3 (``affine.may_conflict``) proves that no instance of ``S2`` in an
    iteration ``i`` touches an element that ``S1`` touches in a later iteration ``i' > i``
    (one of them writing): distribution runs all of ``S1`` before all of ``S2``, which only
    reverses such backward carried dependences.
Requires
    1. The program has an entry function definition (XP-EXPAND-001).
    2. Option ``loop`` is given and ``1 <= at < number of body statements`` (XP-EXPAND-002).
    3. Exactly one loop declares ``loop``, or ``nth`` selects one (XP-EXPAND-003 none,
       XP-EXPAND-004 several).
    4. The loop is counted with step 1, its body writes neither its variable nor a name of
       its bounds, bounds are pure, no ``break`` / ``continue`` / ``return`` / ``goto`` in
       the body, no call of unknown effect or unanalysable store (XP-EXPAND-005).
    5. No scalar declared outside the loop is assigned in one part and named in the other,
       or assigned in both (XP-EXPAND-006).
    6. Each local of ``S1`` used in ``S2`` is a plain scalar declared at the top level of
       ``S1``, not address-taken nor redeclared inside ``S1`` / ``S2``, and the trip count is
       a constant of at most 65536 (XP-EXPAND-007).
    7. No backward carried dependence from ``S2`` to ``S1`` (XP-EXPAND-008).
Guarantees
    Same outputs on the virtual device, bit-identical (every pair of dependent instances
    keeps its order; an expanded scalar's element ``i - lo`` holds exactly the value the
    scalar had in iteration ``i``). ``#pragma omp`` on the loop (and ``collapse`` pragmas
    around it) is dropped.
    Dependences are those of ``passes/analysis/affine/dependence.py``: pointer parameters do not alias.
Options
    loop (str): induction variable; at (int, default 1): statements in the first loop;
    nth (int, default -1).
Example
    ``loop_expansion{loop=i}`` on ``for (int i = 0; i < 64; ++i) { float t = x[i] * 2; y[i] =
    t + 1; }`` -> ``float t_x[64]; for (i < 64) t_x[i] = x[i] * 2; for (i < 64) y[i] =
    t_x[i] + 1;``; refused for ``{ a[i] = b[i]; b[i + 1] = 1; }`` (S2 writes what S1 reads in
    the next iteration).
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.analysis.affine as affine
import passes.canon as canon
import passes.schedule.loop_sched as ls
from passes.base import Option, PassInfo, register

NAME = "loop_expansion"
CODES = ("XP-EXPAND-001", "XP-EXPAND-002", "XP-EXPAND-003", "XP-EXPAND-004")
MAX_TRIP = 65536


def _refuse(program, code, msg, node=None):
    return [canon.diag(program, NAME, code, msg, node)]


def _plan(program, ast, loop: str, at: int, nth: int):
    got = ls.select(program, NAME, CODES, loop, nth, ast)
    if isinstance(got, list):
        return got
    fdef, f = got
    items = canon.as_items(f.stmt)
    if not 1 <= at < len(items):
        return _refuse(program, "XP-EXPAND-002", f"at={at} does not leave a statement in both "
                       f"loops (the body of '{loop}' has {len(items)})", f)
    cl, why = ls.counted(f)
    if cl is None or cl.step != 1:
        return _refuse(program, "XP-EXPAND-005", f"loop '{loop}' is not a counted step-1 loop: "
                       f"{why or 'the step is not 1'}", f)
    if cl.var in canon.written_names(f.stmt):
        return _refuse(program, "XP-EXPAND-005", f"the body of loop '{loop}' writes its "
                       "induction variable", f)
    why = ls.invariant_bounds(cl, f.stmt)
    if why:
        return _refuse(program, "XP-EXPAND-005", why, f)
    esc = ls.escapes(f.stmt)
    if esc is not None:
        return _refuse(program, "XP-EXPAND-005", f"a {type(esc).__name__.lower()} leaves the "
                       f"body of loop '{loop}'", esc)
    s1, s2 = c_ast.Compound(items[:at]), c_ast.Compound(items[at:])
    # scalars of the enclosing scopes
    t1 = {s.name for s in items[:at] if isinstance(s, c_ast.Decl) and s.name}
    t2 = {s.name for s in items[at:] if isinstance(s, c_ast.Decl) and s.name}
    d2 = ls.declared(s2)
    w1, w2 = ls.plain_writes(s1) - t1, ls.plain_writes(s2) - t2
    n1, n2 = canon.ids_in(s1), canon.ids_in(s2)
    for name in sorted(w1 & n2 | w2 & n1 | w1 & w2):
        return _refuse(program, "XP-EXPAND-006", f"'{name}' is declared outside loop '{loop}' "
                       "and assigned in one part while the other uses it", f)
    # locals of S1 live in S2
    top1 = {s.name: s for s in items[:at] if isinstance(s, c_ast.Decl) and s.name}
    expand = []
    for name in sorted(top1):
        if name not in n2:
            continue
        d = top1[name]
        if not isinstance(d.type, c_ast.TypeDecl) or isinstance(d.init, c_ast.InitList) or \
                "static" in (d.storage or []) or \
                not isinstance(d.type.type, c_ast.IdentifierType):
            return _refuse(program, "XP-EXPAND-007", f"'{name}' of the first part is used in "
                           "the second and is not a plain scalar", d)
        nested = sum(1 for n in canon.walk(s1) if isinstance(n, c_ast.Decl) and n.name == name)
        if nested != 1 or name in d2:
            return _refuse(program, "XP-EXPAND-007", f"'{name}' is declared again inside the "
                           "loop body", d)
        if any(isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID)
               and n.expr.name == name for n in canon.walk(c_ast.Compound(items))):
            return _refuse(program, "XP-EXPAND-007", f"the address of '{name}' is taken", d)
        k = next(j for j, s in enumerate(items) if s is d)
        if any(name in canon.ids_in(s) for s in items[:k]):
            return _refuse(program, "XP-EXPAND-007", f"'{name}' is used before its "
                           "declaration in the loop body", d)
        expand.append(d)
    info = ls.analysis(program, ast)
    lp = ls.loop_info(info, f)
    if info is None or lp is None or not lp.canonical:
        return _refuse(program, "XP-EXPAND-005", "the dependence analysis cannot model the "
                       "loop", f)
    trip = None
    lo, hi = ls.const_of(lp.lo), ls.const_of(lp.hi)
    if lo is not None and hi is not None:
        trip = max(hi - lo, 0)
    if expand and (trip is None or not 0 < trip <= MAX_TRIP):
        return _refuse(program, "XP-EXPAND-007", f"expanding '{expand[0].name}' needs a constant "
                       f"trip count of at most {MAX_TRIP} (got "
                       f"{'unknown' if trip is None else trip})", f)
    prob = ls.problems_in(info, [f])
    if prob is not None:
        return _refuse(program, "XP-EXPAND-005", prob[1], prob[2])
    if lp.unknown_calls:
        nm, node = lp.unknown_calls[0]
        return _refuse(program, "XP-EXPAND-005", f"call to '{nm}' has unknown effects", node)
    ids1 = {id(n) for s in items[:at] for n in canon.walk(s)}
    accs = ls.accesses_under(info, lp)
    part1 = [a for a in accs if id(a.node) in ids1]
    part2 = [a for a in accs if id(a.node) not in ids1]

    def s2_first(z3, e2, e1):
        return e2[lp.uid] < e1[lp.uid]

    for y in part2:
        for x in part1:
            if x.buffer != y.buffer or not (x.write or y.write) or \
                    ls.local_array_in(info, x.buffer, lp):
                continue
            if affine.may_conflict(info, y, x, lp.ancestors(), s2_first):
                name = info.locals[x.buffer].name if x.buffer in info.locals else x.buffer
                return _refuse(program, "XP-EXPAND-008", f"distributing loop '{loop}' may "
                               f"reverse a dependence on '{name}': the second part in "
                               "iteration i may touch an element the first part touches in a "
                               "later iteration", x.node)
    return fdef, f, cl, at, expand, lo, trip


def _rewrite(program, ast, fdef, f, cl, at, expand, lo, trip):
    items = canon.as_items(f.stmt)
    new_decls, mapping = [], {}
    idx = c_ast.ID(cl.var) if lo == 0 else \
        c_ast.BinaryOp("-", c_ast.ID(cl.var), c_ast.Constant("int", str(lo)))
    taken = set()
    for d in expand:
        arr = ls.fresh(ast, d.name + "_x", taken)
        taken.add(arr)
        t = copy.deepcopy(d.type)
        t.quals = [q for q in t.quals if q != "const"]
        t.declname = arr
        new_decls.append(c_ast.Decl(arr, [], [], [], [], c_ast.ArrayDecl(
            t, c_ast.Constant("int", str(trip)), []), None, None))
        mapping[d.name] = c_ast.ArrayRef(c_ast.ID(arr), copy.deepcopy(idx))
    s1, s2 = [], []
    for k, s in enumerate(items):
        if k < at and any(s is d for d in expand):
            if s.init is not None:
                s1.append(c_ast.Assignment("=", copy.deepcopy(mapping[s.name]),
                                           canon.substitute(s.init, mapping)))
            continue
        (s1 if k < at else s2).append(canon.substitute(s, mapping) if mapping else s)
    second = c_ast.For(copy.deepcopy(f.init), copy.deepcopy(f.cond), copy.deepcopy(f.next),
                       c_ast.Compound(s2))
    f.stmt = c_ast.Compound(s1)
    ls.drop_omp(fdef, [f])
    ls.replace_stmt(ls.parents(fdef), f, new_decls + [f, second])
    return canon.reparse(program, ast)


@register(PassInfo(
    name=NAME,
    summary="distribute a loop over its body (S1; S2 -> two loops) when Z3 proves no backward "
            "dependence; scalars live from S1 to S2 become arrays",
    anchor="loop",
    options={"loop": Option(str, "", "induction variable of the loop to distribute"),
             "at": Option(int, 1, "number of top-level body statements in the first loop"),
             "nth": Option(int, -1, "which loop of that name (0-based; -1: the only one)")},
    requires=("an entry function definition (XP-EXPAND-001)",
              "option loop, 1 <= at < body statements (XP-EXPAND-002)",
              "exactly one loop named loop, or nth selects one (XP-EXPAND-003, XP-EXPAND-004)",
              "a counted step-1 analysable loop, invariant pure bounds, no early exits "
              "(XP-EXPAND-005)",
              "no outer scalar assigned in one part and used in the other (XP-EXPAND-006)",
              "expanded locals are plain scalars and the trip count a constant <= 65536 "
              "(XP-EXPAND-007)",
              "no backward carried dependence from S2 to S1 (XP-EXPAND-008)"),
    guarantees=("same outputs on the virtual device, bit-identical",
                "#pragma omp on the loop dropped"),
    introduces=("local arrays <scalar>_x[trip] for expanded scalars",),
))
def loop_expansion(program, *, loop: str = "", at: int = 1, nth: int = -1, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program, loop=loop, at=at, nth=nth))
    return _rewrite(program, plan.ast, *plan.data)


@loop_expansion.legality
def _legal(program, *, loop: str = "", at: int = 1, nth: int = -1):
    """The plan (the loops matched, the dependences proved), found on a copy of the AST that
    the rewrite then changes; diagnostics when refused."""
    ast = copy.deepcopy(program.ast)
    got = _plan(program, ast, loop, at, nth)
    return got if isinstance(got, list) else canon.Rewritten(ast, got)
