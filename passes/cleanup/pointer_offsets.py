"""pointer_offsets: a pointer parameter the entry advances (``a += 16``) -> the parameter plus an
integer offset (``a[__xp_off_a + i]``).

Summary
    Hand-written kernels walk their inputs by advancing the pointer parameters themselves
    (``a_scalars += 16, b_scalars += 16, n -= 16;`` in simsimd; ``A += BK;`` in tiled GEMMs).
    The access analyses trace a load to a parameter and an index; a pointer that changes on the
    way cannot be traced (``load through a pointer the analysis cannot trace``). For each
    pointer parameter ``p`` of the entry whose every change is ``p += e``, ``p -= e``,
    ``p = p + e``, ``p = p - e``, ``++p``/``p++``/``--p``/``p--`` as a statement (or a
    comma-operand of one), and whose address is not taken, the entry gets
    ``long long __xp_off_p = 0;``, every change moves the offset instead, and every other use of
    ``p`` reads ``p`` at the offset: ``p[i]`` -> ``p[__xp_off_p + i]``, ``*p`` ->
    ``p[__xp_off_p]``, ``p`` -> ``(p + __xp_off_p)``.
    The GPU lift keeps such a pointer once per simulated thread when it lives across a barrier
    (ggml norm: ``x[tid] = x_param; x[tid] += row * stride;``): a local array of pointers whose
    elements are only set to one unchanging pointer ``b``, stepped, indexed or read becomes an
    array of offsets, ``x[t][j]`` -> ``b[__xp_off_x[t] + j]`` (``pointer_arrays``).
Requires
    1. The program has an entry function definition (XP-POINTER-OFFSETS-001).
    2. At least one pointer parameter changed only that way, or one such array of pointers
       (XP-POINTER-OFFSETS-002).
Guarantees
    Same outputs on the virtual device: every use reads the address the advanced pointer held.
Options
    none.
"""
from __future__ import annotations

import copy

from pycparser import c_ast, c_generator

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "pointer_offsets"
_STEP_OPS = {"+=": "+=", "-=": "-="}
_INCREMENTS = {"++": "+=", "p++": "+=", "--": "-=", "p--": "-="}
_GEN = c_generator.CGenerator()


def _offset_name(p: str) -> str:
    return f"__xp_off_{p}"


def _change(node, p: str):
    """(op, amount) when ``node`` changes ``p`` by a step, else None."""
    if isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID) and node.lvalue.name == p:
        if node.op in _STEP_OPS:
            return _STEP_OPS[node.op], node.rvalue
        r = node.rvalue
        if node.op == "=" and isinstance(r, c_ast.BinaryOp) and r.op in ("+", "-") and \
                isinstance(r.left, c_ast.ID) and r.left.name == p:
            return ("+=" if r.op == "+" else "-="), r.right
    if isinstance(node, c_ast.UnaryOp) and node.op in _INCREMENTS and \
            isinstance(node.expr, c_ast.ID) and node.expr.name == p:
        return _INCREMENTS[node.op], c_ast.Constant("int", "1")
    return None


def _statement_level(node, parents: dict) -> bool:
    """``node``'s value is unused: a statement, a For's next, or a comma operand of one."""
    parent = parents.get(id(node))
    while isinstance(parent, c_ast.ExprList) and not isinstance(parents.get(id(parent)), c_ast.FuncCall):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, c_ast.Compound):
        return True
    if isinstance(parent, c_ast.For) and parent.next is node:
        return True
    if isinstance(parent, (c_ast.If, c_ast.While, c_ast.DoWhile, c_ast.For)) and \
            node in (getattr(parent, "iftrue", None), getattr(parent, "iffalse", None),
                     getattr(parent, "stmt", None)):
        return True
    return False


def _parents(root) -> dict:
    out = {}
    for n in canon.walk(root):
        for _, c in n.children():
            out[id(c)] = n
    return out


def _pointers(fdef) -> list[tuple[str, c_ast.Compound | None, c_ast.Decl | None]]:
    """(name, block, declaration) of the entry's pointer parameters (block None) and of its
    pointer locals declared once with an initialiser (e.g. an inlined helper's parameters)."""
    decls = [n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Decl) and n.name]
    count: dict[str, int] = {}
    for d in decls:
        count[d.name] = count.get(d.name, 0) + 1
    out = [(p.name, None, None) for p in (fdef.decl.type.args.params if fdef.decl.type.args else [])
           if isinstance(p, c_ast.Decl) and p.name and isinstance(p.type, c_ast.PtrDecl)
           and p.name not in count]
    for block in (n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Compound)):
        for d in block.block_items or []:
            if isinstance(d, c_ast.Decl) and d.name and isinstance(d.type, c_ast.PtrDecl) and \
                    d.init is not None and count.get(d.name) == 1:
                out.append((d.name, block, d))
    return out


