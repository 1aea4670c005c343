"""remainder_loop: a do-while over a decreasing count with a remainder branch -> a counted main
loop and the remainder iteration after it.

Summary
    Hand-written SIMD kernels (simsimd and the like) walk their input with one loop whose body
    either takes a full vector or, for the last ``N < C`` elements, a masked one::

        do {
          if (N < C) { ...masked tail of N lanes...; N = 0; }
          else       { ...full vector...; a += C; N -= C; }
          acc = f(acc, ...); out += C;
        } while (N);

    The count ``N`` and the pointer offsets (``a``, ``out``: integer locals stepped by constants)
    are carried from iteration to iteration, so their values - and the elements the loop
    touches - are opaque to the affine analysis. The loop runs ``N0 / C`` full iterations (the
    else branch; in iteration ``k`` the count is ``N0 - C * k`` and each stepped variable is
    ``V0 + s * k``) and then, when ``N0 % C != 0`` or ``N0 == 0``, exactly one remainder
    iteration (the then branch, with the count ``N0 % C``). It becomes::

        const T __xp_n0 = N0;
        for (long long __xp_i = 0; __xp_i + C <= __xp_n0; __xp_i += C) { full body, N and V closed forms }
        { const T __xp_nt = __xp_n0 % C; if (__xp_nt != 0 || __xp_n0 == 0) { remainder body } }

    where every read of ``N`` and of a stepped variable is replaced by its closed form at that
    point (``V0 + s / C * __xp_i`` plus the steps already taken in the iteration), the steps
    and the writes of ``N`` are removed, and ``N`` / ``V`` are assigned their final values after
    the loop when something reads them later. ``N0`` and ``V0`` are the initialisers of the
    declarations when nothing between them and the loop writes them or their names (else the
    values at the loop, kept in new constants). Both the main loop and the remainder then have
    never-assigned bounds; ``simplify`` turns the remainder's tail mask into a lane guard.
Requires
    1. At least one function definition (XP-REMAINDER-LOOP-001).
    2. A loop ``do { ... } while (N)`` (``N != 0``, ``N > 0``) over an unsigned integer local
       ``N`` (not address-taken) whose body has one top-level ``if (N < C) {A} else {B}``
       (``C`` a positive constant) with ``N = 0;`` the only write of ``N`` in ``A`` and
       ``N -= C;`` the only one in ``B`` (both top-level statements), no other write of ``N``,
       no ``break`` / ``continue`` / ``return`` / ``goto`` / label of its own, and every integer
       local written by a top-level ``V += c`` of the body or of ``B`` written only by such
       steps (also in ``A``), their sum per full iteration a multiple of ``C``
       (XP-REMAINDER-LOOP-002: no such loop, nothing to do).
Guarantees
    Same outputs on the virtual device: the same iterations run in the same order with the same
    values of every variable.
Options
    none.
Example
    ``do { if (n < 16) { t(n, a); n = 0; } else { f(a); a += 16; n -= 16; } } while (n);`` ->
    ``for (long long i = 0; i + 16 <= n0; i += 16) f(a0 + i);
    { const T nt = n0 % 16; if (nt != 0 || n0 == 0) t(nt, a0 + n0 / 16 * 16); }``
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "remainder_loop"
_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)
_UNSIGNED = {"size_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "uintptr_t", "unsigned"}
_INTEGER = _UNSIGNED | {"int", "long", "short", "char", "signed", "int8_t", "int16_t", "int32_t",
                        "int64_t", "ptrdiff_t", "intptr_t", "ssize_t"}


def _const_int(e) -> int | None:
    if isinstance(e, c_ast.Constant) and e.type.replace("unsigned ", "") in ("int", "long", "long long"):
        try:
            return int(e.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
    return None


def _count_of(cond) -> str | None:
    """``N`` of a loop condition ``N`` / ``N != 0`` / ``0 != N`` / ``N > 0``."""
    if isinstance(cond, c_ast.ID):
        return cond.name
    if isinstance(cond, c_ast.BinaryOp):
        l, r = cond.left, cond.right
        if cond.op in ("!=", ">") and isinstance(l, c_ast.ID) and _const_int(r) == 0:
            return l.name
        if cond.op in ("!=", "<") and isinstance(r, c_ast.ID) and _const_int(l) == 0:
            return r.name
    return None


def _step(stmt, name: str | None = None) -> tuple[str, int] | None:
    """(V, c) of a statement ``V += c`` / ``V -= c`` / ``V = V + c`` / ``++V`` / ``V++``."""
    if isinstance(stmt, c_ast.UnaryOp) and stmt.op in ("++", "p++", "--", "p--") and \
            isinstance(stmt.expr, c_ast.ID):
        v = stmt.expr.name
        c = 1 if "+" in stmt.op else -1
    elif isinstance(stmt, c_ast.Assignment) and isinstance(stmt.lvalue, c_ast.ID):
        v = stmt.lvalue.name
        if stmt.op in ("+=", "-=") and _const_int(stmt.rvalue) is not None:
            c = _const_int(stmt.rvalue) * (1 if stmt.op == "+=" else -1)
        elif stmt.op == "=" and isinstance(stmt.rvalue, c_ast.BinaryOp) and \
                stmt.rvalue.op in ("+", "-") and isinstance(stmt.rvalue.left, c_ast.ID) and \
                stmt.rvalue.left.name == v and _const_int(stmt.rvalue.right) is not None:
            c = _const_int(stmt.rvalue.right) * (1 if stmt.rvalue.op == "+" else -1)
        else:
            return None
    else:
        return None
    if name is not None and v != name:
        return None
    return v, c


def _split_commas(items) -> list:
    """Top-level ``a, b, c;`` expression statements as separate statements."""
    out = []
    for s in items:
        if isinstance(s, c_ast.ExprList):
            out.extend(s.exprs)
        else:
            out.append(s)
    return out


def _escapes(node, in_loop=False, in_switch=False) -> bool:
    """A jump under ``node`` that leaves the loop body: return, goto, label, or a break /
    continue not bound by a nested loop / switch."""
    if isinstance(node, (c_ast.Return, c_ast.Goto, c_ast.Label)):
        return True
    if isinstance(node, c_ast.Break) and not (in_loop or in_switch):
        return True
    if isinstance(node, c_ast.Continue) and not in_loop:
        return True
    in_loop = in_loop or isinstance(node, _LOOPS)
    in_switch = in_switch or isinstance(node, c_ast.Switch)
    return any(_escapes(c, in_loop, in_switch) for _, c in node.children())


def _scalar_writes(node) -> dict[str, list]:
    """name -> statements / expressions writing the variable itself under ``node``."""
    out: dict[str, list] = {}
    for n in canon.walk(node):
        if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
            out.setdefault(n.lvalue.name, []).append(n)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and \
                isinstance(n.expr, c_ast.ID):
            out.setdefault(n.expr.name, []).append(n)
    return out


def _addressed(node) -> set[str]:
    return {r for n in canon.walk(node) if isinstance(n, c_ast.UnaryOp) and n.op == "&"
            for r in [canon.lvalue_root(n.expr)] if r}


@dataclass
class Remainder:
    """One rewritable loop (the check's plan): item ``index`` of ``block``."""

    block: c_ast.Compound
    index: int
    count: str                       # N
    width: int                       # C
    before: list                     # top-level body items before the if
    full: list                       # B
    tail: list                       # A
    after: list                      # top-level body items after the if
    steps: dict[str, int]            # V -> its step per full iteration
    decls: dict[str, c_ast.Decl]     # N and every V -> its declaration
    starts: dict[str, c_ast.Node | None] = field(default_factory=dict)  # known initialisers
    live_after: set[str] = field(default_factory=set)
    fixed: list[str] = field(default_factory=list)   # written by the remainder branch only


def _decls_by_name(fdef) -> dict[str, list]:
    out: dict[str, list] = {}
    for n in canon.walk(fdef):
        if isinstance(n, c_ast.Decl) and n.name and not isinstance(n.type, c_ast.FuncDecl):
            out.setdefault(n.name, []).append(n)
    return out


def _integer_words(decl, typedefs) -> list[str] | None:
    t = decl.type
    if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
        return None
    words = canon.type_words(t)
    seen = 0
    while len(words) == 1 and words[0] in typedefs and seen < 8:
        inner = typedefs[words[0]].type
        if not isinstance(inner, c_ast.TypeDecl) or not isinstance(inner.type, c_ast.IdentifierType):
            return None
        words = canon.type_words(inner)
        seen += 1
    if not words or not all(w in _INTEGER for w in words):
        return None
    return words


def _match(fdef, block, index, loop, typedefs, decls) -> Remainder | None:
    n = _count_of(loop.cond)
    if n is None or len(decls.get(n, [])) != 1:
        return None
    words = _integer_words(decls[n][0], typedefs)
    if words is None or not any(w in _UNSIGNED for w in words):
        return None
    if _escapes(loop.stmt) or n in _addressed(fdef):
        return None
    items = _split_commas(canon.as_items(loop.stmt))
    ifs = [k for k, s in enumerate(items) if isinstance(s, c_ast.If) and s.iffalse is not None]
    picked = None
    for k in ifs:
        c = items[k].cond
        if isinstance(c, c_ast.BinaryOp) and c.op == "<" and isinstance(c.left, c_ast.ID) and \
                c.left.name == n and (_const_int(c.right) or 0) > 0:
            picked = (k, _const_int(c.right))
        elif isinstance(c, c_ast.BinaryOp) and c.op == ">" and isinstance(c.right, c_ast.ID) and \
                c.right.name == n and (_const_int(c.left) or 0) > 0:
            picked = (k, _const_int(c.left))
        if picked:
            break
    if picked is None:
        return None
    k, width = picked
    before, after = items[:k], items[k + 1:]
    tail = _split_commas(canon.as_items(items[k].iftrue))
    full = _split_commas(canon.as_items(items[k].iffalse))
    # N: written once in A (N = 0;) and once in B (N -= C;), both top-level, nowhere else
    writes = _scalar_writes(loop.stmt)
    zero = [s for s in tail if isinstance(s, c_ast.Assignment) and s.op == "=" and
            isinstance(s.lvalue, c_ast.ID) and s.lvalue.name == n and _const_int(s.rvalue) == 0]
    dec = [s for s in full if _step(s, n) == (n, -width)]
    if len(zero) != 1 or len(dec) != 1 or len(writes.get(n, [])) != 2:
        return None
    # stepped variables: written only by top-level steps of the body, B and A
    top = {id(s) for s in before + after + full + tail}
    steps: dict[str, int] = {}
    for v, ws in writes.items():
        if v == n:
            continue
        if len(decls.get(v, [])) != 1 or _inside(decls[v][0], loop.stmt):
            continue                      # declared in the loop (or ambiguous): carried as is
        in_main = [s for s in before + after + full if _step(s, v)]
        if not in_main:
            continue                      # not stepped by full iterations
        if not all(id(w) in top and _step(w, v) for w in ws):
            return None                   # stepped and otherwise written: not a closed form
        if _integer_words(decls[v][0], typedefs) is None or v in _addressed(fdef):
            return None
        s = sum(_step(x, v)[1] for x in in_main)
        if s % width:
            return None
        steps[v] = s
    # written by the remainder branch only: every full iteration sees the value at the loop
    # (the simsimd store mask, full until the last iteration)
    others = set().union(*(canon.written_names(s) for s in before + full + after)) if \
        before + full + after else set()
    fixed = [v for v in writes if v != n and v not in steps and v not in others and
             len(decls.get(v, [])) == 1 and not _inside(decls[v][0], loop.stmt) and
             isinstance(decls[v][0].type, c_ast.TypeDecl) and v not in _addressed(fdef)]
    rem = Remainder(block, index, n, width, before, full, tail, after, steps,
                    {v: decls[v][0] for v in [n, *steps, *fixed]})
    rem.fixed = fixed
    _starts(rem)
    later = block.block_items[index + 1:]
    rem.live_after = {v for v in [n, *steps] if any(v in canon.ids_in(s) for s in later)}
    return rem


def _inside(node, root) -> bool:
    return any(x is node for x in canon.walk(root))


def _starts(rem: Remainder) -> None:
    """The initialiser of each of N and V when the declaration is an earlier item of the loop's
    block and nothing in between writes the variable or a name of the initialiser."""
    items = rem.block.block_items
    for v, d in rem.decls.items():
        rem.starts[v] = None
        pos = next((k for k, s in enumerate(items[:rem.index]) if s is d), None)
        if pos is None or d.init is None or isinstance(d.init, c_ast.InitList):
            continue
        between = items[pos + 1:rem.index]
        names = canon.ids_in(d.init) | {v}
        if any(canon.written_names(s) & names for s in between):
            continue
        if canon.has_side_effects(d.init):
            continue
        rem.starts[v] = d.init


def find_loops(fdef, typedefs) -> list[Remainder]:
    decls = _decls_by_name(fdef)
    out = []
    for block in (n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Compound)):
        for i, s in enumerate(block.block_items or []):
            if isinstance(s, c_ast.DoWhile):
                got = _match(fdef, block, i, s, typedefs, decls)
                if got is not None:
                    out.append(got)
    return out


