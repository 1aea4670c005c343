"""devcopy: remove the device buffers a lifted host wrapper keeps (copy-in/copy-out elimination).

Summary
    After ``loop_recovery`` a CUDA/HIP host wrapper still allocates device buffers and copies
    host data into and out of them: ``xp_malloc((void **) &D, S)`` (or ``D = (T *) malloc(S)``),
    ``xp_memcpy(D, H, S)`` / ``memcpy``, the kernel call on ``D``, ``xp_memcpy(H, D, S)`` and
    ``xp_free(D)`` / ``free(D)``. For each such buffer ``D`` whose copies are full (copy size =
    allocation size ``S``, textually, over scalars the entry never assigns) from / to one pointer
    parameter ``H`` of the entry, this pass replaces ``D`` by ``H`` in the kernel calls (and in a
    full ``xp_memset``/``memset`` of ``D``) and drops the declaration, allocation, copies and free.
    A full device-to-device copy ``xp_memcpy(D2, D1, S)`` from a copied-in input ``D1`` into a
    buffer ``D2`` that is copied back (and not copied in) stays as the same copy between their
    parameters, ``xp_memcpy(H2, H1, S)`` (the "out starts as a copy of data" of scatter kernels).
    The dependence analysis of the lowering passes then sees the entry's parameters directly.
    A runtime call under a status check (a ``CUDA_CHECK``-like wrapper macro of any name, or
    the same check written out: ``[do] { T v = (call); if (v != 0) ERR } [while (0)]``,
    ``if ((call) != 0) ERR``) counts as the call itself: the lift's runtime helpers return 0 on
    the virtual device, so ERR is dead; such checks of the other runtime calls become the
    bare calls.
Requires
    1. An entry function definition with at least one device buffer pattern: a local pointer
       (declared without initializer, with its allocation, or as a null pointer ``NULL`` /
       ``nullptr`` / ``0``) allocated once at the top level of the entry, copied in from or out to an entry pointer
       parameter, and otherwise used only as a kernel argument (whole, or at an offset
       ``d_y + off``), directly or through a
       host function that only hands it on to kernels whole (ggml's ``norm_f32_cuda(d_x, ...)``
       choosing a block size) (XP-DEVCOPY-001).
    2. For every such buffer (all or nothing): copies and memset cover the full allocation
       (same size expression, sizes not assigned); order alloc < copy-in < kernel calls <
       copy-out < free at the top level; one host parameter per buffer and one buffer per host
       parameter; the host parameter is used nowhere else in the entry (no host read or write
       between, not passed to a kernel directly); the element types agree; a buffer that is
       copied in but not copied back is not written by the kernel (XP-DEVCOPY-002).
Guarantees
    Same outputs on the virtual device: copy-in + copy-out pairs become in-place accesses of
    ``H``, an output-only buffer is written directly into ``H``. No ``xp_malloc``/``xp_memcpy``/
    ``xp_free`` of the removed buffers is left.
Options
    none.
Example
    ``float *d_A; xp_malloc((void **) &d_A, n * sizeof(float)); xp_memcpy(d_A, A, n *
    sizeof(float)); k(d_A, d_C, g, b, 0); xp_memcpy(C, d_C, ...); xp_free(d_A);`` (with ``d_C``
    alike) -> ``k(A, C, g, b, 0);``
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast, c_generator

import passes.canon as canon
from passes.base import Option, PassInfo, register

NAME = "devcopy"
_ALLOC = ("xp_malloc",)
_COPY = ("xp_memcpy", "memcpy", "memmove")
_SET = ("xp_memset", "memset")
_FREE = ("xp_free", "free")
_GEN = c_generator.CGenerator()


def _strip_casts(e):
    while isinstance(e, c_ast.Cast):
        e = e.expr
    return e


def _pointer_view(e):
    """The buffer under pointer casts (``reinterpret_cast<const __half2 *>(d_in)`` handed to a
    kernel is still the whole buffer, seen with another element type); ``e`` otherwise."""
    while isinstance(e, c_ast.Cast) and isinstance(e.to_type.type, c_ast.PtrDecl):
        e = e.expr
    return e


def _offset_view(e, bufs) -> bool:
    """``buf + off`` / ``buf - off`` (``buf`` a device buffer under pointer casts, ``off`` an
    expression that names no buffer and has no side effects)."""
    return isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-") and \
        isinstance(_pointer_view(e.left), c_ast.ID) and _pointer_view(e.left).name in bufs and \
        not (canon.ids_in(e.right) & set(bufs)) and not canon.has_side_effects(e.right)


def _id(e):
    e = _strip_casts(e)
    return e.name if isinstance(e, c_ast.ID) else None


def _text(e) -> str:
    return _compact(_GEN.visit(_strip_casts(e)))


def _is_null(e) -> bool:
    """``e`` is a null pointer constant (``NULL``, ``nullptr``, ``0``, ``(T *) 0``): a buffer
    declared with it and allocated later holds no data before its allocation."""
    e = _strip_casts(e)
    if isinstance(e, c_ast.ID):
        return e.name in ("NULL", "nullptr")
    if isinstance(e, c_ast.Constant) and e.value == "nullptr":
        return True
    return isinstance(e, c_ast.Constant) and e.type == "int" and e.value.rstrip("uUlL") in ("0", "0x0")


def _call_of(stmt):
    """The call of a call statement (possibly ``(void) call;``), else None."""
    if isinstance(stmt, c_ast.UnaryOp) and stmt.op == "sizeof":
        return None
    if isinstance(stmt, c_ast.Cast):
        stmt = stmt.expr
    return stmt if isinstance(stmt, c_ast.FuncCall) else None


def _args(call):
    return list(call.args.exprs) if call.args else []


# Runtime helpers of the lifted host code whose status is 0 on success: the lift's xp_memcpy,
# xp_memset, xp_free and xp_nop always return 0; xp_malloc returns 0 unless the host is out of
# memory (where the source's own wrapper would report and the buffer is unusable anyway).
_SUCCEEDING = frozenset(("xp_malloc", "xp_memcpy", "xp_memset", "xp_free", "xp_nop"))
_DEFINE = re.compile(r"\s*#\s*define\s+([A-Za-z_]\w*)\(\s*([A-Za-z_]\w*)\s*\)(.*)$", re.S)
_UNDEF = re.compile(r"\s*#\s*undef\s+([A-Za-z_]\w*)")
_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|##|#\s*[A-Za-z_]\w*|[A-Za-z_]\w*|.', re.S)
_ARG = "xp__wrapped"


def _status_wrappers(facts) -> frozenset:
    """Names of the file's status-check wrapper macros: ``#define M(x) BODY`` (defined once,
    never undefined) whose body, with ``x`` an opaque expression, is
    ``[do] { T v = (x); if (v != 0) ERR } [while (0)]`` or ``if ((x) != 0) ERR`` (the test may be
    ``v``, ``v != 0``, ``0 != v``, ``v < 0`` or ``v > 0``: false when the status is 0; no
    else branch, nothing else on the success path). Such a macro evaluates ``x`` once and
    only checks its status: when the wrapped call succeeds ``M(call);`` is ``call;``. The
    shape is recognised, not the macro's name (CUDA_CHECK, HIP_CHECK, gpuErrchk, ...)."""
    defs, undef = {}, set()
    for line in (facts or {}).get("preamble") or []:
        line = str(line).replace("\\\n", " ")
        m = _DEFINE.match(line)
        if m:
            defs.setdefault(m.group(1), []).append((m.group(2), m.group(3)))
        m = _UNDEF.match(line)
        if m:
            undef.add(m.group(1))
    out = set()
    for name, forms in defs.items():
        if len(forms) == 1 and name not in undef and _is_status_check(*forms[0]):
            out.add(name)
    return frozenset(out)