def movable(fdef) -> list[tuple[str, c_ast.Compound | None, c_ast.Decl | None]]:
    """The entry's pointers that only ever advance by steps (the check's plan)."""
    parents = _parents(fdef.body)
    declared = {n.name for n in canon.walk(fdef.body) if isinstance(n, c_ast.Decl) and n.name}
    out = []
    for name, block, decl in _pointers(fdef):
        if _offset_name(name) in declared:
            continue
        changes, ok = 0, True
        for n in canon.walk(fdef.body):
            step = _change(n, name)
            if step is not None:
                if not _statement_level(n, parents):
                    ok = False
                    break
                changes += 1
            elif isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID) and n.lvalue.name == name:
                ok = False                  # p = something else
                break
            elif isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID) and \
                    n.expr.name == name:
                ok = False                  # its address escapes
                break
        if ok and changes:
            out.append((name, block, decl))
    return out


_EXPRESSION_STATEMENTS = (c_ast.Assignment, c_ast.FuncCall, c_ast.UnaryOp, c_ast.BinaryOp,
                          c_ast.Cast)


def split_increments(fdef, names: set[str]) -> bool:
    """In place: an expression statement that steps pointers of ``names`` inside it, each
    named once in the statement (``*d++ += *s++;``), becomes the statement reading them
    unstepped followed by their steps (``*d += *s; d += 1; s += 1;``; a pre-increment's step
    goes before). Each pointer is read once, so where in the statement it is stepped does not
    matter. True when something changed."""
    changed = False

    def split(stmt):
        if not isinstance(stmt, _EXPRESSION_STATEMENTS):
            return None
        if isinstance(stmt, c_ast.UnaryOp) and stmt.op in _INCREMENTS:
            return None                                   # already a step statement
        uses: dict[str, int] = {}
        for n in canon.walk(stmt):
            if isinstance(n, c_ast.ID) and n.name in names:
                uses[n.name] = uses.get(n.name, 0) + 1
        before, after, steps = [], [], {}
        for n in canon.walk(stmt):
            if isinstance(n, c_ast.UnaryOp) and n.op in _INCREMENTS and \
                    isinstance(n.expr, c_ast.ID) and n.expr.name in names and \
                    uses.get(n.expr.name) == 1:
                step = c_ast.Assignment(_INCREMENTS[n.op], c_ast.ID(n.expr.name),
                                        c_ast.Constant("int", "1"))
                (after if n.op.startswith("p") else before).append(step)
                steps[id(n)] = n.expr
        if not steps:
            return None
        new = canon.replace_nodes(c_ast.ExprList([stmt]),
                                  lambda n: copy.deepcopy(steps[id(n)]) if id(n) in steps else None)
        return before + new.exprs + after

    def visit(node):
        nonlocal changed
        for n in list(canon.walk(node)):
            if isinstance(n, c_ast.Compound):
                items = []
                for it in n.block_items or []:
                    parts = split(it)
                    changed |= parts is not None
                    items += parts if parts is not None else [it]
                n.block_items = items
            for attr in ("stmt", "iftrue", "iffalse"):
                child = getattr(n, attr, None) if isinstance(
                    n, (c_ast.While, c_ast.DoWhile, c_ast.For, c_ast.If)) else None
                parts = split(child) if child is not None else None
                if parts is not None:
                    setattr(n, attr, c_ast.Compound(parts, child.coord))
                    changed = True

    visit(fdef.body)
    return changed


_RELATIONAL = frozenset({"<", "<=", ">", ">=", "==", "!="})


