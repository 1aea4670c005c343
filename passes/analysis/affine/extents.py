"""affine bounds and extents: the elements each pointer parameter is accessed at.

``poly_max`` eliminates loop variables innermost-first from a Poly (exact extremes over the
iteration space); ``max_index`` bounds the subscript of one access (polynomial elimination
refined by guards, divisions and modulos by scalars, min-forms of tail handling, locals
bounded by guards, Z3 optimisation over constant shapes); ``extents`` / ``infer_inputs``
combine them per pointer parameter into an element count (an int or C text over the entry's
scalars, None when not computable; never below the true maximum).
"""
from __future__ import annotations

from .ir import Access, LoopInfo, NestInfo, buffer_elem_bytes, const_ir, locals_in, replace_ir
from .solver import ANALYSIS_ERRORS, Enc, check, load_z3, loop_constraints
from .poly import Poly, atom, ir_of_poly, to_poly
from .walk import analyze


_ORDER_CACHE: dict = {}


def _z3_sign(d: Poly, timeout_ms: int = 1000) -> int | None:
    """+1 / -1 / 0 when Z3 proves ``d >= 0`` / ``<= 0`` / both for every value of the
    entry's scalars >= 0, atoms taken by their IR (``16 * (n >> 4) <= n``); None otherwise."""
    key = d.c_text()
    if key in _ORDER_CACHE:
        return _ORDER_CACHE[key]
    out = None
    ir = ir_of_poly(d)
    if ir is not None:
        try:
            z3 = load_z3()
            syms: dict = {}
            e = Enc(z3, set(), set(), "o", syms).e(ir)
            facts = [v >= 0 for k, v in syms.items() if k.startswith("s:")]

            def proved(claim) -> bool:
                solver = z3.Solver()
                solver.set("timeout", timeout_ms)
                solver.add(*facts)
                solver.add(z3.Not(claim))
                return check(solver, timeout_ms) == z3.unsat

            ge, le = proved(e >= 0), proved(e <= 0)
            out = 0 if ge and le else 1 if ge else -1 if le else None
        except ANALYSIS_ERRORS + (load_z3().Z3Exception,):
            out = None
    _ORDER_CACHE[key] = out
    return out


def _sign(d: Poly) -> int | None:
    """Sign of ``d`` for scalars >= 0: by its coefficients, else by Z3 (atoms by value)."""
    s = d.sign()
    return s if s is not None else _z3_sign(d)


def _loop_keys(p: Poly) -> set:
    return {k for k in p.keys() if k.startswith("v:")}


def extreme_of_var(lp: LoopInfo, want_max: bool) -> Poly | None:
    if lp.lo is None or lp.hi is None or lp.start is None:
        return None                    # not canonical: no bounds
    lo, hi, start = to_poly(lp.lo), to_poly(lp.hi), to_poly(lp.start)
    if lo is None or hi is None or start is None:
        return None
    s = abs(lp.step)
    if s == 1:
        return hi - Poly.const(1) if want_max else lo
    if lp.step > 0:                    # values start, start+s, ... < hi
        if not want_max:
            return start
        span = hi - Poly.const(1) - start
    else:                              # values start, start-s, ... >= lo
        if want_max:
            return start
        span = start - lo
    if span.is_const():
        q = span.value() // s
        k = Poly.const(q)
    else:
        if _loop_keys(span):
            return None
        if span.sign() in (0, 1):
            k = atom(f"(({span.c_text()}) / {s})", ir_of_poly(span, "/", s))
        else:
            # the span is negative where the loop does not run (``i + 16 <= n`` with n < 16):
            # C's truncating division would round the last value up to the start, past
            # ``hi - 1``; the floor keeps the value at or below ``hi - 1`` there too, so an
            # access of a loop that does not run does not enlarge the extent
            # (floor division without a conditional: x minus its non-negative residue is a
            # multiple of s, which C divides exactly)
            t = span.c_text()
            k = atom(f"((({t}) - ((({t}) % {s} + {s}) % {s})) / {s})",
                      ir_of_poly(span, "fdiv", s))
    return start + Poly.const(s) * k if lp.step > 0 else start - Poly.const(s) * k


