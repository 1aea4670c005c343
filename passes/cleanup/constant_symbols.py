"""constant_symbols: ``__constant__`` symbols filled by copy-to-symbol -> read-only parameters.

Summary
    After ``loop_recovery`` a file-scope ``__constant__`` array (or scalar, or struct) that
    the host fills with ``cudaMemcpyToSymbol`` / ``hipMemcpyToSymbol`` (``HIP_SYMBOL(x)``
    too) is a plain global ``T S[N]`` that the entry writes with ``xp_memcpy((char *) &S, P,
    n)`` and the lifted kernels read. Global state is what the lowering (``task_bind``)
    cannot move to the device, so this pass makes the dependence explicit: every function
    that reads ``S`` (the kernels, and the device functions they call on the way to a read)
    gets a first parameter ``const T *S`` (``const T (*S)[M]`` for a 2-D array, so
    ``S[i][j]`` keeps its meaning; ``const T S`` for a scalar or struct symbol), and calls
    between them pass it on. What the entry's calls pass:

    * forward (one whole top-level copy whose source nothing uses afterwards): what the copy
      read - the parameter ``P`` or local array ``h``, or the value ``v`` of ``&v``. The copy
      and the global are dropped; no host copy is left.
    * static array (otherwise, for arrays: partial copies at constant element offsets,
      several copies, copies back with ``cudaMemcpyFromSymbol``, any source): ``S`` becomes
      ``static T S[..]`` at the top of the entry (the same zero-initialised, persistent
      object, now owned by the entry) and the entry passes it. Each copy to or from it whose
      other side is a typed parameter or local array becomes an element loop (``S[k + m] =
      P[c + m]``, affine subscripts), else a copy through ``(T *) S + k``.

    The rest of the route (devtemp, inline, task_bind, tensorize_bang) then sees an ordinary
    read-only input buffer (or scalar; a host array for a static one, which task_bind turns
    into a GDRAM buffer), which BANG keeps in GDRAM or stages into NRAM like any other input.
Requires
    1. The program has an entry function definition  [XP-CONSTSYM-001].
    2. The entry copies to at least one file-scope array, scalar or struct by an ``xp_memcpy``
       whose destination is ``&S`` / ``S`` (the lift of a copy-to-symbol)  [XP-CONSTSYM-002].
    3. For every such symbol (all or nothing): no function writes ``S``, takes its address
       or ``sizeof`` or passes it on as an argument, and no file-scope initialiser reads it;
       the entry uses it only in copies. Forward: exactly one copy, a top-level statement of the entry,
       covering the whole symbol (offset 0 and byte count = ``sizeof(S)``: constant
       expressions over the file's named constants, or ``sizeof`` of ``S`` or of its type),
       no copy back, no initialiser. Static array: an array of constant dimensions and known
       element size, every copy at a constant offset that is a whole number of elements, at
       least one copy into it  [XP-CONSTSYM-003].
    4. No top-level statement before the first copy calls, directly or through other
       functions, a function that reads ``S`` (a read before the host fills the symbol is
       refused as a likely error, in both forms)  [XP-CONSTSYM-004].
    5. Forward only (a scalar or struct symbol has no static-array form): the copy's source
       is, for an array ``S``, a pointer parameter ``P`` of the entry whose pointee type is
       the element type of ``S`` (or ``void``), or a top-level local array of the same
       element type and dimensions; for a scalar or struct ``S``, ``&v`` of a parameter or
       top-level local ``v`` of the same type. No statement after the copy uses the source
       (so what the kernels read is what the copy read; parameters do not alias, as for
       ``devcopy``)  [XP-CONSTSYM-005].
Guarantees
    Same outputs on the virtual device: each kernel reads the bytes the copies put into
    ``S`` - from the copy's source itself, or from the entry's static array. No function
    reads a file-scope variable the host writes. With ``extents``, ``#pragma xpiler
    extent(P, BYTES)`` records the bytes a forward copy read from a parameter.
Options
    extents (false): record ``#pragma xpiler extent(P, BYTES)`` for the lowering, like
    ``devcopy{extents=true}``.
Example
    ``float c_K[7]; static void k(float *o, const float *x, ...) { ... x[i + j] * c_K[j] ... }
    void conv(const float *x, const float *hk, float *o, int n) { xp_memcpy((char *) (&c_K),
    hk, 7 * sizeof(float)); k(o, x, ...); }``  ->  ``static void k(const float *c_K, float
    *o, const float *x, ...) { ... }  void conv(...) { k(hk, o, x, ...); }``
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from pycparser import c_ast

import passes.canon as canon
from passes.base import Option, PassInfo, register

NAME = "constant_symbols"
COPY = "xp_memcpy"
EXTENT_PRAGMA = "xpiler extent"        # as passes/cleanup/devcopy.py


@dataclass
class _Symbol:
    name: str
    decl: c_ast.Decl
    copies: list = field(default_factory=list)      # (top-level index | None, xp_memcpy, offset)
    backs: list = field(default_factory=list)       # the same, copies from the symbol
    mode: str = ""                                   # forward | local
    elem_offsets: list = field(default_factory=list)  # local: element offset of each copy
    loops: dict = field(default_factory=dict)        # local: id(copy) -> (count, loop counter)
    param: str | None = None                         # the copy's source variable
    arg: c_ast.Node | None = None                    # what the entry passes
    kind: str = ""                                   # param | local | value
    param_decl_type: c_ast.Node | None = None        # the pointee TypeDecl of a ``param``
    nbytes: int | None = None
    readers: set = field(default_factory=set)        # functions that must receive the buffer


def _strip(e):
    while isinstance(e, c_ast.Cast):
        e = e.expr
    return e


def _symbol_ref(e, arrays) -> tuple[str, c_ast.Node | None] | None:
    """(array name, byte offset expression or None) when ``e`` is ``&S``, ``S``, ``(char *)
    &S`` or any of them ``+ off`` for a file-scope array ``S``."""
    e = _strip(e)
    off = None
    if isinstance(e, c_ast.BinaryOp) and e.op == "+":
        off, e = e.right, _strip(e.left)
    if isinstance(e, c_ast.UnaryOp) and e.op == "&":
        e = _strip(e.expr)
    if isinstance(e, c_ast.ID) and e.name in arrays:
        return e.name, off
    return None


def _dims(decl) -> list | None:
    """Dimension expressions of an array declaration ``T S[a][b]`` and its element TypeDecl."""
    t, dims = decl.type, []
    while isinstance(t, c_ast.ArrayDecl):
        if t.dim is None:
            return None
        dims.append(t.dim)
        t = t.type
    if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
        return None
    return dims


def _elem(decl) -> c_ast.TypeDecl:
    t = decl.type
    while isinstance(t, c_ast.ArrayDecl):
        t = t.type
    return t


class _Fold:
    """Integer constant expressions over literals, the file's named constants and ``sizeof``
    of scalar types (``KERNEL_LENGTH * sizeof(float)``)."""

    def __init__(self, program, sizes):
        self.constants = dict(program.facts.get("constants", {}) or {})
        self.sizes = sizes                   # array name -> bytes (sizeof(S))

    def __call__(self, e) -> int | None:
        if isinstance(e, c_ast.Cast):
            return self(e.expr)
        if isinstance(e, c_ast.Constant) and e.type in ("int", "unsigned int", "long int",
                                                        "unsigned long int", "long long int",
                                                        "unsigned long long int"):
            try:
                return int(e.value.rstrip("uUlL"), 0)
            except ValueError:
                return None
        if isinstance(e, c_ast.ID):
            v = self.constants.get(e.name)
            return v if isinstance(v, int) and not isinstance(v, bool) else None
        if isinstance(e, c_ast.UnaryOp) and e.op == "sizeof":
            x = e.expr
            if isinstance(x, c_ast.Typename) and isinstance(x.type, c_ast.TypeDecl):
                return canon.scalar_bytes(canon.type_words(x.type))
            x = _strip(x)
            if isinstance(x, c_ast.ID):
                return self.sizes.get(x.name)
            return None
        if isinstance(e, c_ast.UnaryOp) and e.op == "-":
            v = self(e.expr)
            return None if v is None else -v
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-", "*", "/", "<<"):
            a, b = self(e.left), self(e.right)
            if a is None or b is None:
                return None
            if e.op == "/":
                return a // b if b > 0 and a >= 0 else None
            if e.op == "<<":
                return a << b if 0 <= b < 63 else None
            return {"+": a + b, "-": a - b, "*": a * b}[e.op]
        return None


def _array_bytes(decl, fold) -> int | None:
    dims = _dims(decl)
    if dims is None:
        return None
    n = canon.scalar_bytes(canon.type_words(_elem(decl)))
    for d in dims:
        v = fold(d)
        if n is None or v is None or v <= 0:
            return None
        n *= v
    return n


def _calls(node) -> set[str]:
    return {canon.call_name(n) for n in canon.walk(node) if isinstance(n, c_ast.FuncCall)} - {None}


def _param_decls(fdef) -> list:
    args = fdef.decl.type.args
    return [p for p in (args.params if args else []) if isinstance(p, c_ast.Decl) and p.name]


def _objects(ast) -> dict[str, c_ast.Decl]:
    """File-scope variable definitions that can be symbols: arrays and plain (scalar or
    struct) variables, not ``extern``."""
    return {e.name: e for e in ast.ext if isinstance(e, c_ast.Decl) and e.name and
            isinstance(e.type, (c_ast.ArrayDecl, c_ast.TypeDecl)) and
            "extern" not in (e.storage or [])}


def _sizeof_is(e, decl) -> bool:
    """``e`` is ``sizeof(S)`` or ``sizeof(T)`` for the type ``T`` of the non-array ``S``."""
    e = _strip(e)
    if not (isinstance(e, c_ast.UnaryOp) and e.op == "sizeof"):
        return False
    x = e.expr
    if isinstance(_strip(x), c_ast.ID):
        return _strip(x).name == decl.name
    return isinstance(x, c_ast.Typename) and isinstance(x.type, c_ast.TypeDecl) and \
        isinstance(decl.type, c_ast.TypeDecl) and \
        canon.type_words(x.type) == canon.type_words(decl.type) and \
        type(x.type.type) is type(decl.type.type)


def _source(s, call, k, entry_params, top_decls, fold):
    """(variable, argument, kind) the kernels read instead of ``s`` - ``kind`` ``param`` (a
    pointer parameter ``P``: pass ``P``), ``local`` (a local array of the same shape: pass
    it) or ``value`` (``&v`` of a scalar / struct parameter or local: pass ``v`` by value) -
    or (None, reason, None)."""
    src = _strip(call.args.exprs[1])
    where = f"'{s.name}'"
    if isinstance(s.decl.type, c_ast.ArrayDecl):
        sw = canon.type_words(_elem(s.decl))
        if not isinstance(src, c_ast.ID):
            return None, f"the copy to {where} does not read a pointer parameter or a local " \
                         "array of the entry", None
        p = entry_params.get(src.name)
        if p is not None and isinstance(p.type, c_ast.PtrDecl) and \
                isinstance(p.type.type, c_ast.TypeDecl):
            pw = canon.type_words(p.type.type)
            if pw not in (sw, ["void"]):
                return None, f"the copy to {where} reads '{p.name}' of type {' '.join(pw)} *, " \
                             f"not {' '.join(sw)} *", None
            s.param_decl_type = p.type.type
            return p.name, c_ast.ID(p.name), "param"
        d = top_decls.get(src.name)
        if d is not None and d[0] < k and isinstance(d[1].type, c_ast.ArrayDecl) and \
                canon.type_words(_elem(d[1])) == sw and \
                [fold(x) for x in (_dims(d[1]) or [None])] == [fold(x) for x in _dims(s.decl)]:
            return src.name, c_ast.ID(src.name), "local"
        return None, f"the copy to {where} reads '{getattr(src, 'name', '?')}', which is not a " \
                     "pointer parameter or a top-level local array of the same shape", None
    if isinstance(src, c_ast.UnaryOp) and src.op == "&" and isinstance(_strip(src.expr), c_ast.ID):
        v = _strip(src.expr).name
        d = entry_params.get(v)
        if d is None and v in top_decls and top_decls[v][0] < k:
            d = top_decls[v][1]
        if d is not None and isinstance(d.type, c_ast.TypeDecl) and \
                canon.type_words(d.type) == canon.type_words(s.decl.type) and \
                type(d.type.type) is type(s.decl.type.type):
            return v, c_ast.ID(v), "value"
        return None, f"the copy to {where} reads '&{v}', which is not a parameter or top-level " \
                     f"local of the type of {where}", None
    return None, f"the copy to {where} does not read '&v' of a parameter or local", None


def analyse(program, ast) -> tuple[list[_Symbol], list[tuple[str, str, c_ast.Node | None]]]:
    """(the symbols to turn into parameters, [(code, message, node)] problems): the legality
    of the pass; ``ast`` is not changed."""
    fdef = canon.entry_def(ast, program.entry.name)
    objects = _objects(ast)
    funcs = {n: f for n, f in canon.func_defs(ast).items() if f is not fdef}
    problems: list = []
    syms: dict[str, _Symbol] = {}
    items = list(fdef.body.block_items or [])
    top = {id(s): k for k, s in enumerate(items)}
    top_decls = {s.name: (k, s) for k, s in enumerate(items)
                 if isinstance(s, c_ast.Decl) and s.name}
    for n in canon.walk(fdef.body):
        if not (isinstance(n, c_ast.FuncCall) and canon.call_name(n) == COPY and n.args and
                len(n.args.exprs) == 3):
            continue
        ref = _symbol_ref(n.args.exprs[0], objects)
        if ref is not None:
            s = syms.setdefault(ref[0], _Symbol(ref[0], objects[ref[0]]))
            s.copies.append((top.get(id(n)), n, ref[1]))
        back = _symbol_ref(n.args.exprs[1], objects)
        if back is not None:
            s = syms.setdefault(back[0], _Symbol(back[0], objects[back[0]]))
            s.backs.append((top.get(id(n)), n, back[1]))
    if not syms:
        return [], [("XP-CONSTSYM-002", "the entry copies into no file-scope variable (no "
                     "copy-to-symbol)", None)]
    fold0 = _Fold(program, {})
    sizes = {}
    for name, d in objects.items():
        b = _array_bytes(d, fold0) if isinstance(d.type, c_ast.ArrayDecl) else \
            canon.scalar_bytes(canon.type_words(d.type)) \
            if isinstance(d.type.type, c_ast.IdentifierType) else None
        if b is not None:
            sizes[name] = b
    for name, (_, d) in top_decls.items():               # sizeof(h) of a local source array
        if isinstance(d.type, c_ast.ArrayDecl) and _array_bytes(d, fold0) is not None:
            sizes[name] = _array_bytes(d, fold0)
    fold = _Fold(program, sizes)
    entry_params = {p.name: p for p in _param_decls(fdef)}
    # who calls whom, among the non-entry functions
    callees = {n: _calls(f.body) & set(funcs) for n, f in funcs.items()}
    top_of = {id(x): k for k, st in enumerate(items) for x in canon.walk(st)}
    for name, s in syms.items():
        where = f"'{name}'"
        if not s.copies:
            problems.append(("XP-CONSTSYM-003", f"{where} is copied from but never filled by a "
                             "copy-to-symbol", s.backs[0][1]))
            continue
        bad = _device_misuse(name, funcs, ast, fdef)
        if bad:
            problems.append(("XP-CONSTSYM-003", bad[0], bad[1]))
            continue
        readers = {f for f, fd in funcs.items()
                   if any(isinstance(x, c_ast.ID) and x.name == name for x in canon.walk(fd))}
        changed = True
        while changed:
            more = {f for f in funcs if callees[f] & readers} - readers
            readers |= more
            changed = bool(more)
        s.readers = readers
        s.nbytes = sizes.get(name)
        why = _forward(s, fdef, items, entry_params, top_decls, fold)
        if why is None:
            s.mode = "forward"
        elif _local(s, fdef, fold, entry_params, top_decls):
            s.mode = "local"
        else:
            problems.append(why)
            continue
        first = min(top_of[id(c[1])] for c in s.copies)
        for st in items[:first]:
            hit = _calls(st) & readers
            if hit:
                problems.append(("XP-CONSTSYM-004", f"{sorted(hit)[0]} reads {where} before "
                                 "the copy-to-symbol fills it", st))
                break
    return list(syms.values()), problems


def _forward(s, fdef, items, entry_params, top_decls, fold):
    """None when ``s`` can read the copy's source directly (one whole top-level copy from a
    source unused after it; sets ``s.param``, ``s.arg``, ``s.kind``), else (code, message,
    node)."""
    name, where = s.name, f"'{s.name}'"
    if len(s.copies) != 1 or s.backs:
        return ("XP-CONSTSYM-003", f"{where} is filled by {len(s.copies)} copy-to-symbol calls"
                f"{' and copied back' if s.backs else ''}; only one whole copy becomes a "
                "parameter", (s.copies[1:] or s.copies)[0][1])
    k, call, off = s.copies[0]
    if k is None:
        return ("XP-CONSTSYM-003", f"the copy to {where} is not a top-level statement of the "
                "entry (conditional or in a loop)", call)
    if s.decl.init is not None:
        return ("XP-CONSTSYM-003", f"{where} has an initialiser", s.decl)
    if s.nbytes is None and isinstance(s.decl.type, c_ast.ArrayDecl):
        return ("XP-CONSTSYM-003", f"the size of {where} is not a constant over scalar "
                "elements", s.decl)
    if off is not None and fold(off) != 0:
        return ("XP-CONSTSYM-003", f"partial copy to {where}: the offset is not 0", call)
    n = fold(call.args.exprs[2])
    if not (n is not None and n == s.nbytes or _sizeof_is(call.args.exprs[2], s.decl)):
        return ("XP-CONSTSYM-003", f"partial copy to {where}: "
                f"{'an unknown number of' if n is None else n} bytes of "
                f"{s.nbytes if s.nbytes is not None else 'sizeof(' + name + ')'}", call)
    if _accesses(fdef.body, name) != 1:
        return ("XP-CONSTSYM-003", f"the entry uses {where} other than by the copy-to-symbol "
                "(a host access)", call)
    var, arg, kind = _source(s, call, k, entry_params, top_decls, fold)
    if var is None:
        return ("XP-CONSTSYM-005", arg, call)
    later = [st for st in items[k + 1:] if _accesses(st, var)]
    if later or _accesses(call, var) != 1:
        return ("XP-CONSTSYM-005", f"'{var}', the source of the copy to {where}, is used "
                "after the copy (the kernels must see the copied value)",
                later[0] if later else call)
    s.param, s.arg, s.kind = var, arg, kind
    return None


def _local(s, fdef, fold, entry_params, top_decls) -> bool:
    """``s`` can become a ``static`` array of the entry that the readers receive: an array
    of constant size the entry uses only through copies to and from it, each at an offset
    that is a constant multiple of the element size."""
    if not isinstance(s.decl.type, c_ast.ArrayDecl) or s.nbytes is None:
        return False
    esz = canon.scalar_bytes(canon.type_words(_elem(s.decl)))
    offsets = []
    for _, _, off in s.copies + s.backs:
        v = 0 if off is None else fold(off)
        if v is None or v < 0 or v % esz:
            return False
        offsets.append(v // esz)
    if _accesses(fdef.body, s.name) != len(s.copies) + len(s.backs):
        return False
    s.elem_offsets = offsets
    words = canon.type_words(_elem(s.decl))
    if len(_dims(s.decl)) == 1:
        for j, (_, call, _) in enumerate(s.copies + s.backs):
            other = call.args.exprs[1 if j < len(s.copies) else 0]
            count = _count(call.args.exprs[2], esz, words, fold)
            if count is not None and _typed_source(other, words, entry_params, top_decls):
                s.loops[id(call)] = (count, f"__xp_sym_{s.name}_{j}")
    return True


def _replace(root, old, new) -> None:
    """Put ``new`` where the statement ``old`` is (a block item or a branch / loop body)."""
    for n in canon.walk(root):
        if isinstance(n, c_ast.Compound) and n.block_items:
            n.block_items = [new if x is old else x for x in n.block_items]
        for attr in ("iftrue", "iffalse", "stmt"):
            if getattr(n, attr, None) is old:
                setattr(n, attr, new)


def _accesses(node, name) -> int:
    """How many times ``name`` occurs under ``node`` outside ``sizeof`` (which reads nothing)."""
    unevaluated = {id(y) for x in canon.walk(node) if isinstance(x, c_ast.UnaryOp) and
                   x.op == "sizeof" for y in canon.walk(x.expr)}
    return sum(1 for x in canon.walk(node) if isinstance(x, c_ast.ID) and x.name == name and
               id(x) not in unevaluated)


def _device_misuse(name, funcs, ast, fdef) -> tuple[str, c_ast.Node] | None:
    """Why a function or file-scope initialiser uses ``name`` other than by reading elements."""
    for f, fd in funcs.items():
        for x in canon.walk(fd):
            if isinstance(x, c_ast.Decl) and x.name == name:
                return f"{f} declares its own '{name}'", x
            if isinstance(x, c_ast.Assignment) and canon.lvalue_root(x.lvalue) == name:
                return f"{f} writes '{name}' (device code writes the symbol)", x
            if isinstance(x, c_ast.UnaryOp) and x.op in ("++", "--", "p++", "p--", "&") and \
                    canon.lvalue_root(x.expr) == name:
                return f"{f} writes or takes the address of '{name}'", x
            if isinstance(x, c_ast.UnaryOp) and x.op == "sizeof" and \
                    isinstance(_strip(x.expr), c_ast.ID) and _strip(x.expr).name == name:
                return f"{f} takes sizeof('{name}') (a parameter would have another size)", x
            if isinstance(x, c_ast.FuncCall) and x.args and \
                    any(canon.lvalue_root(_strip(a)) == name and
                        not isinstance(_strip(a), c_ast.ArrayRef)
                        for a in x.args.exprs):
                return f"{f} passes '{name}' to {canon.call_name(x)}", x
    for e in ast.ext:
        if isinstance(e, c_ast.Decl) and e.init is not None and \
                any(isinstance(x, c_ast.ID) and x.name == name for x in canon.walk(e.init)):
            return f"the initialiser of {e.name} reads '{name}'", e
    return None


def _param_type(decl) -> c_ast.Node:
    """``const T *S`` (``const T (*S)[b]...`` for more dimensions) from ``T S[a][b]...``;
    ``const T S`` from a scalar or struct ``T S``."""
    if isinstance(decl.type, c_ast.TypeDecl):
        t = copy.deepcopy(decl.type)
        t.quals = list(dict.fromkeys(list(t.quals or []) + ["const"]))
        t.declname = decl.name
        return t
    t = copy.deepcopy(decl.type.type)                # drop the outer dimension
    inner = t
    while isinstance(inner, c_ast.ArrayDecl):
        inner = inner.type
    inner.quals = list(dict.fromkeys(list(inner.quals or []) + ["const"]))
    inner.declname = decl.name
    return c_ast.PtrDecl([], t)


def _cast_to(ptype, expr):
    t = copy.deepcopy(ptype)
    inner = t
    while not isinstance(inner, c_ast.TypeDecl):
        inner = inner.type
    inner.declname = None
    return c_ast.Cast(c_ast.Typename(None, [], None, t), expr)


def _elem_ptr(s, k: int):
    """``(T *) S + k``: a typed address the copy lowering (memops) can follow."""
    elem = copy.deepcopy(_elem(s.decl))
    elem.declname = None
    elem.quals = []
    e = c_ast.Cast(c_ast.Typename(None, [], None, c_ast.PtrDecl([], elem)), c_ast.ID(s.name))
    return c_ast.BinaryOp("+", e, c_ast.Constant("int", str(k))) if k else e


def _count(n, esz: int, words, fold):
    """Element count of a copy of ``n`` bytes of ``esz``-byte elements ``words``, or None."""
    v = fold(n)
    if v is not None:
        return c_ast.Constant("int", str(v // esz)) if v >= 0 and v % esz == 0 else None
    n = _strip(n)
    if isinstance(n, c_ast.BinaryOp) and n.op == "*":
        for a, b in ((n.left, n.right), (n.right, n.left)):
            b = _strip(b)
            if isinstance(b, c_ast.UnaryOp) and b.op == "sizeof" and \
                    isinstance(b.expr, c_ast.Typename) and \
                    isinstance(b.expr.type, c_ast.TypeDecl) and \
                    canon.type_words(b.expr.type) == words and not canon.has_side_effects(a):
                return copy.deepcopy(a)
    return None


def _element(base, index, elem, const: bool):
    """``base[index]`` with ``(P + c)[m]`` written ``P[c + m]`` (an affine subscript) and a
    ``void *`` base cast to the element type."""
    b = _strip(base)
    if isinstance(b, c_ast.BinaryOp) and b.op == "+" and isinstance(_strip(b.left), c_ast.ID):
        return c_ast.ArrayRef(_strip(b.left), c_ast.BinaryOp("+", copy.deepcopy(b.right), index))
    if isinstance(b, c_ast.ID):
        return c_ast.ArrayRef(b, index)
    t = copy.deepcopy(elem)
    t.declname, t.quals = None, (["const"] if const else [])
    return c_ast.ArrayRef(c_ast.Cast(c_ast.Typename(None, [], None, c_ast.PtrDecl([], t)),
                                     copy.deepcopy(base)), index)


def _copy_loop(dst, src, count, elem, counter: str):
    """``for (int m = 0; m < count; ++m) dst[m] = src[m];`` (see ``_element``)."""
    m = lambda: c_ast.ID(counter)      # noqa: E731
    body = c_ast.Assignment("=", _element(dst, m(), elem, False), _element(src, m(), elem, True))
    init = c_ast.DeclList([c_ast.Decl(counter, [], [], [], [], c_ast.TypeDecl(
        counter, [], None, c_ast.IdentifierType(["int"])), c_ast.Constant("int", "0"), None)])
    return c_ast.For(init, c_ast.BinaryOp("<", m(), count), c_ast.UnaryOp("++", m()), body)


def _typed_source(e, words, entry_params, top_decls) -> bool:
    """``e`` (``P``, ``P + c``, ``a``, ``a + c``) points at elements of type ``words`` (or
    ``void``): a parameter pointer or a top-level local array of that type."""
    e = _strip(e)
    if isinstance(e, c_ast.BinaryOp) and e.op == "+":
        e = _strip(e.left)
    if not isinstance(e, c_ast.ID):
        return False
    d = entry_params.get(e.name) or (top_decls.get(e.name) or (None, None))[1]
    if d is None or not isinstance(d.type, (c_ast.PtrDecl, c_ast.ArrayDecl)) or \
            not isinstance(d.type.type, c_ast.TypeDecl):
        return False
    return canon.type_words(d.type.type) in (words, ["void"])


def _localize(fdef, s) -> None:
    """``static T S[..];`` at the top of the entry; each copy to or from it an element loop
    when its other side is typed (see ``_copy_loop``), else a copy through a typed address."""
    elem = _elem(s.decl)
    for i, ((_, call, _), k) in enumerate(zip(s.copies + s.backs, s.elem_offsets)):
        side = 0 if i < len(s.copies) else 1
        call.args.exprs[side] = _elem_ptr(s, k)
        loop = s.loops.get(id(call))
        if loop is not None:
            count, counter = loop
            dst, src = call.args.exprs[0], call.args.exprs[1]
            if side == 0:
                dst = c_ast.BinaryOp("+", c_ast.ID(s.name), c_ast.Constant("int", str(k)))
            else:
                src = c_ast.BinaryOp("+", c_ast.ID(s.name), c_ast.Constant("int", str(k)))
            _replace(fdef.body, call, _copy_loop(dst, src, count, elem, counter))
    d = copy.deepcopy(s.decl)
    d.storage = [x for x in (d.storage or []) if x != "extern"] + \
        ([] if "static" in (d.storage or []) else ["static"])
    fdef.body.block_items = [d] + list(fdef.body.block_items or [])


def _rewrite(program, ast, syms, extents: bool) -> None:
    fdef = canon.entry_def(ast, program.entry.name)
    drop = {id(s.copies[0][1]) for s in syms if s.mode == "forward"}
    fdef.body.block_items = [s for s in fdef.body.block_items if id(s) not in drop]
    for s in syms:
        if s.mode == "local":
            _localize(fdef, s)
            s.arg = c_ast.ID(s.name)
        ptype = _param_type(s.decl)
        pdecl = c_ast.Decl(s.name, [], [], [], [], ptype, None, None)
        dims = _dims(s.decl) if isinstance(s.decl.type, c_ast.ArrayDecl) else None
        # a 1-D array from a pointer / array of its element type, or a value: no cast
        cast = dims is not None and (len(dims) > 1 or s.kind == "param" and canon.type_words(
            s.param_decl_type) != canon.type_words(_elem(s.decl)))
        for e in ast.ext:
            fd = e.decl if isinstance(e, c_ast.FuncDef) else e
            if isinstance(fd, c_ast.Decl) and fd.name in s.readers and \
                    isinstance(fd.type, c_ast.FuncDecl):
                args = fd.type.args or c_ast.ParamList([])
                params = [p for p in args.params
                          if not (isinstance(p, c_ast.Typename) and
                                  canon.type_words(p.type) == ["void"])]
                args.params = [copy.deepcopy(pdecl)] + params
                fd.type.args = args
        for e in ast.ext:
            if not isinstance(e, c_ast.FuncDef):
                continue
            inside = e is fdef
            for x in canon.walk(e.body):
                if isinstance(x, c_ast.FuncCall) and canon.call_name(x) in s.readers:
                    arg = copy.deepcopy(s.arg) if inside else c_ast.ID(s.name)
                    if inside and cast:
                        arg = _cast_to(ptype, arg)
                    x.args = c_ast.ExprList([arg] + list(x.args.exprs if x.args else []))
    names = {s.name for s in syms}
    ast.ext = [e for e in ast.ext if not (isinstance(e, c_ast.Decl) and e.name in names and
                                          isinstance(e.type, (c_ast.ArrayDecl, c_ast.TypeDecl)))]
    if extents:
        at = next(k for k, e in enumerate(ast.ext) if e is fdef)
        for s in sorted((s for s in syms if s.mode == "forward" and s.kind == "param"),
                        key=lambda s: s.param):
            ast.ext.insert(at, c_ast.Pragma(f"{EXTENT_PRAGMA}({s.param}, {s.nbytes})"))


@register(PassInfo(
    name=NAME,
    summary="__constant__ symbols filled by copy-to-symbol -> a read-only parameter of the "
            "kernels that read them (the buffer or value one whole copy read, else a static "
            "array of the entry)",
    requires=("an entry function definition (XP-CONSTSYM-001)",
              "the entry copies into a file-scope array (XP-CONSTSYM-002)",
              "no device write or address, only copies in the entry; forward: one whole "
              "top-level copy, no initialiser; static array: constant element offsets "
              "(XP-CONSTSYM-003)",
              "no reader called before the copy (XP-CONSTSYM-004)",
              "forward only: the source is an entry pointer parameter or local array of the "
              "element type, or &v of a parameter / local of the symbol's type, unused after "
              "the copy (XP-CONSTSYM-005)"),
    guarantees=("same outputs on the virtual device",
                "no function reads a global array the host writes; kernels read the "
                "parameter the copy read"),
    options={"extents": Option(bool, False, "record #pragma xpiler extent(P, BYTES) for the "
                                           "copy's source parameter")},
    introduces=("a leading const pointer (or value) parameter in the kernels that read the "
                "symbol", "a static array in the entry, element copy loops"),
))
def constant_symbols(program, *, extents: bool = False, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program, extents=extents))
    _rewrite(program, plan.ast, plan.data, extents)
    return canon.reparse(program, plan.ast)


@constant_symbols.legality
def _legal(program, *, extents: bool = False):
    """The symbols to turn into parameters, found on a copy of the AST that the rewrite then
    changes: the plan."""
    if program.entry is None or program.ast is None or \
            canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-CONSTSYM-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    syms, problems = analyse(program, ast)
    if problems:
        return [canon.diag(program, NAME, code, msg, node) for code, msg, node in problems]
    if not syms:
        return [canon.diag(program, NAME, "XP-CONSTSYM-002", "no copy-to-symbol can become a parameter")]
    return canon.Rewritten(ast, syms)
