"""loop_normalize: grid-stride loop nests of lifted GPU code -> one counted loop.

Summary
    The GPU lift turns a grid-stride (or block-stride) loop

    ``for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)``

    into a nest over the lifted blocks and threads around a strided loop::

        for (unsigned b = 0; b < B; ++b)
          for (unsigned t = 0; t < T; ++t)
            for (int i = b * T + t; i < n; i += T * B) body(i);

    The loop variables ``v1 .. vk`` of the enclosing loops (constant extents ``C1 .. Ck``)
    enter the start as a mixed-radix number ``sum(w_j * v_j)`` whose weights, in increasing
    order, are ``1, C_a, C_a*C_b, ...`` and whose stride is the product of all extents ``S``.
    Then ``(v1, .., vk) -> start`` is a bijection onto ``[0, S)`` and the values taken by
    ``i`` over the whole nest are exactly ``{0 <= i < n}``, each once: the nest runs the same
    set of ``body(i)`` instances as ``for (int i = 0; i < n; ++i) body(i)``, only in another
    order. The rewrite is made when the dependence analysis (``passes.analysis.affine``) proves that
    the new loop carries no dependence, i.e. that the order of the instances does not matter.
    ``task_bind`` / ``loop_bind`` then see a plain counted loop they can split across all
    tasks (threads) and stage in contiguous tiles.
Requires
    1. The program has an entry function definition  [XP-LOOP-NORMALIZE-001].
    2. A nest of counted loops ``for (v = 0; v < C; ++v)`` (``C`` a constant > 0 or an
       expression of names the nest does not write, ``v`` not written in the nest) whose innermost body is, besides side-effect-free declarations
       used only by the start, one loop ``for (T i = start; i < N; i += S)`` (or
       ``T i = start; for (; i < N; i += S)``) with ``start``
       the mixed-radix combination above of *all* the nest variables, ``S`` their total
       extent (as a product of the same constants and extent expressions), ``N`` free of ``i``, of the nest variables and of names the body writes, and a
       body that does not mention the nest variables or those declarations, writes neither
       ``i`` nor ``N``'s names and does not leave the loop early (break, return, goto)
       [XP-LOOP-NORMALIZE-002].
    3. The dependence analysis proves that the resulting counted loop carries no dependence,
       and, for symbolic extents (``gridDim.x = (n + 255) / 256``), Z3 proves every extent is
       at least 1 whenever ``N > 0``  [XP-LOOP-NORMALIZE-003]. Where that is not proved (a
       grid held in a host local), the counted loop is guarded by the nest loops' own first
       tests, ``for (i = 0; i < ((unsigned) 0 < G ? N : 0); ++i)``: it runs exactly when the
       nest runs.
Guarantees
    Same outputs on the virtual device: the same instances of the body run, each once, and
    their order is proved not to matter. Nests that do not match, or whose reordering is not
    proved, are left unchanged.
Example
    ``for (b < 4u) for (t < 256u) for (int i = b * 256u + t; i < n; i += 256u * 4u) out[i] =
    x[i];`` -> ``for (int i = 0; i < n; ++i) out[i] = x[i];``
"""
from __future__ import annotations

import copy
from dataclasses import replace

from pycparser import c_ast

from pycparser import c_generator

import passes.analysis.affine as affine
import passes.canon as canon
from passes.base import PassInfo, register
from passes.cleanup.unit_loops import const_int

NAME = "loop_normalize"
_GEN = c_generator.CGenerator()


# ------------------------------------------------------------------------------ matching
_INT_WORDS = canon.INT_CAST_WORDS


def _strip_int_casts(e):
    while isinstance(e, c_ast.Cast) and isinstance(e.to_type.type, c_ast.TypeDecl) and \
            canon.type_words(e.to_type.type) and \
            all(w in _INT_WORDS for w in canon.type_words(e.to_type.type)):
        e = e.expr
    return e


def _mono(e) -> tuple:
    """A factor free of the nest variables as a monomial ``(constant, sorted symbol texts)``."""
    c = const_int(e)
    if c is not None:
        return (c, ())
    return (1, (_GEN.visit(_strip_int_casts(e)),))


