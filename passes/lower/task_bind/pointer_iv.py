"""Pointer induction variables of the entry -> the pointer at a closed-form offset.

``T *p = P0;`` followed by a nest of counted loops whose innermost body uses ``p`` and ends
with ``p += s;`` (mmcv's im2col: ``*data_col_ptr = ..; data_col_ptr += mask_cnt;`` in a
``kernel_h x kernel_w`` nest) walks ``p`` by ``s`` elements per innermost iteration. The access
analysis traces a load or store to a buffer and an index only through pointers that do not
change; here each use of ``p`` reads ``p + n * s`` where ``n`` is the number of innermost
iterations run before, a mixed-radix number of the loop counters, and the increment goes.

Conditions (else the program is left as it is): ``p`` is a local pointer declared with an
initialiser; the only statement after its declaration in its block that names it is a
``for`` loop ``L1``; ``L1 .. Lk`` are counted loops ``for (I v = a; v < E; ++v)`` (``v++``,
``v += 1``), each ``L(i+1)`` a statement of ``Li``'s body, with ``a`` and ``E`` free of side
effects and of names written in ``L1``, ``v`` not written in its body; the one change of
``p`` is ``p += s`` / ``p -= s`` / ``p++`` / ``++p`` / ``p--`` / ``--p`` / ``p = p + s`` /
``p = p - s`` as the last statement of ``Lk``'s body (``s`` free of side effects and of names
written in ``L1``); every other use of ``p`` is inside ``Lk``'s body and reads it (no address
taken, no redeclaration); no ``goto``, label or ``return`` in ``L1`` and no ``break`` /
``continue`` of ``L1 .. Lk``.

Then, in an iteration of ``Lk``, every ``Lj`` (j > 1) on the way has run its full trip count
``Ej - aj`` (> 0, or that iteration would not run) in each earlier iteration of ``L(j-1)``, so
the increments before it number ``((v1 - a1) * (E2 - a2) + (v2 - a2)) * (E3 - a3) + ...``: the
same addresses as the source, computed without the running pointer.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon

_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


def _counted(loop):
    """(var, start, bound) of ``for (I v = a; v < E; ++v)``, else None."""
    if not isinstance(loop, c_ast.For) or not isinstance(loop.init, c_ast.DeclList) or \
            len(loop.init.decls) != 1:
        return None
    d = loop.init.decls[0]
    if d.init is None or not isinstance(d.type, c_ast.TypeDecl):
        return None
    v = d.name
    c = loop.cond
    if not (isinstance(c, c_ast.BinaryOp) and c.op == "<" and isinstance(c.left, c_ast.ID)
            and c.left.name == v):
        return None
    n = loop.next
    ok = (isinstance(n, c_ast.UnaryOp) and n.op in ("++", "p++") and isinstance(n.expr, c_ast.ID)
          and n.expr.name == v) or \
         (isinstance(n, c_ast.Assignment) and n.op == "+=" and isinstance(n.lvalue, c_ast.ID)
          and n.lvalue.name == v and isinstance(n.rvalue, c_ast.Constant) and n.rvalue.value == "1")
    if not ok or v in canon.written_names(loop.stmt):
        return None
    return v, d.init, c.right


def _step(s, p: str):
    """('+' or '-', amount) when statement ``s`` moves ``p`` by a step, else None."""
    one = c_ast.Constant("int", "1")
    if isinstance(s, c_ast.UnaryOp) and isinstance(s.expr, c_ast.ID) and s.expr.name == p:
        if s.op in ("++", "p++"):
            return "+", one
        if s.op in ("--", "p--"):
            return "-", one
    if isinstance(s, c_ast.Assignment) and isinstance(s.lvalue, c_ast.ID) and s.lvalue.name == p:
        if s.op in ("+=", "-="):
            return s.op[0], s.rvalue
        r = s.rvalue
        if s.op == "=" and isinstance(r, c_ast.BinaryOp) and r.op in ("+", "-") and \
                isinstance(r.left, c_ast.ID) and r.left.name == p:
            return r.op, r.right
    return None


def _jumps_ok(root, chain: list) -> bool:
    """No goto / label / return under ``root``; no break / continue whose loop (or switch) is
    one of ``chain``."""
    ids = {id(x) for x in chain}

    def go(n, owner) -> bool:
        if isinstance(n, (c_ast.Goto, c_ast.Label, c_ast.Return)):
            return False
        if isinstance(n, (c_ast.Break, c_ast.Continue)) and id(owner) in ids:
            return False
        inner = n if isinstance(n, _LOOPS + (c_ast.Switch,)) else owner
        return all(go(c, inner) for _, c in n.children())

    return go(root, None)


def _rewrite(block: c_ast.Compound, k: int) -> bool:
    items = block.block_items
    decl = items[k]
    p = decl.name
    users = [j for j in range(k + 1, len(items)) if p in canon.ids_in(items[j])]
    if len(users) != 1 or not isinstance(items[users[0]], c_ast.For):
        return False
    top = items[users[0]]
    chain, cur = [], top
    while True:
        c = _counted(cur)
        if c is None:
            return False
        chain.append((cur, c))
        body = canon.as_items(cur.stmt)
        inner = [s for s in body if isinstance(s, c_ast.For) and p in canon.ids_in(s)]
        if not isinstance(cur.stmt, c_ast.Compound) or not body:
            return False
        last = body[-1]
        if _step(last, p) is not None:
            break
        if len(inner) != 1:
            return False
        cur = inner[0]
    innermost = chain[-1][0]
    body = innermost.stmt.block_items
    sign, amount = _step(body[-1], p)
    written = canon.written_names(top)
    for e in [amount] + [x for _, (_, a, b) in chain for x in (a, b)]:
        if canon.has_side_effects(e) or canon.ids_in(e) & written:
            return False
    # every use of p but the step: inside the innermost body, read only
    inside = {id(n) for s in body[:-1] for n in canon.walk(s)}
    for n in canon.walk(top):
        if isinstance(n, c_ast.ID) and n.name == p and id(n) not in inside and \
                not any(n is m for m in canon.walk(body[-1])):
            return False
        if isinstance(n, c_ast.Decl) and n.name == p:
            return False
    if p in set().union(*[canon.written_names(s) for s in body[:-1]] or [set()]):
        return False
    if not _jumps_ok(top, [lp for lp, _ in chain]):
        return False
    # the number of innermost iterations before this one: a mixed-radix number of the counters
    # (in long long: the running pointer never formed the product in int)
    def wide(e):
        return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
            None, [], None, c_ast.IdentifierType(["long", "long"]))), e)

    count = None
    for lp, (v, a, b) in chain:
        pos = wide(c_ast.BinaryOp("-", c_ast.ID(v), copy.deepcopy(a)))
        if count is None:
            count = pos
        else:
            trip = wide(c_ast.BinaryOp("-", copy.deepcopy(b), copy.deepcopy(a)))
            count = c_ast.BinaryOp("+", c_ast.BinaryOp("*", count, trip), pos)
    at = c_ast.BinaryOp(sign, c_ast.ID(p), c_ast.BinaryOp("*", count, wide(copy.deepcopy(amount))))
    del body[-1]
    for s in body:
        canon.replace_nodes(s, lambda n: copy.deepcopy(at) if isinstance(n, c_ast.ID)
                            and n.name == p else None)
    for i, s in enumerate(body):                      # a statement that is the bare name
        if isinstance(s, c_ast.ID) and s.name == p:
            body[i] = copy.deepcopy(at)
    return True


def rewrite(fdef: c_ast.FuncDef) -> int:
    """Rewrite every qualifying pointer induction variable of ``fdef`` in place; the count."""
    done = 0
    for node in list(canon.walk(fdef.body)):
        if not isinstance(node, c_ast.Compound) or not node.block_items:
            continue
        for k, s in enumerate(list(node.block_items)):
            if isinstance(s, c_ast.Decl) and isinstance(s.type, c_ast.PtrDecl) and s.name and \
                    s.init is not None and not isinstance(s.init, c_ast.InitList):
                done += bool(_rewrite(node, k))
    return done