def _is_status_check(param: str, body: str) -> bool:
    toks = []
    for t in _TOKEN.findall(body):
        if t == "##":
            return False                                   # token pasting: not a plain call
        if t.startswith("#") and t[1:].strip() == param:
            toks.append('"x"')                              # #x: the call's spelling
        else:
            toks.append(_ARG if t == param else t)
    try:
        items = canon.parse_stmts("".join(toks).strip().rstrip(";") + ";")
    except Exception:                                      # not C statements (or unknown types)
        return False
    items = [s for s in items if not isinstance(s, c_ast.EmptyStatement)]
    x = _checked_expr(items[0]) if len(items) == 1 else None
    return isinstance(x, c_ast.ID) and x.name == _ARG and \
        sum(1 for n in canon.walk(items[0]) if isinstance(n, c_ast.ID) and n.name == _ARG) == 1


def _checked_expr(stmt):
    """The expression ``x`` whose status statement ``stmt`` only checks, else None:
    ``[do] { T v = (x); if (test(v)) ERR } [while (0)]`` or ``if (test(x)) ERR`` (also in
    braces), ``test(s)`` one of ``s``, ``s != 0``, ``0 != s``, ``s < 0``, ``s > 0`` (false
    when the status ``s`` is 0, success), no else branch. ERR is whatever reports the error."""
    items, braced = [stmt], False
    while len(items) == 1 and isinstance(items[0], (c_ast.DoWhile, c_ast.Compound)):
        s = items[0]
        if isinstance(s, c_ast.DoWhile):
            if not (isinstance(s.cond, c_ast.Constant) and s.cond.value == "0"):
                return None
            s = s.stmt
        items, braced = [t for t in canon.as_items(s) if not isinstance(t, c_ast.EmptyStatement)], True
    if len(items) == 2 and braced:                         # T v = (x); if (test(v)) ERR
        d, test = items
        if not (isinstance(d, c_ast.Decl) and d.name and isinstance(d.type, c_ast.TypeDecl)
                and d.init is not None and d.bitsize is None and not d.storage):
            return None
        subject, x = d.name, d.init
        if subject in canon.ids_in(x):
            return None
    elif len(items) == 1:                                  # if (test(x)) ERR
        test, subject, x = items[0], None, None
    else:
        return None
    if not isinstance(test, c_ast.If) or test.iffalse is not None:
        return None
    c = _strip_casts(test.cond)
    s = None
    if isinstance(c, c_ast.BinaryOp) and c.op in ("!=", "<", ">"):
        s = c.left if _is_zero(c.right) else c.right if _is_zero(c.left) else None
    elif subject is not None:
        s = c
    if s is None:
        # a test of the expression itself (no status variable): if ((x) != 0), if (x)
        return c if subject is None and isinstance(c, (c_ast.FuncCall, c_ast.ID)) else None
    if subject is None:
        return _strip_casts(s)
    return x if _id(s) == subject and isinstance(_strip_casts(s), c_ast.ID) else None