def derived(fdef, pointers) -> list[tuple[str, str, str, c_ast.Node, c_ast.Compound, c_ast.Decl]]:
    """(q, p, op, Y, block, declaration) of pointer locals ``T *q = p + Y;`` (or ``p - Y``,
    ``p``) of a movable pointer ``p``, declared once and never changed nor escaping: ``q`` is
    ``p`` at a fixed offset (an end pointer, ``pEnd = p + n``)."""
    movable_names = {name for name, _, _ in pointers}
    declared: dict[str, int] = {}
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Decl) and n.name:
            declared[n.name] = declared.get(n.name, 0) + 1
    out = []
    for block in (n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Compound)):
        for d in block.block_items or []:
            if not (isinstance(d, c_ast.Decl) and d.name and isinstance(d.type, c_ast.PtrDecl) and
                    d.init is not None and declared.get(d.name) == 1 and d.name not in movable_names):
                continue
            init = d.init
            if isinstance(init, c_ast.ID) and init.name in movable_names:
                base, op, amount = init.name, "+", c_ast.Constant("int", "0")
            elif isinstance(init, c_ast.BinaryOp) and init.op in ("+", "-") and \
                    isinstance(init.left, c_ast.ID) and init.left.name in movable_names:
                base, op, amount = init.left.name, init.op, init.right
            else:
                continue
            if any(isinstance(x, c_ast.ID) and x.name == base for x in canon.walk(amount)):
                continue
            if any(_change(n, d.name) is not None or
                   (isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID) and n.lvalue.name == d.name) or
                   (isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID) and
                    n.expr.name == d.name)
                   for n in canon.walk(fdef.body)):
                continue
            out.append((d.name, base, op, amount, block, d))
    return out


def _same_base_comparisons(fdef, bases: set[str]) -> None:
    """``(p + X) < (p + Y)`` -> ``X < Y`` for a pointer ``p`` that never changes (the offsets
    of one object compare as the addresses do)."""
    def offset_of(e):
        if isinstance(e, c_ast.BinaryOp) and e.op == "+" and isinstance(e.left, c_ast.ID) and \
                e.left.name in bases:
            return e.left.name, e.right
        return None

    def replacement(n):
        if isinstance(n, c_ast.BinaryOp) and n.op in _RELATIONAL:
            a, b = offset_of(n.left), offset_of(n.right)
            if a is not None and b is not None and a[0] == b[0]:
                return c_ast.BinaryOp(n.op, a[1], b[1], n.coord)
        return None

    canon.replace_nodes(fdef.body, replacement, skip={c_ast.StructRef: ("field",)})


def _at_offset(name: str, base: str, off: str, decl, steps: bool):
    """The node replacement that reads pointer ``name`` as ``base`` at the integer offset
    ``off``: ``name[i]`` -> ``base[off + i]``, ``*name`` -> ``base[off]``, ``name`` -> ``(base +
    off)``; with ``steps``, a step of ``name`` moves ``off`` instead. ``decl`` (the pointer's
    own declaration) is left to the caller."""
    def replacement(n):
        step = _change(n, name) if steps else None
        if step is not None:
            return c_ast.Assignment(step[0], c_ast.ID(off), step[1])
        if n is decl:
            return None
        if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and n.name.name == name:
            n.subscript = canon.replace_nodes(c_ast.ExprList([n.subscript]), replacement).exprs[0]
            return c_ast.ArrayRef(c_ast.ID(base), c_ast.BinaryOp("+", c_ast.ID(off), n.subscript))
        if isinstance(n, c_ast.UnaryOp) and n.op == "*" and isinstance(n.expr, c_ast.ID) and n.expr.name == name:
            return c_ast.ArrayRef(c_ast.ID(base), c_ast.ID(off))
        if isinstance(n, c_ast.ID) and n.name == name:
            return c_ast.BinaryOp("+", c_ast.ID(base), c_ast.ID(off))
        return None
    return replacement


def _rewrite(fdef, pointers) -> None:
    ends = derived(fdef, pointers)
    for p, block, decl in pointers:
        off = _offset_name(p)

        replacement = _at_offset(p, p, off, decl, steps=True)
        canon.replace_nodes(fdef.body, replacement, skip={c_ast.StructRef: ("field",)})
        (offset,) = canon.parse_stmts(f"long long {off} = 0;")
        if block is None:
            fdef.body.block_items = [offset] + list(fdef.body.block_items or [])
        else:
            items = list(block.block_items)
            at = next(k for k, x in enumerate(items) if x is decl)
            block.block_items = items[:at + 1] + [offset] + items[at + 1:]
    # end pointers q = p + Y: p at their own (fixed) offset, declared where q was
    for q, p, op, amount, block, decl in ends:
        off = _offset_name(q)

        end_replacement = _at_offset(q, p, off, decl, steps=False)
        canon.replace_nodes(fdef.body, end_replacement, skip={c_ast.StructRef: ("field",)})
        (offset,) = canon.parse_stmts(f"long long {off} = 0;")
        offset.init = c_ast.BinaryOp(op, c_ast.ID(_offset_name(p)), copy.deepcopy(amount))
        items = list(block.block_items)
        at = next(k for k, x in enumerate(items) if x is decl)
        block.block_items = items[:at] + [offset] + items[at + 1:]
    if ends:
        _same_base_comparisons(fdef, {p for _, p, *_ in ends})


