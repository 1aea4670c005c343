"""constant_symbols: ``__constant__`` arrays filled by copy-to-symbol -> read-only kernel parameters.

Summary
    After ``loop_recovery`` a file-scope ``__constant__`` (or ``__device__``) array that the
    host fills with ``cudaMemcpyToSymbol`` / ``hipMemcpyToSymbol`` (``HIP_SYMBOL(x)`` too) is
    a plain global ``T S[N]`` that the entry writes with ``xp_memcpy((char *) &S, P, n)`` and
    the lifted kernels read. Global state is what the lowering (``task_bind``) cannot move to
    the device, so this pass makes the dependence explicit: every function that reads ``S``
    (the kernels, and the device functions they call on the way to a read) gets a first
    parameter ``const T *S`` (``const T (*S)[M]`` for a 2-D array, so ``S[i][j]`` keeps its
    meaning); calls between them pass it on, and the entry's calls pass the host buffer ``P``
    the copy read from. The copy and the global are dropped. The rest of the route (devtemp,
    inline, task_bind, tensorize_bang) then sees an ordinary read-only input buffer, which
    BANG keeps in GDRAM or stages into NRAM like any other input.
Requires
    1. The program has an entry function definition  [XP-CONSTSYM-001].
    2. The entry copies to at least one file-scope array by an ``xp_memcpy`` whose
       destination is ``&S`` / ``S`` (the lift of a copy-to-symbol)  [XP-CONSTSYM-002].
    3. For every such array (all or nothing): exactly one copy, a top-level statement of the
       entry, covering the whole array (offset 0 and byte count = ``sizeof(S)``, both constant
       expressions over the file's named constants); the entry uses ``S`` nowhere else (no
       copy back from the symbol, no host access); no function writes ``S``, takes its
       address or passes it on as an argument; no file-scope initialiser reads it; the array
       has no initialiser of its own and an element type of known size  [XP-CONSTSYM-003].
    4. No top-level statement before the copy calls, directly or through other functions, a
       function that reads ``S`` (a read before it is filled would see the zero-initialised
       symbol, which a parameter cannot reproduce)  [XP-CONSTSYM-004].
    5. The copy's source is a pointer parameter ``P`` of the entry whose pointee type is the
       element type of ``S`` (or ``void``), used nowhere else in the entry (so nothing the
       entry does can change what the kernels read; parameters do not alias, as for
       ``devcopy``)  [XP-CONSTSYM-005].
Guarantees
    Same outputs on the virtual device: each kernel reads the bytes the copy would have put
    into ``S``, from ``P`` itself. No function reads a global array written by the host.
    With ``extents``, ``#pragma xpiler extent(P, BYTES)`` records the bytes the copy read.
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

from . import canon
from .base import Option, PassInfo, PassRefused, register

NAME = "constant_symbols"
COPY = "xp_memcpy"
EXTENT_PRAGMA = "xpiler extent"        # as passes/devcopy.py


@dataclass
class _Symbol:
    name: str
    decl: c_ast.Decl
    copies: list = field(default_factory=list)      # (top-level index | None, xp_memcpy call)
    param: str | None = None                         # the copy's source parameter
    param_decl: c_ast.Decl | None = None
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


def analyse(program, ast) -> tuple[list[_Symbol], list[tuple[str, str, c_ast.Node | None]]]:
    """(the arrays to turn into parameters, [(code, message, node)] problems): the legality
    of the pass; ``ast`` is not changed."""
    fdef = canon.entry_def(ast, program.entry.name)
    arrays = {e.name: e for e in ast.ext if isinstance(e, c_ast.Decl) and e.name and
              isinstance(e.type, c_ast.ArrayDecl) and "extern" not in (e.storage or [])}
    funcs = {n: f for n, f in canon.func_defs(ast).items() if f is not fdef}
    problems: list = []
    syms: dict[str, _Symbol] = {}
    top = {id(s): k for k, s in enumerate(fdef.body.block_items or [])}
    for n in canon.walk(fdef.body):
        if not (isinstance(n, c_ast.FuncCall) and canon.call_name(n) == COPY and n.args and
                len(n.args.exprs) == 3):
            continue
        ref = _symbol_ref(n.args.exprs[0], arrays)
        if ref is not None:
            s = syms.setdefault(ref[0], _Symbol(ref[0], arrays[ref[0]]))
            s.copies.append((top.get(id(n)), n, ref[1]))
    if not syms:
        return [], [("XP-CONSTSYM-002", "the entry copies into no file-scope array (no "
                     "copy-to-symbol)", None)]
    sizes = {}
    fold0 = _Fold(program, {})
    for name, d in arrays.items():
        b = _array_bytes(d, fold0)
        if b is not None:
            sizes[name] = b
    fold = _Fold(program, sizes)
    entry_params = {p.name: p for p in _param_decls(fdef)}
    # who calls whom, among the non-entry functions
    callees = {n: _calls(f.body) & set(funcs) for n, f in funcs.items()}
    for name, s in syms.items():
        where = f"'{name}'"
        if len(s.copies) != 1:
            problems.append(("XP-CONSTSYM-003", f"{where} is filled by {len(s.copies)} "
                             "copy-to-symbol calls; only one whole copy becomes a parameter",
                             s.copies[1][1]))
            continue
        k, call, off = s.copies[0]
        if k is None:
            problems.append(("XP-CONSTSYM-003", f"the copy to {where} is not a top-level "
                             "statement of the entry (conditional or in a loop)", call))
            continue
        if s.decl.init is not None:
            problems.append(("XP-CONSTSYM-003", f"{where} has an initialiser", s.decl))
            continue
        s.nbytes = sizes.get(name)
        if s.nbytes is None:
            problems.append(("XP-CONSTSYM-003", f"the size of {where} is not a constant over "
                             "scalar elements", s.decl))
            continue
        if off is not None and fold(off) != 0:
            problems.append(("XP-CONSTSYM-003", f"partial copy to {where}: the offset is not 0",
                             call))
            continue
        n = fold(call.args.exprs[2])
        if n != s.nbytes:
            problems.append(("XP-CONSTSYM-003", f"partial copy to {where}: "
                             f"{'an unknown number of' if n is None else n} bytes of "
                             f"{s.nbytes}", call))
            continue
        uses = _accesses(fdef.body, name)
        if uses != 1:
            problems.append(("XP-CONSTSYM-003", f"the entry uses {where} other than by the "
                             "copy-to-symbol (a copy back or a host access)", call))
            continue
        src = _strip(call.args.exprs[1])
        p = entry_params.get(src.name) if isinstance(src, c_ast.ID) else None
        if p is None or not isinstance(p.type, c_ast.PtrDecl) or \
                not isinstance(p.type.type, c_ast.TypeDecl):
            problems.append(("XP-CONSTSYM-005", f"the copy to {where} does not read a pointer "
                             "parameter of the entry", call))
            continue
        pw, sw = canon.type_words(p.type.type), canon.type_words(_elem(s.decl))
        if pw not in (sw, ["void"]):
            problems.append(("XP-CONSTSYM-005", f"the copy to {where} reads '{p.name}' of "
                             f"type {' '.join(pw)} *, not {' '.join(sw)} *", call))
            continue
        puses = _accesses(fdef.body, p.name)
        if puses != 1:
            problems.append(("XP-CONSTSYM-005", f"'{p.name}', the source of the copy to {where}, "
                             "is also used elsewhere in the entry", call))
            continue
        s.param, s.param_decl = p.name, p
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
        for j, st in enumerate(fdef.body.block_items[:k]):
            hit = _calls(st) & readers
            if hit:
                problems.append(("XP-CONSTSYM-004", f"{sorted(hit)[0]} reads {where} before "
                                 "the copy-to-symbol fills it", st))
                break
    return list(syms.values()), problems


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
            if isinstance(x, c_ast.FuncCall) and x.args and \
                    any(canon.lvalue_root(_strip(a)) == name and not isinstance(_strip(a), c_ast.ArrayRef)
                        for a in x.args.exprs):
                return f"{f} passes '{name}' to {canon.call_name(x)}", x
    for e in ast.ext:
        if isinstance(e, c_ast.Decl) and e.init is not None and \
                any(isinstance(x, c_ast.ID) and x.name == name for x in canon.walk(e.init)):
            return f"the initialiser of {e.name} reads '{name}'", e
    return None


def _param_type(decl) -> c_ast.Node:
    """``const T *S`` (``const T (*S)[b]...`` for more dimensions) from ``T S[a][b]...``."""
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


def _rewrite(program, ast, syms, extents: bool) -> None:
    fdef = canon.entry_def(ast, program.entry.name)
    drop = {id(s.copies[0][1]) for s in syms}
    fdef.body.block_items = [s for s in fdef.body.block_items if id(s) not in drop]
    for s in syms:
        ptype = _param_type(s.decl)
        pdecl = c_ast.Decl(s.name, [], [], [], [], ptype, None, None)
        simple = _dims(s.decl) and len(_dims(s.decl)) == 1 and \
            canon.type_words(s.param_decl.type.type) == canon.type_words(_elem(s.decl))
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
                    arg = c_ast.ID(s.param) if inside else c_ast.ID(s.name)
                    if inside and not simple:
                        arg = _cast_to(ptype, arg)
                    x.args = c_ast.ExprList([arg] + list(x.args.exprs if x.args else []))
    names = {s.name for s in syms}
    ast.ext = [e for e in ast.ext if not (isinstance(e, c_ast.Decl) and e.name in names and
                                          isinstance(e.type, c_ast.ArrayDecl))]
    if extents:
        at = next(k for k, e in enumerate(ast.ext) if e is fdef)
        for s in sorted(syms, key=lambda s: s.param):
            ast.ext.insert(at, c_ast.Pragma(f"{EXTENT_PRAGMA}({s.param}, {s.nbytes})"))


@register(PassInfo(
    name=NAME,
    summary="file-scope arrays filled by one whole copy-to-symbol from an entry pointer "
            "parameter -> a read-only parameter of the kernels that read them",
    requires=("an entry function definition (XP-CONSTSYM-001)",
              "the entry copies into a file-scope array (XP-CONSTSYM-002)",
              "one whole top-level copy per array, no other host use, no device write or "
              "address, no initialiser (XP-CONSTSYM-003)",
              "no reader called before the copy (XP-CONSTSYM-004)",
              "the source is an entry pointer parameter of the element type, used only by "
              "the copy (XP-CONSTSYM-005)"),
    guarantees=("same outputs on the virtual device",
                "no function reads a global array the host writes; kernels read the "
                "parameter the copy read"),
    options={"extents": Option(bool, False, "record #pragma xpiler extent(P, BYTES) for the "
                                           "copy's source parameter")},
    introduces=("a leading const pointer parameter in the kernels that read the symbol",),
))
def constant_symbols(program, *, extents: bool = False):

    ast = copy.deepcopy(program.ast)
    syms, problems = analyse(program, ast)
    if not syms or problems:
        raise PassRefused("constant_symbols: no copy-to-symbol can become a parameter")
    _rewrite(program, ast, syms, extents)
    return canon.reparse(program, ast)


@constant_symbols.legality
def _legal(program, *, extents: bool = False):
    if program.entry is None or program.ast is None or \
            canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-CONSTSYM-001", "no entry function definition")]
    _, problems = analyse(program, program.ast)
    return [canon.diag(program, NAME, code, msg, node) for code, msg, node in problems]
