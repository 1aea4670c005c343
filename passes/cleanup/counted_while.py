"""counted_while: a while loop over an integer stepped by a constant -> a counted for loop.

Summary
    Hand-written x86 kernels walk their inputs with ``while (p < pEnd) { ...; p += 16; }``;
    once ``pointer_offsets`` has turned the pointers into integer offsets the loop reads
    ``while (x < E) { ...; x += 16; ... y += 16; }``. The access analyses need a counted loop
    with closed-form subscripts. A ``while (x < E)`` (also ``x <= E``, ``E > x``, ``E >= x``)
    whose body (a block) steps ``x`` by one top-level statement ``x += c`` (``c`` a positive
    integer constant) and does nothing else to it, becomes::

        const long long __xp_x0_N = x;                    /* one per stepped integer */
        const long long __xp_trip_N = E > x0 ? (E - x0 + c - 1) / c : 0;   /* (E - x0) / c + 1 for <= */
        for (long long __xp_k_N = 0; __xp_k_N < __xp_trip_N; ++__xp_k_N) {
            body, where a stepped integer v reads v0 + c_v * k before its step and
            v0 + c_v * (k + 1) after it; the steps are gone
        }
        x = x0 + c * trip;  y = y0 + c_y * trip;

    Every other integer local the body steps the same way (exactly one top-level ``v += c_v``,
    no other write) gets the same closed form. ``E`` must not change in the loop.
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
    names, seen = set(), {}
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Decl) and n.name:
            seen[n.name] = seen.get(n.name, 0) + 1
            if isinstance(n.type, c_ast.TypeDecl) and isinstance(n.type.type, c_ast.IdentifierType) and \
                    set(n.type.type.names) <= _INT_WORDS:
                names.add(n.name)
    return {n for n in names if seen[n] == 1}


def _step(stmt) -> tuple[str, int] | None:
    """(v, c) of a top-level ``v += c`` with c a positive integer constant."""
    if isinstance(stmt, c_ast.Assignment) and stmt.op == "+=" and isinstance(stmt.lvalue, c_ast.ID) and \
            isinstance(stmt.rvalue, c_ast.Constant) and stmt.rvalue.type == "int":
        try:
            c = int(stmt.rvalue.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
        return (stmt.lvalue.name, c) if c > 0 else None
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


def _loop_form(loop, ints: set[str]):
    """(x, bound, inclusive, steps {v: (c, index)}) of a convertible while loop, else None."""
    if not isinstance(loop, c_ast.While) or not isinstance(loop.stmt, c_ast.Compound):
        return None
    cond = loop.cond
    if not isinstance(cond, c_ast.BinaryOp):
        return None
    if cond.op in ("<", "<=") and isinstance(cond.left, c_ast.ID):
        x, bound, inclusive = cond.left.name, cond.right, cond.op == "<="
    elif cond.op in (">", ">=") and isinstance(cond.right, c_ast.ID):
        x, bound, inclusive = cond.right.name, cond.left, cond.op == ">="
    else:
        return None
    items = loop.stmt.block_items or []
    steps: dict[str, tuple[int, int]] = {}
    for k, st in enumerate(items):
        got = _step(st)
        if got is not None and got[0] in ints:
            if got[0] in steps:
                steps[got[0]] = None            # stepped twice: not this form
            else:
                steps[got[0]] = (got[1], k)
    steps = {v: s for v, s in steps.items() if s is not None}
    if x not in steps or _leaves(loop.stmt):
        return None
    # every other write of a stepped integer disqualifies it (x: the loop)
    step_nodes = {id(items[k]) for _, k in steps.values()}
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
        elif isinstance(n, c_ast.Decl) and n.name in steps:
            written_elsewhere.add(n.name)
    if x in written_elsewhere:
        return None
    steps = {v: s for v, s in steps.items() if v not in written_elsewhere}
    if canon.has_side_effects(bound) or canon.ids_in(bound) & (canon.written_names(loop.stmt) | set(steps)):
        return None
    return x, bound, inclusive, steps


def _convertible(fdef):
    """The convertible loops not nested in another convertible one (outermost first)."""
    ints = _int_locals(fdef)
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
    for loop, (x, bound, inclusive, steps) in _convertible(fdef):
        parent = parents.get(id(loop))
        if not isinstance(parent, c_ast.Compound):
            continue
        count += 1
        tag = count
        k, trip = f"__xp_k{tag}", f"__xp_trip{tag}"
        start = {v: f"__xp_{v}0_{tag}" for v in steps}
        c = steps[x][0]
        x0 = start[x]
        at = parent.block_items.index(loop)
        known = _known_values(fdef, parent.block_items, at)
        first = "".join(f"const long long {start[v]} = {canon_text(known.get(v, c_ast.ID(v)))};\n"
                        for v in steps)
        (bound_text,) = [canon_text(_resolved(bound, known))]
        span = f"((long long) ({bound_text}) - {x0})"
        count_expr = (f"({span} >= 0 ? {span} / {c} + 1 : 0)" if inclusive else
                      f"({span} > 0 ? ({span} + {c - 1}) / {c} : 0)")
        head = canon.parse_stmts(first + f"const long long {trip} = {count_expr};")
        items = list(loop.stmt.block_items or [])
        body = []
        for idx, st in enumerate(items):
            if any(idx == s[1] for s in steps.values()):
                continue
            mapping = {}
            for v, (cv, at) in steps.items():
                after = idx > at
                mapping[v] = canon.parse_expr(f"({start[v]} + {cv} * ({k}{' + 1' if after else ''}))")
            body.append(_substitute_reads(copy.deepcopy(st), mapping))
        loop_stmt = canon.parse_stmts(f"for (long long {k} = 0; {k} < {trip}; ++{k}) {{ }}")[0]
        loop_stmt.stmt = c_ast.Compound(body)
        tail = canon.parse_stmts("".join(f"{v} = {start[v]} + {cv} * {trip};\n" for v, (cv, _) in steps.items()))
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
    the same block with a side-effect-free initialiser, not written by the statements between,
    never address-taken, and whose initialiser's names are not written between either (the
    entry value of a stepped offset, ``long long o = 0;``, and bounds defined from it)."""
    taken = {canon.lvalue_root(n.expr) for n in canon.walk(fdef.body)
             if isinstance(n, c_ast.UnaryOp) and n.op == "&"}
    out = {}
    for k in range(at):
        d = items[k]
        if not (isinstance(d, c_ast.Decl) and d.name and d.init is not None and
                isinstance(d.type, c_ast.TypeDecl) and not isinstance(d.init, c_ast.InitList)):
            continue
        if d.name in taken or canon.has_side_effects(d.init):
            continue
        between = set()
        for st in items[k + 1:at]:
            between |= canon.written_names(st)
        init = _resolved(d.init, out)
        if d.name in between or canon.ids_in(init) & between:
            continue
        out[d.name] = _deref_address(init, fdef)
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
    summary="while (x < E) { ...; x += c; } over integer locals stepped by constants -> a counted for loop "
            "with closed-form values of the stepped integers",
    requires=("an entry function definition (XP-COUNTED-WHILE-001)",
              "a while loop over an integer local stepped once per iteration by a positive constant, "
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