def _array_store(node, a: str):
    """(subscript, op, value) of a statement-level change of an element of array ``a``:
    ``a[s] = v`` ("="), ``a[s] += e`` / ``a[s] -= e`` / ``a[s] = a[s] + e`` ("+=" / "-=")."""
    if not (isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ArrayRef)
            and isinstance(node.lvalue.name, c_ast.ID) and node.lvalue.name.name == a):
        return None
    sub, r = node.lvalue.subscript, node.rvalue
    if node.op in _STEP_OPS:
        return sub, node.op, r
    if node.op == "=" and isinstance(r, c_ast.BinaryOp) and r.op in ("+", "-") and \
            isinstance(r.left, c_ast.ArrayRef) and isinstance(r.left.name, c_ast.ID) and \
            r.left.name.name == a and _GEN.visit(r.left.subscript) == _GEN.visit(sub):
        return sub, ("+=" if r.op == "+" else "-="), r.right
    if node.op == "=":
        return sub, "=", r
    return None


def _pointee(t) -> list[str] | None:
    """The type words a pointer type points to, qualifiers aside (None: not a plain pointer)."""
    if not isinstance(t, c_ast.PtrDecl) or not isinstance(t.type, c_ast.TypeDecl):
        return None
    return [w for w in canon.type_words(t.type) if w not in ("const", "volatile")]


def pointer_arrays(fdef) -> list[tuple[str, str, c_ast.Decl]]:
    """(array, base, declaration) of the per-thread pointer arrays of the lifted GPU code: a local
    array of pointers ``const float *x[N]`` (a kernel's pointer parameter the kernel advances,
    ``x += row * stride``, one copy per simulated thread) whose elements are only set to one
    pointer ``base`` that never changes (a parameter or a pointer local declared once), stepped
    (``x[t] += e``), indexed (``x[t][j]``, ``*x[t]``) or read; never address-taken nor passed
    whole. Each element is then ``base`` at a per-element offset."""
    parents = _parents(fdef.body)
    decls = [n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Decl) and n.name]
    count: dict[str, int] = {}
    for d in decls:
        count[d.name] = count.get(d.name, 0) + 1
    params = {p.name: p for p in (fdef.decl.type.args.params if fdef.decl.type.args else [])
              if isinstance(p, c_ast.Decl) and p.name}
    written = canon.written_names(fdef.body)
    stable = {n: p.type for n, p in params.items() if n not in count and n not in written}
    stable.update({d.name: d.type for d in decls if count[d.name] == 1 and d.name not in params
                   and isinstance(d.type, c_ast.PtrDecl) and d.init is not None and d.name not in written})
    out = []
    for d in decls:
        if count[d.name] != 1 or d.init is not None or not isinstance(d.type, c_ast.ArrayDecl) \
                or _offset_name(d.name) in count:
            continue
        elem = _pointee(d.type.type)
        if elem is None:
            continue
        base, ok = None, True
        for n in canon.walk(fdef.body):
            if isinstance(n, c_ast.ID) and n.name == d.name:
                ref = parents.get(id(n))
                if not (isinstance(ref, c_ast.ArrayRef) and ref.name is n):
                    ok = False                         # the array itself escapes
                    break
                up = parents.get(id(ref))
                if isinstance(up, c_ast.Assignment) and up.lvalue is ref:
                    change = _array_store(up, d.name)
                    if change is None or not _statement_level(up, parents):
                        ok = False
                        break
                    if change[1] == "=":
                        value = change[2]
                        # casts that keep the element type (const added or dropped), or whose
                        # type is not a plain pointer spelling (a typedef)
                        while isinstance(value, c_ast.Cast) and _pointee(value.to_type.type) in (None, elem):
                            value = value.expr
                        if not (isinstance(value, c_ast.ID) and value.name in stable and
                                _pointee(stable[value.name]) == elem) or base not in (None, value.name):
                            ok = False
                            break
                        base = value.name
                elif isinstance(up, c_ast.UnaryOp) and up.op in ("&", "++", "--", "p++", "p--"):
                    ok = False
                    break
        if ok and base is not None:
            out.append((d.name, base, d))
    return out


