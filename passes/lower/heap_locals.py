"""Per-iteration heap buffers -> local arrays (shared by the binders).

The GPU lift keeps a block's dynamic shared memory as a buffer ``calloc``'d in the block loop's
body and freed at its end (``unsigned char *xp_dyn = calloc(bytes + 64, 1); ... free(xp_dyn);``);
hand-written C does the same with scratch rows. The dependence and extent analyses see local
arrays, not heap pointers: ``heap_locals`` rewrites each such buffer as a local array of the
element type it is used as (``((float *) xp_dyn)[i]`` everywhere: ``float xp_dyn[n]``, the casts
gone), zero-filled when it was calloc'd. ``task_bind`` keeps small constant ones as local arrays
(NRAM) and gives the others per-task GDRAM slices; ``loop_bind`` takes constant ones (shared
memory of the block, or the thread's own).
"""
from __future__ import annotations

import copy
import re
from dataclasses import replace

from pycparser import c_ast

import passes.analysis.affine as affine
import passes.canon as canon

HEAP_PREFIX = "__xp_heap_"
HEAP_LOCAL_MAX = 16 * 1024         # bytes: a larger per-iteration buffer is not a local array


def const_bytes(count: str) -> int | None:
    """Value of a constant element count (integers, + - * / %, casts to integer types,
    sizeof of scalar types), else None."""
    text = re.sub(r"sizeof\s*\(\s*([A-Za-z_][\w ]*?)\s*\)",
                  lambda m: str(canon.TYPE_BYTES.get(" ".join(m.group(1).split()), "x")), count)
    text = re.sub(r"\(\s*(?:unsigned|signed|long|int|short|size_t|\s)+\)", "", text)
    text = re.sub(r"(\d+)[uUlL]+", r"\1", text)
    if not re.fullmatch(r"[\d\s+\-*/%()]+", text):
        return None
    try:
        return int(eval(text.replace("/", "//"), {"__builtins__": {}}))
    except Exception:
        return None


class Heap:
    """A buffer ``T *p = (T *) calloc(a, b)`` / ``malloc(a)`` declared in a loop body and
    freed at the end of the same block (the lift of dynamic shared memory: one buffer per
    block): ``T p[count]`` for the analysis, ``count = ceil(bytes / sizeof(T))``."""

    def __init__(self, name, etype, count, const, host_ok):
        self.name, self.etype, self.count = name, etype, count
        self.const, self.host_ok = const, host_ok
        self.param = HEAP_PREFIX + name


def heap_locals(program):
    """(program, {id(array Decl): Heap}): per-iteration heap buffers rewritten as local
    arrays of the same element type (zero-filled by a loop when calloc'd), their ``free``
    dropped. A buffer qualifies when its pointer is declared with the allocation, inside a
    loop, freed by a statement of the same block, never reassigned, never has its address
    taken and is passed to no call but ``free``; its element type is a scalar with a known
    size. The program is returned unchanged when nothing qualifies."""
    fdef = affine.entry_function(program) if program.ast is not None and program.entry else None
    if fdef is None:
        return program, {}
    ast = copy.deepcopy(program.ast)
    fdef = next(e for e in ast.ext if isinstance(e, c_ast.FuncDef) and
                e.decl.name == program.entry.name)
    known = {p.name for p in program.entry.params if p.kind != "pointer"}
    defines = set((program.facts or {}).get("defines") or {})
    known |= defines | set(canon.file_scope_decls(ast))
    # type names read as identifiers in a size text (sizeof(float2)), and enumerators
    known |= set(canon.typedef_map(ast)) | {n.name for n in canon.walk(ast) if isinstance(n, c_ast.Enumerator)}
    known |= _host_constants(fdef)
    found: dict = {}

    def visit(node, in_loop: bool):
        if isinstance(node, c_ast.Compound) and in_loop and node.block_items:
            _rewrite_block(node, fdef, known, found, defines)
        for _, ch in node.children():
            visit(ch, in_loop or isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)))

    visit(fdef.body, False)
    changed = early_continues(fdef.body)
    if not found and not changed:
        return program, {}
    # the same facts: the rewrite adds no parameter, launch or include (node identities
    # are kept for the emission)
    return replace(program, ast=ast), found


def entry_heap_arrays(program):
    """The entry with the heap buffers of its own top-level block (``T *a = (T *) malloc(n *
    sizeof(T)); ... free(a);``: host scratch of a CPU kernel) rewritten as arrays of ``T``
    (``T a[count]``, zero-filled when calloc'd), under the same conditions as the per-iteration
    buffers of ``heap_locals``; None when there is none."""
    fdef = affine.entry_function(program) if program.ast is not None and program.entry else None
    if fdef is None or not fdef.body.block_items:
        return None
    ast = copy.deepcopy(program.ast)
    fdef = next(e for e in ast.ext if isinstance(e, c_ast.FuncDef) and
                e.decl.name == program.entry.name)
    found: dict = {}
    _rewrite_block(fdef.body, fdef, set(), found, set((program.facts or {}).get("defines") or {}))
    return replace(program, ast=ast) if found else None


