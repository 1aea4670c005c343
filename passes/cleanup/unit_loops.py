"""unit_loops and flatten_blocks: remove one-trip loops and needless nested blocks.

unit_loops
    Summary
        A counted loop ``for (T v = c; v < c + 1; ++v) body`` (``<=`` with bound ``c``, any
        positive constant step, constant integer bounds after folding casts and arithmetic)
        whose body does not write ``v`` runs its body exactly once with ``v == c``: it becomes
        the block ``{ body[v := (T) c] }``. A ``#pragma omp parallel for collapse(n)`` over
        removed loops moves to the outermost surviving loop of its nest with the surviving
        count (it states that grid iterations are independent, which ``loop_bind`` /
        ``task_bind`` rely on); other ``omp`` pragmas of a removed loop go with it. This removes the extent-1 grid/block dimensions the GPU lift
        emits (``for (xp_bz = 0; xp_bz < 1u; ++xp_bz)``).
    Requires
        1. The program has an entry function definition (XP-UNIT-LOOPS-001).
        2. At least one such loop (XP-UNIT-LOOPS-002: none, nothing to do; XP-UNIT-LOOPS-003:
           one-trip loops whose body writes the variable).
    Guarantees
        Same outputs on the virtual device; the loop variable is not visible after a ``for``,
        so substituting it in the body is exact.

flatten_blocks
    Summary
        A nested block ``{ ... }`` that is an item of another block is spliced into it when
        none of the names it declares appears anywhere else in the enclosing block (no
        shadowing, no clash with later declarations); empty blocks and ``;`` disappear.
        Lifted and inlined code is left as a flat statement list that the loop partitioner
        of ``task_bind`` / ``loop_bind`` sees as top-level loop nests.
    Requires
        1. The program has an entry function definition (XP-FLATTEN-001).
        2. At least one block that can be spliced or an empty statement (XP-FLATTEN-002: no
           nested block, nothing to do; XP-FLATTEN-003: nested blocks whose names would clash).
    Guarantees
        Same outputs on the virtual device (same statements in the same order, same bindings).

Example
    ``for (unsigned z = 0; z < 1u; ++z) { for (...) a[z] = 0; }`` -> ``for (...) a[0u] = 0;``
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

UNIT = "unit_loops"
FLAT = "flatten_blocks"


def const_int(e, names: dict | None = None) -> int | None:
    """Value of an integer constant expression (literals, casts to integer types, + - * / %
    << >> on them; ``names``: identifiers with known values, e.g. enumerators), else None."""
    match e:
        case c_ast.Constant(type=t, value=v) if "int" in t or "long" in t or "char" in t:
            try:
                return int(v.rstrip("uUlL"), 0) if not v.startswith("'") else ord(v[1])
            except ValueError:
                return None
        case c_ast.ID(name=n) if names and n in names:
            return names[n]
        case c_ast.Cast(to_type=tt, expr=x):
            words = canon.type_words(tt.type)
            if isinstance(tt.type, c_ast.TypeDecl) and words and \
                    all(w in canon.INT_CAST_WORDS for w in words):
                return const_int(x, names)
            return None
        case c_ast.UnaryOp(op="-", expr=x):
            a = const_int(x, names)
            return None if a is None else -a
        case c_ast.BinaryOp(op=op, left=l, right=r) if op in ("+", "-", "*", "/", "%", "<<", ">>"):
            a, b = const_int(l, names), const_int(r, names)
            if a is None or b is None:
                return None
            if op in ("/", "%") and (b == 0 or a < 0 or b < 0):
                return None
            if op in ("<<", ">>") and not 0 <= b < 62:
                return None
            return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b,
                    "/": lambda: a // b, "%": lambda: a % b, "<<": lambda: a << b,
                    ">>": lambda: a >> b}[op]()
    return None


def _unit_loop(s, why: list | None = None) -> tuple[str, c_ast.Node, int] | None:
    """(variable, declared type, start) of a one-trip counted loop, else None (a one-trip loop
    whose body writes its variable appends ``(reason, loop)`` to ``why``)."""
    if not isinstance(s, c_ast.For) or not isinstance(s.init, c_ast.DeclList) or \
            len(s.init.decls) != 1:
        return None
    d = s.init.decls[0]
    if d.init is None or not isinstance(d.type, c_ast.TypeDecl):
        return None
    var, lo = d.name, const_int(d.init)
    if lo is None or lo < 0:
        return None
    c = s.cond
    if not (isinstance(c, c_ast.BinaryOp) and c.op in ("<", "<=") and
            isinstance(c.left, c_ast.ID) and c.left.name == var):
        return None
    hi = const_int(c.right)
    if hi is None:
        return None
    trips_one = (lo < hi <= lo + 1) if c.op == "<" else (hi == lo)
    nxt = s.next
    step_ok = (isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++") and
               isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == var) or \
        (isinstance(nxt, c_ast.Assignment) and nxt.op == "+=" and
         isinstance(nxt.lvalue, c_ast.ID) and nxt.lvalue.name == var and
         (const_int(nxt.rvalue) or 0) > 0)
    if not trips_one or not step_ok:
        return None
    if var in canon.written_names(s.stmt):
        if why is not None:
            why.append((f"the body of the one-trip loop over '{var}' writes '{var}'", s))
        return None
    return var, d.type, lo


def literal(t, value: int):
    words = canon.type_words(t)
    w = " ".join(words)
    if w in ("int", "signed", "signed int"):
        return c_ast.Constant("int", str(value))
    if w in ("unsigned", "unsigned int"):
        return c_ast.Constant("unsigned int", f"{value}u")
    tt = copy.deepcopy(t)
    tt.declname = None
    tt.quals = []
    return c_ast.Cast(c_ast.Typename(None, [], None, tt), c_ast.Constant("int", str(value)))


class _Units:
    def __init__(self):
        self.removed = 0
        self.why: list = []                 # (reason, loop) of one-trip loops left alone

    def items(self, items) -> list:
        # an ``omp`` pragma that introduces a removed loop (``omp simd`` on a one-thread
        # loop) would be left without its loop: it goes with the loop
        return [self.stmt(s) for k, s in enumerate(items)
                if not (_is_omp(s) and k + 1 < len(items) and _unit_loop(items[k + 1]))]

    def stmt(self, s):
        got = _unit_loop(s, self.why)
        if got is not None:
            var, t, lo = got
            body = canon.substitute(s.stmt, {var: literal(t, lo)})
            self.removed += 1
            return self.stmt(body if isinstance(body, c_ast.Compound) else c_ast.Compound([body]))
        if isinstance(s, c_ast.Compound):
            s.block_items = self.items(list(s.block_items or []))
        elif isinstance(s, (c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.Label)):
            s.stmt = self.stmt(s.stmt)
        elif isinstance(s, c_ast.If):
            s.iftrue = self.stmt(s.iftrue)
            if s.iffalse is not None:
                s.iffalse = self.stmt(s.iffalse)
        return s


_PARALLEL_FOR = re.compile(r"\s*omp\s+parallel\s+for\b")
_COLLAPSE = re.compile(r"\s*\bcollapse\s*\(\s*(\d+)\s*\)")


def _is_omp(s) -> bool:
    return isinstance(s, c_ast.Pragma) and s.string.strip().startswith("omp")


def _only_loop(stmt):
    if isinstance(stmt, c_ast.Compound) and len(stmt.block_items or []) == 1:
        stmt = stmt.block_items[0]
    return stmt if isinstance(stmt, c_ast.For) else None


def _retarget_parallel_for(node) -> None:
    """Keep each ``#pragma omp parallel for [collapse(n)]`` on the loops it covers that
    survive: the collapsed nest minus its one-trip loops gets the pragma with the remaining
    count, placed before its outermost surviving loop (dropped when none survives). The GPU
    lift states with it that grid iterations are independent, which ``loop_bind`` and
    ``task_bind`` use when the dependence test cannot prove it (indirect subscripts)."""
    for n in list(canon.walk(node)):
        if not isinstance(n, c_ast.Compound) or not n.block_items:
            continue
        items = n.block_items
        for k in range(len(items) - 2, -1, -1):
            p, loop = items[k], items[k + 1]
            if not (isinstance(p, c_ast.Pragma) and _PARALLEL_FOR.match(p.string)) or \
                    not isinstance(loop, c_ast.For):
                continue
            m = _COLLAPSE.search(p.string)
            depth = int(m.group(1)) if m else 1
            chain, parents = [], []
            parent = None
            while loop is not None and len(chain) < depth:
                chain.append(loop)
                parents.append(parent)
                parent, loop = loop, _only_loop(loop.stmt)
            keep = [j for j, lp in enumerate(chain) if _unit_loop(lp) is None]
            if len(keep) == len(chain):
                continue
            del items[k]
            if not keep:
                continue
            text = _COLLAPSE.sub("", p.string)
            if len(keep) > 1:
                text = re.sub(r"(\bfor\b)", rf"\1 collapse({len(keep)})", text, count=1)
            pragma = c_ast.Pragma(text, p.coord)
            first, up = chain[keep[0]], parents[keep[0]]
            if up is None:
                items.insert(k, pragma)
            elif isinstance(up.stmt, c_ast.Compound):
                up.stmt.block_items = [pragma, first]
            else:
                up.stmt = c_ast.Compound([pragma, first])


def _names(items) -> set[str]:
    out = set()
    for s in items:
        for n in canon.walk(s):
            if isinstance(n, c_ast.ID):
                out.add(n.name)
            elif isinstance(n, c_ast.Decl) and n.name:
                out.add(n.name)
    return out


class _Count:
    changed = 0
    clash = None            # the first nested block left because its names would clash


def _flatten_all(body) -> _Count:
    """Splice blocks everywhere (innermost first)."""
    f = _Count()

    def go(n):
        for _, c in n.children():
            go(c)
        if isinstance(n, c_ast.Compound):
            _splice(n, f)

    go(body)
    return f


def _splice(comp, f) -> None:
    items = list(comp.block_items or [])
    out = []
    for k, s in enumerate(items):
        if isinstance(s, c_ast.EmptyStatement):
            f.changed += 1
            continue
        if isinstance(s, c_ast.Compound) and not (out and isinstance(out[-1], c_ast.Pragma)):
            inner = [x for x in (s.block_items or []) if not isinstance(x, c_ast.EmptyStatement)]
            mine = {x.name for x in inner if isinstance(x, c_ast.Decl) and x.name}
            if not (mine & (_names(out) | _names(items[k + 1:]))):
                out.extend(inner)
                f.changed += 1
                continue
            f.clash = f.clash or (sorted(mine & (_names(out) | _names(items[k + 1:])))[0], s)
        out.append(s)
    comp.block_items = out


def _emit(program, ast):

    return canon.reparse(program, ast)


def _fdef(program):
    return canon.entry_def(program.ast, program.entry.name) if program.entry else None


def _run_units(fdef) -> _Units:
    _retarget_parallel_for(fdef.body)
    u = _Units()
    fdef.body = u.stmt(fdef.body)
    return u


@register(PassInfo(
    name=UNIT,
    summary="one-trip counted loops -> their body with the loop variable substituted",
    requires=("an entry function definition (XP-UNIT-LOOPS-001)",
              "a counted loop with constant bounds running exactly once whose body does not "
              "write its variable (XP-UNIT-LOOPS-002 none, XP-UNIT-LOOPS-003 body writes it)"),
    guarantees=("same outputs on the virtual device", "omp parallel for pragmas cover the "
                "surviving loops of their nest"),
))
def unit_loops(program, *, plan=None):
    plan = canon.plan_or_refuse(UNIT, plan if plan is not None else _unit_legal(program))
    return _emit(program, plan.ast)


@unit_loops.legality
def _unit_legal(program):
    """The folding, run on a copy of the AST: the plan the rewrite emits."""
    if _fdef(program) is None:
        return [canon.diag(program, UNIT, "XP-UNIT-LOOPS-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    u = _run_units(canon.entry_def(ast, program.entry.name))
    if not u.removed:
        if u.why:       # one-trip loops, none of which can be folded
            reason, loop = u.why[0]
            return [canon.diag(program, UNIT, "XP-UNIT-LOOPS-003", reason, loop)]
        return [canon.diag(program, UNIT, "XP-UNIT-LOOPS-002", "no counted loop with constant "
                           "bounds that runs exactly once")]
    return canon.Rewritten(ast)


@register(PassInfo(
    name=FLAT,
    summary="splice nested blocks into their enclosing block when no declared name clashes; "
            "drop empty statements",
    requires=("an entry function definition (XP-FLATTEN-001)",
              "a nested block that can be spliced or an empty statement (XP-FLATTEN-002 none, "
              "XP-FLATTEN-003 names would clash)"),
    guarantees=("same outputs on the virtual device", "same statements in the same order"),
))
def flatten_blocks(program, *, plan=None):
    plan = canon.plan_or_refuse(FLAT, plan if plan is not None else _flat_legal(program))
    return _emit(program, plan.ast)


@flatten_blocks.legality
def _flat_legal(program):
    """The flattening, run on a copy of the AST: the plan the rewrite emits."""
    if _fdef(program) is None:
        return [canon.diag(program, FLAT, "XP-FLATTEN-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    f = _flatten_all(canon.entry_def(ast, program.entry.name).body)
    if not f.changed:
        if f.clash:     # nested blocks, none of which can be spliced
            name, block = f.clash
            return [canon.diag(program, FLAT, "XP-FLATTEN-003", f"a nested block declares '{name}', "
                               "which its enclosing block also declares: splicing it would rebind "
                               "the name", block)]
        return [canon.diag(program, FLAT, "XP-FLATTEN-002", "no nested block to splice and no "
                           "empty statement")]
    return canon.Rewritten(ast)