def _is_zero(e) -> bool:
    return isinstance(_strip_casts(e), c_ast.Constant) and _is_null(e)


def _unwrap(stmt, wrappers):
    """``call`` for a status check of a runtime helper that succeeds on the virtual device
    (``_SUCCEEDING``), else ``stmt`` itself: ``M(call)`` of a status-check wrapper macro
    (``_status_wrappers``), or the same check expanded in place (``if (call != 0) ERR``,
    ``do { int e = call; if (e) ERR } while (0)``). The error branch ERR is dead there, since
    the call returns 0: on success the statement only runs ``call``, so dropping or
    rewriting the statement is dropping or rewriting the call."""
    inner = None
    if isinstance(stmt, c_ast.FuncCall) and isinstance(stmt.name, c_ast.ID) \
            and stmt.name.name in wrappers and len(_args(stmt)) == 1:
        inner = _call_of(_args(stmt)[0])
    elif isinstance(stmt, (c_ast.If, c_ast.DoWhile, c_ast.Compound)):
        inner = _call_of(_checked_expr(stmt))
    if inner is not None and canon.call_name(inner) in _SUCCEEDING:
        return inner
    return stmt


class _Buf:
    def __init__(self, name, decl, decl_idx):
        self.name, self.decl, self.decl_idx = name, decl, decl_idx
        self.alloc = None          # (idx, size expr text)
        self.copy_in = None        # (idx, host, size text)
        self.copy_out = None
        self.sets = []             # (idx, size text)
        self.free = None
        self.kernel_uses = []      # (idx, kernel name, arg position)
        self.d2d_in = None         # (idx, source buffer, size text): device-to-device copy into it
        self.d2d_reads = []        # (idx, size text): device-to-device copies out of it
        self.other = None          # first non-pattern use (node)