def _host_constants(fdef) -> set[str]:
    """Scalar locals declared (with their value) at the top level of the entry body, once, and
    never assigned: in scope and unchanged wherever the host code launches the loops that
    follow them (the lift's ``unsigned long xp_shmem = 2 * threads * sizeof(float);``)."""
    decls = [n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Decl) and n.name]
    once = {n for n in (d.name for d in decls) if sum(d.name == n for d in decls) == 1}
    written = canon.written_names(fdef.body)
    return {d.name for d in (fdef.body.block_items or [])
            if isinstance(d, c_ast.Decl) and d.name in once and d.name not in written and
            d.init is not None and isinstance(d.type, c_ast.TypeDecl)}


def early_continues(node) -> bool:
    """``if (c) { S; continue; } rest`` at the top level of a loop body -> ``if (c) { S; }
    else { rest }`` (S without break / continue / return / goto / labels): the same statements
    run, and the accesses of ``rest`` get the guard ``!c`` the dependence and extent analysis
    read (the lift's ``if (i >= n) { xp_done[tid] = 1; continue; }`` of an early return)."""
    changed = False
    for _, ch in node.children():
        changed |= early_continues(ch)
    if isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile)) and \
            isinstance(node.stmt, c_ast.Compound):
        items = list(node.stmt.block_items or [])
        for k in range(len(items) - 2, -1, -1):
            s = items[k]
            if not (isinstance(s, c_ast.If) and s.iffalse is None and
                    isinstance(s.iftrue, c_ast.Compound) and s.iftrue.block_items and
                    isinstance(s.iftrue.block_items[-1], c_ast.Continue)):
                continue
            head = s.iftrue.block_items[:-1]
            if any(isinstance(n, (c_ast.Break, c_ast.Continue, c_ast.Return, c_ast.Goto,
                                  c_ast.Label, c_ast.Case, c_ast.Default))
                   for h in head for n in canon.walk(h)):
                continue
            rest = items[k + 1:]
            if any(isinstance(n, (c_ast.Label, c_ast.Case, c_ast.Default))
                   for h in rest for n in canon.walk(h)) or \
                    any(isinstance(h, c_ast.Decl) for h in head):
                continue
            items = items[:k] + [c_ast.If(s.cond, c_ast.Compound(head),
                                          c_ast.Compound(rest), s.coord)]
            changed = True
        node.stmt.block_items = items
    return changed


def _alloc_bytes(init):
    """Byte count expression of ``calloc(a, b)`` / ``malloc(a)`` / ``aligned_alloc(al, a)`` /
    ``_mm_malloc(a, al)`` (casts stripped) and whether the memory is zeroed, else None."""
    while isinstance(init, c_ast.Cast):
        init = init.expr
    name = canon.call_name(init)
    args = list(init.args.exprs) if isinstance(init, c_ast.FuncCall) and init.args else []
    if name == "calloc" and len(args) == 2:
        return c_ast.BinaryOp("*", args[0], args[1]), True
    if name == "malloc" and len(args) == 1:
        return args[0], False
    # aligned blocks: the alignment is the array's own business (an element-aligned local)
    if name == "aligned_alloc" and len(args) == 2:
        return args[1], False
    if name == "_mm_malloc" and len(args) == 2:
        return args[0], False
    return None


def _is_free_of(stmt, name: str) -> bool:
    if canon.call_name(stmt) not in ("free", "_mm_free") or not stmt.args or len(stmt.args.exprs) != 1:
        return False
    a = stmt.args.exprs[0]
    while isinstance(a, c_ast.Cast):
        a = a.expr
    return isinstance(a, c_ast.ID) and a.name == name


def _rewrite_block(block, fdef, known, heaps, facts_defines) -> None:
    items = block.block_items
    for k, d in enumerate(list(items)):
        if not (isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.PtrDecl) and
                d.init is not None and isinstance(d.type.type, c_ast.TypeDecl) and
                isinstance(d.type.type.type, c_ast.IdentifierType)):
            continue
        alloc = _alloc_bytes(d.init)
        if alloc is None:
            continue
        etype = " ".join(w for w in d.type.type.type.names)
        es = canon.TYPE_BYTES.get(etype)
        if es is None or "const" in (d.type.type.quals or []):
            continue
        frees = [j for j in range(k + 1, len(items)) if _is_free_of(items[j], d.name)]
        if len(frees) != 1 or not _only_indexed(fdef.body, d.name, d) or \
                not _early_frees_ok(items[k + 1:frees[0]], d.name):
            continue
        for s in items[k + 1:frees[0]]:          # frees before a continue / break: gone too
            _drop_early_frees(s, d.name)
        nbytes, zeroed = alloc
        view = _cast_view(fdef.body, d.name, items[frees[0]])
        if view is not None and view != etype:
            # every use reads it as another scalar type (the lift's byte buffer of dynamic
            # shared memory used as floats): an array of that type, aligned for it
            etype, es = view, canon.TYPE_BYTES[view]
            _drop_casts(fdef.body, d.name)
        gen = _generator_plain()
        count = f"(({gen.visit(nbytes)}) + {es - 1}) / {es}" if es > 1 else \
            f"({gen.visit(nbytes)})"
        names = canon.ids_in(canon.parse_expr(count))
        arr = canon.parse_stmts(f"{etype} {d.name}[{count}];")[0]
        new = [arr]
        if zeroed:
            new += canon.parse_stmts(f"for (long long __xp_z = 0; __xp_z < {count}; ++__xp_z) "
                                     f"{d.name}[__xp_z] = 0;")
        # a local array only when small and constant (the kernel's stack); else GDRAM slices
        small = not names and (const_bytes(count) or HEAP_LOCAL_MAX + 1) * es <= HEAP_LOCAL_MAX
        heaps[id(arr)] = Heap(d.name, etype, count, small, names <= known)
        j = frees[0]
        block.block_items = items[:k] + new + items[k + 1:j] + items[j + 1:]
        _rewrite_block(block, fdef, known, heaps, facts_defines)   # the list changed: again
        return