def _strided_max(lp: LoopInfo, loops, others) -> Poly | None:
    """Largest value of a strided loop ``for (v = u + c; v < hi; v += S)`` jointly over the
    enclosing loops that make up ``u``, when ``u`` runs over exactly S consecutive values
    (the task / grid-stride split ``for (t < S) for (m = t; m < n; m += S)``, or
    ``u = 128 * bx + tx`` over ``bx < 2, tx < 128`` with S = 256): the starts cover every
    residue modulo S, so the largest value taken is ``hi - 1`` (attained by the start
    congruent to ``hi - 1``; when no start runs the loop the access never executes). Exact
    only when those loops appear nowhere else (``others``: the Polys the caller keeps), so
    that they may take those values; None otherwise."""
    if lp.step <= 1 or lp.start is None or lp.hi is None:
        return None
    start, hi = to_poly(lp.start), to_poly(lp.hi)
    if start is None or hi is None:
        return None
    keys = _loop_keys(start)
    if not keys:
        return None
    terms = []
    rest = start
    for key in keys:
        sp = rest.split(key)
        if sp is None or not sp[0].is_const() or sp[0].value() <= 0:
            return None
        outer = next((o for o in loops if "v:" + o.uid == key), None)
        if outer is None or outer.step != 1 or outer.lo is None or outer.hi is None:
            return None
        lo_t, hi_t = to_poly(outer.lo), to_poly(outer.hi)
        if lo_t is None or hi_t is None or not lo_t.is_const() or not hi_t.is_const() or \
                lo_t.value() != 0:
            return None
        terms.append((sp[0].value(), hi_t.value()))
        rest = sp[1]
    if _loop_keys(rest):
        return None
    # mixed radix: coefficients g, g * n1, g * n1 * n2, ...; with g > 1 (task tiles of g
    # elements, ``for (t < T) for (s = t * g; s < n; s += T * g)``) the values are every
    # multiple of g below hi
    g = min(coef for coef, _ in terms)
    if g > 1 and not (rest.is_const() and rest.value() == 0):
        return None
    radix = g
    for coef, count in sorted(terms):
        if coef != radix or count <= 0:
            return None
        radix *= count
    if radix != lp.step:
        return None
    if keys & hi.keys() or any(keys & o.keys() for o in others):
        return None
    last = hi - Poly.const(1)
    if g == 1:
        return last
    if last.is_const():
        return Poly.const(g * (last.value() // g)) if last.value() >= 0 else last
    return Poly.const(g) * atom(f"(({last.c_text()}) / {g})", ir_of_poly(last, "/", g))


def _poly_z3(z3, p: Poly, syms: dict):
    out = z3.IntVal(0)
    for m, c in p.t.items():
        term = z3.IntVal(c)
        for k in m:
            if k not in syms:
                syms[k] = z3.Int(k)
            term = term * syms[k]
        out = out + term
    return out


def sign_when_running(coef: Poly, loops) -> int | None:
    """Sign of ``coef`` given every scalar >= 0 and every loop (with loop-free bounds) running
    at least once: an access inside empty loops never happens, so its bound is vacuous there."""
    z3 = load_z3()
    syms: dict = {}
    facts = []
    for lp in loops:
        lo, hi = to_poly(lp.lo), to_poly(lp.hi)
        if lo is None or hi is None or _loop_keys(lo) or _loop_keys(hi):
            continue
        facts.append(_poly_z3(z3, lo, syms) < _poly_z3(z3, hi, syms))
    c = _poly_z3(z3, coef, syms)
    facts += [v >= 0 for v in syms.values()]
    for sign, claim in ((1, c >= 0), (-1, c <= 0)):
        solver = z3.Solver()
        solver.set("timeout", 2000)
        solver.add(*facts)
        solver.add(z3.Not(claim))
        if check(solver, 2000) == z3.unsat:
            return sign
    return None


def _either_sign(lp: LoopInfo, coef: Poly, rest: Poly, want_max: bool) -> Poly | None:
    """Max (min) of ``rest + coef * v`` over the values of ``lp``'s variable ``v`` when the
    sign of ``coef`` (loop-free) is not provable (``by * (H - K + 1) * C``, an output row of
    a valid convolution: H >= K is nowhere stated). Requires every value ``v`` takes to lie
    in ``[lo, hi]``, its first and last values (``extreme_of_var``); then
    ``coef * v <= coef * lo + max(coef, 0) * (hi - lo)`` and
    ``coef * v >= coef * lo - max(-coef, 0) * (hi - lo)``, attained at whichever end the sign
    of ``coef`` picks. Guarantees an exact extreme whose ``max(., 0)`` is an atom (a C
    conditional over the scalars, non-negative as every symbol); None when the extremes of
    ``v`` or the IR of ``coef`` are not known."""
    lo, hi = extreme_of_var(lp, False), extreme_of_var(lp, True)
    c = coef if want_max else -coef
    ir = ir_of_poly(c)
    if lo is None or hi is None or ir is None:
        return None
    t = c.c_text()
    pos = atom(f"(({t}) > 0 ? ({t}) : 0)", ("?", ("<", ("c", 0), ir), ir, ("c", 0)))
    reach = pos * (hi - lo)
    return rest + coef * lo + (reach if want_max else -reach)


def poly_max(p: Poly, loops, want_max: bool = True) -> Poly | None:
    """Exact max (min) of ``p`` over the iteration space of ``loops`` (outermost first)."""
    for lp in reversed(loops):
        key = "v:" + lp.uid
        if key not in p.keys():
            continue
        sp = p.split(key)
        if sp is None:
            return None
        coef, rest = sp
        if _loop_keys(coef):
            return None
        sg = coef.sign()
        if sg is None:
            sg = sign_when_running(coef, loops)
        if sg is None:
            p = _either_sign(lp, coef, rest, want_max)
            if p is None:
                return None
            continue
        ext = extreme_of_var(lp, want_max if sg >= 0 else not want_max)
        if ext is None and (want_max if sg >= 0 else not want_max):
            ext = _strided_max(lp, loops, (rest, coef))
        if ext is None:
            return None
        p = rest + coef * ext
    if _loop_keys(p):
        return None
    return p


def max_index(acc: Access, elem_bytes: int | None = None) -> Poly | None:
    if acc.index is None and acc.width and elem_bytes:
        # last element a byte range touches: (last byte) / element size; exact as a Poly when
        # every symbolic coefficient of the first byte is a multiple of the element size
        first = max_index(Access(**{**acc.__dict__, "index": acc.byte_index, "width": 0}))
        if first is not None:
            # a min(loop bound, guard bound) of the first byte: the last element of each term
            lasts = [_last_element(t, acc.width, elem_bytes) for t in _min_terms(first)]
            if all(e is not None for e in lasts):
                out = lasts[0]
                for e in lasts[1:]:
                    out = ("min", out, e)
                return out
        last = ("/", ("+", acc.byte_index, ("c", acc.width - 1)), ("c", elem_bytes))
        return max_index(Access(**{**acc.__dict__, "index": last, "width": 0}))
    if acc.index is None:
        return None
    locs: set = set()
    locals_in(acc.index, locs)
    if locs:
        acc = _bounded_locals(acc, locs)
        if acc is None:
            return None
    p = to_poly(acc.index)
    if p is not None:
        best = _poly_bound(p, acc, True, both=True)
        if best is not None and not isinstance(best, Poly):
            return best                  # min(loop bound, guard bound)
        if best is not None:
            if any(g[0] in ("<", "<=") and to_poly(g[2]) is None
                   for g in _conjuncts(acc.guards)):
                # a guard that ``_poly_bound`` cannot use (``j < min(N - j0, 16)``, a masked
                # column tail): its min-list bound, when provably smaller
                g = _guarded_minlist_max(acc)
                picked = _pick(best, g, smaller=True) if g is not None else best
                best = picked if isinstance(picked, Poly) else best
            return best
    ix = acc.index
    if ix[0] in ("/", "fdiv") and ix[2][0] == "c" and ix[2][1] > 0:
        # truncating (flooring) division by a positive constant is monotone
        num = to_poly(ix[1])
        top = _poly_bound(num, acc, True) if num is not None else None
        if top is not None:
            if top.is_const():
                v = top.value()
                return Poly.const(int(v / ix[2][1]) if ix[0] == "/" else v // ix[2][1])
            if _poly_ok_text(top):
                return atom(f"(({top.c_text()}) / {ix[2][1]})", ir_of_poly(top, "/", ix[2][1]))
    r = _range(acc.index, acc)
    if r is not None:
        return Poly.const(r[1])
    m = _z3_max(acc)
    if m is None:
        m = _minlist_max(acc)
    if m is None:
        m = _guarded_minlist_max(acc)
    if m is None:
        split = _split_divmod(acc)
        if split is not None:
            m = max_index(split)
    if m is None:
        split = _symbolic_divmod(acc)
        if split is not None:
            m = max_index(split)
    if m is None:
        m = _equality_split_max(acc)
    return m


def _substitute_var(ir, uid: str, value):
    """``ir`` with the loop variable ``uid`` read as ``value``."""
    return replace_ir(ir, ("v", uid), value)


def _equality_split_max(acc: Access, depth: int = 0):
    """Maximum of a subscript under a loop whose bound depends on whether an outer loop
    variable equals a value (the last chunk's length, ``len = c == chunks - 1 ? n - c * CHUNK :
    CHUNK``): the larger of the maxima of the two cases, the first with the variable at that
    value, the second with it kept below the value when the value is its loop's last one
    (``c < chunks`` and ``c != chunks - 1``: ``c < chunks - 1``), else over its whole range.
    None when no loop bound has that form or a case has no maximum."""
    if depth > 2:
        return None
    loops = list(acc.loops)
    for k, lp in enumerate(loops):
        hi = lp.hi
        if not (isinstance(hi, tuple) and hi and hi[0] == "?" and hi[1][0] == "==" and
                hi[1][1][0] == "v"):
            continue
        uid, value, when_equal, otherwise = hi[1][1][1], hi[1][2], hi[2], hi[3]
        outer = next((j for j, o in enumerate(loops[:k]) if o.uid == uid), None)
        if outer is None or _loop_vars_in(value, set()):
            continue
        from dataclasses import replace as _replace

        def at(ir):
            return _substitute_var(ir, uid, value)
        # the variable at the value: its loop goes, every bound and the subscript read the value
        equal = [_replace(o, lo=at(o.lo), hi=at(when_equal) if o is lp else at(o.hi),
                          start=at(o.start)) for j, o in enumerate(loops) if j != outer]
        first = Access(**{**acc.__dict__, "index": at(acc.index), "loops": tuple(equal),
                          "guards": tuple(_substitute_var(g, uid, value) for g in acc.guards)})
        last = loops[outer]
        below = _replace(last, hi=value) if value == ("-", last.hi, ("c", 1)) else last
        other = [below if j == outer else _replace(o, hi=otherwise) if o is lp else o
                 for j, o in enumerate(loops)]
        second = Access(**{**acc.__dict__, "loops": tuple(other)})
        a = max_index(first) if not _has_equality_bound(first) else \
            _equality_split_max(first, depth + 1)
        b = max_index(second) if not _has_equality_bound(second) else \
            _equality_split_max(second, depth + 1)
        if a is None or b is None:
            return None
        return _pick(a, b, smaller=False)
    return None


def _has_equality_bound(acc: Access) -> bool:
    return any(isinstance(lp.hi, tuple) and lp.hi and lp.hi[0] == "?" and lp.hi[1][0] == "=="
               for lp in acc.loops)


def _is_min_form(ir) -> bool:
    """``x < y ? x : y`` / ``x <= y ? x : y``: the IR of ``min(x, y)``."""
    return ir[0] == "?" and ir[1][0] in ("<", "<=") and ir[2] == ir[1][1] and \
        ir[3] == ir[1][2]


_MIN_TERMS = 16


def _mins(ir, leaf=None) -> list | None:
    """``ir`` as the minimum of a list of Polys (``min(16 * t + 16, rows) - 1`` ->
    ``[16 * t + 15, rows - 1]``), None when it is not of that form. ``leaf`` converts the
    operands that are not sums, products or minima (default ``to_poly``)."""
    if not ir:
        return None
    leaf = leaf or to_poly
    tag = ir[0]
    out = None
    if tag == "?" and _is_min_form(ir):
        a, b = _mins(ir[2], leaf), _mins(ir[3], leaf)
        out = None if a is None or b is None else a + b
    elif tag == "+":
        a, b = _mins(ir[1], leaf), _mins(ir[2], leaf)
        out = None if a is None or b is None else [x + y for x in a for y in b]
    elif tag == "-":
        a, b = _mins(ir[1], leaf), _mins(ir[2], leaf)
        out = None if a is None or b is None or len(b) != 1 else [x - b[0] for x in a]
    elif tag == "*":
        a, b = _mins(ir[1], leaf), _mins(ir[2], leaf)
        if a is None or b is None:
            return None
        if len(a) == 1 and len(b) == 1:
            out = [a[0] * b[0]]
        elif len(b) == 1 and b[0].is_const() and b[0].value() > 0:
            out = [x * b[0] for x in a]
        elif len(a) == 1 and a[0].is_const() and a[0].value() > 0:
            out = [a[0] * y for y in b]
    else:
        p = leaf(ir)
        out = None if p is None else [p]
    return out if out is None or len(out) <= _MIN_TERMS else None


# opaque key ("o:...") -> the loop variables (uids) its sub-expression mentions
_OPAQUE_LOOPS: dict[str, frozenset] = {}


def _opaque_poly(ir) -> Poly | None:
    """``to_poly`` where a conditional, division or remainder over loop variables (which
    ``to_poly`` cannot carry) becomes an opaque key ``o:...``: an unknown integer of any sign
    that depends on the loop variables it mentions. Such a key must cancel before a loop it
    depends on is eliminated (``_minlist_max`` refuses otherwise); it only serves to let
    equal sub-expressions of a subscript and a guard cancel (``e1 + j`` under ``j < m - e1``,
    ``e1 = 16 * (m / 16)``). None for locals of unknown value."""
    p = to_poly(ir)
    if p is not None or not ir:
        return p
    tag = ir[0]
    if tag in ("+", "-", "*"):
        a, b = _opaque_poly(ir[1]), _opaque_poly(ir[2])
        if a is None or b is None:
            return None
        return a + b if tag == "+" else a - b if tag == "-" else a * b
    if tag == "neg":
        a = _opaque_poly(ir[1])
        return None if a is None else -a
    if tag in ("?", "/", "%", "fdiv", "fmod") and not locals_in(ir, set()):
        uids = _loop_vars_in(ir, set())
        if uids:
            key = "o:" + repr(ir)
            _OPAQUE_LOOPS.setdefault(key, frozenset(uids))
            return Poly.sym(key)
    return None


def _opaque_keys(p: Poly) -> set:
    return {k for k in p.keys() if k.startswith("o:")}


def _prune_mins(ps: list) -> list:
    """Drop the terms of a minimum that another term is provably at most (terms whose
    difference keeps an opaque key, of unknown sign, are not compared)."""
    def le(a, b) -> bool:
        d = a - b
        return not _opaque_keys(d) and _sign(d) in (0, 1)

    keep: list = []
    for p in ps:
        if any(le(p, q) for q in keep):
            continue
        keep = [q for q in keep if not le(q, p)] + [p]
    return keep


def _minlist_max(acc: Access, terms: list | None = None) -> Poly | None:
    """Maximum of a subscript over loops whose upper bounds (or the subscript) are
    minima (tiles: ``for (r = 16 * tr; r < min(16 * tr + 16, rows); ++r)``), exact but where a
    strided loop's last value has no closed form (then its bound less one, an upper bound,
    stands for it): the subscript is
    carried as the minimum of a list of Polys; eliminating a variable whose coefficient has
    one sign in every term substitutes its extreme in each (a minimum of functions that all
    grow with the variable is largest at its largest value), and a bound that is itself a
    minimum distributes. None when the signs differ, a strided bound depends on an outer
    loop, or the terms left cannot be ordered. ``terms``: the list to start from (default:
    the subscript's); opaque keys (``_opaque_poly``) in it must cancel before a loop they
    depend on is eliminated."""
    if terms is None:
        terms = _mins(acc.index)
    if terms is None:
        return None
    for lp in reversed(acc.loops):
        key = "v:" + lp.uid
        if any(lp.uid in _OPAQUE_LOOPS.get(k, ()) for t in terms for k in _opaque_keys(t)):
            return None
        if not any(key in t.keys() for t in terms):
            continue
        split = [t.split(key) for t in terms]
        if any(sp is None or _loop_keys(sp[0]) or _opaque_keys(sp[0]) for sp in split):
            return None
        signs = set()
        for coef, _ in split:
            if not coef.t:
                continue
            sg = coef.sign()
            if sg is None:
                sg = sign_when_running(coef, acc.loops)
            if sg is None:
                return None
            signs.add(sg)
        if len(signs - {0}) > 1:
            return None
        up = (signs - {0}) != {-1}
        if up:
            his = _mins(lp.hi) if lp.step > 0 else None
            if his is None and lp.step < 0 and lp.start is not None:
                st = to_poly(lp.start)
                his = None if st is None else [st + Poly.const(1)]
            if his is None:
                return None
            exts = []
            for h in his:
                e = _extreme_with_hi(lp, h)
                if e is None and len(his) == 1:
                    # a task / grid-stride loop whose start runs over every residue of its
                    # stride (``for (t < T) for (s = t * C; s < n; s += T * C)``), exactly
                    e = _strided_max(lp, acc.loops, terms)
                if e is None and lp.step > 1 and len(his) > 1:
                    # a strided loop from a start over outer variables up to a minimum (a
                    # task's rows in tiles, ``for (r = r0; r < min(r0 + per, rows); r += 32)``):
                    # its values stay below each bound, which bounds the terms from above;
                    # the minimum with the other terms decides
                    e = h - Poly.const(1)
                if e is None:
                    return None
                exts.append(e)
        else:
            e = extreme_of_var(lp, False)
            if e is None:
                return None
            exts = [e]
        new = []
        for coef, rest in split:
            if not coef.t:
                new.append(rest)
            else:
                new.extend(rest + coef * e for e in exts)
        terms = _prune_mins(new)
        if len(terms) > _MIN_TERMS:
            return None
    if any(_loop_keys(t) or _opaque_keys(t) for t in terms):
        return None
    terms = _prune_mins(terms)
    return terms[0] if len(terms) == 1 else None


def _guarded_minlist_max(acc: Access) -> Poly | None:
    """Maximum of a subscript through one guard ``a < b`` (``a <= b``) at a time, in the
    min-list form of ``_minlist_max`` with opaque keys: each term ``t`` is ``a + (t - a)``,
    so ``t <= b_k - 1 + (t - a)`` for every term ``b_k`` of ``b``'s minimum wherever the
    access runs. The masked tail of a vector loop, ``x[o + e1 + j]`` under ``j < m - e1`` with
    ``e1 = 16 * (m / 16)`` and ``m = min(n - o, T)``, becomes ``min(n - 1, o + T - 1)``
    (``e1`` cancels). An upper bound, as every guard bound: the smallest one a guard gives
    (when provably ordered; else the first found). None when no guard gives one."""
    if acc.index is None:
        return None
    terms = _mins(acc.index, _opaque_poly)
    if terms is None:
        return None
    found: list = []
    for g in _conjuncts(acc.guards):
        if g[0] not in ("<", "<="):
            continue
        a, bs = _opaque_poly(g[1]), _mins(g[2], _opaque_poly)
        if a is None or bs is None or not (_loop_keys(a) or _opaque_keys(a)):
            continue
        strict = Poly.const(1 if g[0] == "<" else 0)
        new = [b - strict + (t - a) for t in terms for b in bs]
        if len(new) > _MIN_TERMS:
            continue
        m = _minlist_max(acc, _prune_mins(new))
        if m is not None:
            found.append(m)
    if not found:
        return None
    best = found[0]
    for m in found[1:]:
        picked = _pick(best, m, smaller=True)
        if isinstance(picked, Poly):
            best = picked
    return best


def _extreme_with_hi(lp: LoopInfo, hi: Poly) -> Poly | None:
    """Largest value of ``lp``'s variable when its exclusive upper bound is ``hi``."""
    if lp.step < 0:
        return to_poly(lp.start)
    if lp.step == 1:
        return hi - Poly.const(1)
    start = to_poly(lp.start) if lp.start is not None else None
    if start is None:
        return None
    span = hi - Poly.const(1) - start
    if span.is_const():
        return start + Poly.const(lp.step * (span.value() // lp.step))
    if _loop_keys(span):
        return None
    s_ = lp.step
    t = span.c_text()
    if span.sign() in (0, 1):
        k = atom(f"(({t}) / {s_})", ir_of_poly(span, "/", s_))
    else:
        k = atom(f"((({t}) - ((({t}) % {s_} + {s_}) % {s_})) / {s_})", ir_of_poly(span, "fdiv", s_))
    return start + Poly.const(s_) * k


def _split_divmod(acc: Access) -> Access | None:
    """``acc`` with a loop variable ``b`` over ``[0, H)`` that the subscripts, guards and
    bounds use only as ``b / c`` and ``b % c`` (c dividing H) replaced by two independent
    variables ``q`` over ``[0, H / c)`` and ``r`` over ``[0, c)``: a flattened thread index
    split into warp and lane (``(256 * bx + tx) / 32`` is ``8 * bx + tx / 32``). None when
    no such variable is found."""
    by_uid = {lp.uid: lp for lp in acc.loops}
    chosen: dict = {}                 # uid -> divisor

    def norm(ir):
        if not isinstance(ir, tuple) or not ir:
            return ir
        tag = ir[0]
        if tag in ("c", "s", "a", "v", "l"):
            return ir
        if tag == "?":
            return ("?", norm(ir[1]), norm(ir[2]), norm(ir[3]))
        kids = tuple(norm(x) if isinstance(x, tuple) else x for x in ir[1:])
        ir = (tag,) + kids
        if tag in ("/", "%", "fdiv", "fmod") and ir[2][0] == "c" and ir[2][1] > 0:
            c = ir[2][1]
            p = to_poly(ir[1])
            if p is None:
                return ir
            q = Poly({m: k // c for m, k in p.t.items() if k % c == 0})
            r = Poly({m: k for m, k in p.t.items() if k % c != 0})
            keys = list(r.keys())
            if len(r.t) != 1 or len(keys) != 1 or not keys[0].startswith("v:") or \
                    r.t.get((keys[0],)) != 1:
                return ir
            uid = keys[0][2:]
            lp = by_uid.get(uid)
            if lp is None or lp.step != 1 or lp.lo != ("c", 0) or lp.hi is None:
                return ir
            h = const_ir(lp.hi)
            if h is None or h <= 0 or h % c or chosen.get(uid, c) != c or \
                    _scalar_nonneg(q) is False:
                return ir
            chosen[uid] = c
            part = ("v", uid + "/q") if tag in ("/", "fdiv") else ("v", uid + "/r")
            if tag in ("%", "fmod"):
                return part
            qi = ir_of_poly(q, loop_vars=True)
            return part if not q.t else (None if qi is None else ("+", qi, part))
        return ir

    index = norm(acc.index)
    guards = tuple(norm(g) for g in acc.guards)
    bounds = [(norm(lp.lo), norm(lp.hi), norm(lp.start)) for lp in acc.loops]
    if not chosen or index is None or any(g is None for g in guards):
        return None
    for uid in list(chosen):
        used: set = set()
        for x in (index,) + guards + tuple(v for b in bounds for v in b):
            _loop_vars_in(x, used)
        if uid in used:
            del chosen[uid]              # b is also used whole: no split
    if not chosen:
        return None
    import dataclasses
    loops = []
    for lp, (lo, hi, st) in zip(acc.loops, bounds):
        if lp.uid in chosen:
            c, h = chosen[lp.uid], const_ir(lp.hi)
            for suffix, top in (("/q", h // c), ("/r", c)):
                loops.append(LoopInfo(lp.var + suffix, lp.uid + suffix, lp.node, lp.parent,
                                      lp.depth, canonical=True, lo=("c", 0), hi=("c", top),
                                      start=("c", 0), step=1))
        else:
            loops.append(dataclasses.replace(lp, lo=lo, hi=hi, start=st))
    return Access(**{**acc.__dict__, "index": index, "guards": guards, "loops": tuple(loops)})


def _symbolic_divmod(acc: Access) -> Access | None:
    """``acc`` with each ``x / d`` and ``x % d`` on its subscript's arithmetic (the
    coordinates of a flattened index, ``idx % C``, ``(idx / C) % OW``, ``idx / (C * OW * OH)``)
    replaced by a fresh outermost variable over a range holding every value it takes:
    ``[0, d)`` for ``%``, ``[0, xmax / d + 1)`` for ``/`` (``Q`` when ``xmax + 1`` is ``Q * d``
    as polynomials, from a guard ``idx < N * OH * OW * C``). Requires, checked: ``d`` free of
    loop variables and provably >= 0 (then > 0 wherever the subscript is evaluated: division
    by zero is undefined), ``x`` >= 0 over the loops and guards (C's ``/`` and ``%`` truncate
    toward zero). The fresh variables are independent of the loops, a superset of the points
    the access reaches, so the maximum ``max_index`` then computes is an upper bound (exact
    when the coordinates are independent, as those of a flattened index). Divisions inside
    conditionals are not touched. None when no division is replaced or one is refused."""
    fresh: list = []

    def sub(x) -> Access:
        return Access(**{**acc.__dict__, "index": x, "loops": tuple(fresh) + tuple(acc.loops)})

    def conv(ir):
        if to_poly(ir) is not None:
            return ir
        tag = ir[0]
        if tag in ("+", "-", "*"):
            a, b = conv(ir[1]), conv(ir[2])
            return None if a is None or b is None else (tag, a, b)
        if tag == "neg":
            a = conv(ir[1])
            return None if a is None else ("neg", a)
        if tag not in ("/", "%"):
            return None
        x, d = conv(ir[1]), to_poly(ir[2])
        if x is None or d is None or _loop_keys(d) or _sign(d) != 1:
            return None
        px = to_poly(x)
        lows = (poly_max(px, sub(x).loops, False), _poly_bound(px, sub(x), False))
        hi = _poly_bound(px, sub(x), True)
        if not any(isinstance(lo, Poly) and _sign(lo) in (0, 1) for lo in lows) or \
                not isinstance(hi, Poly) or _loop_keys(hi):
            return None
        top = d if tag == "%" else _exact_quotient(hi + Poly.const(1), d)
        if top is not None:
            top_ir = ir_of_poly(top)
        else:
            # xmax / d + 1 (xmax >= 0: C's / is the floor); the host evaluates it also where
            # the access does not run, so d == 0 there gives 0 instead of a division by zero
            hir, dir_ = _tidy(ir_of_poly(hi)), _tidy(ir_of_poly(d))
            top_ir = None if hir is None or dir_ is None else \
                ("+", ("?", ("<", ("c", 0), dir_), ("/", hir, dir_), ("c", 0)), ("c", 1))
        if top_ir is None:
            return None
        uid = f"{tag}#{len(fresh)}@divmod"
        fresh.append(LoopInfo(uid, uid, None, None, 0, canonical=True, lo=("c", 0), hi=top_ir,
                              start=("c", 0), step=1))
        return ("v", uid)

    if acc.index is None or acc.width:
        return None
    index = conv(acc.index)
    return None if index is None or not fresh else sub(index)


def _tidy(ir):
    """``ir`` without the ``0 +`` and ``1 *`` that ``ir_of_poly`` builds (shorter C text)."""
    if not isinstance(ir, tuple) or not ir or ir[0] in ("c", "s", "a", "v", "l"):
        return ir
    ir = (ir[0],) + tuple(_tidy(x) for x in ir[1:])
    if ir[0] in ("+", "*") and ir[1] == ("c", 0 if ir[0] == "+" else 1):
        return ir[2]
    return ir


def _exact_quotient(p: Poly, d: Poly) -> Poly | None:
    """``p / d`` as a polynomial when ``d`` is one monomial dividing every term of ``p``."""
    if len(d.t) != 1:
        return None
    (dm, dc), = d.t.items()
    out = {}
    for m, c in p.t.items():
        rest = list(m)
        for k in dm:
            if k not in rest:
                return None
            rest.remove(k)
        if c % dc:
            return None
        out[tuple(rest)] = c // dc
    return Poly(out)


def _scalar_nonneg(q: Poly):
    return None


def _loop_vars_in(ir, out: set) -> set:
    if isinstance(ir, tuple):
        if ir and ir[0] == "v":
            out.add(ir[1])
        for x in ir[1:]:
            _loop_vars_in(x, out)
    return out


def _subst_local(ir, uid: str):
    return replace_ir(ir, ("l", uid), ("v", uid))


def _bounded_locals(acc: Access, locs: set) -> Access | None:
    """``acc`` with each local of unknown value in its subscript (``r = ids[i]``, a row read
    from an index array) treated as a variable over the range its guards state
    (``assert(r >= 0 && r < nr)``, ``if (r < nr)``): ``lo <= r < hi`` with loop-free bounds
    over the scalars. A data-dependent value may be any value of that range, so the largest
    one is attained by some input; None when a local has no such pair of guards."""
    conj = list(_conjuncts(acc.guards))
    extra = []
    for uid in sorted(locs):
        me = ("l", uid)
        lo = hi = None
        for g in conj:
            if g[0] not in ("<", "<="):
                continue
            a, b = g[1], g[2]
            if a == me and _scalar_only(b):
                h = b if g[0] == "<" else ("+", b, ("c", 1))
                hi = h if hi is None else hi
            elif b == me and _scalar_only(a):
                lo_ = a if g[0] == "<=" else ("+", a, ("c", 1))
                lo = lo_ if lo is None else lo
        if lo is None or hi is None:
            return None
        lp = LoopInfo(uid.split("#")[0], uid, None, None, 0, canonical=True, lo=lo, hi=hi,
                      start=lo, step=1)
        extra.append(lp)
    index = acc.index
    guards = acc.guards
    for lp in extra:
        index = _subst_local(index, lp.uid)
        guards = tuple(_subst_local(g, lp.uid) for g in guards)
    return Access(**{**acc.__dict__, "index": index, "guards": guards,
                     "loops": tuple(extra) + tuple(acc.loops)})


def _scalar_only(ir) -> bool:
    """No loop variable and no local of unknown value: fixed by the entry's scalars."""
    if isinstance(ir, tuple):
        if ir and ir[0] in ("v", "l"):
            return False
        return all(_scalar_only(x) for x in ir[1:])
    return True


def _closed(ir) -> bool:
    """No entry scalar, opaque atom or unknown local: the value is fixed by the loop variables."""
    if isinstance(ir, tuple):
        if ir and ir[0] in ("s", "a", "l"):
            return False
        return all(_closed(x) for x in ir[1:])
    return True


def _z3_max(acc: Access, timeout_ms: int = 3000) -> Poly | None:
    """Maximum of a closed subscript (constant shapes) over its loops' ranges and its closed
    guards, by Z3 optimisation: the min/max ternaries of tail handling (``n = c - o < T ? c - o
    : T``) that the polynomial elimination cannot bound. Guards over unknown locals are left
    out and control flow that is not a guard (``if (c) continue;``) is not seen, so the value
    is an upper bound of the true maximum (exact when every restriction is a modelled guard):
    a too large extent makes the host entry copy past the caller's buffer, which the virtual
    device reports as an out-of-bounds access (verification fails; never a wrong result).
    None when some loop is not canonical, a bound mentions a scalar, or Z3 does not answer."""
    if any(not lp.canonical or lp.lo is None or lp.hi is None for lp in acc.loops):
        return None
    parts = [acc.index] + [x for lp in acc.loops for x in (lp.lo, lp.hi, lp.start)]
    if not all(_closed(x) for x in parts):
        return None
    z3 = load_z3()
    enc = Enc(z3, set(), set(), "max", {})
    opt = z3.Optimize()
    opt.set("timeout", timeout_ms)
    for c in loop_constraints(enc, acc.loops):
        opt.add(c)
    for g in acc.guards:
        if _closed(g):
            opt.add(enc.c(g))
    h = opt.maximize(enc.e(acc.index))
    if opt.check() != z3.sat:
        return None
    v = opt.upper(h)
    if not z3.is_int_value(v):
        return None                    # unbounded (oo) or not a number
    return Poly.const(v.as_long())


def _poly_ok_text(p: Poly) -> bool:
    return not _loop_keys(p)


def _poly_bound(p: Poly, acc: Access, want_max: bool, both: bool = False):
    """Max (min) of ``p`` over the loops of ``acc``, tightened by its guards. With ``both``,
    a maximum from a guard that the loop-only bound cannot be ordered against is returned
    as the ``min`` node of the two (each holds wherever the access runs): a warp per row,
    ``A[warp * cols + j]`` under ``warp < rows`` with ``warp = tid / 32 < 8`` under a fixed
    launch, touches ``min(8, rows) * cols`` elements, not ``rows * cols``."""
    best = poly_max(p, acc.loops, want_max)
    guarded: list = []
    for g in _conjuncts(acc.guards):
        if g[0] not in ("<", "<="):
            continue
        g = _unmasked(g, acc)
        a, b = to_poly(g[1]), to_poly(g[2])
        if a is None or b is None:
            continue
        side = a if want_max else b
        if _loop_keys(side) and not _loop_keys(side) & _loop_keys(p):
            # a guard on other loop variables (``row < rows`` around ``x[j]``) says nothing
            # about this subscript; rewriting through it only loosens the bound
            continue
        if not _loop_keys(a) and not _loop_keys(b) and not side.keys() & p.keys():
            # a guard on scalars only that share nothing with the subscript (``n > 256``, a
            # size class, around ``x[i + j]``): the rewrite only adds ``b - a >= 0`` to it
            # and, incomparable, would be preferred to the loop bound
            continue
        strict = Poly.const(1) if g[0] == "<" else Poly.const(0)
        # d may mention loop variables: the bound holds pointwise wherever the guard holds,
        # and poly_max below eliminates them (j < n - i on p = i + j gives p <= n - 1)
        scale = _guard_scale(p, a, acc.loops) if want_max else None
        if scale is not None:          # p = c*a + d, c >= 0, a < b  ->  p <= c*(b - 1) + d
            bound = scale * (b - strict) + (p - scale * a)     # (r < m on r*n + k: m*n - 1)
        elif want_max:                 # p = a + d, a < b  ->  p <= b - 1 + d
            d = p - a
            bound = b + d - strict
        else:                          # p = b + d, a < b  ->  p >= a + 1 + d
            d = p - b
            bound = a + d + strict
        if bound is None:
            continue
        bound = poly_max(bound, acc.loops, want_max)
        if bound is None:
            continue
        guarded.append(bound)
    # a guard bound holds wherever the access executes; the tightest provable one wins, and
    # it is preferred to the loop-only bound when the two are not comparable (the guard is on
    # the subscript itself: ``j < n - i`` on ``i + j``)
    for g in guarded:
        if all(g is h or _pick(g, h, smaller=want_max) is g for h in guarded):
            if best is None:
                return g
            picked = _pick(best, g, smaller=want_max)
            if isinstance(picked, Poly):
                return picked
            return picked if both and want_max and not _loop_keys(best) else g
    if guarded and best is not None:
        for g in guarded:
            picked = _pick(best, g, smaller=want_max)
            if isinstance(picked, Poly):
                best = picked
    return best if isinstance(best, Poly) or best is None else None


def _unmasked(g, acc: Access):
    """``a < (x & (2^k - 1))`` (IR ``fmod``) -> ``a < x`` where ``x >= 0`` wherever the access
    runs (the mask can only lower a non-negative value): a masked lane count ``j < (n & 255)``
    (``_bzhi_u64(~0, n)`` under ``if (n <= 64)``) bounds ``j`` by ``n``, not by the lane loop's
    64. ``g`` itself otherwise."""
    rhs = g[2]
    if rhs[0] != "fmod" or rhs[2][0] != "c":
        return g
    x = to_poly(rhs[1])
    if x is None or _loop_keys(x):
        return g
    if x.sign() in (0, 1) or _below_when(Poly.const(0), x, _scalar_guards(acc)):
        return (g[0], g[1], rhs[1])
    return g


def _guard_scale(p: Poly, a: Poly, loops) -> Poly | None:
    """``c`` (not 1, free of loop variables, >= 0 wherever the loops run) with ``p - c*a`` free
    of the first loop variable of ``a``: a guard ``a < b`` on a row index ``a`` then bounds the
    row term of ``p = c*a + d`` by ``c*(b - 1)`` (``r < outer`` on ``r*inner + k``), where the
    unit-coefficient form ``b - 1 + (c - 1)*a + d`` only bounds ``(c - 1)*a`` by the loops."""
    for key in sorted(_loop_keys(a)):
        sa, sp = a.split(key), p.split(key)
        if sa is None or sp is None:
            return None
        ca, cp = sa[0], sp[0]
        if not ca.is_const() or ca.value() == 0 or _loop_keys(cp):
            return None
        k = ca.value()
        if any(c % k for c in cp.t.values()):
            return None
        c = Poly({m: v // k for m, v in cp.t.items()})
        if not c.t or (c.is_const() and c.value() == 1):
            return None
        sg = c.sign()
        if sg is None:
            sg = sign_when_running(c, loops)
        return c if sg is not None and sg >= 0 else None
    return None


def _range(ir, acc: Access) -> tuple[int, int] | None:
    """Constant interval of an IR over the accesses' loops and guards (constant shapes)."""
    p = to_poly(ir)
    if p is not None:
        hi, lo = _poly_bound(p, acc, True), _poly_bound(p, acc, False)
        if hi is not None and lo is not None and hi.is_const() and lo.is_const():
            return lo.value(), hi.value()
    tag = ir[0]
    if tag == "?":
        a, b = _range(ir[2], acc), _range(ir[3], acc)
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    if tag == "neg":
        a = _range(ir[1], acc)
        return None if a is None else (-a[1], -a[0])
    if tag not in ("+", "-", "*", "/", "%", "fdiv", "fmod"):
        return None
    a, b = _range(ir[1], acc), _range(ir[2], acc)
    if a is None or b is None:
        return None
    if tag == "+":
        return a[0] + b[0], a[1] + b[1]
    if tag == "-":
        return a[0] - b[1], a[1] - b[0]
    if tag == "*":
        c = [x * y for x in a for y in b]
        return min(c), max(c)
    if b[0] != b[1] or b[0] <= 0:
        return None
    d = b[0]
    if tag in ("/", "%") and a[0] < 0:
        return None
    if tag in ("/", "fdiv"):
        return a[0] // d, a[1] // d
    if a[1] - a[0] + 1 >= d or a[0] // d != a[1] // d:
        return 0, d - 1
    return a[0] % d, a[1] % d


def _conjuncts(guards):
    for g in guards:
        if g[0] == "&&":
            yield from _conjuncts((g[1], g[2]))
        elif g[0] == "!" and g[1][0] == "<":
            yield ("<=", g[1][2], g[1][1])
        elif g[0] == "!" and g[1][0] == "<=":
            yield ("<", g[1][2], g[1][1])
        elif g[0] == "!" and g[1][0] == "||":
            yield from _conjuncts((("!", g[1][1]), ("!", g[1][2])))
        else:
            yield g


def _pick(a, b, smaller: bool):
    """The smaller (larger) of two Polys when their order is provable, else a Max/Min node."""
    if isinstance(a, Poly) and isinstance(b, Poly):
        s = _sign(a - b)
        if s is not None:
            return (b if s > 0 else a) if smaller else (a if s >= 0 else b)
    return ("min" if smaller else "max", a, b)


def _ext_text(e) -> str:
    if isinstance(e, Poly):
        return e.c_text()
    op, a, b = e
    ta, tb = _ext_text(a), _ext_text(b)
    cmp = "<" if op == "min" else ">"
    return f"(({ta}) {cmp} ({tb}) ? ({ta}) : ({tb}))"


def _plus_one(e):
    if isinstance(e, Poly):
        return e + Poly.const(1)
    return (e[0], _plus_one(e[1]), _plus_one(e[2]))


def _last_element(first, width: int, elem_bytes: int):
    """The element holding the last of ``width`` bytes starting at byte ``first`` (a Poly):
    a Poly when every symbolic coefficient is a multiple of the element size, else the
    truncating division as an atom; None when the byte bound has no C text."""
    if not isinstance(first, Poly):
        return None
    if not any(c % elem_bytes for m, c in first.t.items() if m):
        c0 = first.value() + width - 1
        return Poly({m: c // elem_bytes for m, c in first.t.items() if m}) + \
            Poly.const(c0 // elem_bytes)
    top = first + Poly.const(width - 1)
    if _poly_ok_text(top):
        return atom(f"(({top.c_text()}) / {elem_bytes})", ir_of_poly(top, "/", elem_bytes))
    return None


def _without_dominated(cands: list) -> list:
    """The extent is the max of ``cands``: a ``min`` candidate with a term that a Poly
    candidate is at least everywhere adds nothing (masked tails min(64, n) beside a loop's
    n)."""
    polys = [c for c in cands if isinstance(c, Poly)]
    return [c for c in cands if isinstance(c, Poly) or
            not any(_sign(p - t) in (0, 1) for p in polys for t in _min_terms(c)
                    if isinstance(t, Poly))]


def _stays_below(acc: Access, extent) -> bool:
    """Z3 proves ``acc`` stays below ``extent`` (a Poly, or a ``min`` of Polys: below each
    of its terms) wherever it runs."""
    terms = _min_terms(extent)
    return all(isinstance(t, Poly) for t in terms) and \
        all(within(acc, t - Poly.const(1)) for t in terms)


def _min_terms(e) -> list:
    """The operands of a nest of ``min`` nodes (``e`` itself when it is not one)."""
    if isinstance(e, tuple) and e[0] == "min":
        return _min_terms(e[1]) + _min_terms(e[2])
    return [e]


def _guarded_max(acc: Access, m):
    """``m`` tightened by guards on the whole subscript (``if (row < rows) y[row] = ...``
    after ``if (row >= rows) continue;``): the subscript is below their bound wherever the
    access runs. The smaller of the two when provable, else their minimum (a ``min`` node);
    the guard bound alone when ``m`` is None."""
    if acc.index is None:
        return m
    for g in _conjuncts(acc.guards):
        if g[0] not in ("<", "<=") or g[1] != acc.index or not _scalar_only(g[2]):
            continue
        b = to_poly(g[2])
        if b is None:
            continue
        gb = b - Poly.const(1) if g[0] == "<" else b
        if m is None:
            m = gb
            continue
        if isinstance(m, Poly):
            m = _pick(m, gb, smaller=True)
        elif not any(isinstance(x, Poly) and _sign(x - gb) in (-1, 0) for x in _min_terms(m)):
            m = ("min", m, gb)          # no term of the min is at most gb already
    return m


def within(acc: Access, bound: Poly, timeout_ms: int = 3000) -> bool:
    """Z3 proves ``acc``'s subscript <= ``bound`` wherever the access runs: inside its loops'
    ranges (strides included) and under its guards, for every value of the entry's scalars
    >= 0 and of the locals it reads (left free: an over-approximation, so the proof stays
    sound). False when not proven (or not encodable)."""
    bir = ir_of_poly(bound)
    if acc.index is None or acc.width or bir is None:
        return False
    try:
        z3 = load_z3()
        syms: dict = {}
        enc = Enc(z3, set(), set(), "w", syms)
        solver = z3.Solver()
        for c in loop_constraints(enc, acc.loops):
            solver.add(c)
        for g in acc.guards:
            solver.add(enc.c(g))
        solver.add(enc.e(acc.index) > enc.e(bir))
        solver.add(*[v >= 0 for k, v in syms.items() if k.startswith("s:")])
        return check(solver, timeout_ms) == z3.unsat
    except ANALYSIS_ERRORS + (load_z3().Z3Exception,):
        return False


def _scalar_guards(acc: Access) -> list:
    """The conjuncts of ``acc``'s guards fixed by the entry's scalars alone (the stride or
    size test in front of a fast path: ``if (dst_str == src_str && size == src_str)``). Those
    over loop variables or unknown locals are left out: a weaker condition, so a fact that
    follows from it holds wherever the access runs."""
    return [g for g in _conjuncts(acc.guards) if _scalar_only(g)]


def _below_when(m: Poly, e: Poly, guards: list, timeout_ms: int = 1000) -> bool:
    """Z3 proves ``m <= e`` for every value of the entry's scalars >= 0 that satisfies
    ``guards`` (atoms taken by their IR); False when not proven or not encodable."""
    d = ir_of_poly(e - m)
    if d is None or not guards:
        return False
    try:
        z3 = load_z3()
        syms: dict = {}
        enc = Enc(z3, set(), set(), "g", syms)
        claim = enc.e(d) >= 0
        solver = z3.Solver()
        solver.set("timeout", timeout_ms)
        for g in guards:
            solver.add(enc.c(g))
        solver.add(*[v >= 0 for k, v in syms.items() if k.startswith("s:")])
        solver.add(z3.Not(claim))
        return check(solver, timeout_ms) == z3.unsat
    except ANALYSIS_ERRORS + (load_z3().Z3Exception,):
        return False


def _drop_guarded(cands: list, conds: dict) -> list:
    """``cands`` (one buffer's element counts) without those that another candidate covers
    wherever they are needed. A candidate is needed where the accesses it bounds run; for an
    access under a scalar-only condition (``dst_str == src_str && size == src_str``: the
    dense copy on the fast path of a strided 2-D copy, ``src_str * seg_num`` elements) a
    candidate at least as large whenever that condition holds is enough (the gather's
    ``src_str * (seg_num - 1) + size``, equal there). Without this the extent is the
    maximum of both, ``seg_num * src_str``, past what the source reads when
    ``size < src_str`` (the other branches run), and the host entry copies those elements
    from the caller. A candidate is dropped only when one of those kept in the end covers it
    (covering under different conditions is not transitive), so the extent stays at or above
    every access's own maximum wherever that access runs."""
    polys = [m for m in cands if isinstance(m, Poly)]

    def needs(m) -> list:
        return conds[id(m)][1] if id(m) in conds else [[]]

    droppable = [m for m in polys if all(needs(m))]
    if len(polys) < 2 or not droppable:
        return cands
    proofs: dict = {}

    def covered_by(m, kept) -> bool:
        for e in kept:
            if e is m or not isinstance(e, Poly):
                continue
            key = (id(m), id(e))
            if key not in proofs:
                proofs[key] = all(_below_when(m, e, g) for g in needs(m))
            if proofs[key]:
                return True
        return False

    kept = list(cands)
    dropped = []
    for m in droppable:
        if covered_by(m, kept):
            kept = [k for k in kept if k is not m]
            dropped.append(m)
    # a candidate dropped for one dropped later is covered only where that one is needed
    # too: back in unless one of the final candidates covers it
    for m in dropped:
        if not covered_by(m, kept):
            kept.append(m)
    return [m for m in cands if any(m is k for k in kept)]


def _absorbs(have: list, more: list) -> bool:
    """A candidate needed under the condition lists ``have`` may take on those of ``more``
    without losing a drop: one of ``have`` is empty (needed everywhere: never dropped), or
    every list of ``more`` is one of ``have`` already."""
    if any(not g for g in have):
        return True
    known = {repr(g) for g in have}
    return all(repr(g) in known for g in more)


def extents(info: NestInfo) -> dict[str, object]:
    """Pointer parameter -> element count touched (int, C expression text, or None)."""
    out: dict[str, object] = {}
    best: dict[str, object] = {}
    failed: set[str] = set()
    unbounded: dict[str, list] = {}        # buffer -> accesses whose maximum is not known
    # id(candidate Poly) -> (the Poly, where it is needed: one list of scalar-only guard
    # conjuncts per access it covers; an empty list: everywhere)
    conds: dict[int, tuple] = {}
    for acc in info.accesses:
        if not acc.is_param or acc.buffer in failed:
            continue
        try:
            m = max_index(acc, buffer_elem_bytes(info, acc.buffer) if acc.width else None)
            m = _guarded_max(acc, m)
        except ANALYSIS_ERRORS + (load_z3().Z3Exception,):
            m = None                      # not analysable: the extent is unknown (refusal)
        if m is None:
            if acc.index is None or acc.width:
                failed.add(acc.buffer)
            else:
                unbounded.setdefault(acc.buffer, []).append(acc)
            continue
        m = _plus_one(m)
        cands = best.setdefault(acc.buffer, [])
        if not isinstance(m, Poly):
            if all(_ext_text(m) != _ext_text(e) for e in cands):
                cands.append(m)
            continue
        need = [_scalar_guards(acc)]
        # a candidate covering another everywhere absorbs it (is needed wherever it is) when
        # that loses nothing: it is needed everywhere anyway, or already under the same
        # conditions. Otherwise both stay: the larger may be dropped under its own conditions
        # (hamming's 192 bytes when n > 192) while the smaller is still needed under others
        # (64 when n <= 128), where a larger bound would copy past the caller's buffer.
        above = next((e for e in cands if isinstance(e, Poly) and _sign(e - m) in (0, 1)
                      and _absorbs(conds[id(e)][1], need)), None)
        if above is not None:
            conds[id(above)][1].extend(need)
            continue
        below = [e for e in cands if isinstance(e, Poly) and _sign(m - e) in (0, 1)
                 and _absorbs(need, conds[id(e)][1])]
        cands[:] = [e for e in cands if not any(e is b for b in below)] + [m]
        conds[id(m)] = (m, need + [g for b in below for g in conds.pop(id(b))[1]])
    for name, cands in best.items():
        cands[:] = _drop_guarded(cands, conds)
    for name, accs in unbounded.items():
        # an access without a computed maximum adds nothing when Z3 proves it stays below the
        # extent the others reach (the vector part of a loop whose masked tail reaches n - 1)
        if name not in failed and not all(any(_stays_below(a, e) for e in best.get(name, []))
                                          for a in accs):
            failed.add(name)
    for name, p in info.params.items():
        if p.kind != "pointer":
            continue
        if name in failed:
            out[name] = None
        elif name not in best:
            out[name] = 0
        else:
            cands = _without_dominated(sorted(best[name], key=_ext_text))
            e = cands[0]
            for c in cands[1:]:
                e = ("max", e, c)
            if isinstance(e, Poly) and e.is_const():
                out[name] = max(e.value(), 0)
            else:
                out[name] = _ext_text(e)
    return out


def infer_inputs(program) -> dict[str, object]:
    """Pointer parameter -> element count the entry touches (see ``extents``)."""
    return extents(analyze(program))


def free_symbols(info: NestInfo) -> set[str]:
    return {n for n, p in info.params.items() if p.kind != "pointer"}


PROOF_CANDIDATES = 24        # candidate counts tried per pointer (scalars first, then products)
PROOF_BUDGET_S = 8.0         # seconds for them all
_INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


def proved_extent(info: NestInfo, name: str, timeout_ms: int = 2000) -> str | None:
    """An element count of pointer parameter ``name`` that Z3 proves where the polynomial
    analysis has none (a task's share with a remainder, ``offset = t * (n / T) + min(t, n % T)``,
    in tiles of ``count / TILE``): an integer scalar of the entry, one times a constant of the
    subscripts (a row length: ``rows * 1000``), or a product of two or three scalars, such
    that every access of ``name`` stays below it for all scalar values >= 0 and, at each of a
    few sample sizes, an access reaches its last element. A local of unknown value in a
    subscript may take any value the guards allow (the walker keeps one symbol per value).
    None when no candidate is proved."""
    accs = [a for a in info.accesses if a.is_param and a.buffer == name]
    if not accs or any(a.index is None or a.width for a in accs):
        return None
    scalars = [p.name for p in info.params.values()
               if p.kind == "scalar" and p.dtype in _INT_DTYPES]
    cands = [(("s", s), s) for s in scalars]
    # a scalar times a row length the subscripts name (``r * COLS + c`` with COLS = 1000)
    consts = sorted({v for a in accs for v in _ir_constants(a.index) if 1 < v <= 1 << 20})
    cands += [(("*", ("s", s), ("c", c)), f"{s} * {c}") for s in scalars for c in consts]
    cands += [(("*", ("s", a), ("s", b)), f"{a} * {b}")
              for i, a in enumerate(scalars) for b in scalars[i + 1:]]
    # three dimensions ([outer, dim, inner] of a gather along dim)
    cands += [(("*", ("*", ("s", a), ("s", b)), ("s", c)), f"{a} * {b} * {c}")
              for i, a in enumerate(scalars) for j, b in enumerate(scalars[i + 1:], i + 1)
              for c in scalars[j + 1:]]
    import time

    z3 = load_z3()
    deadline = time.monotonic() + PROOF_BUDGET_S
    try:
        for ir, text in cands[:PROOF_CANDIDATES]:
            if time.monotonic() > deadline:
                return None
            if _z3_below(z3, accs, ir, timeout_ms) and _z3_reaches(z3, accs, ir, timeout_ms):
                return text
    except ANALYSIS_ERRORS + (z3.Z3Exception,):
        return None
    return None


def _ir_constants(ir) -> set[int]:
    """The integer constants of an index IR."""
    out: set[int] = set()
    if isinstance(ir, tuple):
        if len(ir) == 2 and ir[0] == "c" and isinstance(ir[1], int):
            out.add(ir[1])
        else:
            for x in ir[1:]:
                out |= _ir_constants(x)
    return out


def _z3_solver(z3, acc: Access, timeout_ms: int):
    enc = Enc(z3, set(), set(), "bound", {})
    sol = z3.Solver()
    sol.set("timeout", timeout_ms)
    for c in loop_constraints(enc, acc.loops):
        sol.add(c)
    for g in acc.guards:           # one with a local: its value where the access runs
        sol.add(enc.c(g))          # (the walker drops a guard whose locals change: _stale)
    return enc, sol


def _scalars_nonnegative(z3, enc, sol) -> None:
    for key, v in list(enc.syms.items()):
        if key.startswith("s:"):
            sol.add(v >= 0)


def _z3_below(z3, accs, bound, timeout_ms: int) -> bool:
    """Every access's subscript is below ``bound`` wherever it runs (no counterexample), for
    a buffer of at least one element (a clamp to ``[0, m - 1]`` reads element 0 when m = 0:
    no meaningful input has an empty buffer the program reads)."""
    for acc in accs:
        enc, sol = _z3_solver(z3, acc, timeout_ms)
        sol.add(enc.e(acc.index) > enc.e(bound) - 1)
        sol.add(enc.e(bound) >= 1)
        _scalars_nonnegative(z3, enc, sol)
        if sol.check() != z3.unsat:
            return False
    return True


_REACH_SAMPLES = (37, 1000, 4099)        # values of the bound's scalars the check fixes


def _z3_reaches(z3, accs, bound, timeout_ms: int) -> bool:
    """At each sample value of the bound's scalars (odd sizes and round ones), some access
    touches the element just below ``bound``: the bound is the footprint there, not a loose
    cover of it. A sample at which no access runs at all (``if (cols > MAX_COLS) return;``)
    says nothing; at least one must remain."""
    names = set()
    _scalars_of(bound, names)

    def runs(acc, value, at_bound: bool) -> bool:
        enc, sol = _z3_solver(z3, acc, timeout_ms)
        if at_bound:
            sol.add(enc.e(acc.index) == enc.e(bound) - 1)
        _scalars_nonnegative(z3, enc, sol)
        for n in names:
            sol.add(enc.var("s:" + n) == value)
        return sol.check() == z3.sat

    sampled = 0
    for value in _REACH_SAMPLES:
        if any(runs(acc, value, True) for acc in accs):
            sampled += 1
        elif any(runs(acc, value, False) for acc in accs):
            return False
        # else: no access runs at this size (``if (cols > MAX_COLS) return;``): no sample
    return sampled > 0


def _scalars_of(ir, out: set) -> None:
    if isinstance(ir, tuple) and ir:
        if ir[0] == "s":
            out.add(ir[1])
        for x in ir[1:]:
            _scalars_of(x, out)