def _mul(a: tuple, b: tuple) -> tuple:
    return (a[0] * b[0], tuple(sorted(a[1] + b[1])))


def _counted(s) -> tuple[str, tuple, c_ast.Node] | None:
    """(variable, extent monomial, extent expression) of ``for (T v = 0; v < E; ++v)`` with
    ``E`` a positive constant or an expression of names (checked later), else None."""
    if not isinstance(s, c_ast.For) or not isinstance(s.init, c_ast.DeclList) or \
            len(s.init.decls) != 1:
        return None
    d = s.init.decls[0]
    if d.init is None or const_int(d.init) != 0 or not isinstance(d.type, c_ast.TypeDecl):
        return None
    v = d.name
    c = s.cond
    if not (isinstance(c, c_ast.BinaryOp) and c.op == "<" and isinstance(c.left, c_ast.ID) and
            c.left.name == v):
        return None
    nxt = s.next
    if not (isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++") and
            isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == v):
        return None
    n = const_int(c.right)
    if n is not None and n <= 0:
        return None
    if n is None and (canon.has_side_effects(c.right) or v in canon.ids_in(c.right)):
        return None
    return v, _mono(c.right), c.right


def _linear(e, decls: dict, nest: set, depth: int = 0) -> dict | None:
    """``e`` as ``{name: coefficient monomial, "": constant monomial}`` over the nest variables
    (declarations in ``decls`` expanded); factors free of them are kept as symbol texts. None
    if not of that form."""
    if depth > 32:
        return None
    c = const_int(e)
    if c is not None:
        return {"": (c, ())}
    match e:
        case c_ast.ID(name=n):
            if n in decls:
                return _linear(decls[n], decls, nest, depth + 1)
            return {n: (1, ())} if n in nest else None
        case c_ast.Cast(to_type=tt, expr=x):
            words = canon.type_words(tt.type)
            if isinstance(tt.type, c_ast.TypeDecl) and words and all(w in _INT_WORDS for w in words):
                return _linear(x, decls, nest, depth + 1)
            return None
        case c_ast.BinaryOp(op="+", left=l, right=r):
            a, b = _linear(l, decls, nest, depth + 1), _linear(r, decls, nest, depth + 1)
            if a is None or b is None:
                return None
            out = dict(a)
            for k, v in b.items():
                if k in out:
                    if out[k][1] != v[1]:
                        return None
                    out[k] = (out[k][0] + v[0], v[1])
                else:
                    out[k] = v
            return {k: v for k, v in out.items() if v[0] != 0 or k != ""}
        case c_ast.BinaryOp(op="*", left=l, right=r):
            free_l = not (canon.ids_in(l) & (nest | set(decls)))
            free_r = not (canon.ids_in(r) & (nest | set(decls)))
            if free_l and free_r:
                return None                 # a product of symbols alone is not a term here
            if free_l:
                l, r = r, l
            elif not free_r:
                return None                 # product of two nest variables
            if canon.has_side_effects(r):
                return None
            a = _linear(l, decls, nest, depth + 1)
            if a is None:
                return None
            m = _mono(r)
            return {k: _mul(v, m) for k, v in a.items()}
    return None


def _step(nxt, var: str):
    match nxt:
        case c_ast.Assignment(op="+=", lvalue=c_ast.ID(name=n), rvalue=r) if n == var:
            return r
        case c_ast.Assignment(op="=", lvalue=c_ast.ID(name=n),
                              rvalue=c_ast.BinaryOp(op="+", left=c_ast.ID(name=m), right=r)) \
                if n == var and m == var:
            return r
    return None


def _step_mono(r) -> tuple | None:
    """The step expression as a product monomial (constants and symbol factors)."""
    c = const_int(r)
    if c is not None:
        return (c, ())
    r0 = _strip_int_casts(r)
    if isinstance(r0, c_ast.BinaryOp) and r0.op == "*":
        a, b = _step_mono(r0.left), _step_mono(r0.right)
        return None if a is None or b is None else _mul(a, b)
    if canon.has_side_effects(r0):
        return None
    return _mono(r0)