# ------------------------------------------------------------------------------ rewrite
def _id(name):
    return c_ast.ID(name)


def _const_decl(like: c_ast.Decl, name: str, init) -> c_ast.Decl:
    d = copy.deepcopy(like)
    canon.strip_coords(d)
    canon.set_declname(d, name)
    d.init = init
    d.storage = []
    t = d.type
    t.quals = list(dict.fromkeys([*(t.quals or []), "const"]))
    return d


def _cast(decl, e):
    t = copy.deepcopy(decl.type)
    canon.strip_coords(t)
    t.declname = None
    t.quals = []
    return c_ast.Cast(c_ast.Typename(None, [], None, t), e)


def _num(v: int):
    return c_ast.Constant("int", str(v)) if v >= 0 else c_ast.UnaryOp("-", c_ast.Constant("int", str(-v)))


def _plus(a, b):
    """``a + b``; ``b`` an expression or an int (0: ``a`` itself)."""
    if isinstance(b, int):
        if b == 0:
            return a
        return c_ast.BinaryOp("+" if b > 0 else "-", a, _num(abs(b)))
    return c_ast.BinaryOp("+", a, b)


def _copy_with(items, values: dict, tracked: set, count: str):
    """``items`` copied in order with the reads of each tracked variable replaced by its value
    at that point (``values``: name -> builder of the expression from the running offset); the
    steps of tracked variables are dropped and advance their offsets, ``count = 0;`` is dropped
    and makes later reads of the count 0. Returns (items, offsets at the end)."""
    offsets = {v: 0 for v in tracked}
    out = []
    for s in items:
        st = _step(s)
        if st is not None and st[0] in offsets:
            offsets[st[0]] += st[1]
            continue
        if isinstance(s, c_ast.Assignment) and isinstance(s.lvalue, c_ast.ID) and s.lvalue.name == count:
            values = dict(values, **{count: lambda off: _num(0)})
            continue
        mapping = {v: build(offsets.get(v, 0)) for v, build in values.items()}
        out.append(canon.substitute(s, mapping))
    return out, offsets