def _rewrite_arrays(fdef, arrays) -> None:
    for a, base, decl in arrays:
        off = _offset_name(a)
        parents = _parents(fdef.body)

        def replacement(n, a=a, base=base, off=off):
            if isinstance(n, c_ast.Assignment):
                change = _array_store(n, a)
                if change is not None:
                    sub, op, value = change
                    sub = canon.replace_nodes(c_ast.ExprList([sub]), replacement).exprs[0]
                    target = c_ast.ArrayRef(c_ast.ID(off), sub)
                    if op == "=":
                        return c_ast.Assignment("=", target, c_ast.Constant("int", "0"))
                    value = canon.replace_nodes(c_ast.ExprList([value]), replacement).exprs[0]
                    return c_ast.Assignment(op, target, value)
            if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ArrayRef) and \
                    isinstance(n.name.name, c_ast.ID) and n.name.name.name == a:
                inner = canon.replace_nodes(c_ast.ExprList([n.name.subscript, n.subscript]), replacement).exprs
                return c_ast.ArrayRef(c_ast.ID(base), c_ast.BinaryOp("+", c_ast.ArrayRef(c_ast.ID(off), inner[0]),
                                                                     inner[1]))
            if isinstance(n, c_ast.UnaryOp) and n.op == "*" and isinstance(n.expr, c_ast.ArrayRef) and \
                    isinstance(n.expr.name, c_ast.ID) and n.expr.name.name == a:
                sub = canon.replace_nodes(c_ast.ExprList([n.expr.subscript]), replacement).exprs[0]
                return c_ast.ArrayRef(c_ast.ID(base), c_ast.ArrayRef(c_ast.ID(off), sub))
            if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and n.name.name == a:
                sub = canon.replace_nodes(c_ast.ExprList([n.subscript]), replacement).exprs[0]
                return c_ast.BinaryOp("+", c_ast.ID(base), c_ast.ArrayRef(c_ast.ID(off), sub))
            return None

        canon.replace_nodes(fdef.body, replacement, skip={c_ast.StructRef: ("field",)})
        # the array of pointers becomes an array of offsets of the same length
        (offsets,) = canon.parse_stmts(f"long long {off}[1];")
        offsets.type.dim = decl.type.dim
        block = parents[id(decl)]
        block.block_items = [offsets if x is decl else x for x in block.block_items]


@register(PassInfo(
    name=NAME,
    summary="pointer parameters advanced by steps (a += 16) -> the parameter at an integer offset",
    requires=("an entry function definition (XP-POINTER-OFFSETS-001)",
              "a pointer parameter changed only by steps as statements, its address not taken "
              "(XP-POINTER-OFFSETS-002)"),
    guarantees=("same outputs on the virtual device", "the entry's pointer parameters never change"),
))
def pointer_offsets(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@pointer_offsets.legality
def _legal(program):
    fdef = canon.entry_def(program.ast, program.entry.name) if program.ast is not None and program.entry else None
    if fdef is None:
        return [canon.diag(program, NAME, "XP-POINTER-OFFSETS-001", "no entry function definition")]
    found = movable(fdef)
    if not found:
        # `*d++ += *s++;`: the walk's steps inside a statement, taken out of it first
        ast = copy.deepcopy(program.ast)
        fcopy = canon.entry_def(ast, program.entry.name)
        if split_increments(fcopy, {name for name, _, _ in _pointers(fcopy)}) and movable(fcopy):
            found = movable(fcopy)
            _rewrite(fcopy, found)
            if pointer_arrays(fcopy):
                _rewrite_arrays(fcopy, pointer_arrays(fcopy))
            return canon.Rewritten(ast, [name for name, _, _ in found])
    arrays = pointer_arrays(fdef)
    if not found and not arrays:
        return [canon.diag(program, NAME, "XP-POINTER-OFFSETS-002", "no pointer parameter is advanced "
                           "by steps only, and no per-thread array of pointers holds one base")]
    ast = copy.deepcopy(program.ast)        # the rewrite, run on a copy: the plan it emits
    fcopy = canon.entry_def(ast, program.entry.name)
    if found:
        _rewrite(fcopy, movable(fcopy))
    if arrays:
        _rewrite_arrays(fcopy, pointer_arrays(fcopy))
    return canon.Rewritten(ast, [name for name, _, _ in found] + [name for name, _, _ in arrays])