def _bound(cond, var: str):
    """The bound expression of ``var < N`` / ``var <= N`` / ``N > var`` / ``N >= var``."""
    if not isinstance(cond, c_ast.BinaryOp):
        return None
    if cond.op in ("<", "<=") and isinstance(cond.left, c_ast.ID) and cond.left.name == var:
        return cond.right
    if cond.op in (">", ">=") and isinstance(cond.right, c_ast.ID) and cond.right.name == var:
        return cond.left
    return None


def _leaves_early(body) -> bool:
    """break (at the loop's own level), return, goto or a label anywhere in ``body``."""
    def go(n, nested: bool) -> bool:
        if isinstance(n, (c_ast.Return, c_ast.Goto, c_ast.Label)):
            return True
        if isinstance(n, c_ast.Break) and not nested:
            return True
        inner = nested or isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.Switch))
        return any(go(c, inner) for _, c in n.children())
    return go(body, False)


class Match:
    """One grid-stride nest: the outer ``For`` to replace and the strided loop it becomes."""

    def __init__(self, outer, inner, radix):
        self.outer, self.inner, self.radix = outer, inner, radix


def match(s) -> Match | None:
    """The grid-stride nest rooted at statement ``s`` (see the module docstring), else None."""
    nest: list[tuple] = []
    cur = s
    decls: dict = {}
    while True:
        got = _counted(cur)
        if got is None:
            break
        nest.append(got)
        # an OpenMP pragma inside the nest (the lift's omp simd on the thread loop) asserts
        # nothing the rewrite needs, and the rewrite replaces the whole nest with it
        items = [x for x in canon.as_items(cur.stmt)
                 if not (isinstance(x, c_ast.Pragma) and x.string.strip().startswith("omp"))]
        if len(items) == 1 and _counted(items[0]) is not None:
            cur = items[0]
            continue
        # innermost nest level: pure declarations, then the strided loop
        *pre, last = items if items else [None]
        if not isinstance(last, c_ast.For):
            return None
        if last.init is None and pre and isinstance(pre[-1], c_ast.Decl) and \
                _step(last.next, pre[-1].name) is not None:
            # T i = start; for (; i < N; i += S): the variable is local to the innermost
            # body and its last statement is the loop, so it is that loop's own variable
            last = c_ast.For(c_ast.DeclList([pre.pop()]), last.cond, last.next, last.stmt,
                             last.coord)
        for d in pre:
            if not (isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.TypeDecl) and
                    d.init is not None and not canon.has_side_effects(d.init) and d.name):
                return None
            decls[d.name] = d.init
        inner = last
        break
    else:
        return None
    if not nest or not isinstance(inner, c_ast.For) or not isinstance(inner.init, c_ast.DeclList) \
            or len(inner.init.decls) != 1:
        return None
    d = inner.init.decls[0]
    if d.init is None or not isinstance(d.type, c_ast.TypeDecl):
        return None
    i = d.name
    names = {v for v, _, _ in nest}
    if i in names or i in decls:
        return None
    # the extents of the nest never change inside it
    for _, _, ext in nest:
        if canon.ids_in(ext) & (names | {i} | canon.written_names(s)):
            return None
    lin = _linear(d.init, decls, names)
    if lin is None or lin.get("", (0, ()))[0] != 0 or set(lin) - {""} != names:
        return None
    # mixed radix: weights 1, C_a, C_a*C_b, ... (as monomials), stride = all extents' product
    left = {v: m for v, m, _ in nest}
    weight = (1, ())
    order = []
    while left:
        v = next((v for v in left if lin[v] == weight), None)
        if v is None:
            return None
        order.append(v)
        weight = _mul(weight, left.pop(v))
    step = _step(inner.next, i)
    if step is None or _step_mono(step) != weight:
        return None
    bound = _bound(inner.cond, i)
    if bound is None or canon.has_side_effects(bound):
        return None
    written = canon.written_names(inner.stmt)
    bound_names = canon.ids_in(bound)
    if bound_names & (names | set(decls) | {i} | written):
        return None
    if i in written or canon.ids_in(inner.stmt) & (names | set(decls)):
        return None
    # the nest variables are not written anywhere in the nest (the nest is perfect: besides
    # the headers it holds only the pure declarations and the strided loop)
    if canon.written_names(inner) & names or _leaves_early(inner.stmt):
        return None
    m = Match(s, inner, order)
    m.extents = [e for _, mono, e in nest if mono[1]]
    m.nest = nest
    m.bound = bound
    return m