def _rewrite(rem: Remainder, taken: set[str]) -> None:
    def fresh(base):
        k, name = 0, base
        while name in taken:
            k += 1
            name = f"{base}{k}"
        taken.add(name)
        return name

    n, C = rem.count, rem.width
    tracked = {n, *rem.steps}
    n0, nt, iv = fresh("__xp_n0"), fresh("__xp_nt"), fresh("__xp_i")
    pre = [_const_decl(rem.decls[n], n0, copy.deepcopy(rem.starts[n]) if rem.starts[n] is not None
                       else _id(n))]
    v0 = {}
    for v in [*rem.steps, *rem.fixed]:
        if rem.starts[v] is not None:
            v0[v] = rem.starts[v]
        else:
            name = fresh(f"__xp_{v}0")
            pre.append(_const_decl(rem.decls[v], name, _id(v)))
            v0[v] = _id(name)

    # the full iterations: N = n0 - i, V = V0 + s / C * i (plus the steps taken so far)
    def main_value(v):
        if v == n:
            return lambda off: _cast(rem.decls[n], _plus(c_ast.BinaryOp("-", _id(n0), _id(iv)), off))
        per = rem.steps[v] // C
        scaled = _id(iv) if per == 1 else c_ast.BinaryOp("*", _num(per), _id(iv))
        return lambda off, v=v, scaled=scaled: _cast(rem.decls[v], _plus(
            _plus(copy.deepcopy(v0[v]), copy.deepcopy(scaled)), off))

    # the remainder iteration: N = nt, V = V0 + s * (n0 / C) (plus the steps taken so far)
    def tail_value(v):
        if v == n:
            return lambda off: _plus(_id(nt), off)
        return lambda off, v=v: _cast(rem.decls[v], _plus(_plus(
            copy.deepcopy(v0[v]), c_ast.BinaryOp("*", _num(rem.steps[v]),
                                                 c_ast.BinaryOp("/", _id(n0), _num(C)))), off))

    def run(parts, values):
        out, total = [], {v: 0 for v in tracked}
        for part in parts:
            got, offs = _copy_with(part, _shifted(values, total), tracked, n)
            out += got
            total = {v: total[v] + offs[v] for v in total}
            if any(isinstance(s, c_ast.Assignment) and isinstance(s.lvalue, c_ast.ID) and
                   s.lvalue.name == n for s in part):
                values = dict(values, **{n: lambda off: _num(0)})
        return out, total

    main_values = {v: main_value(v) for v in tracked}
    main_values.update({v: (lambda off, v=v: copy.deepcopy(v0[v])) for v in rem.fixed})
    main_items, _ = run([rem.before, rem.full, rem.after], main_values)
    loop = canon.parse_stmts(f"for (long long {iv} = 0; {iv} + {C} <= {n0}; {iv} += {C}) {{ }}")[0]
    loop.stmt = c_ast.Compound(main_items)
    tail_items, total = run([rem.before, rem.tail, rem.after], {v: tail_value(v) for v in tracked})
    tail_items, renamed = _own_copies(tail_items, rem, fresh)
    tail_block = canon.rename_decls(c_ast.Compound(tail_items), "__r")
    tail_block.block_items = (tail_block.block_items or []) + [
        c_ast.Assignment("=", _id(v), tail_value(v)(total[v])) for v in rem.steps if v in rem.live_after] + [
        c_ast.Assignment("=", _id(v), _id(name + "__r")) for v, name in renamed.items() if v in rem.live_after]
    finals = [c_ast.Assignment("=", _id(v), tail_value(v)(0)) for v in rem.steps if v in rem.live_after]
    if n in rem.live_after:
        finals.append(c_ast.Assignment("=", _id(n), _num(0)))
    nt_decl = _const_decl(rem.decls[n], nt, c_ast.BinaryOp("%", _id(n0), _num(C)))
    cond = canon.parse_expr(f"{nt} != 0 || {n0} == 0")
    rem.block.block_items[rem.index] = c_ast.Compound(
        pre + [loop, nt_decl, *finals, c_ast.If(cond, tail_block, None)])


