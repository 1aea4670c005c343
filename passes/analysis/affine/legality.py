"""affine schedule legality: the dependence queries of the loop schedule passes.

Used by loop_reorder, loop_fuse, loop_expansion and loop_contraction: ``may_conflict`` (can
two instances of two accesses touch the same element, under an order between them) and
``reorder_violation`` (the interchange / permutation test of a perfect nest). Nothing else
in the package depends on it.
"""
from __future__ import annotations

from .ir import Access, NestInfo, locals_in
from .solver import ANALYSIS_ERRORS, Enc, check, load_z3, loop_constraints


def may_conflict(info: NestInfo, a1: Access, a2: Access, shared=(), order=None,
                 timeout_ms: int = 3000) -> bool:
    """Can an instance of ``a1`` and an instance of ``a2`` touch the same element?

    The loops in ``shared`` (LoopInfo) run at the same iteration in both instances; every
    other loop variable and every local of unknown value is free per instance (an
    over-approximation, so ``False`` is a proof). ``order(z3, env1, env2)`` adds a constraint
    between the two instances: ``env1`` / ``env2`` map a loop uid to that instance's Z3
    variable. Different buffers never conflict (pointer parameters do not alias); a subscript
    the analysis could not model, a byte-range access, a Z3 timeout or an IR the encoder does
    not handle answer True."""
    if a1.buffer != a2.buffer:
        return False
    if a1.index is None or a2.index is None or a1.width or a2.width:
        return True
    try:
        z3 = load_z3()
        shared_uids = {l.uid for l in shared}
        syms: dict = {}
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        idx, envs = [], []
        for copy, acc in (("1", a1), ("2", a2)):
            private_loops = {l.uid for l in acc.loops if l.uid not in shared_uids}
            locs: set = set()
            locals_in(acc.index, locs)
            for g in acc.guards:
                locals_in(g, locs)
            for lp in acc.loops:
                for b in (lp.lo, lp.hi, lp.start):
                    if b is not None:
                        locals_in(b, locs)
            enc = Enc(z3, private_loops, locs, copy, syms)
            for c in loop_constraints(enc, acc.loops):
                solver.add(c)
            for g in acc.guards:
                solver.add(enc.c(g))
            idx.append(enc.e(acc.index))
            envs.append({l.uid: enc.e(("v", l.uid)) for l in acc.loops})
        solver.add(idx[0] == idx[1])
        if order is not None:
            solver.add(order(z3, envs[0], envs[1]))
        return check(solver, timeout_ms) != z3.unsat
    except ANALYSIS_ERRORS + (load_z3().Z3Exception,):
        return True


def _lex_less(z3, xs, ys):
    """``xs <lex ys`` for two equal-length lists of Z3 integers."""
    terms = []
    for k in range(len(xs)):
        terms.append(z3.And(*[xs[m] == ys[m] for m in range(k)], xs[k] < ys[k]))
    return z3.Or(*terms) if terms else z3.BoolVal(False)


def reorder_violation(info: NestInfo, band: list, order: list, timeout_ms: int = 3000):
    """Interchange / permutation test for a perfect nest ``band`` (LoopInfo, outermost first)
    to be run in the order ``[band[k] for k in order]``: returns None when no dependence has
    a direction vector that the permutation makes lexicographically negative, else the
    ``(Access, Access)`` pair that may be reversed.

    For every pair of accesses to one buffer under the innermost band loop (one of them a
    write), Z3 must prove that no instance ``x`` of the first and ``y`` of the second touch the
    same element with ``x`` before ``y`` in the original order (band vector ``x <lex y``) and
    ``y`` before ``x`` in the new one (permuted vectors ``y' <lex x'``); loops enclosing the
    band are shared, deeper loops are free. Instances with equal band vectors keep their
    order (the body is unchanged)."""
    inner = band[-1]
    accs = [a for a in info.accesses if inner in a.loops]
    outer = band[0].ancestors()
    uids = [l.uid for l in band]

    def reversed_(z3, e1, e2):
        x = [e1[u] for u in uids]
        y = [e2[u] for u in uids]
        return z3.And(_lex_less(z3, x, y),
                      _lex_less(z3, [y[k] for k in order], [x[k] for k in order]))

    for i, a1 in enumerate(accs):
        for a2 in accs:
            if a1.buffer != a2.buffer or not (a1.write or a2.write):
                continue
            if may_conflict(info, a1, a2, outer, reversed_, timeout_ms):
                return a1, a2
    return None