def _early_frees_ok(stmts, name: str) -> bool:
    """Every ``free(name)`` nested in ``stmts`` (the buffer released on an early way out of
    the block: ``{ free(p); continue; }``) is outside any loop of ``stmts``: it runs at most
    once per instance of the buffer."""
    def inside_loop(n, in_loop):
        if isinstance(n, c_ast.FuncCall) and _is_free_of(n, name):
            return in_loop
        loop = in_loop or isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile))
        return any(inside_loop(ch, loop) for _, ch in n.children())
    return not any(inside_loop(s, False) for s in stmts)


def _drop_early_frees(node, name: str) -> None:
    """In place: the ``free(name)`` statements nested in ``node`` removed."""
    for _, ch in node.children():
        _drop_early_frees(ch, name)
    if isinstance(node, c_ast.Compound) and node.block_items:
        node.block_items = [s for s in node.block_items if not _is_free_of(s, name)]
    elif isinstance(node, c_ast.If):
        for attr in ("iftrue", "iffalse"):
            if _is_free_of(getattr(node, attr), name):
                setattr(node, attr, c_ast.Compound([]))


def _only_indexed(body, name: str, decl) -> bool:
    """``name`` is never assigned, incremented or address-taken, and is passed to no call
    but ``free``: every use reads the pointer to index or offset it."""
    for n in canon.walk(body):
        if isinstance(n, c_ast.Assignment) and canon.lvalue_root(n.lvalue) == name and \
                isinstance(n.lvalue, c_ast.ID):
            return False
        if isinstance(n, c_ast.UnaryOp) and n.op in ("&", "++", "--", "p++", "p--") and \
                isinstance(n.expr, c_ast.ID) and n.expr.name == name:
            return False
        if isinstance(n, c_ast.FuncCall) and canon.call_name(n) not in ("free", "_mm_free") and n.args and \
                any(name in canon.ids_in(a) and _bare_pointer(a, name) for a in n.args.exprs):
            return False
        if isinstance(n, c_ast.Decl) and n is not decl and n.name == name:
            return False
    return True


def _bare_pointer(e, name: str) -> bool:
    """``e`` evaluates to the pointer itself (possibly cast or offset), not an element."""
    while isinstance(e, c_ast.Cast):
        e = e.expr
    if isinstance(e, c_ast.ID):
        return e.name == name
    if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
        return _bare_pointer(e.left, name) or _bare_pointer(e.right, name)
    return False


def _generator_plain():
    from platforms.common.generator import XGenerator

    return XGenerator({})


def _cast_view(body, name: str, free_stmt) -> str | None:
    """The scalar type every use of pointer ``name`` casts it to (``((float *) p)[i]``,
    ``(const float *) p + k``), else None (some use without a cast, or two types)."""
    parents = {}
    for n in canon.walk(body):
        for _, ch in n.children():
            parents[id(ch)] = n
    skip = {id(n) for n in canon.walk(free_stmt)}
    seen = set()
    for n in canon.walk(body):
        if not (isinstance(n, c_ast.ID) and n.name == name) or id(n) in skip:
            continue
        cast = parents.get(id(n))
        if not (isinstance(cast, c_ast.Cast) and isinstance(cast.to_type.type, c_ast.PtrDecl)):
            return None
        inner = cast.to_type.type.type
        if not (isinstance(inner, c_ast.TypeDecl) and isinstance(inner.type, c_ast.IdentifierType)):
            return None
        seen.add(" ".join(inner.type.names))
    if len(seen) != 1:
        return None
    (view,) = seen
    return view if view in canon.TYPE_BYTES else None


def _drop_casts(body, name: str) -> None:
    """In place: ``(T *) name`` -> ``name`` (its declaration now has type ``T[]``)."""
    def repl(n):
        if isinstance(n, c_ast.Cast) and isinstance(n.expr, c_ast.ID) and n.expr.name == name \
                and isinstance(n.to_type.type, c_ast.PtrDecl):
            return c_ast.ID(name, n.coord)
        return None
    canon.replace_nodes(body, repl, skip={c_ast.StructRef: ("field",)})

