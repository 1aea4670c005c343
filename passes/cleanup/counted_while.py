"""counted_while: a while loop over an integer stepped by a constant -> a counted for loop.

Summary
    Hand-written x86 kernels walk their inputs with ``while (p < pEnd) { ...; p += 16; }``;
    once ``pointer_offsets`` has turned the pointers into integer offsets the loop reads
    ``while (x < E) { ...; x += 16; ... y += 16; }``. The access analyses need a counted loop
    with closed-form subscripts. A ``while (x < E)`` (also ``x <= E``, ``E > x``, ``E >= x``)
    whose body (a block) steps ``x`` by one top-level statement ``x += c`` (``c`` a positive
    integer constant) and does nothing else to it, becomes (a loop counting down to a bound,
    ``while (x >= E) { ...; x -= c; }``, likewise with the span ``x0 - E``)::

        const long long __xp_x0_N = x;                    /* one per stepped integer */
        const long long __xp_trip_N = E > x0 ? (E - x0 + c - 1) / c : 0;   /* (E - x0) / c + 1 for <= */
        for (long long __xp_k_N = 0; __xp_k_N < __xp_trip_N; ++__xp_k_N) {
            body, where a stepped integer v reads v0 + c_v * k before its step and
            v0 + c_v * (k + 1) after it; the steps are gone
        }
        x = x0 + c * trip;  y = y0 + c_y * trip;

    Every other integer local the body steps the same way (top-level ``v += c_v`` statements,
    no other write) gets the same closed form; a variable stepped several times per iteration
    (hnswlib's unrolled ``p += 16`` four times) advances by their sum per iteration and reads,
    after each step, the steps taken so far. ``E`` must not change in the loop.
    A count-down loop ``while (n-- > 0)`` (``while (n--)`` for an unsigned ``n``) whose body
    neither reads nor writes ``n`` runs ``max(n0, 0)`` times and leaves ``n = n0 - trip - 1``.
    The start values and the bound are read through the block's earlier definitions, plain
    ``v = e;`` stores included (the offset an earlier converted loop leaves).
Requires
    1. The program has an entry function definition (XP-COUNTED-WHILE-001).
    2. A while loop of that form whose body has no ``break``, ``continue`` (outside nested
       loops), ``return`` or ``goto``, whose bound ``E`` has no side effects and names nothing
       the body writes, and whose variable is an integer local (XP-COUNTED-WHILE-002: none,
       nothing to do).
Guarantees
    Same outputs on the virtual device: ``x`` takes ``x0, x0 + c, ...`` while the condition
    holds, which is exactly ``trip`` times (``E`` is invariant), and every read of a stepped
    integer sees the value it had at that point of that iteration.
Options
    none.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "counted_while"
_INT_WORDS = frozenset({"int", "long", "short", "char", "unsigned", "signed", "size_t", "ptrdiff_t",
                        "int64_t", "int32_t", "uint64_t", "uint32_t", "intptr_t", "uintptr_t"})
_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


def _int_locals(fdef) -> set[str]:
    return set(_int_local_words(fdef))


def _int_local_words(fdef) -> dict[str, set]:
    """Integer locals declared once -> their type words."""
    names, seen = {}, {}
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Decl) and n.name:
            seen[n.name] = seen.get(n.name, 0) + 1
            if isinstance(n.type, c_ast.TypeDecl) and isinstance(n.type.type, c_ast.IdentifierType) and \
                    set(n.type.type.names) <= _INT_WORDS:
                names[n.name] = set(n.type.type.names)
    return {n: w for n, w in names.items() if seen[n] == 1}


_UNSIGNED_WORDS = frozenset({"unsigned", "size_t", "uint64_t", "uint32_t", "uintptr_t"})


def _count_down(cond, ints: dict) -> str | None:
    """``n`` of a count-down condition ``n-- > 0`` (``0 < n--``), or ``n--`` alone for an
    unsigned ``n`` (a signed one would run on past zero): the body runs ``max(n0, 0)`` times."""
    def post_dec(e):
        return e.expr.name if isinstance(e, c_ast.UnaryOp) and e.op == "p--" and \
            isinstance(e.expr, c_ast.ID) and e.expr.name in ints else None

    def zero(e):
        return isinstance(e, c_ast.Constant) and e.type == "int" and \
            e.value.rstrip("uUlL") in ("0", "0x0")
    n = post_dec(cond)
    if n is not None:
        return n if ints[n] & _UNSIGNED_WORDS else None
    if isinstance(cond, c_ast.BinaryOp):
        if cond.op == ">" and zero(cond.right):
            return post_dec(cond.left)
        if cond.op == "<" and zero(cond.left):
            return post_dec(cond.right)
        if cond.op == "!=" and zero(cond.right) and post_dec(cond.left) in ints and \
                ints[post_dec(cond.left)] & _UNSIGNED_WORDS:
            return post_dec(cond.left)
    return None


def _step(stmt) -> tuple[str, int] | None:
    """(v, c) of a top-level ``v += c`` (``v -= c``: ``-c``) with c a positive integer
    constant."""
    if isinstance(stmt, c_ast.Assignment) and stmt.op in ("+=", "-=") and \
            isinstance(stmt.lvalue, c_ast.ID) and \
            isinstance(stmt.rvalue, c_ast.Constant) and stmt.rvalue.type == "int":
        try:
            c = int(stmt.rvalue.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
        return (stmt.lvalue.name, c if stmt.op == "+=" else -c) if c > 0 else None
    return None


def _leaves(body) -> bool:
    """The body leaves the loop other than by its condition: ``return``, ``goto`` (or a label
    jumped to), ``break`` outside nested loops and switches, ``continue`` outside nested loops."""
    def walk(n, in_loop: bool, in_switch: bool) -> bool:
        if isinstance(n, (c_ast.Return, c_ast.Goto, c_ast.Label)):
            return True
        if isinstance(n, c_ast.Break) and not (in_loop or in_switch):
            return True
        if isinstance(n, c_ast.Continue) and not in_loop:
            return True
        loop, switch = in_loop or isinstance(n, _LOOPS), in_switch or isinstance(n, c_ast.Switch)
        return any(walk(c, loop, switch) for _, c in n.children())
    return any(walk(c, False, False) for _, c in body.children())


def _loop_form(loop, ints: dict):
    """(x, bound, inclusive, steps {v: [(c, index), ...]}, down) of a convertible while loop,
    else None; ``down``: ``x`` is a count-down counter (``while (x-- > 0)``, no bound)."""
    if not isinstance(loop, c_ast.While) or not isinstance(loop.stmt, c_ast.Compound):
        return None
    cond = loop.cond
    items = loop.stmt.block_items or []
    steps: dict[str, list] = {}
    for k, st in enumerate(items):
        got = _step(st)
        if got is not None and got[0] in ints:
            steps.setdefault(got[0], []).append((got[1], k))

    def rising(v) -> bool:
        return sum(c for c, _ in steps.get(v, [])) > 0

    def falling(v) -> bool:
        return sum(c for c, _ in steps.get(v, [])) < 0

    def name(e):
        return e.name if isinstance(e, c_ast.ID) else None
    down = _count_down(cond, ints)
    if down is not None:
        x, bound, inclusive = down, None, False
    elif not isinstance(cond, c_ast.BinaryOp) or cond.op not in ("<", "<=", ">", ">="):
        return None
    # x rising to a bound (x < E, E > x) or falling to one (x >= E, E <= x: a count-down
    # by a constant, `while (c >= 16) { ...; c -= 16; }`)
    elif cond.op in ("<", "<=") and rising(name(cond.left)):
        x, bound, inclusive = cond.left.name, cond.right, cond.op == "<="
    elif cond.op in (">", ">=") and rising(name(cond.right)):
        x, bound, inclusive = cond.right.name, cond.left, cond.op == ">="
    elif cond.op in (">", ">=") and falling(name(cond.left)):
        x, bound, inclusive = cond.left.name, cond.right, cond.op == ">="
    elif cond.op in ("<", "<=") and falling(name(cond.right)):
        x, bound, inclusive = cond.right.name, cond.left, cond.op == "<="
    else:
        return None
    if (x in steps) == (down is not None) or _leaves(loop.stmt):
        return None
    # every other write of a stepped integer disqualifies it (x: the loop)
    step_nodes = {id(items[k]) for ss in steps.values() for _, k in ss}
    written_elsewhere = set()
    for n in canon.walk(loop.stmt):
        if id(n) in step_nodes:
            continue
        if isinstance(n, c_ast.Assignment):
            root = canon.lvalue_root(n.lvalue)
            if root:
                written_elsewhere.add(root)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
            root = canon.lvalue_root(n.expr)
            if root:
                written_elsewhere.add(root)
        elif isinstance(n, c_ast.Decl) and (n.name in steps or n.name == x):
            written_elsewhere.add(n.name)
    if x in written_elsewhere or down is not None and x in canon.ids_in(loop.stmt):
        return None                 # a count-down counter the body reads or writes: not modelled
    steps = {v: s for v, s in steps.items() if v not in written_elsewhere}
    if bound is not None and (canon.has_side_effects(bound) or
                              canon.ids_in(bound) & (canon.written_names(loop.stmt) | set(steps))):
        return None
    return x, bound, inclusive, steps, down is not None


def _convertible(fdef):
    """The convertible loops not nested in another convertible one (outermost first)."""
    ints = _int_local_words(fdef)
    found = [(loop, form) for loop in canon.walk(fdef.body)
             for form in [_loop_form(loop, ints)] if form is not None]
    inner = {id(n) for loop, _ in found for n in canon.walk(loop.stmt)}
    return [(loop, form) for loop, form in found if id(loop) not in inner]


def _rewrite(fdef) -> int:
    count = 0
    parents = {}
    for n in canon.walk(fdef.body):
        for _, c in n.children():
            parents[id(c)] = n
    for loop, (x, bound, inclusive, steps, down) in _convertible(fdef):
        parent = parents.get(id(loop))
        if not isinstance(parent, c_ast.Compound):
            continue
        count += 1
        tag = count
        k, trip = f"__xp_k{tag}", f"__xp_trip{tag}"
        counted = dict(steps, **({x: []} if down else {}))
        start = {v: f"__xp_{v}0_{tag}" for v in counted}
        total = {v: sum(c for c, _ in ss) for v, ss in steps.items()}   # step per iteration
        x0 = start[x]
        at = parent.block_items.index(loop)
        known = _known_values(fdef, parent.block_items, at)
        first = "".join(f"const long long {start[v]} = {canon_text(known.get(v, c_ast.ID(v)))};\n"
                        for v in counted)
        if down:                    # while (x-- > 0): x0 iterations when positive, none else
            count_expr = f"({x0} > 0 ? {x0} : 0)"
        else:
            c = abs(total[x])
            (bound_text,) = [canon_text(_resolved(bound, known))]
            span = f"((long long) ({bound_text}) - {x0})" if total[x] > 0 else \
                f"({x0} - (long long) ({bound_text}))"
            count_expr = (f"({span} >= 0 ? {span} / {c} + 1 : 0)" if inclusive else
                          f"({span} > 0 ? ({span} + {c - 1}) / {c} : 0)")
        head = canon.parse_stmts(first + f"const long long {trip} = {count_expr};")
        items = list(loop.stmt.block_items or [])
        step_at = {at for ss in steps.values() for _, at in ss}
        body = []
        for idx, st in enumerate(items):
            if idx in step_at:
                continue
            mapping = {}
            for v, ss in steps.items():
                done = sum(cv for cv, at in ss if at < idx)      # steps already taken this iteration
                mapping[v] = canon.parse_expr(f"({start[v]} + {total[v]} * {k}"
                                              f"{f' + {done}' if done else ''})")
            body.append(_substitute_reads(copy.deepcopy(st), mapping))
        loop_stmt = canon.parse_stmts(f"for (long long {k} = 0; {k} < {trip}; ++{k}) {{ }}")[0]
        loop_stmt.stmt = c_ast.Compound(body)
        # after the loop: each stepped integer past its last step; a count-down counter one
        # below zero (the failing test decremented it too)
        tail = canon.parse_stmts("".join(f"{v} = {start[v]} + {total[v]} * {trip};\n" for v in steps) +
                                 (f"{x} = {x0} - {trip} - 1;\n" if down else ""))
        new_items = []
        for st in parent.block_items:
            if st is loop:
                new_items.extend(head + [loop_stmt] + tail)
            else:
                new_items.append(st)
        parent.block_items = new_items
    return count


def _known_values(fdef, items: list, at: int) -> dict:
    """Name -> the expression it holds just before ``items[at]``: locals declared earlier in
    the same block with a side-effect-free initialiser, or given a value by a later plain
    ``v = e;`` of the block, never address-taken, each value expressed over the values known
    at its definition; a statement that writes a name forgets it and every value that reads
    it (the entry value of a stepped offset, ``long long o = 0;``, bounds defined from it,
    and the offset an earlier counted loop leaves)."""
    taken = {canon.lvalue_root(n.expr) for n in canon.walk(fdef.body)
             if isinstance(n, c_ast.UnaryOp) and n.op == "&"}
    out = {}
    scalars = {n.name for n in items[:at] if isinstance(n, c_ast.Decl) and n.name and
               isinstance(n.type, c_ast.TypeDecl)}
    for k in range(at):
        d = items[k]
        name = value = None
        if isinstance(d, c_ast.Decl) and d.name and d.init is not None and \
                isinstance(d.type, c_ast.TypeDecl) and not isinstance(d.init, c_ast.InitList):
            name, value = d.name, d.init
        elif isinstance(d, c_ast.Assignment) and d.op == "=" and isinstance(d.lvalue, c_ast.ID) and \
                d.lvalue.name in scalars:
            # a plain store to a scalar of this block (the closed-form value an earlier
            # counted loop leaves in its offsets): the value it holds from here on
            name, value = d.lvalue.name, d.rvalue
        written = canon.written_names(d)
        if isinstance(d, c_ast.Decl) and d.name:
            written.add(d.name)
        known = name is not None and name not in taken and not canon.has_side_effects(value)
        init = _resolved(value, out) if known else None
        # the values known so far that this statement changes (or that read what it changes)
        out = {n: e for n, e in out.items() if n not in written and not canon.ids_in(e) & written}
        if known and not canon.ids_in(init) & written:
            out[name] = _deref_address(init, fdef)
    return out


def _deref_address(e, fdef):
    """``*((T *) (&v))`` -> ``v`` when ``v`` is declared with type ``T`` (an out-parameter read
    back, as inlining leaves it); anything else unchanged."""
    if not (isinstance(e, c_ast.UnaryOp) and e.op == "*" and isinstance(e.expr, c_ast.Cast)):
        return e
    cast = e.expr
    x = cast.expr
    if not (isinstance(x, c_ast.UnaryOp) and x.op == "&" and isinstance(x.expr, c_ast.ID)):
        return e
    to = cast.to_type.type
    if not isinstance(to, c_ast.PtrDecl):
        return e
    decls = [n for n in canon.walk(fdef) if isinstance(n, c_ast.Decl) and n.name == x.expr.name]
    if len(decls) != 1 or not isinstance(decls[0].type, c_ast.TypeDecl):
        return e
    if canon.type_words(to.type) != canon.type_words(decls[0].type):
        return e
    return c_ast.ID(x.expr.name)


def _resolved(e, known: dict):
    """``e`` with the known values substituted (as parenthesised expressions)."""
    if not known:
        return e
    e = copy.deepcopy(e)
    return _substitute_reads(e, known)


def canon_text(e) -> str:
    from pycparser import c_generator

    return c_generator.CGenerator().visit(e)


def _substitute_reads(node, mapping: dict):
    """Replace reads of the mapped names (IDs) by their expressions; the names are not
    written in ``node`` (checked by ``_loop_form``)."""
    def replacement(n):
        if isinstance(n, c_ast.ID) and n.name in mapping:
            return copy.deepcopy(mapping[n.name])
        return None
    if isinstance(node, c_ast.ID) and node.name in mapping:
        return copy.deepcopy(mapping[node.name])
    canon.replace_nodes(node, replacement, skip={c_ast.StructRef: ("field",)})
    return node


@register(PassInfo(
    name=NAME,
    summary="while (x < E) { ...; x += c; } (or while (n-- > 0)) over integer locals stepped by constants "
            "-> a counted for loop with closed-form values of the stepped integers",
    requires=("an entry function definition (XP-COUNTED-WHILE-001)",
              "a while loop over an integer local stepped by positive constants (or counted down), "
              "an invariant bound and no early exit (XP-COUNTED-WHILE-002)"),
    guarantees=("same outputs on the virtual device",),
))
def counted_while(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@counted_while.legality
def _legal(program):
    fdef = canon.entry_def(program.ast, program.entry.name) if program.ast is not None and program.entry else None
    if fdef is None:
        return [canon.diag(program, NAME, "XP-COUNTED-WHILE-001", "no entry function definition")]
    if not _convertible(fdef):
        return [canon.diag(program, NAME, "XP-COUNTED-WHILE-002", "no while loop over an integer stepped "
                           "by a constant")]
    ast = copy.deepcopy(program.ast)
    fcopy = canon.entry_def(ast, program.entry.name)
    n = _rewrite(fcopy)
    if not n:
        return [canon.diag(program, NAME, "XP-COUNTED-WHILE-002", "no while loop over an integer stepped "
                           "by a constant in a block")]
    return canon.Rewritten(ast, n)
