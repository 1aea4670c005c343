"""Private helper of ``task_bind``: which GDRAM windows a tile of a bound loop touches.

For a kernel region whose outermost loop ``i`` is split across tasks, a *tile* is a run of
consecutive iterations ``i in [imin, imax]``. For every pointer parameter accessed in the
region this module decides how the tile reaches it:

* ``stage``: every access has an affine subscript (``affine.to_poly``) whose minimum and
  maximum over the tile (inner loops eliminated exactly, innermost first, as in
  ``affine.poly_max``) are polynomials over the entry's scalars and ``imin``/``imax``; the
  window ``[lo, hi]`` is copied GDRAM -> NRAM before the tile and, for a written buffer, back
  afterwards. Its length must be ``alpha * (imax - imin) + beta`` with ``alpha``/``beta`` free of
  ``imin`` (so a tile size can be chosen for the NRAM capacity).
* a written buffer is staged when copying its window back can never overwrite another
  task's elements: either the tile's writes cover the window densely (one contiguous run per
  tile, every element written unconditionally: a mixed-radix subscript over rectangular
  inner loops, no guards, no early exits) and every read lies inside that run, or the
  windows of two different iterations of the bound loop never overlap (guarded or sparse
  writes: the tile loads its window, writes part of it, copies it all back);
* ``direct``: anything else keeps its GDRAM accesses (scalar loads/stores: correct, slow).

Nothing here rewrites code; ``task_bind`` does.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pycparser import c_ast

import passes.analysis.affine as affine

IMIN, IMAX = "__xp_imin", "__xp_imax"
_KIMIN, _KIMAX = "s:" + IMIN, "s:" + IMAX


@dataclass
class BufferPlan:
    name: str
    mode: str                       # stage | direct
    reason: str = ""
    written: bool = False
    read: bool = False
    lo: affine.Poly | None = None   # smallest element index of the tile's window
    hi: affine.Poly | None = None   # largest element index
    alpha: affine.Poly | None = None    # window length = alpha * (imax - imin) + beta
    beta: affine.Poly | None = None
    hoist: bool = False             # window independent of the tile (read-only): load once
    accesses: list = field(default_factory=list)
    root: str = ""                  # the analysis' buffer key (a local array's uid), else name


def target(acc: affine.Access):
    """The memory reference node of an access (a write is recorded on its assignment)."""
    n = acc.node
    if isinstance(n, c_ast.Assignment):
        return n.lvalue
    if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
        return n.expr
    return n


def _loop_keys(p: affine.Poly) -> set:
    return {k for k in p.keys() if k.startswith("v:")}


def _fake_bound(lp: affine.LoopInfo) -> affine.LoopInfo:
    """The bound loop restricted to one tile: ``i`` runs over [imin, imax] (every integer:
    a superset of the strided values, so windows stay conservative for reads)."""
    fake = affine.LoopInfo(lp.var, lp.uid, lp.node, lp.parent, lp.depth, canonical=True)
    fake.lo, fake.start = ("s", IMIN), ("s", IMIN)
    fake.hi = ("+", ("s", IMAX), ("c", 1))
    fake.step = 1
    return fake


def extreme(p: affine.Poly, loops, want_max: bool) -> affine.Poly | None:
    """Exact max (min) of ``p`` over ``loops`` (outermost first); keys of loops not listed
    (enclosing host loops) stay symbols."""
    for lp in reversed(loops):
        key = "v:" + lp.uid
        if key not in p.keys():
            continue
        sp = p.split(key)
        if sp is None:
            return None
        coef, rest = sp
        if _loop_keys(coef) & {"v:" + x.uid for x in loops}:
            return None
        if None in (lp.lo, lp.hi, lp.start):
            return None                     # not a counted loop: no exact extreme
        sg = coef.sign()
        if sg is None:
            sg = affine.sign_when_running(coef, loops)
        if sg is None:
            return None
        ext = affine.extreme_of_var(lp, want_max if sg >= 0 else not want_max)
        if ext is None:
            return None
        p = rest + coef * ext
    if _loop_keys(p) & {"v:" + x.uid for x in loops}:
        return None
    return p


def _nonneg(p: affine.Poly) -> bool:
    return p.sign() in (0, 1)


def _span(lo: affine.Poly, hi: affine.Poly):
    """(alpha, beta) with hi - lo + 1 == alpha * (imax - imin) + beta, or None."""
    d = affine.Poly.sym("s:__xp_d")
    length = (hi - lo + affine.Poly.const(1)).subst(_KIMAX, affine.Poly.sym(_KIMIN) + d)
    sp = length.split("s:__xp_d")
    if sp is None:
        return None
    alpha, beta = sp
    if any(k in (_KIMIN, _KIMAX, "s:__xp_d") for k in alpha.keys() | beta.keys()):
        return None
    if not _nonneg(alpha):
        return None
    return alpha, beta


def _parents(root) -> dict:
    out = {}

    def walk(n):
        for _, c in n.children():
            out[id(c)] = n
            walk(c)

    walk(root)
    return out


def _unconditional(acc: affine.Access, bound: affine.LoopInfo, parents: dict) -> bool:
    """The access runs in every iteration of its loops: no guard, only Compound/For/
    assignment nodes between it and the bound loop, no break/continue/return/goto in them."""
    if acc.guards:
        return False
    chain = []
    n = acc.node
    while id(n) in parents and n is not bound.node:
        p = parents[id(n)]
        chain.append((p, n))
        n = p
    if n is not bound.node:
        return False
    for p, child in chain:
        if isinstance(p, (c_ast.Compound, c_ast.ExprList)):
            continue
        if isinstance(p, c_ast.For) and child is p.stmt:
            continue
        if isinstance(p, c_ast.Assignment) and child is p.lvalue:
            continue
        if isinstance(p, (c_ast.Assignment, c_ast.UnaryOp)) and child in (getattr(p, "lvalue", None),
                                                                         getattr(p, "expr", None)):
            continue
        return False
    loops = [lp for lp in acc.loops if lp is bound or bound in lp.ancestors()]
    return not any(lp.escapes for lp in loops)


def _dense(p: affine.Poly, acc: affine.Access, bound: affine.LoopInfo) -> bool:
    """The subscript enumerates one contiguous run per tile: mixed radix over rectangular
    inner loops (step 1), and ``coef(i) * step(i)`` equals the inner run length."""
    inner = [lp for lp in acc.loops if bound in lp.ancestors()]
    radix = []
    rest = p
    for lp in inner:
        sp = rest.split("v:" + lp.uid)
        if sp is None:
            return False
        coef, rest = sp
        if lp.lo is None or lp.hi is None:
            return False
        lo, hi = affine.to_poly(lp.lo), affine.to_poly(lp.hi)
        if lp.step != 1 or lo is None or hi is None or _loop_keys(lo) or _loop_keys(hi) \
                or _loop_keys(coef) or not coef.t:
            return False
        radix.append((coef, hi - lo))
    sp = rest.split("v:" + bound.uid)
    if sp is None:
        return False
    a, rest = sp
    if _loop_keys(a) or _loop_keys(rest):
        return False
    run = affine.Poly.const(1)
    pending = list(radix)
    while pending:
        hit = next((k for k, (c, _) in enumerate(pending) if (c - run).t == {}), None)
        if hit is None:
            return False
        c, n = pending.pop(hit)
        run = c * n
    return ((a * affine.Poly.const(bound.step)) - run).t == {}


def plan_buffers(info: affine.NestInfo, bound: affine.LoopInfo, body_root,
                 arrays: dict[str, str] | None = None) -> dict[str, BufferPlan]:
    """BufferPlan per pointer parameter accessed inside ``bound``, and per local array whose
    uid ``arrays`` maps to the name the kernel receives it by (a host array passed as a GDRAM
    buffer: one-dimensional, so its element index is the pointer offset)."""
    fake = _fake_bound(bound)
    parents = _parents(bound.node)
    plans: dict[str, BufferPlan] = {}
    arrays = arrays or {}
    for acc in info.accesses:
        if bound not in acc.loops:
            continue
        if acc.is_param:
            key = acc.buffer
        elif acc.buffer in arrays:
            key = arrays[acc.buffer]
        else:
            continue
        bp = plans.setdefault(key, BufferPlan(key, "stage", root=acc.buffer))
        bp.accesses.append(acc)
        bp.written |= acc.write
        bp.read |= acc.read
    for name, bp in plans.items():
        _decide(bp, info, bound, fake, parents, body_root)
    return plans


def _decide(bp: BufferPlan, info, bound, fake, parents, body_root) -> None:
    if bound.step <= 0:
        bp.mode, bp.reason = "direct", "the bound loop runs downwards"
        return
    los, his, polys = [], [], []
    for acc in bp.accesses:
        p = affine.to_poly(acc.index) if acc.index is not None else None
        if p is None:
            bp.mode, bp.reason = "direct", "a subscript is not affine"
            return
        inner = [lp for lp in acc.loops if bound in lp.ancestors()]
        loops = [fake] + inner
        lo, hi = extreme(p, loops, False), extreme(p, loops, True)
        if lo is None or hi is None:
            bp.mode, bp.reason = "direct", "the window of a subscript is not computable"
            return
        los.append(lo)
        his.append(hi)
        polys.append(p)
    lo, hi = _pick(los, smaller=True), _pick(his, smaller=False)
    if lo is None or hi is None:
        bp.mode, bp.reason = "direct", "subscripts with incomparable windows"
        return
    span = _span(lo, hi)
    if span is None:
        bp.mode, bp.reason = "direct", "the window length depends on the tile position"
        return
    bp.lo, bp.hi = lo, hi
    bp.alpha, bp.beta = span
    if not _escapes_ok(bp, info, bound, body_root):
        bp.mode, bp.reason = "direct", "the pointer is used other than by subscripts"
        return
    if bp.written:
        why = _covered(bp, polys, lo, hi, bound, fake, parents)
        if why and not _iterations_apart(lo, hi, bound.step):
            bp.mode, bp.reason = "direct", why
        return
    keys = lo.keys() | hi.keys()
    bp.hoist = _KIMIN not in keys and _KIMAX not in keys


def _covered(bp: BufferPlan, polys, lo, hi, bound, fake, parents) -> str:
    """'' when the tile's writes cover its window densely and every read lies in that run;
    else why not."""
    for acc, p in zip(bp.accesses, polys):
        if not acc.write:
            continue
        if not (_unconditional(acc, bound, parents) and _dense(p, acc, bound)):
            return "the writes do not cover the window densely"
        inner = [lp for lp in acc.loops if bound in lp.ancestors()]
        wlo, whi = extreme(p, [fake] + inner, False), extreme(p, [fake] + inner, True)
        if wlo is None or whi is None or (wlo - lo).t or (whi - hi).t:
            return "reads outside the written run"
    return ""


def _iterations_apart(lo: affine.Poly, hi: affine.Poly, step: int) -> bool:
    """The windows of two different iterations of the bound loop never overlap: the window of
    iteration ``i`` is ``[a*i + cl, a*i + ch]`` with ``a > 0`` and ``ch - cl + 1 <= a * step``.
    Then the windows of disjoint tiles are disjoint too, so a tile may load its whole window,
    write some of it (under guards, sparsely) and copy all of it back: the elements it did not
    write go back with the values it loaded, which no other task writes."""
    if _KIMAX in lo.keys() or _KIMIN in hi.keys():
        return False
    sl, sh = lo.split(_KIMIN), hi.split(_KIMAX)
    if sl is None or sh is None:
        return False
    (a, cl), (ah, ch) = sl, sh
    if (a - ah).t or _loop_keys(a) or _loop_keys(cl) or _loop_keys(ch):
        return False
    if _positive(a) is not True:
        return False
    room = a * affine.Poly.const(step) - (ch - cl + affine.Poly.const(1))
    return _positive(room + affine.Poly.const(1)) is True


def _positive(p: affine.Poly) -> bool | None:
    """``p > 0`` for every value of the scalars >= 0 (None: not proved)."""
    q = p - affine.Poly.const(1)
    s = q.sign()
    if s is None:
        s = affine.sign_when_running(q, [])
    return None if s is None else s >= 0


def _pick(polys, smaller: bool):
    best = polys[0]
    for p in polys[1:]:
        d = p - best
        if not d.t:
            continue
        s = d.sign()
        if s is None:
            return None
        if (s < 0) == smaller and s != 0:
            best = p
    return best


def _escapes_ok(bp: BufferPlan, info, bound, body_root) -> bool:
    """Every mention of the buffer (or of a local alias of it) inside the bound loop is part
    of a recorded access or of an alias declaration."""
    root = bp.root or bp.name
    names = {bp.name} | {v.name for v in info.locals.values()
                         if v.kind in ("alias", "alias?") and v.root == root}
    covered: set[int] = set()
    for acc in bp.accesses:
        for n in _walk(target(acc)):
            covered.add(id(n))
    ok = True

    class V(c_ast.NodeVisitor):
        def visit_Decl(self, n):
            if n.name in names and n.init is not None:
                return                      # alias declaration (its accesses are recorded)
            self.generic_visit(n)

        def visit_ID(self, n):
            nonlocal ok
            if n.name in names and id(n) not in covered:
                ok = False

    V().visit(body_root)
    return ok


def _walk(n):
    yield n
    for _, c in n.children():
        yield from _walk(c)