def _analyse(program, ast):
    """-> (plan dict name -> (host, buf), problems [(code, msg, node)])"""
    fdef = canon.entry_def(ast, program.entry.name) if program.entry else None
    if fdef is None:
        return None, [("XP-DEVCOPY-001", "no entry function definition", None)]
    items = list(fdef.body.block_items or [])
    params = {}
    for p in (fdef.decl.type.args.params if fdef.decl.type.args else []):
        if isinstance(p, c_ast.Decl) and p.name:
            params[p.name] = p
    typedefs = canon.typedef_map(ast)
    kernels = {f.name: f for f in program.functions if f.kind == "kernel"}
    defs = canon.func_defs(ast)

    bufs: dict[str, _Buf] = {}
    for i, s in enumerate(items):
        if isinstance(s, c_ast.Decl) and s.name and isinstance(s.type, c_ast.PtrDecl):
            et = canon.elem_type_of_decl_type(s.type, typedefs)
            if et is not None and et[1] == 1:
                bufs[s.name] = _Buf(s.name, s, i)
                if s.init is not None and not _is_null(s.init):
                    c = _call_of(_strip_casts(s.init))
                    if canon.call_name(c) == "malloc" and len(_args(c)) == 1:
                        bufs[s.name].alloc = (i, _text(_args(c)[0]))
                    else:
                        bufs[s.name].other = s
    if not bufs:
        return None, [("XP-DEVCOPY-001", "the entry declares no local device buffer pointer", None)]

    host_uses: dict[str, list] = {h: [] for h in params}   # host param -> statement indices (non-copy)

    def note_other(name, node):
        b = bufs.get(name)
        if b is not None and b.other is None:
            b.other = node

    wrappers = _status_wrappers(program.facts)
    for i, s in enumerate(items):
        if i in {b.decl_idx for b in bufs.values()} and isinstance(s, c_ast.Decl) and s.name in bufs:
            continue
        s = _unwrap(s, wrappers)
        call = _call_of(s)
        name = canon.call_name(call) if call is not None else None
        args = _args(call) if call is not None else []
        handled: set[int] = set()        # arg positions consumed by the pattern
        if name in _ALLOC and len(args) == 2:
            a = _strip_casts(args[0])
            if isinstance(a, c_ast.UnaryOp) and a.op == "&" and _id(a.expr) in bufs:
                b = bufs[_id(a.expr)]
                if b.alloc is None:
                    b.alloc = (i, _text(args[1]))
                    handled = {0}
                else:
                    note_other(b.name, s)
        elif isinstance(s, c_ast.Assignment) and s.op == "=" and _id(s.lvalue) in bufs:
            c = _call_of(_strip_casts(s.rvalue))
            b = bufs[_id(s.lvalue)]
            if canon.call_name(c) == "malloc" and len(_args(c)) == 1 and b.alloc is None:
                b.alloc = (i, _text(_args(c)[0]))
                continue
            note_other(b.name, s)
            continue
        elif name in _COPY and len(args) == 3:
            d, h = _id(args[0]), _id(args[1])
            if d in bufs and h in bufs and d != h and isinstance(_strip_casts(args[0]), c_ast.ID) \
                    and isinstance(_strip_casts(args[1]), c_ast.ID) and bufs[d].d2d_in is None:
                # device-to-device copy: once both buffers are replaced by their host
                # parameters it is the same full copy between those parameters
                bufs[d].d2d_in = (i, h, _text(args[2]))
                bufs[h].d2d_reads.append((i, _text(args[2])))
                handled = {0, 1}
            elif d in bufs and h in params and isinstance(_strip_casts(args[0]), c_ast.ID):
                b = bufs[d]
                if b.copy_in is None:
                    b.copy_in = (i, h, _text(args[2]))
                    handled = {0, 1}
            elif h in bufs and d in params and isinstance(_strip_casts(args[1]), c_ast.ID):
                b = bufs[h]
                if b.copy_out is None:
                    b.copy_out = (i, d, _text(args[2]))
                    handled = {0, 1}
        elif name in _SET and len(args) == 3 and _id(args[0]) in bufs:
            bufs[_id(args[0])].sets.append((i, _text(args[2])))
            handled = {0}
        elif name in _FREE and len(args) == 1 and _id(args[0]) in bufs:
            b = bufs[_id(args[0])]
            if b.free is None:
                b.free = i
                handled = {0}
        elif name in kernels:
            for k, a in enumerate(args):
                a = _pointer_view(a)
                if isinstance(a, c_ast.ID) and a.name in bufs:
                    bufs[a.name].kernel_uses.append((i, name, k))
                    handled.add(k)
                elif _offset_view(a, bufs):
                    # a part of the buffer (``d_y + n * c`` for a second kernel's output):
                    # the same part of the host buffer once the buffer is replaced
                    bufs[_pointer_view(a.left).name].kernel_uses.append((i, name, k))
                    handled.add(k)
                    for n in canon.ids_in(a.right):
                        if n in host_uses:
                            host_uses[n].append(i)
        elif name in defs and name != fdef.decl.name:
            # a host helper that only hands the buffer on to kernels (ggml's norm_f32_cuda(d_x,
            # ...) choosing a block size): a kernel use through it
            cparams = _param_names(defs[name])
            for k, a in enumerate(args):
                if isinstance(a, c_ast.ID) and a.name in bufs and k < len(cparams) and cparams[k] \
                        and _forwards_whole(defs[name], cparams[k], kernels, defs, 0):
                    bufs[a.name].kernel_uses.append((i, name, k))
                    handled.add(k)
        # every other mention of a buffer or host parameter
        rest = [a for k, a in enumerate(args) if k not in handled] if call is not None else [s]
        for node in rest:
            for n in canon.ids_in(node):
                if n in bufs:
                    note_other(n, s)
                if n in host_uses:
                    host_uses[n].append(i)

    cands = {n: b for n, b in bufs.items() if b.alloc is not None and (b.copy_in or b.copy_out)}
    if not cands:
        return None, [("XP-DEVCOPY-001", "no device buffer is allocated and copied from / to an "
                       "entry pointer parameter", fdef)]
    written = canon.written_names(fdef.body)
    problems, plan, hosts = [], {}, {}
    for n, b in cands.items():
        def bad(msg, node=None, _n=n, _b=b):
            problems.append(("XP-DEVCOPY-002", f"device buffer {_n}: {msg}", node or _b.decl))
        if b.other is not None:
            bad("used other than as allocation, full copy, memset, whole kernel argument or free",
                b.other)
            continue
        size = b.alloc[1]
        size_ids = canon.ids_in(canon.parse_expr(size)) if size else set()
        if size_ids & written:
            bad(f"allocation size {size} depends on an assigned variable")
            continue
        sizes = [c[2] for c in (b.copy_in, b.copy_out, b.d2d_in) if c] + \
            [t for _, t in b.sets] + [t for _, t in b.d2d_reads]
        if any(t != size for t in sizes):
            bad(f"partial copy: copy size differs from the allocation size {size}")
            continue
        hs = {c[1] for c in (b.copy_in, b.copy_out) if c}
        if len(hs) != 1:
            bad(f"copied from and to different host buffers {sorted(hs)}")
            continue
        (h,) = hs
        if h in hosts:
            bad(f"host buffer {h} also backs device buffer {hosts[h]} (aliasing)")
            continue
        if host_uses.get(h):
            bad(f"host buffer {h} is used by the host or passed to a kernel besides its copies "
                f"(aliasing)", items[host_uses[h][0]])
            continue
        if b.d2d_in and (b.copy_in or not b.copy_out):
            bad("a device-to-device copy into a buffer that is also copied in, or not copied "
                "back")
            continue
        if b.d2d_reads and (b.copy_out or not b.copy_in):
            bad("a device-to-device copy out of a buffer that is not a copied-in input")
            continue
        order = [b.alloc[0]] + ([b.copy_in[0]] if b.copy_in else []) + \
            ([b.d2d_in[0]] if b.d2d_in else []) + [i for i, _ in b.sets]
        uses = [i for i, _, _ in b.kernel_uses] + [i for i, _ in b.d2d_reads]
        tail = ([b.copy_out[0]] if b.copy_out else []) + ([b.free] if b.free is not None else [])
        if uses and (max(order) >= min(uses) or (tail and max(uses) >= min(tail))):
            bad("copies are not ordered allocation < copy-in < kernel calls < copy-out < free")
            continue
        if b.copy_in and b.copy_out and b.copy_in[0] > b.copy_out[0]:
            bad("copy-out precedes copy-in")
            continue
        if b.free is not None and any(i > b.free for i in order + uses):
            bad("used after free")
            continue
        hw = canon.elem_type_of_decl_type(params[h].type, typedefs)
        bw = canon.elem_type_of_decl_type(b.decl.type, typedefs)
        # a `void *` device buffer (CNRT's cnrtMalloc(&p, bytes)) is raw memory: the host
        # buffer's element type is what its copies carry
        if hw is None or bw is None or hw[1] != 1 or (hw[0] != bw[0] and bw[0] != ["void"]):
            bad(f"element type of {h} differs from the buffer's")
            continue
        if b.copy_in and not b.copy_out:
            for _, kname, k in b.kernel_uses:
                if (_kernel_writes(defs.get(kname), kernels[kname], k, defs) if kname in kernels
                        else _param_written(defs[kname], _param_names(defs[kname])[k], defs, 0)):
                    bad(f"copied in from {h} but written by kernel {kname} and not copied back "
                        f"(in-place semantics would change {h})")
                    break
            else:
                plan[n] = (h, b)
                hosts[h] = n
            continue
        plan[n] = (h, b)
        hosts[h] = n
    return plan, problems