def _counted_loop(m: Match) -> c_ast.For:
    """``for (T i = 0; <cond>; ++i) body`` built from the strided loop of ``m``."""
    inner = copy.deepcopy(m.inner)
    d = inner.init.decls[0]
    d.init = c_ast.Constant("int", "0")
    inner.next = c_ast.UnaryOp("++", c_ast.ID(d.name))
    return inner


# ------------------------------------------------------------------------------ rewrite
def _slots(node):
    """(container, index-or-attribute) of every statement position under ``node``."""
    for n in canon.walk(node):
        if isinstance(n, c_ast.Compound):
            for k in range(len(n.block_items or [])):
                yield n.block_items, k
        elif isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.Label)):
            if not isinstance(n.stmt, c_ast.Compound):
                yield n, "stmt"
        elif isinstance(n, c_ast.If):
            for a in ("iftrue", "iffalse"):
                if getattr(n, a) is not None and not isinstance(getattr(n, a), c_ast.Compound):
                    yield n, a


def _normalize(program, ast) -> tuple[int, int, object]:
    """Rewrite every proved nest of the entry in ``ast`` (in place). Returns (rewritten,
    matched but not proved, node of the first unproved nest)."""
    fdef = canon.entry_def(ast, program.entry.name)
    done = unproved = 0
    first = None
    progress = True
    while progress:
        progress = False
        for slot in list(_slots(fdef.body)):
            s = canon.get_slot(*slot)
            m = match(s)
            if m is None:
                continue
            new = _counted_loop(m)
            canon.set_slot(*slot, new if _extents_ok(m) else _guarded(m, new))
            if _proved(program, ast, new):
                done += 1
                progress = True
                c, k = slot
                if isinstance(k, int) and k > 0 and isinstance(c[k - 1], c_ast.Pragma) and \
                        c[k - 1].string.strip().startswith("omp"):
                    # the pragma described the grid loops; the counted loop's iterations are
                    # one thread's strided iterations, which the GPU model does not declare
                    # independent
                    del c[k - 1]
                break                       # statement positions changed: look again
            canon.set_slot(*slot, s)
            unproved += 1
            first = first or s
        if progress:
            unproved, first = 0, None       # recount the unproved ones on the final tree
    return done, unproved, first


_INT_MAX = 2 ** 31 - 1   # names are C ints


def _z3_expr(e, z3, syms: dict):
    """Integer value of a C expression over names (each an int in [-2^31, 2^31)), else None."""
    c = const_int(e)
    if c is not None:
        return z3.IntVal(c)
    match e:
        case c_ast.ID(name=n):
            if n not in syms:
                syms[n] = z3.Int(n)
            return syms[n]
        case c_ast.Cast(to_type=tt, expr=x):
            words = canon.type_words(tt.type)
            if isinstance(tt.type, c_ast.TypeDecl) and words and all(w in _INT_WORDS for w in words):
                return _z3_expr(x, z3, syms)
            return None
        case c_ast.UnaryOp(op="-", expr=x):
            a = _z3_expr(x, z3, syms)
            return None if a is None else -a
        case c_ast.BinaryOp(op=op, left=l, right=r) if op in ("+", "-", "*", "/"):
            a, b = _z3_expr(l, z3, syms), _z3_expr(r, z3, syms)
            if a is None or b is None:
                return None
            if op == "+":
                return a + b
            if op == "-":
                return a - b
            if op == "*":
                return a * b
            return affine.tdiv(z3, a, b)
    return None


