"""array_copies: whole-array copies between local arrays -> one array (copy propagation).

Summary
    A VNNI lift leaves every intrinsic's operands and result as local lane arrays joined by
    copy loops ``for (int m = 0; m < N; ++m) X[m] = Y[m];`` (``r = dst; acc = r;``): on a GPU
    each copy becomes a kernel launch per iteration. In a block of the entry, a copy between
    two local one-dimensional arrays of the same element type is removed when one of the two
    arrays is a temporary of that block:

    - forward (the copy's destination ``X`` is the temporary): ``X`` is declared in the block
      before the copy with ``N`` elements, not referenced between its declaration and the
      copy, and only read after it; ``Y`` is not written from the copy through the last read
      of ``X``. The reads of ``X`` read ``Y``; the copy and ``X`` go.
    - backward (the copy's source ``Y`` is the temporary): ``Y`` is declared in the block
      before the copy with ``N`` elements and not referenced after it; ``X`` is not referenced
      between ``Y``'s declaration and the copy, except by the first statement there that
      references either array, when that statement is a lane-wise loop ``for (j = 0; j < N;
      ++j) Y[j] = E;`` whose ``E`` reads ``X`` only as ``X[j]`` (each iteration reads its own
      element before it writes it). The writes of ``Y`` write ``X``; the copy and ``Y`` go.

    Both arrays must be declared once in the function, without initialiser or storage class,
    and be used only as subscripted elements, ``memcpy``/``memmove``/``memset`` operands or
    in ``sizeof`` (their addresses never escape, so no pointer can read or write them
    unseen); a ``sizeof`` of the replaced array needs equal bounds.
Requires
    1. The program has an entry function definition (XP-ARRCOPY-001).
    2. At least one copy loop between local arrays qualifies (XP-ARRCOPY-002: nothing to do).
Guarantees
    Same outputs on the virtual device: every read sees the value it saw before; fewer arrays
    and loops.
Example
    ``float r[16]; for (m..16) r[m] = d[m]; for (m..16) acc[m] = r[m];`` ->
    ``for (m..16) acc[m] = d[m];`` (forward), then, when ``d`` is a temporary written by
    ``for (j..16) d[j] = fmaf(a[j], b[j], acc[j]);``, ``for (j..16) acc[j] = fmaf(a[j], b[j], acc[j]);``
    (backward).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register
from passes.cleanup.unit_loops import const_int

NAME = "array_copies"
_MEM_CALLS = ("memcpy", "memmove", "memset")


@dataclass
class _Array:
    decl: c_ast.Decl
    words: tuple
    count: int


def _arrays(fdef) -> dict[str, _Array]:
    """Local one-dimensional arrays with a constant bound declared once in ``fdef`` whose
    address never escapes (every use a subscript or a mem* operand)."""
    seen: dict[str, list] = {}
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Decl) and n.name:
            seen.setdefault(n.name, []).append(n)
    params = {p.name for p in (fdef.decl.type.args.params if fdef.decl.type.args else [])
              if getattr(p, "name", None)}
    out = {}
    for name, decls in seen.items():
        if len(decls) != 1 or name in params:
            continue
        d = decls[0]
        t = d.type
        if not isinstance(t, c_ast.ArrayDecl) or not isinstance(t.type, c_ast.TypeDecl) or \
                d.init is not None or d.storage or d.bitsize is not None:
            continue
        count = const_int(t.dim) if t.dim is not None else None
        words = canon.type_words(t.type)
        if count is None or count <= 0 or not words:
            continue
        out[name] = _Array(d, tuple(words), count)
    kinds = _use_kinds(fdef.body, set(out))
    return {n: a for n, a in out.items() if "other" not in kinds.get(n, ())}


def _use_kinds(node, names: set) -> dict[str, list[str]]:
    """name -> kinds of its uses under ``node``: "read" (an element read, a mem* source),
    "write" (an element assigned or incremented, a mem* destination), "size" (``sizeof``)
    or "other"."""
    kind: dict[int, str] = {}

    def base(e):
        return e.name if isinstance(e, c_ast.ArrayRef) and isinstance(e.name, c_ast.ID) and \
            e.name.name in names else None

    for n in canon.walk(node):
        if isinstance(n, c_ast.ArrayRef) and base(n) is not None:
            kind.setdefault(id(n.name), "read")
        elif isinstance(n, c_ast.Assignment) and base(n.lvalue) is not None:
            kind[id(n.lvalue.name)] = "write"
        elif isinstance(n, c_ast.UnaryOp) and n.op == "sizeof" and \
                isinstance(n.expr, c_ast.ID) and n.expr.name in names:
            kind[id(n.expr)] = "size"
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&") and \
                base(n.expr) is not None:
            kind[id(n.expr.name)] = "other" if n.op == "&" else "write"
        elif isinstance(n, c_ast.FuncCall) and canon.call_name(n) in _MEM_CALLS and n.args:
            for k, a in enumerate(n.args.exprs[:2]):
                while isinstance(a, c_ast.Cast):
                    a = a.expr
                if isinstance(a, c_ast.ID) and a.name in names:
                    kind[id(a)] = "write" if k == 0 else (
                        "read" if canon.call_name(n) != "memset" else "other")
    out: dict[str, list[str]] = {}
    for n in canon.walk(node):
        if isinstance(n, c_ast.ID) and n.name in names:
            out.setdefault(n.name, []).append(kind.get(id(n), "other"))
    return out


def _lane_loop(s):
    """(variable, count, destination name, assignment) of ``for (int j = 0; j < N; ++j)
    D[j] = E;`` (one plain assignment), else None."""
    if not isinstance(s, c_ast.For) or not isinstance(s.init, c_ast.DeclList) or \
            len(s.init.decls) != 1:
        return None
    d = s.init.decls[0]
    var = d.name
    if d.init is None or const_int(d.init) != 0:
        return None
    c = s.cond
    if not (isinstance(c, c_ast.BinaryOp) and c.op == "<" and isinstance(c.left, c_ast.ID) and
            c.left.name == var and const_int(c.right) is not None):
        return None
    nxt = s.next
    step = (isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++") and
            isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == var) or \
        (isinstance(nxt, c_ast.Assignment) and nxt.op == "+=" and
         isinstance(nxt.lvalue, c_ast.ID) and nxt.lvalue.name == var and const_int(nxt.rvalue) == 1)
    body = canon.as_items(s.stmt)
    if not step or len(body) != 1:
        return None
    a = body[0]
    if not (isinstance(a, c_ast.Assignment) and a.op == "=" and isinstance(a.lvalue, c_ast.ArrayRef)
            and isinstance(a.lvalue.name, c_ast.ID) and _is_var(a.lvalue.subscript, var)):
        return None
    return var, const_int(c.right), a.lvalue.name.name, a


def _is_var(e, var) -> bool:
    return isinstance(e, c_ast.ID) and e.name == var


def _copy_loop(s):
    """(destination, source, count) of ``for (int m = 0; m < N; ++m) X[m] = Y[m];``."""
    lane = _lane_loop(s)
    if lane is None:
        return None
    var, count, dst, a = lane
    r = a.rvalue
    if isinstance(r, c_ast.ArrayRef) and isinstance(r.name, c_ast.ID) and _is_var(r.subscript, var) \
            and r.name.name != dst:
        return dst, r.name.name, count
    return None


def _refs(stmts, names: set) -> bool:
    return any(canon.ids_in(s) & names for s in stmts)


class _Propagate:
    def __init__(self, arrays: dict[str, _Array]):
        self.arrays, self.done = arrays, 0

    def block(self, items: list) -> list:
        """One copy removed from ``items`` (or a nested block) per call that changes it."""
        for k, s in enumerate(items):
            got = _copy_loop(s)
            if got is None:
                continue
            dst, src, count = got
            a, b = self.arrays.get(dst), self.arrays.get(src)
            if a is None or b is None or a.words != b.words:
                continue
            new = self._forward(items, k, dst, src, count) or \
                self._backward(items, k, dst, src, count)
            if new is not None:
                self.done += 1
                return new
        for s in items:
            for child in _blocks(s):
                before = self.done
                child.block_items = self.block(list(child.block_items or []))
                if self.done > before:
                    return items
        return items

    def _declared_at(self, items, name) -> int | None:
        decl = self.arrays[name].decl
        return next((j for j, s in enumerate(items) if s is decl), None)

    def _forward(self, items, k, x, y, count):
        dx = self._declared_at(items, x)
        if dx is None or dx > k or self.arrays[x].count != count or \
                self.arrays[y].count < count or _refs(items[dx + 1:k], {x}):
            return None
        kinds = _use_kinds(c_ast.Compound(items[k + 1:]), {x, y})
        if any(kd not in ("read", "size") for kd in kinds.get(x, [])) or \
                "size" in kinds.get(x, []) and self.arrays[y].count != count:
            return None
        last = max((j for j in range(k + 1, len(items)) if _refs([items[j]], {x})), default=None)
        if last is not None and "write" in _use_kinds(c_ast.Compound(items[k + 1:last + 1]),
                                                     {y}).get(y, []):
            return None
        rest = [canon.substitute(s, {x: c_ast.ID(y)}) if _refs([s], {x}) else s
                for s in items[k + 1:]]
        return _without(items[:k], {dx, k - 1} if _is_pragma(items, k - 1) else {dx}) + rest

    def _backward(self, items, k, x, y, count):
        dy = self._declared_at(items, y)
        if dy is None or dy > k or self.arrays[y].count != count or \
                self.arrays[x].count < count or _refs(items[k + 1:], {y}):
            return None
        between = items[dy + 1:k]
        if self.arrays[x].count != count and \
                "size" in _use_kinds(c_ast.Compound(between), {y}).get(y, []):
            return None                  # sizeof(y) would become sizeof(x)
        touching = [j for j, s in enumerate(between) if _refs([s], {x, y})]
        with_x = [j for j in touching if _refs([between[j]], {x})]
        if with_x:
            if with_x != touching[:1]:
                return None              # x read after y was written, or by several statements
            lane = _lane_loop(between[with_x[0]])
            if lane is None or lane[1] != count or lane[2] != y or \
                    not _reads_own_lane(lane[3].rvalue, x, lane[0]):
                return None
        renamed = [canon.substitute(s, {y: c_ast.ID(x)}) if _refs([s], {y}) else s
                   for s in between]
        if _is_pragma(items, k - 1) and k - 1 > dy:
            renamed = renamed[:-1]           # the copy loop's own pragma goes with it
        return items[:dy] + renamed + items[k + 1:]


def _is_pragma(items, j) -> bool:
    return 0 <= j < len(items) and isinstance(items[j], c_ast.Pragma)


def _without(items, drop: set) -> list:
    return [s for j, s in enumerate(items) if j not in drop]


def _reads_own_lane(e, name, var) -> bool:
    """Every use of ``name`` in ``e`` is ``name[var]``."""
    own = {id(n.name) for n in canon.walk(e) if isinstance(n, c_ast.ArrayRef) and
           isinstance(n.name, c_ast.ID) and n.name.name == name and _is_var(n.subscript, var)}
    return all(id(n) in own for n in canon.walk(e) if isinstance(n, c_ast.ID) and n.name == name)


def _blocks(s):
    """The compound statements directly under statement ``s``."""
    for _, c in s.children():
        if isinstance(c, c_ast.Compound):
            yield c
        elif isinstance(c, (c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.If, c_ast.Label,
                            c_ast.Switch, c_ast.Case, c_ast.Default)):
            yield from _blocks(c)


def _run(fdef) -> int:
    done = 0
    while True:
        p = _Propagate(_arrays(fdef))
        fdef.body.block_items = p.block(list(fdef.body.block_items or []))
        if not p.done:
            return done
        done += p.done


@register(PassInfo(
    name=NAME,
    summary="whole-array copies between local arrays (a VNNI lift's lane temporaries) -> "
            "one array",
    options={},
    requires=("an entry function definition (XP-ARRCOPY-001)",
              "a copy loop between local arrays whose destination or source is a temporary "
              "of its block (XP-ARRCOPY-002: none, nothing to do)"),
    guarantees=("same outputs on the virtual device", "every read sees the value it saw"),
))
def array_copies(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@array_copies.legality
def _legal(program):
    """The propagation, run on a copy of the AST: the plan the rewrite emits."""
    fdef = canon.entry_def(program.ast, program.entry.name) if program.entry else None
    if fdef is None:
        return [canon.diag(program, NAME, "XP-ARRCOPY-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    if not _run(canon.entry_def(ast, program.entry.name)):
        return [canon.diag(program, NAME, "XP-ARRCOPY-002", "no copy between local arrays "
                           "whose destination or source is a temporary of its block")]
    return canon.Rewritten(ast)
