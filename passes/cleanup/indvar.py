"""indvar: loops over an outer induction variable -> loops declaring their own (canonical form).

Summary
    In the entry, a loop ``for (; COND; i += s)`` (or ``++i``) over an ``int`` local ``i``
    whose value on entry is known - ``int i = E0;`` or ``i = E0;`` before the loop with no
    statement between them writing ``i`` or a name of ``E0`` (nor jumping), or a loop this
    pass already rewrote - becomes
    ``for (int i__vN = E0; COND[i := i__vN]; i__vN += s) BODY[i := i__vN]`` followed by
    ``int i__eN = FINAL;`` (the value ``i`` has after the loop), and the following statements
    of the block read ``i__eN`` instead of ``i`` (a later such loop starts from it); ``i =
    i__eN;`` keeps ``i`` itself exact for anything else (``dce`` removes it when nothing
    reads it). FINAL is ``E0 + s * T`` with the trip count ``T``; for the VNNI main-loop shape
    ``int i = 0; for (; i + s <= n; i += s)`` it is ``n / s * s`` (``n >= 0``, the sizes
    assumption of ``passes/analysis/affine``). The loops become canonical for ``passes/analysis/affine``
    and the tail after them gets a never-assigned start.

    Running counters (``_Canon.counters``): in a perfect rectangular nest of canonical loops
    (``for (int v = lo; v < hi; ++v)``, bounds invariant in the nest), an integer local used
    only as ``p++`` / ``++p`` evaluated on every execution of the innermost body
    (``out[p++] = x[...]``) becomes ``p + k`` (``p + k + 1``) with ``k`` the row-major number of
    earlier innermost iterations, and ``p += T1 * ... * Tn`` (trip counts clamped at 0)
    follows the nest unless ``p`` is a local of the block that nothing reads afterwards.
Requires
    1. The program has an entry function definition (XP-INDVAR-001).
    2. At least one loop with an empty (or ``i = E0``) initialiser whose condition is ``i < B``,
       ``i <= B`` or ``i + c <= B`` / ``i + c < B``, whose step is a positive constant, whose
       body does not assign ``i`` or any name of ``B``/``E0``, and whose variable is an
       integer local with a known entry value; or a running counter as above
       (XP-INDVAR-002: no loop without its own variable, nothing to do; XP-INDVAR-003: such
       loops, none meeting the conditions).
Guarantees
    Same outputs on the virtual device.
Options
    none.
Example
    ``int i = 0; for (; i + 16 <= n; i += 16) f(i); if (i < n) g(i);``  ->
    ``int i = 0; for (int i__v1 = 0; i__v1 + 16 <= n; i__v1 += 16) f(i__v1);
    int i__e1 = n / 16 * 16; i = i__e1; if (i__e1 < n) g(i__e1);``
    ``int p = 0; for (a < A) for (b < B) out[p++] = x[b * A + a];``  ->
    ``int p = 0; for (a < A) for (b < B) out[p + (a * B + b)] = x[b * A + a];``
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "indvar"
INT_TYPES = frozenset({"int", "long", "long long", "unsigned", "unsigned int", "int32_t",
                       "int64_t", "size_t", "short"})


_JUMPS = (c_ast.Label, c_ast.Goto, c_ast.Return, c_ast.Break, c_ast.Continue, c_ast.Case,
          c_ast.Default)


def _still_known(known: dict, s) -> dict:
    """The entries of ``known`` (local -> value) that hold after statement ``s``: none after a
    jump or label; otherwise those whose local and value names ``s`` neither assigns nor takes
    the address of."""
    if not known:
        return {}
    nodes = list(canon.walk(s))
    if any(isinstance(n, _JUMPS) for n in nodes):
        return {}
    touched = set(canon.written_names(s))
    touched |= {n.expr.name for n in nodes if isinstance(n, c_ast.UnaryOp) and n.op == "&"
                and isinstance(n.expr, c_ast.ID)}
    if isinstance(s, c_ast.Decl) and s.name:
        touched.add(s.name)                   # a new declaration of that name shadows it
    return {v: e for v, e in known.items()
            if v not in touched and not canon.ids_in(e) & touched}


def _after_if(s, known: dict) -> dict:
    """Locals with a known value after ``if (c) { ...; int e = F; v = e; ... }`` (no else):
    ``c ? F : E`` where ``E`` is ``v``'s known value before. The then-block ends a loop this
    pass rewrote over ``v`` (``int i = 0; if (n >= 16) { for (i = 16; i + 16 <= n; i += 16)
    ...; } for (; i < n; ++i)`` - the tail loop then gets a closed start). Legal when ``c`` has
    no side effect and the block writes none of its names (``c`` reads the same values after
    it), and the block writes neither ``v`` after ``v = e;`` nor a name of ``F`` after the
    declaration of ``e``, and declares none of ``F``'s names."""
    if not isinstance(s, c_ast.If) or s.iffalse is not None or not known or \
            canon.has_side_effects(s.cond) or not isinstance(s.iftrue, c_ast.Compound):
        return {}
    items = s.iftrue.block_items or []
    written = canon.written_names(s.iftrue)
    if canon.ids_in(s.cond) & written or any(isinstance(n, _JUMPS) for n in canon.walk(s.iftrue)):
        return {}
    declared = {n.name for n in canon.walk(s.iftrue) if isinstance(n, c_ast.Decl) and n.name}
    out = {}
    for v, before in known.items():
        k = max((k for k, x in enumerate(items) if isinstance(x, c_ast.Assignment) and x.op == "="
                 and isinstance(x.lvalue, c_ast.ID) and x.lvalue.name == v), default=None)
        if k is None or not isinstance(items[k].rvalue, c_ast.ID) or \
                v in canon.written_names(c_ast.Compound(items[k + 1:])):
            continue
        e = items[k].rvalue.name
        d = next((j for j in range(k) if isinstance(items[j], c_ast.Decl) and items[j].name == e), None)
        if d is None or items[d].init is None or canon.has_side_effects(items[d].init):
            continue
        final = items[d].init
        names = canon.ids_in(final)
        if names & declared or names & canon.written_names(c_ast.Compound(items[d + 1:])):
            continue
        out[v] = c_ast.TernaryOp(copy.deepcopy(s.cond), copy.deepcopy(final), copy.deepcopy(before))
    return out


