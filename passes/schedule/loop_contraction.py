"""loop_contraction: merge a producer loop into its consumer and contract the array between.

Summary
    The reverse of ``loop_expansion``. The loop whose induction variable is ``loop``
    (``nth`` among several), ``A: for (T i = lo; i < hi; i += s) { X[e] = ...; ... }``,
    immediately followed by a loop ``B`` of the same header that reads ``X[e]`` (the same
    subscript, ``B``'s variable read as ``i``), where ``X`` is a local array used nowhere
    else, becomes one loop ``for (...) { T x_c; x_c = ...; ... <B's body with X[e] -> x_c> }``
    and the declaration of ``X`` disappears. The fusion is proved legal as by ``loop_fuse``
    (Z3: no dependence from A to B reversed); the contraction is exact because ``e`` takes a
    different value in every iteration (Z3) and ``A`` stores ``X[e]`` unconditionally before
    any other use in the iteration, so every read of ``X[e]`` in ``A`` or ``B`` reads the
    value stored in the same iteration.
Requires
    1. The program has an entry function definition (XP-CONTRACT-001).
    2. Option ``loop`` is given (XP-CONTRACT-002).
    3. Exactly one loop declares ``loop``, or ``nth`` selects one (XP-CONTRACT-003 none,
       XP-CONTRACT-004 several).
    4. The next statement is a loop with the same header (XP-CONTRACT-005).
    5. Both loops are analysable as for ``loop_fuse`` (XP-CONTRACT-006), no scalar flows
       between them (XP-CONTRACT-007) and fusing them reverses no dependence
       (XP-CONTRACT-008).
    6. A local array (``array`` if given, else every local array written in ``A`` and read
       in ``B``) exists (XP-CONTRACT-009) and is contractible: declared outside both loops
       without initialiser, one-dimensional, named nowhere but as ``X[e]`` in ``A`` and ``B``
       with one subscript ``e``, written in ``A`` first by a top-level unconditional
       ``X[e] = v;`` (``v`` not reading ``X``), never written in ``B``, and ``e`` injective
       over the iterations (XP-CONTRACT-010).
Guarantees
    Same outputs on the virtual device, bit-identical: the fused loop runs each instance in an
    order that keeps every dependence, and each read of the contracted scalar yields the value
    the array element held. ``#pragma omp`` on both loops is dropped.
    Dependences are those of ``passes/analysis/affine/dependence.py``: pointer parameters do not alias.
Options
    loop (str): induction variable of the producer loop; array (str, default: all
    candidates): the array to contract; nth (int, default -1).
Example
    ``loop_contraction{loop=i}`` on ``float t[64]; for (i < 64) t[i] = x[i] * 2; for (j < 64)
    y[j] = t[j] + 1;`` -> ``for (i < 64) { float t_c; t_c = x[i] * 2; y[i] = t_c + 1; }``;
    refused when ``t`` is read after the loops.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.analysis.affine as affine
import passes.canon as canon
import passes.schedule.loop_sched as ls
from passes.base import Option, PassInfo, register
from passes.schedule.loop_fuse import fuse_nodes, fusion_plan

NAME = "loop_contraction"
CODES = {"entry": "XP-CONTRACT-001", "option": "XP-CONTRACT-002", "none": "XP-CONTRACT-003",
         "several": "XP-CONTRACT-004", "sibling": "XP-CONTRACT-005", "form": "XP-CONTRACT-006",
         "scalar": "XP-CONTRACT-007", "dep": "XP-CONTRACT-008"}


def _refuse(program, code, msg, node=None):
    return [canon.diag(program, NAME, code, msg, node)]


def _refs(node, name):
    """(ArrayRefs ``name[e]``, bare uses of ``name`` not under such a ref)."""
    refs, bare = [], []

    def go(n, under):
        if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and \
                n.name.name == name:
            refs.append(n)
            go(n.subscript, False)
            return
        if isinstance(n, c_ast.ID) and n.name == name:
            bare.append(n)
        for _, c in n.children():
            go(c, under)

    go(node, False)
    return refs, bare


def _check_array(program, fdef, info, a, b, ca, cb, la, name):
    """'' when array ``name`` is contractible, else the reason."""
    decls = [n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Decl) and n.name == name]
    if len(decls) != 1:
        return f"'{name}' is declared {len(decls)} times in the entry", None, None
    d = decls[0]
    if not isinstance(d.type, c_ast.ArrayDecl) or isinstance(d.type.type, c_ast.ArrayDecl) \
            or d.init is not None:
        return f"'{name}' is not a one-dimensional local array without initialiser", None, None
    inside = {id(n) for n in canon.walk(a)} | {id(n) for n in canon.walk(b)}
    if id(d) in inside:
        return f"'{name}' is declared inside the loops", None, None
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.ID) and n.name == name and id(n) not in inside:
            return f"'{name}' is used outside the two loops", None, None
    ra, bare_a = _refs(a.stmt, name)
    rb, bare_b = _refs(b.stmt, name)
    if bare_a or bare_b:
        return f"'{name}' is used other than as '{name}[e]' in the loops", None, None
    if not ra or not rb:
        return f"'{name}' is not both written in the first loop and read in the second", \
            None, None
    sub = ls.text(ra[0].subscript)
    m = {cb.var: c_ast.ID(ca.var)}
    if any(ls.text(r.subscript) != sub for r in ra) or \
            any(ls.text(canon.substitute(r.subscript, m)) != sub for r in rb):
        return f"'{name}' is accessed at more than one subscript", None, None
    if any(x.subscript is not None and name in canon.ids_in(x.subscript) for x in ra + rb):
        return f"'{name}' is used in its own subscript", None, None
    if name in canon.written_names(b.stmt):
        return f"the second loop writes '{name}'", None, None
    items = canon.as_items(a.stmt)
    first = next((s for s in items if name in canon.ids_in(s)), None)
    if not (isinstance(first, c_ast.Assignment) and first.op == "=" and
            isinstance(first.lvalue, c_ast.ArrayRef) and first.lvalue in ra and
            name not in canon.ids_in(first.rvalue)):
        return f"the first use of '{name}' in the producer is not an unconditional top-level " \
               f"store '{name}[e] = v;'", None, None
    acc = next((x for x in info.accesses if x.node is first), None)
    if acc is None or acc.index is None or la not in acc.loops:
        return f"the subscript of '{name}' cannot be analysed", None, None

    def other_iteration(z3, e1, e2):
        return e1[la.uid] != e2[la.uid]

    if affine.may_conflict(info, acc, acc, la.ancestors(), other_iteration):
        return f"the subscript of '{name}' may repeat across iterations", None, None
    return "", d, ra + rb


def _plan(program, ast, loop: str, array: str, nth: int):
    got = fusion_plan(program, ast, loop, nth, NAME, CODES)
    if isinstance(got, list):
        return got
    fdef, a, b, ca, cb, info = got
    la = ls.loop_info(info, a)
    if array:
        names = [array]
    else:
        names = []
        for x in ls.accesses_under(info, la):
            var = info.locals.get(x.buffer)
            if x.write and var is not None and var.kind == "array" and var.name not in names \
                    and var.name in canon.ids_in(b.stmt):
                names.append(var.name)
    if not names or not any(isinstance(n, c_ast.Decl) and n.name == names[0]
                            for n in canon.walk(fdef.body)):
        return _refuse(program, "XP-CONTRACT-009", "no local array "
                       f"{'named ' + repr(array) + ' ' if array else ''}is written in loop "
                       f"'{loop}' and read in the next loop", a)
    plans = []
    for name in names:
        why, d, refs = _check_array(program, fdef, info, a, b, ca, cb, la, name)
        if why:
            return _refuse(program, "XP-CONTRACT-010", why, a)
        plans.append((name, d, refs))
    return fdef, a, b, ca, cb, plans


def _rewrite(program, ast, fdef, a, b, ca, cb, plans):
    scalars = []
    taken = set()
    for name, d, refs in plans:
        s = ls.fresh(ast, name + "_c", taken)
        taken.add(s)
        ids = {id(r) for r in refs}

        def swap(n):
            for attr in n.__slots__:
                if attr in ("coord", "__weakref__"):
                    continue
                v = getattr(n, attr, None)
                if isinstance(v, c_ast.Node):
                    if id(v) in ids:
                        setattr(n, attr, c_ast.ID(s))
                    else:
                        swap(v)
                elif isinstance(v, list):
                    setattr(n, attr, [c_ast.ID(s) if id(x) in ids else
                                      (swap(x) or x) if isinstance(x, c_ast.Node) else x
                                      for x in v])

        swap(a)
        swap(b)
        t = copy.deepcopy(d.type.type)
        t.declname = s
        t.quals = [q for q in t.quals if q != "const"]
        scalars.append(c_ast.Decl(s, [], [], [], [], t, None, None))
        par = ls.parents(fdef)
        blk = par[id(d)]
        if isinstance(blk, c_ast.Compound):
            blk.block_items = [x for x in blk.block_items if x is not d]
        elif isinstance(blk, c_ast.DeclList):
            blk.decls = [x for x in blk.decls if x is not d]
    fuse_nodes(fdef, a, b, ca, cb)
    a.stmt.block_items = scalars + list(a.stmt.block_items)
    return canon.reparse(program, ast)


@register(PassInfo(
    name=NAME,
    summary="fuse a producer loop with its consumer and contract the local array between "
            "them into a scalar",
    anchor="loop",
    options={"loop": Option(str, "", "induction variable of the producer loop"),
             "array": Option(str, "", "the local array to contract (default: every "
                                      "candidate)"),
             "nth": Option(int, -1, "which loop of that name (0-based; -1: the only one)")},
    requires=("an entry function definition (XP-CONTRACT-001)", "option loop (XP-CONTRACT-002)",
              "exactly one loop named loop, or nth selects one (XP-CONTRACT-003, "
              "XP-CONTRACT-004)",
              "the next statement is a loop with the same header (XP-CONTRACT-005)",
              "fusion is legal (XP-CONTRACT-006, XP-CONTRACT-007, XP-CONTRACT-008)",
              "a local array written in the producer and read in the consumer "
              "(XP-CONTRACT-009)",
              "the array is used nowhere else, at one injective subscript, stored first "
              "unconditionally in the producer, never written by the consumer "
              "(XP-CONTRACT-010)"),
    guarantees=("same outputs on the virtual device, bit-identical",
                "the array's declaration removed; #pragma omp on both loops dropped"),
    introduces=("a scalar <array>_c in the fused body",),
))
def loop_contraction(program, *, loop: str = "", array: str = "", nth: int = -1, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program, loop=loop, array=array, nth=nth))
    return _rewrite(program, plan.ast, *plan.data)


@loop_contraction.legality
def _legal(program, *, loop: str = "", array: str = "", nth: int = -1):
    """The plan (the loops matched, the dependences proved), found on a copy of the AST that
    the rewrite then changes; diagnostics when refused."""
    ast = copy.deepcopy(program.ast)
    got = _plan(program, ast, loop, array, nth)
    return got if isinstance(got, list) else canon.Rewritten(ast, got)