def _param_names(fdef) -> list:
    return [q.name if isinstance(q, c_ast.Decl) else None
            for q in (fdef.decl.type.args.params if fdef.decl.type.args else [])]


def _forwards_whole(fdef, name, kernels, defs, depth) -> bool:
    """Does host function ``fdef`` use its pointer parameter ``name`` only as a whole argument of
    kernel calls, or of host functions that do the same (a few levels deep), never assigning it?"""
    if depth > 3 or name in canon.written_names(fdef.body):
        return False
    passed = set()
    for n in canon.walk(fdef.body):
        callee = canon.call_name(n)
        if callee is None or n.args is None or (callee not in kernels and callee not in defs):
            continue
        cparams = _param_names(defs[callee]) if callee in defs else []
        for j, a in enumerate(n.args.exprs):
            a = _strip_casts(a)
            if isinstance(a, c_ast.ID) and a.name == name and (
                    callee in kernels or (j < len(cparams) and cparams[j]
                                          and _forwards_whole(defs[callee], cparams[j], kernels, defs, depth + 1))):
                passed.add(id(a))
    fields = {id(n.field) for n in canon.walk(fdef.body) if isinstance(n, c_ast.StructRef)}   # d.x is no use of x
    return all(id(n) in passed for n in canon.walk(fdef.body)
               if isinstance(n, c_ast.ID) and n.name == name and id(n) not in fields)


