"""fold_branches: branches and conditions on compile-time constants -> the branch taken.

Summary
    In the entry, a condition is *known* when it folds to a constant: integer literals,
    enumerators (not shadowed by a local of the entry), casts of them (a null pointer ``(const unsigned char *) 0`` is 0), ``!``, ``&&`` / ``||`` with
    C's short-circuit rules (``0 && e`` is 0 whatever ``e`` is), comparisons and arithmetic
    on known integers. ``if (c) A else B`` with a known ``c`` becomes ``A`` or ``B`` (as a
    block), ``c ? a : b`` becomes ``a`` or ``b``, and a known ``&&`` / ``||`` operand inside a
    condition is dropped or decides it. The inlined warp-exchange helpers of the GPU lift pass
    null ``done`` / ``part`` pointers (``if (done && done[src])``): folding removes those
    loads through a null pointer, which the access analysis cannot trace.
Requires
    1. The program has an entry function definition (XP-FOLD-001).
    2. At least one branch, conditional expression or short-circuit operand with a known
       value whose unevaluated operand is side-effect free (XP-FOLD-002).
Guarantees
    Same outputs on the virtual device: only code that could not run (or whose value is
    fixed) is removed; the side effects of the kept operands are unchanged.
Options
    none.
Example
    ``if (((const unsigned char *) 0) && ((const unsigned char *) 0)[s]) r = t; else r = s;``
    -> ``{ r = s; }``
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register
from passes.cleanup.unit_loops import const_int

NAME = "fold_branches"
_CMP = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


def known(e, names: dict | None = None) -> int | None:
    """Constant value of a condition / integer expression, else None (``names``: identifiers with
    known values: the enumerators no local shadows)."""
    if e is None:
        return None
    v = const_int(e, names)
    if v is not None:
        return v
    match e:
        case c_ast.Cast(to_type=tt, expr=x) if isinstance(tt.type, c_ast.PtrDecl):
            inner = known(x, names)
            return 0 if inner == 0 else None
        case c_ast.Cast(expr=x) if canon.type_words(getattr(e.to_type, "type", None)) in (
                ["bool"], ["_Bool"]):
            inner = known(x, names)
            return None if inner is None else int(inner != 0)
        case c_ast.UnaryOp(op="!", expr=x):
            inner = known(x, names)
            return None if inner is None else int(inner == 0)
        case c_ast.BinaryOp(op="&&", left=l, right=r):
            a = known(l, names)
            if a == 0:
                return 0
            b = known(r, names)
            if a is not None and b is not None:
                return int(b != 0)
            return None
        case c_ast.BinaryOp(op="||", left=l, right=r):
            a = known(l, names)
            if a is not None and a != 0:
                return 1
            b = known(r, names)
            if a is not None and b is not None:
                return int(b != 0)
            return None
        case c_ast.BinaryOp(op=op, left=l, right=r) if op in _CMP:
            a, b = known(l, names), known(r, names)
            if a is None or b is None:
                return None
            return int(_CMP[op](a, b))
    return None


def enum_values(ast) -> dict[str, int]:
    """Enumerator -> value, for every enum of the file (C's rule: the previous value + 1 when none
    is given); an enumerator whose value is no integer constant expression over earlier ones
    ends its enum's table. Template arguments of enum type become these (``Reducer<float, SUM>``
    -> ``REDUCE == MIN`` is ``0 == MIN``)."""
    out: dict[str, int] = {}
    for node in canon.walk(ast):
        if isinstance(node, c_ast.Enum) and node.values is not None:
            value = -1
            for e in node.values.enumerators:
                given = const_int(e.value, out) if e.value is not None else value + 1
                if given is None:
                    break
                value = out[e.name] = given
    return out


class _Fold:
    def __init__(self, names: dict | None = None):
        self.done = 0
        self.names = names or {}

    def stmt(self, s):
        if isinstance(s, c_ast.If):
            v = known(s.cond, self.names)
            if v is not None and not canon.has_side_effects(s.cond):
                self.done += 1
                taken = s.iftrue if v else s.iffalse
                if taken is None:
                    return c_ast.Compound([])
                return self.stmt(taken if isinstance(taken, c_ast.Compound)
                                 else c_ast.Compound([taken]))
            s.cond = self.expr(s.cond)
            s.iftrue = self.stmt(s.iftrue)
            if s.iffalse is not None:
                s.iffalse = self.stmt(s.iffalse)
            return s
        if isinstance(s, c_ast.Compound):
            s.block_items = [self.stmt(x) for x in (s.block_items or [])]
            return s
        if isinstance(s, (c_ast.For, c_ast.While, c_ast.DoWhile)):
            s.stmt = self.stmt(s.stmt)
            return s
        if isinstance(s, c_ast.Label):
            s.stmt = self.stmt(s.stmt)
            return s
        return self.expr(s)

    def expr(self, e):
        if e is None or not isinstance(e, c_ast.Node):
            return e
        if isinstance(e, c_ast.TernaryOp):
            v = known(e.cond, self.names)
            if v is not None and not canon.has_side_effects(e.cond):
                self.done += 1
                return self.expr(e.iftrue if v else e.iffalse)
        if isinstance(e, c_ast.BinaryOp) and e.op in ("&&", "||"):
            a = known(e.left, self.names)
            if a is not None and not canon.has_side_effects(e.left):
                decided = (a == 0) if e.op == "&&" else (a != 0)
                if decided and not canon.has_side_effects(e.right):
                    self.done += 1
                    return c_ast.Constant("int", "0" if e.op == "&&" else "1")
                if not decided:            # 1 && r == (r != 0); 0 || r == (r != 0)
                    self.done += 1
                    return c_ast.BinaryOp("!=", self.expr(e.right), c_ast.Constant("int", "0"))
        if isinstance(e, c_ast.Decl):
            e.init = self.expr(e.init)
            return e
        return canon.map_children(e, self.expr)


def _run(fdef, enums: dict | None = None) -> int:
    # an enumerator is a constant unless the entry declares a variable or parameter of its name
    local = {n.name for n in canon.walk(fdef) if isinstance(n, c_ast.Decl) and n.name}
    f = _Fold({k: v for k, v in (enums or {}).items() if k not in local})
    fdef.body = f.stmt(fdef.body)
    return f.done


@register(PassInfo(
    name=NAME,
    summary="if / ?: / && / || on compile-time constants (null pointers included) -> the "
            "branch or operand that runs",
    requires=("an entry function definition (XP-FOLD-001)",
              "a branch or operand with a known value (XP-FOLD-002)"),
    guarantees=("same outputs on the virtual device", "side effects of kept operands kept"),
))
def fold_branches(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@fold_branches.legality
def _legal(program):
    """The folding, run on a copy of the AST: the plan the rewrite emits."""
    fdef = canon.entry_def(program.ast, program.entry.name) if program.entry else None
    if fdef is None:
        return [canon.diag(program, NAME, "XP-FOLD-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    if not _run(canon.entry_def(ast, program.entry.name), enum_values(ast)):
        return [canon.diag(program, NAME, "XP-FOLD-002", "no branch, conditional or "
                           "short-circuit operand with a known value")]
    return canon.Rewritten(ast)