def _own_copies(items, rem: Remainder, fresh) -> tuple[list, dict]:
    """The remainder's items with each variable only the remainder branch writes declared
    afresh at its first top-level ``v = e;`` (nothing reads it before): one definition the
    cleanup passes can follow (the store mask ``mask = bzhi(...)``). Returns (items, v ->
    new name)."""
    renamed = {}
    items = list(items)
    for v in rem.fixed:
        k = next((i for i, st in enumerate(items) if isinstance(st, c_ast.Assignment) and
                  st.op == "=" and isinstance(st.lvalue, c_ast.ID) and st.lvalue.name == v), None)
        if k is None or any(v in canon.ids_in(st) for st in items[:k]) or v in canon.ids_in(items[k].rvalue):
            continue
        if any(isinstance(n, c_ast.Decl) and n.name == v for st in items[k + 1:] for n in canon.walk(st)):
            continue                            # a shadowing declaration: leave it
        name = fresh(f"{v}__t")
        items[k] = _const_decl(rem.decls[v], name, items[k].rvalue)
        items[k].type.quals = [q for q in items[k].type.quals if q != "const"]
        items[k + 1:] = [canon.substitute(st, {v: _id(name)}) for st in items[k + 1:]]
        renamed[v] = name
    return items, renamed


def _shifted(values: dict, offs: dict) -> dict:
    return {v: (lambda off, b=b, o=offs.get(v, 0): b(off + o)) for v, b in values.items()}