def _kernel_writes(fdef, kfun, pos, defs=None) -> bool:
    """Conservative: may kernel ``fdef`` write through its parameter number ``pos``?"""
    if fdef is None or pos >= len(kfun.params):
        return True
    p = kfun.params[pos]
    if p.role in ("output", "inout"):
        return True
    return _param_written(fdef, p.name, defs or {}, 0)


def _derived_base(e, name):
    """The ``ID(name)`` node of a pointer expression ``name``, ``name + off``, ``off + name``,
    ``name - off`` or ``&name[off]`` (casts allowed), else None."""
    e = _strip_casts(e)
    if isinstance(e, c_ast.ID):
        return e if e.name == name else None
    if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
        left = _derived_base(e.left, name)
        if left is not None and name not in canon.ids_in(e.right):
            return left
        if e.op == "+" and name not in canon.ids_in(e.left):
            return _derived_base(e.right, name)
        return None
    if isinstance(e, c_ast.UnaryOp) and e.op == "&" and isinstance(e.expr, c_ast.ArrayRef):
        r = _strip_casts(e.expr.name)
        if isinstance(r, c_ast.ID) and r.name == name and name not in canon.ids_in(e.expr.subscript):
            return r
    return None


def _readonly_helper_args(fdef, name, defs, depth) -> set[int]:
    """ids of the argument expressions ``p + off`` / ``&p[off]`` of ``name`` handed to helpers
    defined in the file that do not write through that parameter."""
    out = set()
    for n in canon.walk(fdef.body):
        if (isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in defs
                and depth < 4 and n.args is not None):
            callee = defs[n.name.name]
            cparams = [q for q in (callee.decl.type.args.params if callee.decl.type.args else [])
                       if isinstance(q, c_ast.Decl)]
            for j, a in enumerate(n.args.exprs):
                if _derived_base(a, name) is not None and j < len(cparams) and cparams[j].name \
                        and not _param_written(callee, cparams[j].name, defs, depth + 1):
                    out.add(id(_strip_casts(a)))
    return out


def _written_except_readonly_args(fdef, name, defs, depth) -> set[str]:
    """``canon.written_names`` where taking ``&p[off]`` only to pass it to a read-only helper
    parameter (a wmma fragment load) does not count as a write of ``p``."""
    skip = _readonly_helper_args(fdef, name, defs, depth)
    out = set()
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Assignment):
            r = canon.lvalue_root(n.lvalue)
            if r:
                out.add(r)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
            if n.op == "&" and id(n) in skip:
                continue
            r = canon.lvalue_root(n.expr)
            if r:
                out.add(r)
    return out


def _write_targets(body) -> set[int]:
    """ids of the nodes an assignment, ``++`` / ``--`` or ``&`` may write or expose through:
    each such lvalue and the array / ``.`` struct bases it is made of (``(*q)[i] = v`` writes
    through ``*q``)."""
    out = set()
    for n in canon.walk(body):
        if isinstance(n, c_ast.Assignment):
            lv = n.lvalue
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
            lv = n.expr
        else:
            continue
        while lv is not None:
            out.add(id(lv))
            lv = lv.name if isinstance(lv, c_ast.ArrayRef) or \
                (isinstance(lv, c_ast.StructRef) and lv.type == ".") else None
    return out


