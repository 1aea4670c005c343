"""host_heap: host-side local arrays sized by the data -> heap allocations freed on every exit.

Summary
    Translated host code can keep local arrays whose size depends on the data (a device
    temporary ``devtemp`` made a local array, ``task_bind``'s host mirror
    ``float d_x_h[ncols * nrows];``). At a larger size such an array overflows the stack, and
    nvcc accepts no variable-length array at all. In every host function (not ``__global__``,
    ``__device__``, ``__mlu_global__``, ``__mlu_func__``, ``__mlu_entry__``: the front-end's
    kernel/device functions) each local array, declared outside any statement that an
    ``omp parallel`` pragma governs, whose dimensions are not all compile-time constants
    becomes ``T *a = (T *) malloc(count * sizeof(T));`` (``T (*a)[C2]..[Ck]`` when only the
    first dimension varies, so ``a[i][j]`` still works). Every ``sizeof(a)`` in its scope
    becomes the byte count; ``free(a)`` ends its scope and precedes every ``return``,
    ``break``, ``continue`` and ``goto`` that leaves it (a return value is computed into a
    local first). An all-zero initialiser (``= {0}``, ``= {}``) becomes ``calloc``.

    The rule for VNNI (OpenMP) code: the private arrays inside ``#pragma omp parallel [for]``
    statements are the per-thread state of a lifted kernel (sized by the block, one per
    thread), so nothing under such a statement is touched; arrays of the function's own
    blocks and of its sequential loops are.
Requires
    1. The program has a host function definition (XP-HOST-HEAP-001: none, nothing to do).
    2. A host local array, outside any omp-parallel statement, not ``static``/``extern``, with
       a dimension that is not a compile-time constant (integer constants, ``sizeof`` of a
       type, enumerators, macro names, ``const`` integers initialised by such)
       (XP-HOST-HEAP-002: none, nothing to do).
    3. Such an array is moved only if its address is never taken (``&a``), it has no
       ``alignas``, no initialiser other than an all-zero list, its name is not declared again
       in its scope, a dimension after the first is constant, and no ``goto`` enters its
       scope (XP-HOST-HEAP-003: some such arrays, none movable; the first reason is given).
Guarantees
    Same outputs on the virtual device: the heap block has the array's size and (for a zero
    initialiser) contents; every path that leaves the scope frees it once; ``sizeof``
    still yields the array's byte count, computed once when the size expression calls a
    function, has side effects or reads a variable the function writes.
Options
    none.
Example
    ``float t[n * m]; k(t, sizeof(t)); if (e) return; g(t);``  ->
    ``float *t = (float *) malloc((size_t) (n * m) * sizeof(float));
    k(t, (size_t) (n * m) * sizeof(float)); if (e) { free(t); return; } g(t); free(t);``
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "host_heap"
DEVICE_SPECS = frozenset({"__global__", "__device__", "__mlu_global__", "__mlu_func__",
                          "__mlu_entry__", "__mlu_device__"})
_JUMPS = (c_ast.Return, c_ast.Break, c_ast.Continue, c_ast.Goto)
_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


# ------------------------------------------------------------------------------ analysis
def host_functions(program, ast) -> list[c_ast.FuncDef]:
    kinds = {f.name: f.kind for f in program.functions}
    out = []
    for e in ast.ext:
        if not isinstance(e, c_ast.FuncDef):
            continue
        words = set(e.decl.funcspec or []) | set(e.decl.storage or []) | set(e.decl.quals or [])
        if kinds.get(e.decl.name, "host") != "host" or words & DEVICE_SPECS:
            continue
        out.append(e)
    return out


def _omp_parallel(p) -> bool:
    words = (p.string or "").split()
    return len(words) >= 2 and words[0] == "omp" and "parallel" in words


class _Consts:
    """Which names are compile-time constants in one function: enumerators, unknown names
    (macros) and ``const`` integer variables initialised by constants; parameters and every
    other variable are not."""

    def __init__(self, ast, fdef):
        self.enums = {n.name for n in canon.walk(ast) if isinstance(n, c_ast.Enumerator)}
        self.decls: dict[str, list] = {}
        for n in list(canon.walk(fdef.decl.type)) + list(canon.walk(fdef.body)):
            if isinstance(n, c_ast.Decl) and n.name:
                self.decls.setdefault(n.name, []).append(n)
        self.file = canon.file_scope_decls(ast)

    def name(self, name: str, seen=()) -> bool:
        if name in self.enums:
            return True
        decls = self.decls.get(name) or ([self.file[name]] if name in self.file else None)
        if decls is None:
            return True                       # a macro or a library constant
        for d in decls:
            if not (isinstance(d.type, c_ast.TypeDecl) and "const" in (d.quals or []) and
                    d.init is not None and name not in seen and
                    self.expr(d.init, (*seen, name))):
                return False
        return True

    def expr(self, e, seen=()) -> bool:
        if e is None:
            return False
        match e:
            case c_ast.Constant():
                return True
            case c_ast.ID(name=name):
                return self.name(name, seen)
            case c_ast.UnaryOp(op="sizeof", expr=c_ast.Typename()):
                return True
            case c_ast.UnaryOp(op=op, expr=x) if op in ("-", "+", "~", "!"):
                return self.expr(x, seen)
            case c_ast.Cast(expr=x):
                return self.expr(x, seen)
            case c_ast.BinaryOp(left=l, right=r):
                return self.expr(l, seen) and self.expr(r, seen)
            case c_ast.TernaryOp(cond=c, iftrue=t, iffalse=f):
                return self.expr(c, seen) and self.expr(t, seen) and self.expr(f, seen)
        return False


def _dims(decl) -> tuple[list, c_ast.Node]:
    """([dim expressions, outermost first], element type node) of an array declaration."""
    dims, t = [], decl.type
    while isinstance(t, c_ast.ArrayDecl):
        dims.append(t.dim)
        t = t.type
    return dims, t


def _zero_init(init) -> bool:
    if not isinstance(init, c_ast.InitList):
        return False
    for x in init.exprs or []:
        if isinstance(x, c_ast.InitList):
            if not _zero_init(x):
                return False
        elif not (isinstance(x, c_ast.Constant) and x.value.rstrip("uUlLfF") in
                  ("0", "0.0", "0.", ".0", "0x0")):
            return False
    return True


@dataclass
class _Array:
    decl: c_ast.Decl
    count: c_ast.Node          # element count of the first dimension (an expression)
    row: c_ast.Node            # Typename of one element of the first dimension
    hoist: bool                # compute the count once into a local
    calloc: bool
    size_name: str = ""
    labels: set = field(default_factory=set)   # labels in the array's scope


def _why_not(decl, scope_after, fdef, consts: _Consts) -> str | None:
    """Why the array ``decl`` (declared before the statements ``scope_after`` of its block)
    cannot move to the heap; None if it can."""
    name = decl.name
    if decl.align:
        return f"'{name}' has an alignment specifier"
    if decl.init is not None and not _zero_init(decl.init):
        return f"'{name}' has an initialiser that is not all zeros"
    dims, _ = _dims(decl)
    if dims[0] is None:
        return f"'{name}' has no first dimension"
    if not all(consts.expr(d) for d in dims[1:]):
        return f"'{name}' has a variable dimension after the first (no C++ pointer type keeps " \
               "its indexing)"
    for s in scope_after:
        for n in canon.walk(s):
            if isinstance(n, c_ast.Decl) and n.name == name:
                return f"'{name}' is declared again in its scope"
            if isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID) \
                    and n.expr.name == name:
                return f"the address of '{name}' is taken (&{name})"
    return None


def _candidate(decl, consts: _Consts) -> bool:
    if not (isinstance(decl, c_ast.Decl) and decl.name and isinstance(decl.type, c_ast.ArrayDecl)):
        return False
    if set(decl.storage or []) & {"static", "extern", "typedef"}:
        return False
    dims, _ = _dims(decl)
    return not all(d is not None and consts.expr(d) for d in dims)


# ------------------------------------------------------------------------------ rewrite
class _Rewriter:
    def __init__(self, ast, fdef, typedef_names):
        self.fdef = fdef
        self.consts = _Consts(ast, fdef)
        self.written = canon.written_names(fdef.body)
        self.used_names = {n.name for n in canon.walk(ast) if isinstance(n, (c_ast.ID, c_ast.Decl)) and n.name}
        self.moved: list[str] = []
        self.refused: list[tuple[str, c_ast.Node]] = []
        self.found = 0
        self.labels_before: dict[int, set] = {}

    def fresh(self, base: str) -> str:
        k, name = 0, base
        while name in self.used_names:
            k += 1
            name = f"{base}_{k}"
        self.used_names.add(name)
        return name

    # -- statements
    def block(self, items, live, brk, loop, names):
        """Rewrite the statement list of one block; returns the new list."""
        out, own, names = [], [], dict(names)
        pending_parallel = False
        items = list(items or [])
        for k, s in enumerate(items):
            if pending_parallel:                   # the statement an omp parallel pragma governs
                pending_parallel = False
                out.append(self.expr_only(s, names))
                continue
            if isinstance(s, c_ast.Pragma):
                pending_parallel = _omp_parallel(s)
                out.append(s)
                continue
            if isinstance(s, c_ast.Decl) and _candidate(s, self.consts):
                self.found += 1
                why = _why_not(s, items[k + 1:], self.fdef, self.consts)
                if why is None:
                    labels_in = {n.name for x in items[k + 1:] for n in canon.walk(x)
                                 if isinstance(n, c_ast.Label)}
                    if any(isinstance(n, c_ast.Goto) and n.name in labels_in
                           for x in items[:k] for n in canon.walk(x)):
                        why = f"a goto enters the scope of '{s.name}'"
                if why is not None:
                    self.refused.append((why, s))
                    names.pop(s.name, None)
                    out.append(self.expr_only(s, names))
                    continue
                arr = self.heap_decl(s, out, names)
                arr.labels = labels_in
                arr.depth = (brk, loop)
                own.append(arr)
                names[s.name] = arr
                continue
            if isinstance(s, c_ast.Decl) and s.name:
                out.append(self.expr_only(s, names))
                names.pop(s.name, None)
                continue
            out.append(self.stmt(s, live + own, brk, loop, names))
        if own and not (out and _ends_in_jump(out[-1])):
            out += [self.free(a) for a in reversed(own)]
        return out

    def stmt(self, s, live, brk, loop, names):
        match s:
            case c_ast.Compound():
                s.block_items = self.block(s.block_items, live, brk, loop, names)
                return s
            case c_ast.Return():
                s.expr = self.sizeofs(s.expr, names)
                return self.exit(s, live)
            case c_ast.Break():
                return self.exit(s, [a for a in live if a.depth[0] >= brk and brk > 0])
            case c_ast.Continue():
                return self.exit(s, [a for a in live if a.depth[1] >= loop and loop > 0])
            case c_ast.Goto():
                return self.exit(s, [a for a in live if s.name not in a.labels])
            case c_ast.If():
                s.cond = self.sizeofs(s.cond, names)
                s.iftrue = self.stmt(s.iftrue, live, brk, loop, names) if s.iftrue else None
                s.iffalse = self.stmt(s.iffalse, live, brk, loop, names) if s.iffalse else None
                return s
            case c_ast.For():
                inner = dict(names)
                if isinstance(s.init, c_ast.DeclList):
                    for d in s.init.decls:
                        inner.pop(d.name, None)
                s.init = self.sizeofs(s.init, names)
                s.cond, s.next = self.sizeofs(s.cond, inner), self.sizeofs(s.next, inner)
                s.stmt = self.stmt(s.stmt, live, brk + 1, loop + 1, inner)
                return s
            case c_ast.While() | c_ast.DoWhile():
                s.cond = self.sizeofs(s.cond, names)
                s.stmt = self.stmt(s.stmt, live, brk + 1, loop + 1, names)
                return s
            case c_ast.Switch():
                s.cond = self.sizeofs(s.cond, names)
                s.stmt = self.stmt(s.stmt, live, brk + 1, loop, names)
                return s
            case c_ast.Case() | c_ast.Default():
                s.stmts = [self.stmt(x, live, brk, loop, names) for x in s.stmts or []]
                return s
            case c_ast.Label():
                s.stmt = self.stmt(s.stmt, live, brk, loop, names) if s.stmt else s.stmt
                return s
        return self.expr_only(s, names)

    def expr_only(self, s, names):
        """A statement with no scope of its own to handle (or one left alone): only its
        ``sizeof(a)`` are rewritten."""
        return self.sizeofs(s, names)

    def exit(self, s, leaving):
        if not leaving:
            return s
        frees = [self.free(a) for a in reversed(leaving)]
        if isinstance(s, c_ast.Return) and s.expr is not None and \
                not isinstance(s.expr, c_ast.Constant):
            ret = self.fdef.decl.type.type
            if canon.type_words(ret) == ["void"] and not isinstance(ret, c_ast.PtrDecl):
                return c_ast.Compound([s.expr] + frees + [c_ast.Return(None)])
            tmp = self.fresh("__xp_ret")
            t = copy.deepcopy(ret)
            canon.strip_coords(t)
            decl = c_ast.Decl(tmp, [], [], [], [], t, s.expr, None)
            canon.set_declname(decl, tmp)
            return c_ast.Compound([decl] + frees + [c_ast.Return(c_ast.ID(tmp))])
        return c_ast.Compound(frees + [s])

    def free(self, a: _Array):
        return c_ast.FuncCall(c_ast.ID("free"), c_ast.ExprList([c_ast.ID(a.decl.name)]))

    # -- expressions
    def sizeofs(self, node, names):
        if node is None or not names:
            return node

        def hole(n):
            if isinstance(n, c_ast.UnaryOp) and n.op == "sizeof" and isinstance(n.expr, c_ast.ID) \
                    and n.expr.name in names:
                return self.bytes(names[n.expr.name])
            return None
        r = hole(node)
        return r if r is not None else canon.replace_nodes(node, hole)

    def bytes(self, a: _Array):
        count = c_ast.ID(a.size_name) if a.hoist else c_ast.Cast(_size_t(), copy.deepcopy(a.count))
        return c_ast.BinaryOp("*", count, c_ast.UnaryOp("sizeof", copy.deepcopy(a.row)))

    def heap_decl(self, decl, out, names) -> _Array:
        dims, elem = _dims(decl)
        count = self.sizeofs(copy.deepcopy(dims[0]), names)
        row_t = copy.deepcopy(decl.type.type)          # the type of one a[i]
        _clear_declname(row_t)
        row = c_ast.Typename(None, [], None, row_t)
        hoist = canon.has_side_effects(count) or bool(canon.ids_in(count) & self.written) or \
            any(isinstance(n, c_ast.FuncCall) for n in canon.walk(count))
        arr = _Array(decl, count, row, hoist, decl.init is not None)
        if hoist:
            arr.size_name = self.fresh(f"__xp_n_{decl.name}")
            t = c_ast.TypeDecl(arr.size_name, ["const"], None, c_ast.IdentifierType(["size_t"]))
            out.append(c_ast.Decl(arr.size_name, ["const"], [], [], [], t,
                                  c_ast.Cast(_size_t(), count), None, coord=decl.coord))
        ptr_t = c_ast.PtrDecl([], copy.deepcopy(decl.type.type))
        cast_t = copy.deepcopy(ptr_t)
        _clear_declname(cast_t)
        n = c_ast.ID(arr.size_name) if hoist else c_ast.Cast(_size_t(), copy.deepcopy(count))
        if arr.calloc:
            call = c_ast.FuncCall(c_ast.ID("calloc"), c_ast.ExprList(
                [n, c_ast.UnaryOp("sizeof", copy.deepcopy(row))]))
        else:
            call = c_ast.FuncCall(c_ast.ID("malloc"), c_ast.ExprList([self.bytes(arr)]))
        new = c_ast.Decl(decl.name, list(decl.quals or []), None, list(decl.storage or []),
                         list(decl.funcspec or []), ptr_t,
                         c_ast.Cast(c_ast.Typename(None, [], None, cast_t), call), None,
                         coord=decl.coord)
        out.append(new)
        self.moved.append(decl.name)
        return arr


def _ends_in_jump(s) -> bool:
    while isinstance(s, c_ast.Compound) and s.block_items:
        s = s.block_items[-1]
    return isinstance(s, _JUMPS)


def _size_t():
    return c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None,
                                                         c_ast.IdentifierType(["size_t"])))


def _clear_declname(t) -> None:
    while t is not None:
        if isinstance(t, c_ast.TypeDecl):
            t.declname = None
            return
        t = getattr(t, "type", None)


def rewrite(program, ast) -> _Rewriter | None:
    """Rewrite every host function of ``ast`` in place; the last function's rewriter carries
    the totals (found, moved, refused)."""
    total = None
    for fdef in host_functions(program, ast):
        rw = _Rewriter(ast, fdef, set(canon.typedef_map(ast)))
        fdef.body.block_items = rw.block(fdef.body.block_items, [], 0, 0, {})
        if total is None:
            total = rw
        else:
            total.found += rw.found
            total.moved += rw.moved
            total.refused += rw.refused
    return total


@register(PassInfo(
    name=NAME,
    summary="host local arrays sized by the data -> malloc'd blocks freed on every scope exit",
    requires=("a host function definition (XP-HOST-HEAP-001)",
              "a host local array outside omp-parallel statements with a non-constant "
              "dimension (XP-HOST-HEAP-002 none)",
              "its address never taken, no alignas, no initialiser but all zeros, not "
              "redeclared in its scope, dimensions after the first constant, no goto into its "
              "scope (XP-HOST-HEAP-003 none movable)"),
    guarantees=("same outputs on the virtual device", "no variable-length array left in "
                "the moved scopes; each block freed once on every path out of its scope",
                "sizeof(a) keeps its value"),
    introduces=("malloc / calloc / free in host functions",),
))
def host_heap(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@host_heap.legality
def _legal(program):
    """The rewrite, run on a copy of the AST: the plan."""
    if not host_functions(program, program.ast):
        return [canon.diag(program, NAME, "XP-HOST-HEAP-001", "no host function definition")]
    ast = copy.deepcopy(program.ast)
    rw = rewrite(program, ast)
    if rw is None or not rw.found:
        return [canon.diag(program, NAME, "XP-HOST-HEAP-002", "no host local array with a "
                           "dimension that is not a compile-time constant")]
    if not rw.moved:
        why, node = rw.refused[0]
        return [canon.diag(program, NAME, "XP-HOST-HEAP-003", f"no array moved to the heap: {why}", node)]
    return canon.Rewritten(ast, {"moved": rw.moved, "refused": [w for w, _ in rw.refused]})