def _plan(program):
    ast = copy.deepcopy(program.ast)
    typedefs = canon.typedef_map(ast)
    found = []
    for e in ast.ext:
        if isinstance(e, c_ast.FuncDef):
            for rem in find_loops(e, typedefs):
                found.append((e, rem))
    return ast, found


@register(PassInfo(
    name=NAME,
    summary="do { if (N < C) {tail; N = 0;} else {full; N -= C;} } while (N) -> a counted loop of "
            "the full iterations and the remainder iteration after it",
    requires=("a function definition (XP-REMAINDER-LOOP-001)",
              "a do-while over an unsigned count with one remainder branch, the count and the "
              "pointer offsets stepped by constants only (XP-REMAINDER-LOOP-002)"),
    guarantees=("same outputs on the virtual device",),
))
def remainder_loop(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@remainder_loop.legality
def _legal(program):
    if program.ast is None or not any(isinstance(e, c_ast.FuncDef) for e in program.ast.ext):
        return [canon.diag(program, NAME, "XP-REMAINDER-LOOP-001", "no function definition")]
    ast, found = _plan(program)
    if not found:
        return [canon.diag(program, NAME, "XP-REMAINDER-LOOP-002", "no do-while over a count "
                           "with a remainder branch")]
    # later loops of a block first, so the indices of earlier ones stay valid
    for fdef, rem in sorted(found, key=lambda fr: (id(fr[1].block), -fr[1].index)):
        taken = set(canon.ids_in(fdef)) | set(_decls_by_name(fdef))
        _rewrite(rem, taken)
    return canon.Rewritten(ast)