def _param_written(fdef, name, defs, depth) -> bool:
    """May ``fdef`` write through its pointer parameter ``name``? A whole-argument pass to a
    helper defined in the file is followed into the helper (a few levels deep)."""
    if name in _written_except_readonly_args(fdef, name, defs, depth):
        return True
    # locals whose elements are pointers to const: storing p + off there keeps p read-only
    const_views = set()
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Decl) and n.name:
            t = n.type
            while isinstance(t, c_ast.ArrayDecl):
                t = t.type
            if isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.TypeDecl) \
                    and "const" in (t.type.quals or []):
                const_views.add(n.name)
    # any mention other than the base of an rvalue subscript may alias / escape
    targets = _write_targets(fdef.body)
    ok = set()
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.StructRef):
            ok.add(id(n.field))                       # a field name, not the parameter
        elif isinstance(n, c_ast.ArrayRef) and _id(n.name) == name and id(n) not in targets:
            ok |= {id(m) for m in canon.walk(n.name)}   # (a store ((T *) p)[i] = v is a write)
        elif isinstance(n, c_ast.UnaryOp) and n.op == "*" and id(n) not in targets:
            base = _derived_base(n.expr, name)        # *(p + off) read (the lift of __ldg)
            if base is not None:
                ok.add(id(base))
        elif isinstance(n, c_ast.Decl) and n.init is not None and n.name in const_views:
            ok |= {id(m) for m in canon.walk(n.init)}  # const T *row = p + off: read-only view
        elif (isinstance(n, c_ast.Assignment) and n.op == "="
              and canon.lvalue_root(n.lvalue) in const_views):
            ok |= {id(m) for m in canon.walk(n.rvalue)}  # xr[tid] = p + off (const T *xr[])
        elif (isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and n.name.name in defs
              and depth < 4 and n.args is not None):
            callee = defs[n.name.name]
            cparams = [q for q in (callee.decl.type.args.params if callee.decl.type.args else [])
                       if isinstance(q, c_ast.Decl)]
            for j, a in enumerate(n.args.exprs):     # helper(..., p + off, ...) only reading it
                base = _derived_base(a, name)
                if base is not None and j < len(cparams) and cparams[j].name \
                        and not _param_written(callee, cparams[j].name, defs, depth + 1):
                    ok.add(id(base))
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.ID) and n.name == name and id(n) not in ok:
            return True
    return False


def _rewrite(program, ast, plan):
    fdef = canon.entry_def(ast, program.entry.name)
    items = list(fdef.body.block_items or [])
    drop = set()
    for n, (h, b) in plan.items():
        drop |= {b.decl_idx, b.alloc[0]}
        drop |= {c[0] for c in (b.copy_in, b.copy_out) if c}
        if b.free is not None:
            drop.add(b.free)
    params = {p.name: p for p in (fdef.decl.type.args.params if fdef.decl.type.args else [])
              if isinstance(p, c_ast.Decl)}
    kernels = {f.name for f in program.functions if f.kind == "kernel"}
    mapping = {n: _as_buffer(h, params.get(h), b.decl) if any(k not in kernels for _, k, _ in b.kernel_uses)
               else c_ast.ID(h) for n, (h, b) in plan.items()}
    wrappers = _status_wrappers(program.facts)
    out = []
    for i, s in enumerate(items):
        if i in drop:
            continue
        s = _unwrap(s, wrappers)      # the other checked runtime calls: M(call); -> call;
        out.append(canon.substitute(s, mapping) if canon.ids_in(s) & set(mapping) else s)
    fdef.body.block_items = out


def _const_pointee(t) -> bool:
    return isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.TypeDecl) and "const" in (t.type.quals or [])


def _as_buffer(host: str, param, decl):
    """What replaces a buffer handed to a host helper: the host parameter, cast to the buffer's
    own pointer type when the parameter points to const and the buffer does not (a helper taking
    ``void *`` of the buffer would get a ``const`` pointer, which C++ refuses; only an input the
    kernels do not write is replaced so)."""
    if param is not None and _const_pointee(param.type) and not _const_pointee(decl.type):
        return c_ast.Cast(c_ast.Typename(None, [], None, copy.deepcopy(decl.type)), c_ast.ID(host))
    return c_ast.ID(host)


EXTENT_PRAGMA = "xpiler extent"


def _record_extents(program, ast, plan) -> None:
    """File-scope ``#pragma xpiler extent(H, BYTES)`` per removed buffer: the byte size of the
    host buffer ``H`` as the host code allocated it (a fact the lowering can use when the
    access analysis cannot bound the subscripts)."""
    at = next(k for k, e in enumerate(ast.ext) if isinstance(e, c_ast.FuncDef) and
              e.decl.name == program.entry.name)
    consts = _host_constants(ast.ext[at])
    for n, (h, b) in sorted(plan.items()):
        ast.ext.insert(at, c_ast.Pragma(f"{EXTENT_PRAGMA}({h}, {_over_params(b.alloc[1], consts)})"))