def _const(e) -> int | None:
    if isinstance(e, c_ast.Constant) and e.type == "int":
        try:
            return int(e.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
    return None


def _named_const(e, consts: dict | None) -> int | None:
    """An integer literal, or the name of a file-scope integer constant (``constexpr int MR =
    4;``: ``program.facts["constants"]``) that no local or parameter of the entry shadows
    (the caller passes only the unshadowed ones)."""
    c = _const(e)
    if c is None and consts and isinstance(e, c_ast.ID):
        v = consts.get(e.name)
        c = v if isinstance(v, int) and not isinstance(v, bool) else None
    if c is None and isinstance(e, c_ast.BinaryOp) and e.op in _FOLD:
        # products and sums of them (``i += 2 * kVec``)
        a, b = _named_const(e.left, consts), _named_const(e.right, consts)
        if a is not None and b is not None and not (e.op == "/" and b <= 0):
            c = _FOLD[e.op](a, b)
    return c


_FOLD = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
         "/": lambda a, b: a // b if a >= 0 else -((-a) // b), "<<": lambda a, b: a << b if 0 <= b < 62 else None}


def _step(nxt, var, consts: dict | None = None) -> int | None:
    match nxt:
        case c_ast.UnaryOp(op=op, expr=c_ast.ID(name=n)) if n == var and op in ("++", "p++"):
            return 1
        case c_ast.Assignment(op="+=", lvalue=c_ast.ID(name=n), rvalue=r) if n == var:
            c = _named_const(r, consts)
            return c if c is not None and c > 0 else None
    return None


def _bound(cond, var, consts: dict | None = None):
    """(exclusive bound expression of var) from ``var < B``, ``var <= B``, ``var + c <= B``,
    ``var + c < B``, plus (c, op) for the closed forms (``c`` a literal or a named constant)."""
    if not isinstance(cond, c_ast.BinaryOp) or cond.op not in ("<", "<="):
        return None
    l, r = cond.left, cond.right
    if isinstance(l, c_ast.ID) and l.name == var:
        c = 0
    elif isinstance(l, c_ast.BinaryOp) and l.op == "+" and isinstance(l.left, c_ast.ID) and \
            l.left.name == var and _named_const(l.right, consts) is not None:
        c = _named_const(l.right, consts)
    else:
        return None
    if var in canon.ids_in(r) or canon.has_side_effects(r):
        return None
    return r, c, cond.op


def _paren(e):
    return e


def _final(e0, bound, c: int, op: str, s: int):
    """C expression of the variable's value after the loop."""
    B = copy.deepcopy(bound)
    # exclusive bound on the variable: v + c <= B  <=>  v < B - c + 1 ; v + c < B <=> v < B - c
    adj = (1 - c) if op == "<=" else -c
    if _const(e0) == 0 and op == "<=" and c == s and s > 0:
        # v = 0, s, 2s, ... while v + s <= B  ->  B / s * s  (B >= 0)
        return c_ast.BinaryOp("*", c_ast.BinaryOp("/", B, c_ast.Constant("int", str(s))),
                              c_ast.Constant("int", str(s)))
    hi = B if adj == 0 else c_ast.BinaryOp("+" if adj > 0 else "-", B, c_ast.Constant("int", str(abs(adj))))
    if s == 1:
        return c_ast.TernaryOp(c_ast.BinaryOp(">", copy.deepcopy(hi), copy.deepcopy(e0)),
                               copy.deepcopy(hi), copy.deepcopy(e0))
    span = c_ast.BinaryOp("-", copy.deepcopy(hi), copy.deepcopy(e0))
    trips = c_ast.BinaryOp("/", c_ast.BinaryOp("+", span, c_ast.Constant("int", str(s - 1))),
                           c_ast.Constant("int", str(s)))
    return c_ast.TernaryOp(c_ast.BinaryOp(">", copy.deepcopy(hi), copy.deepcopy(e0)),
                           c_ast.BinaryOp("+", copy.deepcopy(e0),
                                          c_ast.BinaryOp("*", trips, c_ast.Constant("int", str(s)))),
                           copy.deepcopy(e0))


class _Canon:
    def __init__(self, fdef, constants: dict | None = None):
        self.counter = 0
        self.done = 0
        self.reasons: list = []
        self.decl_types: dict[str, str] = {}
        declared: set = set()
        for n in canon.walk(fdef):
            if isinstance(n, c_ast.Decl) and n.name:
                declared.add(n.name)
        for n in canon.walk(fdef.body):
            if isinstance(n, c_ast.Decl) and n.name and isinstance(n.type, c_ast.TypeDecl):
                t = " ".join(canon.type_words(n.type))
                self.decl_types[n.name] = t if self.decl_types.get(n.name, t) == t else "?"
        # file-scope named constants usable as a step / offset (not shadowed in the entry)
        self.consts = {k: v for k, v in (constants or {}).items() if k not in declared}

    def items(self, items: list, entry: dict | None = None) -> list:
        out: list = []
        # var -> value expression at this point (``entry``: what holds where the block starts)
        known: dict[str, c_ast.Node] = dict(entry or {})
        subst: dict[str, c_ast.Node] = {}        # var -> never-assigned end local
        for s in self._with_counters(items):
            s = self.rec(s, known)
            if subst:
                w = canon.written_names(s)
                live = {v: e for v, e in subst.items() if v not in w}
                # a loop over v that we rewrite reads its start from the substitution
                s_loop = s if isinstance(s, c_ast.For) else None
                for v in list(subst):
                    if v in w and not (s_loop is not None and self._is_outer_loop(s_loop, v)):
                        del subst[v]
                if live:
                    s = canon.substitute(s, {v: e for v, e in subst.items() if v not in w})
            if isinstance(s, c_ast.For):
                r = self.loop(s, known, subst)
                if r is not None:
                    out += r
                    continue
            out.append(s)
            # what we know about int locals' values for the next loop: a value stays known
            # across statements that write neither the local nor a name of its value (the
            # set-up of a vector constant between `size_t i = 0;` and the main loop)
            after_if = _after_if(s, known)
            if not isinstance(s, c_ast.Pragma):
                known = _still_known(known, s)
            known.update(after_if)
            if isinstance(s, c_ast.Decl) and s.name and s.init is not None and \
                    self.decl_types.get(s.name) in INT_TYPES and not canon.has_side_effects(s.init):
                known[s.name] = s.init
                subst.pop(s.name, None)
            elif isinstance(s, c_ast.Assignment) and s.op == "=" and isinstance(s.lvalue, c_ast.ID) \
                    and not canon.has_side_effects(s.rvalue) and \
                    self.decl_types.get(s.lvalue.name) in INT_TYPES:
                known[s.lvalue.name] = s.rvalue
        return out

    def _with_counters(self, items: list):
        """The statements, with the updates a counter rewrite (``counters``) appends after
        its nest following it (outermost nests first, so a counter spans the whole nest)."""
        out = []
        for k, s in enumerate(items):
            local = {d.name for d in items[:k] if isinstance(d, c_ast.Decl) and d.name}
            later = set().union(*(canon.ids_in(x) for x in items[k + 1:])) if k + 1 < len(items) \
                else set()
            # a counter declared in this block and not read after the nest needs no update
            dead = local - later
            r = self.counters(s, dead) if isinstance(s, c_ast.For) else None
            if r is None:
                out.append(s)
            else:
                out.append(r[0])
                out += r[1:]
        return out

    @staticmethod
    def _is_outer_loop(s: c_ast.For, v: str) -> bool:
        return s.init is None and isinstance(s.next, (c_ast.UnaryOp, c_ast.Assignment)) and \
            canon.lvalue_root(getattr(s.next, "expr", None) or getattr(s.next, "lvalue", None)) == v

    def rec(self, s, known: dict | None = None):
        """``s`` with its nested blocks rewritten; ``known``: the values that hold before ``s``
        (a block or a branch starts with them; a loop body does not: it runs again)."""
        if isinstance(s, c_ast.Compound):
            s.block_items = self.items(list(s.block_items or []), known)
        elif isinstance(s, (c_ast.For, c_ast.While, c_ast.DoWhile)):
            s.stmt = self._sub(s.stmt)
        elif isinstance(s, c_ast.If):
            # the branches start where the condition was evaluated
            at = {} if canon.has_side_effects(s.cond) else _still_known(known or {}, s.cond)
            s.iftrue = self._sub(s.iftrue, at)
            s.iffalse = self._sub(s.iffalse, at) if s.iffalse is not None else None
        return s

    def _sub(self, s, known: dict | None = None):
        if isinstance(s, c_ast.Compound):
            return self.rec(s, known)
        out = self.items([s], known)
        return out[0] if len(out) == 1 else c_ast.Compound(out)

    def counters(self, s: c_ast.For, dead=frozenset()):
        """Running counters of a rectangular nest (``out[p++] = ...`` in the innermost body)
        -> closed forms: the statements replacing ``s``, or None.

        Legality: ``s`` is a perfect nest of ``for (int v = lo; v < hi; ++v)`` loops whose
        bounds name no loop variable of the nest and nothing the nest assigns; the counter
        is an integer local that is not a loop variable, appears exactly once in the nest,
        as ``p++`` / ``++p`` in the innermost body, evaluated on every execution of it.
        Rewrite: ``p++`` -> ``p + k`` (``++p`` -> ``p + k + 1``) with ``k`` the number of
        innermost iterations before this one (row-major over the trip counts ``hi - lo``,
        positive whenever the body runs), then ``p += T1 * T2 * ...`` after the nest (each
        trip count clamped at 0), so ``p`` ends with the value the original left (omitted for
        a counter declared in the enclosing block and not read after the nest: ``dead``)."""
        nest = _rect_nest(s)
        if nest is None:
            return None
        loops, inner = nest
        vars_ = {v for v, _, _ in loops}
        written = canon.written_names(s)
        for _, lo, hi in loops:
            if (canon.ids_in(lo) | canon.ids_in(hi)) & (vars_ | written):
                return None
        body = inner.stmt
        uses: dict[str, list] = {}
        for n in canon.walk(s):
            if isinstance(n, c_ast.ID):
                uses.setdefault(n.name, []).append(n)
        found = []
        # the variables and increments of the loops inside the body are no running counters
        heads = {id(f.next) for f in canon.walk(body) if isinstance(f, c_ast.For)}
        own = {d.name for f in canon.walk(body) if isinstance(f, c_ast.For) and
               isinstance(f.init, c_ast.DeclList) for d in f.init.decls}
        for n in canon.walk(body):
            if isinstance(n, c_ast.UnaryOp) and n.op in ("p++", "++") and \
                    isinstance(n.expr, c_ast.ID):
                p = n.expr.name
                if p in vars_ or self.decl_types.get(p) not in INT_TYPES:
                    continue
                if len(uses.get(p, [])) != 1 or not _unconditional_path(body, n):
                    if id(n) in heads or p in own:
                        continue
                    self.reasons.append((f"the running counter '{p}' is used other than by one "
                                         "increment evaluated on every innermost iteration", n))
                    continue
                found.append((p, n))
        if not found:
            return None
        k = None
        for v, lo, hi in loops:
            off = _minus(c_ast.ID(v), lo)
            if k is None:
                k = off
            else:
                k = c_ast.BinaryOp("+", c_ast.BinaryOp("*", k, _minus(hi, lo)), off)
        total = None
        for _, lo, hi in loops:
            (t,) = canon.parse_stmts("__xp = (1 > 0 ? 1 - 0 : 0);")
            t = t.rvalue
            t.cond.left, t.cond.right = copy.deepcopy(hi), copy.deepcopy(lo)
            t.iftrue = _minus(hi, lo)
            total = t if total is None else c_ast.BinaryOp("*", total, t)
        out_after = []
        for p, node in found:
            value = c_ast.BinaryOp("+", c_ast.ID(p), copy.deepcopy(k))
            if node.op == "++":
                value = c_ast.BinaryOp("+", value, c_ast.Constant("int", "1"))
            _replace(body, node, value)
            if p not in dead:
                out_after.append(c_ast.Assignment("+=", c_ast.ID(p), copy.deepcopy(total)))
        self.done += 1
        return [s] + out_after

    def loop(self, s: c_ast.For, known: dict, subst: dict):
        nxt = s.next
        var = canon.lvalue_root(getattr(nxt, "expr", None) if isinstance(nxt, c_ast.UnaryOp)
                                else getattr(nxt, "lvalue", None)) if nxt is not None else None
        if var is None or self.decl_types.get(var) not in INT_TYPES:
            return None
        if isinstance(s.init, c_ast.DeclList):
            return None
        e0 = None
        if s.init is None:
            if var in subst:
                e0 = subst[var]
            elif var in known:
                e0 = known[var]
        elif isinstance(s.init, c_ast.Assignment) and s.init.op == "=" and \
                isinstance(s.init.lvalue, c_ast.ID) and s.init.lvalue.name == var:
            e0 = s.init.rvalue
        if e0 is None or canon.has_side_effects(e0):
            self.reasons.append(("the loop variable's value on entry is not known", s))
            return None
        st = _step(nxt, var, self.consts)
        b = _bound(s.cond, var, self.consts)
        if st is None or b is None:
            self.reasons.append(("the loop is not 'v < B' / 'v + c <= B' with a positive constant step", s))
            return None
        bound, c, op = b
        body_w = canon.written_names(s.stmt)
        if var in body_w or (canon.ids_in(bound) | canon.ids_in(e0)) & body_w:
            self.reasons.append(("the body assigns the loop variable or a name of its bounds", s))
            return None
        self.counter += 1
        k = self.counter
        v, e = f"{var}__v{k}", f"{var}__e{k}"
        t = self.decl_types[var]
        (new,) = canon.parse_stmts(f"for ({t} {v} = 0; {v} < 1; {v} += {st}) ;")
        new.init.decls[0].init = copy.deepcopy(e0)
        new.cond = canon.substitute(s.cond, {var: c_ast.ID(v)})
        new.stmt = canon.substitute(s.stmt, {var: c_ast.ID(v)})
        (end_decl, assign) = canon.parse_stmts(f"{t} {e} = 0; {var} = {e};")
        end_decl.init = _final(e0, bound, c, op, st)
        subst[var] = c_ast.ID(e)
        self.done += 1
        return [new, end_decl, assign]


def _minus(a, b):
    """``a - b`` (``a`` when ``b`` is the literal 0)."""
    if isinstance(b, c_ast.Constant) and _const(b) == 0:
        return copy.deepcopy(a)
    return c_ast.BinaryOp("-", copy.deepcopy(a), copy.deepcopy(b))


def _replace(root, old, new) -> None:
    """Replace the node ``old`` (by identity) under ``root`` by ``new``."""
    canon.replace_nodes(root, lambda n: new if n is old else None)


def _rect_nest(s: c_ast.For):
    """[(var, lo, hi)] of a perfect nest of ``for (int v = lo; v < hi; ++v)`` loops starting
    at ``s`` and its innermost body, or None."""
    loops, cur = [], s
    while isinstance(cur, c_ast.For):
        if not (isinstance(cur.init, c_ast.DeclList) and len(cur.init.decls) == 1 and
                cur.init.decls[0].init is not None):
            return None
        v = cur.init.decls[0].name
        c = cur.cond
        if not (isinstance(c, c_ast.BinaryOp) and c.op == "<" and isinstance(c.left, c_ast.ID)
                and c.left.name == v) or _step(cur.next, v) != 1:
            return None
        loops.append((v, cur.init.decls[0].init, c.right))
        body = cur.stmt
        if isinstance(body, c_ast.Compound) and len(body.block_items or []) == 1 and \
                isinstance(body.block_items[0], c_ast.For):
            body = body.block_items[0]
        if not isinstance(body, c_ast.For):
            return loops, cur
        cur = body
    return None


_UNCONDITIONAL = (c_ast.Compound, c_ast.ExprList, c_ast.Assignment, c_ast.ArrayRef,
                  c_ast.UnaryOp, c_ast.Cast, c_ast.FuncCall, c_ast.Decl, c_ast.TypeDecl,
                  c_ast.InitList)


def _unconditional_path(root, target) -> bool:
    """Is ``target`` reached from ``root`` only through nodes evaluated on every execution
    of ``root`` (no if/?:/&&/||/loop/switch between them)?"""
    def find(n, ok):
        if n is target:
            return ok
        here = ok and (isinstance(n, _UNCONDITIONAL) or
                       (isinstance(n, c_ast.BinaryOp) and n.op not in ("&&", "||")))
        for _, c in n.children():
            r = find(c, here)
            if r is not None:
                return r
        return None
    return bool(find(root, True))


def _run(program, ast):
    fdef = canon.entry_def(ast, program.entry.name) if program.entry else None
    if fdef is None:
        return None
    cz = _Canon(fdef, program.facts.get("constants"))
    fdef.body.block_items = cz.items(list(fdef.body.block_items or []))
    return cz


@register(PassInfo(
    name=NAME,
    summary="loops over an outer induction variable (for (; i + 16 <= n; i += 16)) -> canonical "
            "loops declaring their own variable; the value after the loop as a never-assigned local",
    requires=("an entry function definition (XP-INDVAR-001)",
              "a loop without declared variable, condition v < B / v + c <= B, positive constant "
              "step, known entry value, body not assigning v or its bounds; or a running "
              "counter p++ of a rectangular nest (XP-INDVAR-002 none, XP-INDVAR-003 not "
              "canonicalisable)"),
    guarantees=("same outputs on the virtual device",),
    introduces=("v__vN loop variables", "v__eN end values"),
))
def indvar(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@indvar.legality
def _legal(program):
    """The canonicalisation, run on a copy of the AST: the plan the rewrite emits."""
    if program.entry is None or canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-INDVAR-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    cz = _run(program, ast)
    if not cz.done:
        if cz.reasons:      # a loop of the pattern, with a condition that fails
            why, node = cz.reasons[0]
            return [canon.diag(program, NAME, "XP-INDVAR-003", f"no loop to canonicalise: {why}", node)]
        return [canon.diag(program, NAME, "XP-INDVAR-002", "no loop without its own induction variable")]
    return canon.Rewritten(ast)
