"""unroll_const: loops whose iteration values are compile-time constants -> unrolled copies.

Summary
    A loop ``for (T v = c0; v OP b; v STEP) body`` with a constant start, a comparison of
    ``v`` with a constant bound and a geometric update ``v >>= k`` / ``v <<= k`` /
    ``v *= k`` / ``v /= k`` by a constant visits a fixed list of values (loops with ``+=`` /
    ``++`` updates are counted by the loop analyses and left alone). When that list has at most ``limit`` entries and the body neither writes
    ``v`` nor contains ``break`` / ``continue`` / ``goto`` / labels / ``return`` bound to
    the loop, the loop becomes one block per value, ``v`` replaced by the constant (converted
    to ``T``). The GPU lift leaves warp reductions as ``for (offset = 16; offset > 0;
    offset >>= 1)``: a loop the access analysis cannot count; unrolled, every exchange step is
    a plain parallel loop over the threads.
Requires
    1. The program has an entry function definition (XP-UNROLL-001).
    2. At least one such loop with at most ``limit`` iterations (XP-UNROLL-002: no loop of the
       form, nothing to do; XP-UNROLL-003: such loops, none unrollable).
Guarantees
    Same outputs on the virtual device: the copies run in the loop's order with the values
    the variable took; the variable is not visible after the loop.
Options
    limit: the most iterations unrolled (default 32).
Example
    ``for (int o = 4; o > 0; o >>= 1) s += t[o];`` -> ``{ s += t[4]; } { s += t[2]; } { s += t[1]; }``
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import Option, PassInfo, register
from passes.cleanup.unit_loops import literal, const_int

NAME = "unroll_const"
_CMP = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b, "!=": lambda a, b: a != b}


def _step(nxt, var):
    """A function value -> next value for a geometric update (``>>=``, ``<<=``, ``*=``,
    ``/=`` by a constant), else None. Arithmetic updates are left to the loop analyses, which
    count them (and keep their parallelism)."""
    if isinstance(nxt, c_ast.Assignment) and isinstance(nxt.lvalue, c_ast.ID) and \
            nxt.lvalue.name == var:
        k = const_int(nxt.rvalue)
        if k is None:
            return None
        ops = {"*=": (lambda v: v * k) if k not in (0, 1, -1) else None,
               "/=": (lambda v: int(v / k)) if k not in (0, 1, -1) else None,
               ">>=": (lambda v: v >> k) if 0 < k < 62 else None,
               "<<=": (lambda v: v << k) if 0 < k < 62 else None}
        return ops.get(nxt.op)
    return None


def _escapes(body) -> bool:
    """break / continue bound to this loop, goto, labels or return in the body."""
    def go(n, inner_loop, inner_switch):
        if isinstance(n, (c_ast.Goto, c_ast.Label, c_ast.Return)):
            return True
        if isinstance(n, c_ast.Continue) and not inner_loop:
            return True
        if isinstance(n, c_ast.Break) and not inner_loop and not inner_switch:
            return True
        loop = inner_loop or isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile))
        sw = inner_switch or isinstance(n, c_ast.Switch)
        return any(go(c, loop, sw) for _, c in n.children())
    return go(body, False, False)


def _linear_step(n, var: str):
    """``v++`` / ``v--`` / ``v += k`` / ``v -= k`` (k a non-zero constant) as a function, else None."""
    if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "p++", "--", "p--") and \
            isinstance(n.expr, c_ast.ID) and n.expr.name == var:
        k = 1 if "++" in n.op else -1
        return lambda x: x + k
    if isinstance(n, c_ast.Assignment) and n.op in ("+=", "-=") and \
            isinstance(n.lvalue, c_ast.ID) and n.lvalue.name == var and \
            const_int(n.rvalue) not in (None, 0):
        k = const_int(n.rvalue) * (1 if n.op == "+=" else -1)
        return lambda x: x + k
    return None


def values(s, limit: int, linear: bool = False,
           why: list | None = None) -> tuple[str, c_ast.Node, list[int]] | None:
    """(variable, declared type, the values it takes) of an unrollable loop, else None: a
    geometric update, or with ``linear`` also ``++`` / ``--`` / ``+= k`` / ``-= k``. A loop of
    that form that cannot be unrolled (its body writes the variable or leaves the loop, or it
    takes more than ``limit`` values) appends ``(reason, loop)`` to ``why``."""
    if not isinstance(s, c_ast.For) or not isinstance(s.init, c_ast.DeclList) or \
            len(s.init.decls) != 1:
        return None
    d = s.init.decls[0]
    if d.init is None or not isinstance(d.type, c_ast.TypeDecl):
        return None
    words = canon.type_words(d.type)
    if not words or not all(w in ("int", "unsigned", "signed", "long", "short") for w in words):
        return None
    var, v = d.name, const_int(d.init)
    c = s.cond
    if v is None or not (isinstance(c, c_ast.BinaryOp) and c.op in _CMP and
                         isinstance(c.left, c_ast.ID) and c.left.name == var):
        return None
    bound, step = const_int(c.right), (linear and _linear_step(s.next, var)) or _step(s.next, var)
    if bound is None or step is None:
        return None
    if var in canon.written_names(s.stmt) or _escapes(s.stmt):
        if why is not None:
            why.append((f"the body of the loop over '{var}' writes it or leaves the loop", s))
        return None
    out = []
    while _CMP[c.op](v, bound):
        out.append(v)
        if len(out) > limit or not -2 ** 31 <= v < 2 ** 31:
            if why is not None:
                why.append((f"the loop over '{var}' takes more than {limit} values", s))
            return None
        v = step(v)
    return var, d.type, out


class _Unroll:
    def __init__(self, limit: int):
        self.limit, self.done = limit, 0
        self.why: list = []                 # (reason, loop) of the loops of the form left alone

    def stmt(self, s):
        got = values(s, self.limit, why=self.why)
        if got is not None:
            var, t, vals = got
            self.done += 1
            copies = [self.stmt(canon.substitute(c_ast.Compound(canon.as_items(s.stmt)),
                                                 {var: literal(t, k)})) for k in vals]
            return c_ast.Compound(copies)
        if isinstance(s, c_ast.Compound):
            s.block_items = [self.stmt(x) for x in (s.block_items or [])]
        elif isinstance(s, (c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.Label)):
            s.stmt = self.stmt(s.stmt)
        elif isinstance(s, c_ast.If):
            s.iftrue = self.stmt(s.iftrue)
            if s.iffalse is not None:
                s.iffalse = self.stmt(s.iffalse)
        return s


def _run(fdef, limit) -> _Unroll:
    u = _Unroll(limit)
    fdef.body = u.stmt(fdef.body)
    return u


@register(PassInfo(
    name=NAME,
    summary="geometric loops over constant values (v >>= 1 warp reductions) -> one copy of "
            "the body per value",
    options={"limit": Option(int, 32, "the most iterations unrolled")},
    requires=("an entry function definition (XP-UNROLL-001)",
              "a loop with constant start, bound and update, at most limit iterations, whose "
              "body does not write the variable or leave the loop (XP-UNROLL-002 none, "
              "XP-UNROLL-003 none unrollable)"),
    guarantees=("same outputs on the virtual device", "copies in iteration order"),
))
def unroll_const(program, *, limit: int = 32, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program, limit=limit))
    return canon.reparse(program, plan.ast)


@unroll_const.legality
def _legal(program, *, limit: int = 32):
    """The unrolling, run on a copy of the AST: the plan the rewrite emits."""
    fdef = canon.entry_def(program.ast, program.entry.name) if program.entry else None
    if fdef is None:
        return [canon.diag(program, NAME, "XP-UNROLL-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    u = _run(canon.entry_def(ast, program.entry.name), limit)
    if not u.done:
        if u.why:       # geometric loops over constants, none unrollable
            reason, loop = u.why[0]
            return [canon.diag(program, NAME, "XP-UNROLL-003", reason, loop)]
        return [canon.diag(program, NAME, "XP-UNROLL-002", "no loop with a constant start, bound "
                           "and geometric update (>>=, <<=, *=, /=)")]
    return canon.Rewritten(ast)
