"""affine dependence testing: does a loop carry a dependence? (Z3 proofs)

``parallel(info, loop)`` proves, for every pair of accesses to one buffer inside ``loop`` (one
of them a write), that two different iterations never touch the same element (byte ranges
for reinterpreting accesses); scalars assigned in the loop and declared outside it, early
exits and unknown calls make it sequential. ``privatizable`` finds the local arrays every
iteration overwrites before reading them. Unknown or timeout = dependent.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pycparser import c_ast

from .ir import Access, LoopInfo, NestInfo, buffer_elem_bytes, locals_in
from .solver import ANALYSIS_ERRORS, Enc, check, load_z3, loop_constraints
from .poly import to_poly
from .walk import parent_map


@dataclass(frozen=True)
class Verdict:
    parallel: bool
    code: str = ""
    reason: str = ""
    node: Any = None
    private: frozenset = frozenset()     # local array uids each iteration needs its own copy of


def parallel(info: NestInfo, loop: LoopInfo, timeout_ms: int = 3000,
             privatize: bool = False) -> Verdict:
    """Does ``loop`` carry no dependence? (proof by Z3; unknown = dependent). With
    ``privatize``, local arrays declared outside the loop that every iteration overwrites
    before reading them (``privatizable``) do not count; the verdict lists them in
    ``private`` and the caller must give each iteration its own copy."""
    if privatize:
        v = parallel(info, loop, timeout_ms)
        if v.parallel or not loop.canonical:
            return v
        private = privatizable(info, loop, timeout_ms)
        if not private:
            return v
        w = _guarded_parallel(info, loop, timeout_ms, private)
        return Verdict(True, private=frozenset(private)) if w.parallel else w
    return _guarded_parallel(info, loop, timeout_ms, set())


def _guarded_parallel(info: NestInfo, loop: LoopInfo, timeout_ms: int, private: set) -> Verdict:
    try:
        return _parallel(info, loop, timeout_ms, private)
    except ANALYSIS_ERRORS + (load_z3().Z3Exception,) as exc:
        return Verdict(False, "XP-BIND-003", f"the dependence analysis of loop '{loop.var}' "
                       f"cannot model it ({type(exc).__name__}: {exc})", loop.node)


def privatizable(info: NestInfo, loop: LoopInfo, timeout_ms: int = 3000) -> set[str]:
    """Local arrays (uids) declared outside ``loop``, accessed only inside it, whose every
    read is preceded in the same iteration by a covering write (a kill): a canonical step-1
    loop ``K`` that is a statement of the body of ``loop`` or of a loop nested in it, writes
    ``X[k + c]`` unconditionally (a top-level statement of its body, no guards) and so
    defines ``X[lo + c .. hi + c)``; a read either follows ``K`` in that body and provably
    reads inside that range, or sits in ``K``'s body after the write with the same
    subscript. Then the values from other iterations (or from before the loop) are never
    read and each iteration may use its own copy."""
    inside = {id(a) for a in loop.accesses}
    parents = parent_map(info.function)
    out = set()
    by_buffer: dict[str, list[Access]] = {}
    for a in loop.accesses:
        by_buffer.setdefault(a.buffer, []).append(a)
    for buffer, accs in by_buffer.items():
        var = info.locals.get(buffer)
        if var is None or var.kind != "array" or any(o is loop for o in var.owners) or \
                not any(a.write for a in accs):
            continue
        if any(a.buffer == buffer and id(a) not in inside for a in info.accesses):
            continue                                   # live before or after the loop
        kills = _kills(info, loop, buffer, parents)
        if kills and all(a.write and a.index is not None or
                         (a.read and not a.write and
                          any(_killed_by(info, k, w, a, parents, timeout_ms) for k, w in kills))
                         for a in accs):
            out.add(buffer)
    return out


def _items_of(stmt) -> list:
    return list(stmt.block_items or []) if isinstance(stmt, c_ast.Compound) else [stmt]


def _stmt_in(node, block, parents):
    """The item of ``block`` (a Compound's items, or the statement itself) that contains
    ``node`` (None if none)."""
    items = {id(x) for x in _items_of(block)}
    n = node
    while n is not None and id(n) not in items:
        n = parents.get(id(n))
    return n


def _kills(info: NestInfo, loop: LoopInfo, buffer: str, parents) -> list:
    out = []
    for k in [loop] + _descendants(loop):
        if k is loop or not k.canonical or k.step != 1:
            continue
        for w in k.accesses:
            if w.buffer != buffer or not w.write or w.read or w.guards or w.loops[-1] is not k:
                continue
            p = to_poly(w.index) if w.index is not None else None
            if p is None or p.split("v:" + k.uid) is None:
                continue
            coef, rest = p.split("v:" + k.uid)
            if not (coef.is_const() and coef.value() == 1 and rest.is_const()):
                continue
            top = _stmt_in(w.node, k.node.stmt, parents)
            if top is None or not isinstance(top, (c_ast.Assignment,)) or top is not w.node:
                continue
            out.append((k, w))
    return out


def _killed_by(info, k: LoopInfo, w: Access, a: Access, parents, timeout_ms: int) -> bool:
    c = k.parent
    if c is None or c not in a.loops:
        return False
    body = c.node.stmt
    items = _items_of(body)
    ka, kk = _stmt_in(a.node, body, parents), _stmt_in(k.node, body, parents)
    if ka is None or kk is None:
        return False
    if ka is kk:                                   # inside K: after the write, same element
        if k not in a.loops or a.index != w.index or a.loops[-1] is not k:
            return False
        kb = _items_of(k.node.stmt)
        sa, sw = _stmt_in(a.node, k.node.stmt, parents), _stmt_in(w.node, k.node.stmt, parents)
        return sa is not None and sw is not None and \
            next(i for i, x in enumerate(kb) if x is sa) > next(i for i, x in enumerate(kb) if x is sw)
    if next(i for i, x in enumerate(items) if x is kk) >= \
            next(i for i, x in enumerate(items) if x is ka):
        return False
    if a.index is None:
        return False
    z3 = load_z3()
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    syms: dict = {}
    enc = Enc(z3, set(), set(), "1", syms)
    for cst in loop_constraints(enc, a.loops):
        solver.add(cst)
    for g in a.guards:
        solver.add(enc.c(g))
    off = to_poly(w.index).split("v:" + k.uid)[1].value()
    idx = enc.e(a.index)
    solver.add(z3.Or(idx < enc.e(k.lo) + off, idx >= enc.e(k.hi) + off))
    return check(solver, timeout_ms) == z3.unsat


def _parallel(info: NestInfo, loop: LoopInfo, timeout_ms: int, private: set) -> Verdict:
    if not loop.canonical:
        return Verdict(False, "XP-BIND-003", f"loop '{loop.var}' is not in canonical form: "
                       f"{loop.reason}", loop.node)
    for kind, node in loop.escapes:
        return Verdict(False, "XP-BIND-003", f"'{kind}' leaves loop '{loop.var}' early", node)
    for name, node in loop.unknown_calls:
        return Verdict(False, "XP-BIND-003", f"call to '{name}' inside loop '{loop.var}' has "
                       "unknown effects", node)
    for var, node, _hdr in loop.scalar_writes:
        if any(o is loop for o in var.owners):
            continue                       # declared inside: private to one iteration
        return Verdict(False, "XP-BIND-001", f"'{var.name}' is assigned in every iteration of "
                       f"loop '{loop.var}' and declared outside it (a reduction or a running "
                       "value: the loop carries a dependence)", node)
    ancestors = loop.ancestors()
    if any(not a.canonical for a in ancestors):
        return Verdict(False, "XP-BIND-003", f"an enclosing loop of '{loop.var}' is not "
                       "canonical", loop.node)
    by_buffer: dict[str, list[Access]] = {}
    for acc in loop.accesses:
        by_buffer.setdefault(acc.buffer, []).append(acc)
    z3 = load_z3()
    for buffer, accs in by_buffer.items():
        local = info.locals.get(buffer)
        if local is not None and any(o is loop for o in local.owners) or buffer in private:
            continue                       # array private to one iteration
        writes = [a for a in accs if a.write]
        if not writes:
            continue
        name = local.name if local is not None else buffer
        if any(a.width for a in accs):
            accs = _in_bytes(info, buffer, accs)
            writes = [a for a in accs if a.write]
        seen = set()
        for w in writes:
            for other in accs:
                key = (_akey(w), _akey(other))
                if key in seen or (key[1], key[0]) in seen:
                    continue
                seen.add(key)
                if w.index is None or other.index is None:
                    return Verdict(False, "XP-BIND-001", f"'{name}' is accessed with a "
                                   f"subscript the dependence test cannot analyse inside loop "
                                   f"'{loop.var}'", (w if w.index is None else other).node)
                if not _independent(z3, info, loop, w, other, timeout_ms):
                    return Verdict(False, "XP-BIND-001", f"iterations of loop '{loop.var}' "
                                   f"may access the same element of '{name}' (one of them "
                                   "writing): loop-carried dependence", other.node)
    return Verdict(True)


def _akey(a: Access):
    return (repr(a.index), tuple(l.uid for l in a.loops), repr(a.guards), a.write, a.width)


def _in_bytes(info: NestInfo, buffer: str, accs: list) -> list:
    """The accesses of a buffer some of which reinterpret its bytes, all as byte ranges
    (``index`` = first byte, ``width`` = bytes covered); an element access ``i`` of an
    ``s``-byte element covers bytes ``[i*s, i*s + s)``. Unknown element size: indices None."""
    size = buffer_elem_bytes(info, buffer)
    out = []
    for a in accs:
        if a.width:
            b = Access(**{**a.__dict__, "index": a.byte_index})
        elif a.index is None or size is None:
            b = Access(**{**a.__dict__, "index": None, "width": 1})
        else:
            b = Access(**{**a.__dict__, "index": ("*", a.index, ("c", size)), "width": size})
        out.append(b)
    return out


def _descendants(loop: LoopInfo) -> list[LoopInfo]:
    out = []
    for c in loop.children:
        out.append(c)
        out += _descendants(c)
    return out


def _independent(z3, info, loop: LoopInfo, a1: Access, a2: Access, timeout_ms: int) -> bool:
    outer = {l.uid for l in loop.ancestors()}
    syms: dict = {}
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    exprs = []
    for copy, acc in (("1", a1), ("2", a2)):
        private_loops = {l.uid for l in acc.loops if l.uid not in outer}
        locs = set()
        locals_in(acc.index, locs)
        for g in acc.guards + acc.facts:
            locals_in(g, locs)
        for lp in acc.loops:               # a bound read from a local of this iteration
            for b in (lp.lo, lp.hi, lp.start):
                if b is not None:
                    locals_in(b, locs)
        private_locals = {u for u in locs if _declared_in(info, u, loop)}
        enc = Enc(z3, private_loops, private_locals, copy, syms)
        for c in loop_constraints(enc, acc.loops):
            solver.add(c)
        for g in acc.guards + acc.facts:
            solver.add(enc.c(g))
        exprs.append((enc.e(acc.index), enc.e(("v", loop.uid))))
    (i1, v1), (i2, v2) = exprs
    if a1.width or a2.width:             # byte ranges [i, i + width) overlap
        solver.add(i1 < i2 + max(a2.width, 1), i2 < i1 + max(a1.width, 1), v1 != v2)
    else:
        solver.add(i1 == i2, v1 != v2)
    return check(solver, timeout_ms) == z3.unsat


def _declared_in(info: NestInfo, uid: str, loop: LoopInfo) -> bool:
    var = info.locals.get(uid)
    return var is None or any(o is loop for o in var.owners)