def _host_constants(fdef) -> dict:
    """Scalar locals declared with an initialiser among the entry's top-level statements and
    never assigned (``const int OH = (H - KH) / SH + 1;``, ``size_t bytes = w * h * 4;``):
    name -> initialiser. Later passes fold or drop them, so a recorded size is written over
    their initialisers instead."""
    assigned = set()
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
            assigned.add(n.lvalue.name)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&") and \
                isinstance(n.expr, c_ast.ID):
            assigned.add(n.expr.name)
    out = {}
    for s in fdef.body.block_items or []:
        if isinstance(s, c_ast.Decl) and s.init is not None and s.name not in assigned \
                and isinstance(s.type, c_ast.TypeDecl) and s.name and \
                not canon.ids_in(s.init) & assigned:      # the value it had stays readable
            out[s.name] = s.init
    return out


_KEYWORD_TYPES = frozenset("int unsigned signed long short char float double".split())
_SIZEOF = re.compile(r"sizeof\s*\(\s*([A-Za-z_][\w ]*?)\s*\)")


def _sizeof_typedefs(size: str) -> str:
    """``sizeof(T)`` of a typedef'd scalar (``int64_t``, ``half``, ``size_t``) -> its byte count:
    the size expression then names only the entry's scalars, which the lowering can read (a
    typedef name in it looks like an unknown variable)."""
    def one(m):
        words = m.group(1).split()
        n = canon.TYPE_BYTES.get(" ".join(words))
        return str(n) if n is not None and not set(words) <= _KEYWORD_TYPES else m.group(0)
    return _SIZEOF.sub(one, size)


def _over_params(size: str, consts: dict) -> str:
    """``size`` with the host constants in it replaced by their initialisers and typedef'd
    ``sizeof`` folded (unchanged when the text does not parse)."""
    size = _sizeof_typedefs(size)
    try:
        e = canon.parse_expr(size)
    except Exception:
        return size
    for _ in range(8):
        names = canon.ids_in(e) & set(consts)
        if not names:
            return _compact(_GEN.visit(e))
        e = canon.substitute(e, {n: consts[n] for n in names})
    return size


def _compact(text: str) -> str:
    """``text`` without the blanks that separate no two words (``sizeof(unsigned int)`` keeps
    its one)."""
    return re.sub(r"(?<!\w)\s+|\s+(?!\w)", "", text)


def recorded_extents(ast) -> dict[str, str]:
    """Host parameter -> byte-size C expression, from ``#pragma xpiler extent(H, BYTES)``."""
    out = {}
    for e in ast.ext:
        if isinstance(e, c_ast.Pragma) and e.string.strip().startswith(EXTENT_PRAGMA):
            body = e.string.strip()[len(EXTENT_PRAGMA):].strip()
            if body.startswith("(") and body.endswith(")") and "," in body:
                name, _, size = body[1:-1].partition(",")
                out[name.strip()] = size.strip()
    return out


@register(PassInfo(
    name=NAME,
    summary="lifted host code: replace device buffers that are fully copied from / to an entry "
            "pointer parameter by that parameter; drop allocation, copies and free",
    requires=("an entry with a local buffer allocated and copied from / to an entry pointer "
              "parameter (XP-DEVCOPY-001)",
              "full copies, one host buffer per device buffer and back, host buffer otherwise "
              "unused, ordered alloc < copy-in < kernels < copy-out < free, input-only buffers "
              "not written by the kernel (XP-DEVCOPY-002)"),
    guarantees=("same outputs on the virtual device",
                "kernels are called on the entry's pointer parameters; no xp_malloc / xp_memcpy "
                "/ xp_free of the removed buffers"),
    options={"extents": Option(bool, False, "record each removed buffer's allocation size as "
                                           "#pragma xpiler extent(H, BYTES) for the lowering")},
))
def devcopy(program, *, extents: bool = False, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program, extents=extents))
    _rewrite(program, plan.ast, plan.data)
    if extents:
        _record_extents(program, plan.ast, plan.data)
    return canon.reparse(program, plan.ast)


@devcopy.legality
def _legal(program, *, extents: bool = False):
    """The buffers to remove, found on a copy of the AST that the rewrite then changes: the plan."""
    if program.entry is None or program.ast is None:
        return [canon.diag(program, NAME, "XP-DEVCOPY-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    found, problems = _analyse(program, ast)
    if problems:
        return [canon.diag(program, NAME, code, msg, node) for code, msg, node in problems]
    if not found:
        return [canon.diag(program, NAME, "XP-DEVCOPY-001", "no device buffer can be removed")]
    return canon.Rewritten(ast, found)