def _extents_ok(m: Match) -> bool:
    """With symbolic extents: whenever the strided loop would run (bound > 0), every extent is
    at least 1, so the nest covers ``[0, bound)`` exactly once. Proved by Z3 over all int
    values of the names; constant extents need nothing. (As for constant extents, the source's
    own ``i += stride`` is assumed not to overflow - its loop would not end otherwise - so the
    stride, the product of the extents, is representable.)"""
    if not m.extents:
        return True
    z3 = affine.load_z3()
    syms: dict = {}
    n = _z3_expr(m.bound, z3, syms)
    exts = [_z3_expr(e, z3, syms) for e in m.extents]
    if n is None or any(e is None for e in exts):
        return False
    solver = z3.Solver()
    solver.set("timeout", 3000)
    solver.add(*[z3.And(v >= -2 ** 31, v <= _INT_MAX) for v in syms.values()])
    solver.add(n > 0)
    solver.add(z3.Or(*[e < 1 for e in exts]))
    return affine.check(solver, 3000) == z3.unsat


def _guarded(m: Match, loop: c_ast.For) -> c_ast.For:
    """``loop`` with its bound ``N`` replaced by ``((T1) 0 < E1 && ...) ? N : 0``: the first
    tests of the nest's loops with symbolic extents, each in its loop's own type (a ternary
    bound rather than an ``if`` around the loop, so the binders still see one counted loop at
    the top level of the entry). The nest runs a body instance only if every one of
    its loops runs a first iteration, and then (each extent >= 1) it covers ``[0, bound)``
    exactly once; otherwise it runs nothing, and so does the guarded loop. Used when Z3 cannot
    prove the extents positive from the bound alone (e.g. a grid held in a host local:
    ``blocks = min((n + 255) / 256, 8)`` launched over ``(size_t) n`` elements)."""
    cond = None
    for s in _nest_loops(m):
        d = s.init.decls[0]
        if const_int(s.cond.right) is not None:
            continue
        ty = copy.deepcopy(d.type)
        ty.declname = None
        first = c_ast.BinaryOp("<", c_ast.Cast(c_ast.Typename(None, [], None, ty), c_ast.Constant("int", "0")),
                               copy.deepcopy(s.cond.right))
        cond = first if cond is None else c_ast.BinaryOp("&&", cond, first)
    loop.cond.right = c_ast.TernaryOp(cond, loop.cond.right, c_ast.Constant("int", "0"))
    return loop


def _nest_loops(m: Match):
    """The counted loops of the nest of ``m``, outermost first."""
    cur = m.outer
    while cur is not m.inner and _counted(cur) is not None:
        yield cur
        items = canon.as_items(cur.stmt)
        cur = items[0] if len(items) == 1 else None


def _proved(program, ast, loop: c_ast.For) -> bool:
    try:
        info = affine.analyze(replace(program, ast=ast))
    except ValueError:
        return False
    lp = info.loop_of.get(id(loop))
    if lp is None:
        return False
    return affine.parallel(info, lp).parallel


# ------------------------------------------------------------------------------ the pass
@register(PassInfo(
    name=NAME,
    summary="grid-stride loop nests over lifted blocks/threads -> one counted loop 0..n",
    anchor="loop",
    requires=("an entry function definition (XP-LOOP-NORMALIZE-001)",
              "a nest of constant-extent counted loops around a loop whose start is a "
              "mixed-radix number of all the nest variables and whose stride is their total "
              "extent, the body independent of the nest variables (XP-LOOP-NORMALIZE-002)",
              "the counted loop carries no dependence, proved by passes.analysis.affine "
              "(XP-LOOP-NORMALIZE-003)"),
    guarantees=("same outputs on the virtual device: the same body instances run once each, "
                "in an order proved not to matter",),
))
def loop_normalize(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@loop_normalize.legality
def _legal(program):
    """The normalisation (its dependence proofs included), run on a copy of the AST: the plan
    the rewrite emits."""
    if program.entry is None or program.ast is None or \
            canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-LOOP-NORMALIZE-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    done, unproved, node = _normalize(program, ast)
    if done:
        return canon.Rewritten(ast)
    if unproved:
        return [canon.diag(program, NAME, "XP-LOOP-NORMALIZE-003",
                           "a grid-stride nest matches but the counted loop it would become may "
                           "carry a dependence (reordering its iterations is not proved safe)",
                           node)]
    return [canon.diag(program, NAME, "XP-LOOP-NORMALIZE-002",
                       "no grid-stride nest: no constant-extent loops around a loop starting at "
                       "a mixed-radix number of their variables with their total extent as stride")]
