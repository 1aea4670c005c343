"""task_bind: lower canonical sequential C to BANG C by splitting parallel loops across tasks.

Summary
    The entry's statements are partitioned as for the GPU lowering (``loop_bind.plan``: loop
    nests whose outermost loop carries no dependence, proved by ``passes.analysis.affine``). Each such
    nest becomes a ``__mlu_global__`` kernel: the trip count ``n`` of its outermost loop is cut
    into ``taskDim`` contiguous chunks (``per = ceil(n / taskDim)``, task ``taskId`` takes
    ``[taskId*per, min(n, (taskId+1)*per))``, empty chunks return). A chunk runs in *tiles* of
    ``tile`` iterations sized for the NRAM capacity of the device profile: per tile, each
    pointer parameter (and each one-dimensional host array the kernel receives as a GDRAM
    buffer) the nest can stage (``bang_lower_windows``: affine subscripts, window
    length linear in the tile length, dense unconditional writes for outputs) is copied
    GDRAM2NRAM into a 128-byte-aligned slot of one ``__nram__`` pool (slot sizes rounded up to
    128 bytes plus 128 bytes of zeroed slack), the tile computes on NRAM, and written windows
    go back NRAM2GDRAM. Read-only windows that do not move with the tile are loaded once per
    task. Buffers that cannot be staged keep scalar GDRAM accesses. Statements between nests
    that touch memory run in task 0 of a one-launch kernel; extent-1 loops around a bound
    loop (``loop_bind``'s units) become one declaration of their variable at the top of the
    kernel, and local arrays the dependence test privatised get one copy per task (every
    iteration overwrites what it reads). Host arrays device code uses become GDRAM buffers
    the host wrapper allocates with cnrtMalloc and fills from the array; a ``static`` array's
    values (which persist between calls) are copied back before the buffer is freed. Host
    pointer locals into such buffers or parameters are passed rebased onto the device buffer
    (``compute = C`` -> ``d_C``). Before planning, a buffer ``calloc``/``malloc``'d in a loop
    body and freed in the same block (the lift of ``extern __shared__`` dynamic shared memory)
    becomes a local array of that body (zero-filled as calloc did); in a kernel it stays a
    local array when constant and at most 16 KiB, else it is a ``taskId`` slice of one GDRAM
    buffer the host allocates for all tasks. ``if (c) { S; continue; } rest`` at the top of a
    loop body becomes ``if (c) { S } else { rest }`` so the lift's early returns guard the
    accesses below them, and a local pointer walked by a step at the end of the innermost body
    of a counted nest (``*col = ..; col += m;``) is read at its closed-form offset instead
    (``pointer_iv``). Element sizes follow the file's typedefs and struct layouts
    (``__half`` 2, ``__half2`` 4 bytes); binary16 is spelled ``half`` in the output.
    Sequential loops containing parallel nests stay on the host
    and launch per iteration; ``#pragma omp`` lines are dropped. The host entry keeps the entry's name and parameters and comes from the BANG
    back-end's ``emit_host_entry`` (CNRT queue, cnrtMalloc/cnrtMemcpy sized by
    ``affine.extents``, ``cnrtDim3_t dim = {clusters*cores, 1, 1}``, ``CNRT_FUNC_TYPE_UNION<clusters>``,
    ``<<<dim, ktype, queue>>>``, cnrtQueueSync, copies back, cnrtFree).
Requires
    1. At least one loop carries no dependence  [XP-TASK-BIND-001].
    2. The element count of every pointer parameter is computable (``affine.extents``; the
       host allocation recorded by ``devcopy{extents}`` bounds it, and so does a smaller
       constant count the caller declares in ``extents``)  [XP-TASK-BIND-002].
    3. With constant shapes, one iteration's staged windows fit the NRAM pool of the profile
       (``nram_bytes - 192 KiB``: 128 KiB stack reserve, 64 KiB for tensorize scratch); with
       symbolic shapes the check runs in the kernel, which falls back to GDRAM accesses
       [XP-TASK-BIND-003].
    4. Well-formed options: ``extents`` as ``name:count ...``, a known ``profile``
       [XP-TASK-BIND-004].
    5. ``cores == 4``, ``clusters`` in 1, 2, 4, 8, 16 and at most the profile's clusters
       [XP-TASK-BIND-005].
    6. Canonical C (platform ``vnni``) without intrinsics, traceable pointers, device-callable
       calls, no device->host scalars  [XP-TASK-BIND-006].
    7. Host arrays device code uses can become GDRAM buffers (constant bounds, no pointers,
       device code takes neither ``sizeof`` nor ``&`` of the whole array) and host pointer
       locals can be rebased onto them  [XP-TASK-BIND-007].
    8. Every staged buffer's element type has a known size on the MLU  [XP-TASK-BIND-008].
Guarantees
    Same outputs on the virtual device in strict mode (directions of every ``__memcpy`` match
    the memory spaces, NRAM within capacity, every copy size > 0); launches use all
    ``clusters * cores`` tasks; entry name and parameters kept.
Options
    clusters (4), cores (4): the launch (UNION<clusters>, dim.x = clusters*cores).
    profile: BANG device profile whose NRAM capacity sizes the tiles ("" = default).
Example
    ``for (int i = 0; i < n; ++i) out[i] = x[i] + y[i];`` ->
    ``__mlu_global__ void add_k0(const float *x, const float *y, float *out, int n)`` whose task
    copies ``x[w0..w1)``, ``y[w0..w1)``, ``out[w0..w1)`` to NRAM per tile, runs
    ``__xp_out_n[i - __xp_w0_out] = __xp_x_n[i - __xp_w0_x] + __xp_y_n[i - __xp_w0_y]`` and
    copies ``out`` back; host ``add(x, y, out, n)`` launches it with ``<<<dim, ktype, queue>>>``.
"""
from __future__ import annotations

import copy
import re
from dataclasses import replace

from pycparser import c_ast

from platforms.common.hostgen import cnrt_names
from xpiler.ir.errors import Coord, Diagnostic

import passes.analysis.affine as affine
import passes.canon as canon
import passes.cleanup.devcopy as devcopy
import passes.lower.loop_bind as loop_bind
import passes.lower.loop_bind.kernel_ast as kernel_ast
from passes.lower.heap_locals import HEAP_PREFIX, heap_locals
from passes.lower.task_bind import pointer_iv
from passes.lower.task_bind.windows import IMAX, IMIN, plan_buffers, target
from passes.base import Option, PassInfo, register

NAME = "task_bind"
STACK_RESERVE = 128 * 1024         # Cambricon kernels leave this much NRAM to the compiler
SCRATCH_RESERVE = 64 * 1024        # left for tensorize_bang's scratch buffers
POOL_NAME = "__xp_pool"
SCRATCH_PREFIX = "__xp_d_"
# loop_bind.plan's refusals -> task_bind's codes (XP-BIND-004, the CUDA block size, is an
# option task_bind does not have: it would be an option out of range)
_CODE = {"XP-BIND-001": "XP-TASK-BIND-001", "XP-BIND-002": "XP-TASK-BIND-002",
         "XP-BIND-003": "XP-TASK-BIND-006", "XP-BIND-004": "XP-TASK-BIND-004",
         "XP-BIND-005": "XP-TASK-BIND-007"}
_ELEM_SIZE = {"float": 4, "int": 4, "unsigned": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4,
              "double": 8, "long": 8, "long long": 8, "int64_t": 8, "uint64_t": 8,
              "unsigned long": 8, "short": 2, "int16_t": 2, "uint16_t": 2, "unsigned short": 2,
              "half": 2, "_Float16": 2, "__half": 2, "char": 1, "signed char": 1, "unsigned char": 1,
              "int8_t": 1, "uint8_t": 1, "bool": 1}


# names of IEEE binary16 in lifted programs (CUDA/HIP ``__half``, the lift's ``_Float16``); BANG
# C's own type is ``half`` (PLATFORMS.md), which the output uses
_FLOAT16_NAMES = ("_Float16", "__half")


def type_sizes(ast) -> dict[str, tuple[int, int]]:
    """Element type -> (size, alignment) in bytes on the MLU: the scalar types of ``_ELEM_SIZE``
    and the file's typedefs of them, or of structs of them (``__half2``: two binary16 fields,
    4 bytes) laid out as C does (fields at multiples of their alignment, the size rounded to
    the struct's alignment, ``__attribute__((aligned(N)))`` raising it). Typedefs with other
    attributes (``packed``, vector sizes) or fields of unknown types have no entry."""
    out = {n: (v, v) for n, v in _ELEM_SIZE.items()}
    for e in getattr(ast, "ext", None) or []:
        if not isinstance(e, c_ast.Typedef) or not isinstance(e.type, c_ast.TypeDecl) or \
                getattr(e.type, "attributes", None):
            continue
        t = e.type.type
        if isinstance(t, c_ast.IdentifierType):
            base = out.get(" ".join(t.names))
            if base is not None:
                out[e.name] = base
        elif isinstance(t, c_ast.Struct) and t.decls:
            laid = _struct_layout(t, out)
            if laid is not None:
                out[e.name] = laid
    return out


def _struct_layout(st, known) -> tuple[int, int] | None:
    align = 1
    for a in getattr(st, "attributes", None) or []:
        for attr in getattr(a, "attributes", None) or []:
            arg = str(getattr(attr, "arguments", "") or "").strip()
            if getattr(attr, "name", "") != "aligned" or not arg.isdigit():
                return None
            align = max(align, int(arg))
    off = 0
    for d in st.decls:
        if not isinstance(d, c_ast.Decl) or d.bitsize is not None or \
                not isinstance(d.type, c_ast.TypeDecl) or \
                not isinstance(d.type.type, c_ast.IdentifierType) or d.align:
            return None
        f = known.get(" ".join(d.type.type.names))
        if f is None:
            return None
        size, fa = f
        off = (off + fa - 1) // fa * fa + size
        align = max(align, fa)
    return (off + align - 1) // align * align, align


class TaskBindError(Exception):
    def __init__(self, code: str, message: str, node=None):
        super().__init__(message)
        self.code, self.message, self.node = code, message, node


def _diag(program, code, message, node=None) -> Diagnostic:
    c = getattr(node, "coord", None)
    coord = Coord(getattr(c, "file", None) or program.path, getattr(c, "line", 0) or 0,
                  getattr(c, "column", 0) or 0)
    return Diagnostic(code, message, coord, pass_name=NAME)


def pool_bytes(profile: dict) -> int:
    return int(profile["nram_bytes"]) - STACK_RESERVE - SCRATCH_RESERVE


def _profile(name: str) -> dict:
    import platforms

    return platforms.profile("bang", name or None)


# ------------------------------------------------------------------------------ planning
class _Lowering:
    """Everything the rewrite needs, computed once (legality runs the same code)."""

    def __init__(self, program, clusters: int, cores: int, profile: str, extents: str = ""):
        self.program = program
        self.sizes = type_sizes(program.ast)
        try:
            prof = _profile(profile)
        except Exception as exc:          # UsageError: no such profile
            raise TaskBindError("XP-TASK-BIND-004", f"profile option: {exc}") from None
        if cores != 4 or clusters not in (1, 2, 4, 8, 16) or clusters > int(prof["clusters"]):
            raise TaskBindError("XP-TASK-BIND-005", f"launch {clusters} clusters x {cores} cores: "
                                f"UNIONn needs 4 cores per cluster and n in 1, 2, 4, 8, 16 "
                                f"(profile {prof['name']} has {prof['clusters']} clusters)")
        self.clusters, self.cores, self.prof = clusters, cores, prof
        self.pool = pool_bytes(prof)
        program = _free_wrapper_names(program)
        # pointers walked by a step per innermost iteration -> the pointer at a closed-form
        # offset the access analysis can trace (im2col's ``*col = ..; col += m;``)
        program = _pointer_inductions(program)
        # per-iteration heap buffers (the lift's dynamic shared memory) -> local arrays the
        # dependence test can see; symbolic or large ones become per-task GDRAM slices when
        # emitted in device code
        program, self.heaps = heap_locals(program)
        self.program = program
        self.heap_uses: dict[str, list] = {}
        try:
            hints = _host_extents(program)
            try:
                given = loop_bind.parse_extents(extents)
            except ValueError as exc:
                raise TaskBindError("XP-TASK-BIND-004", f"extents option: {exc}") from None
            # caller-declared counts (a case file's constant shapes) only fill what the host
            # code does not record; the analysis still decides where it can bound an access
            extra = {n: c for n, c in given.items() if n not in hints}
            the_plan, problems = loop_bind.plan(program, extents={**hints, **extra})
            if the_plan is not None:
                # the program planned (loop_bind folds array sizeof, promotes scalars): a
                # copy, where the heap buffers' declarations are other nodes
                self.heaps = _same_decls(program, the_plan.program, self.heaps)
                program = self.program = the_plan.program
                # the host allocation bounds every access of the source; the access analysis
                # over-approximates subscripts under conditions (x0[..] in c ? x0[..] : x1[..])
                for name, size in hints.items():
                    if name in the_plan.sizes:
                        the_plan.sizes[name] = size
                # so does a caller-declared count: where the analysis bound is a larger
                # constant (a subscript under a condition it cannot see), copying that many
                # elements would read past the caller's buffer
                for name, size in extra.items():
                    have, cap = _const_int(the_plan.sizes.get(name)), _const_int(size)
                    if have is not None and cap is not None and cap < have:
                        the_plan.sizes[name] = str(cap)
        except TypeError as exc:       # affine.poly_max on a non-counted loop (lo is None)
            raise TaskBindError("XP-TASK-BIND-002", f"the extent analysis failed on a loop "
                                f"that is not counted ({exc})") from None
        if self.heaps and the_plan is not None:
            host = _in_host_code(the_plan.regions, self.heaps)
            if host:
                raise TaskBindError("XP-TASK-BIND-006", f"the heap buffer '{host.name}' "
                                    f"({host.count} elements) stays in host code (its loop "
                                    f"is sequential): only device code gets a GDRAM slice")
        if the_plan is None:
            d = problems[0]
            raise TaskBindError(_CODE.get(d.code, "XP-TASK-BIND-006"),
                                d.message.replace("single-thread GPU program",
                                                  "single-task BANG program"), None)
        self.plan = the_plan
        self.info = the_plan.info
        self.params = {p.name: p for p in program.entry.params}
        self.kernels: list[str] = []
        self.stats = {"kernels": 0, "staged": [], "direct": [], "tasks": clusters * cores,
                      "nram_buffers": set()}
        self.gen = _generator(program)
        # host arrays device code uses (device temporaries): GDRAM buffers of the same size,
        # filled from the host array before the first launch; a ``static`` array's values
        # persist between calls, so they are copied back when the buffer is released
        self.scratch = dict(getattr(the_plan, "scratch", None) or {})
        self.host_text = self._lower(the_plan.regions)

    def _scratch_alloc(self, name: str) -> str:
        d = SCRATCH_PREFIX + name
        return (f"char *{d} = 0;\ncnrtMalloc((void **)&{d}, sizeof({name}));\n"
                f"cnrtMemcpy({d}, (void *) {name}, sizeof({name}), "
                f"CNRT_MEM_TRANS_DIR_HOST2DEV);")

    # -- regions -----------------------------------------------------------------------
    def _lower(self, regions) -> str:
        out, mine = [], []
        for r in regions:
            if r.kind == "host":
                for s in r.stmts:
                    out.append(_stmt_text(self.gen, kernel_ast.clean(s)))
                    if isinstance(s, c_ast.Decl) and s.name in self.scratch:
                        out.append(self._scratch_alloc(s.name))
                        mine.append(s.name)
            elif r.kind == "hostloop":
                loop = kernel_ast.clean(r.stmts[0])
                hole = c_ast.FuncCall(c_ast.ID("__xp_hole"), None)
                loop.stmt = c_ast.Compound([hole])
                text = _stmt_text(self.gen, loop)
                out.append(text.replace("__xp_hole();", self._lower(r.inner)))
            elif r.kind == "hostif":
                cond = _expr_text(self.gen, kernel_ast.clean(r.stmts[0]).cond)
                text = f"if ({cond}) {{\n{self._lower(r.inner)}\n}}"
                if r.stmts[0].iffalse is not None:
                    text += f" else {{\n{self._lower(r.orelse)}\n}}"
                out.append(text)
            else:
                text = self._kernel(r) if r.kind == "kernel" else self._single(r)
                self.kernels.append(text)
                args = ", ".join(self._arg(n, t) for n, t in r.params)
                v = cnrt_names(self.program.entry.params)
                heaps = self.heap_uses.get(r.name, [])
                for h in heaps:
                    out.append(f"{h.etype} *{h.param} = 0;\ncnrtMalloc((void **) &{h.param}, "
                               f"(size_t) {self.clusters * self.cores} * ({h.count}) * "
                               f"sizeof({h.etype}));")
                out.append(f"{r.name}<<<{v['dim']}, {v['ktype']}, {v['queue']}>>>({args});")
                if heaps:
                    out.append(f"cnrtQueueSync({v['queue']});")
                    out += [f"cnrtFree({h.param});" for h in heaps]
                self.stats["kernels"] += 1
        if mine:         # scratch buffers live as long as the block declaring the host array
            out.append(f"cnrtQueueSync({cnrt_names(self.program.entry.params)['queue']});")
            for n in mine:
                decl = self.scratch[n]
                if "static" in (decl.storage or []) and "const" not in (decl.quals or []):
                    out.append(f"cnrtMemcpy((void *) {n}, {SCRATCH_PREFIX}{n}, sizeof({n}), "
                               f"CNRT_MEM_TRANS_DIR_DEV2HOST);")
                out.append(f"cnrtFree({SCRATCH_PREFIX}{n});")
        return "\n".join(out)

    def _arg(self, name: str, ptype: str) -> str:
        """Host expression passed for kernel parameter ``name``: ``d_P`` for a pointer
        parameter, the GDRAM buffer of a host array, a host pointer local rebased onto the
        device buffer it points into (``float *c = C + k;`` -> ``d_C + k``, as loop_bind
        does), the value itself for scalars."""
        if _is_pointer(name, self.params):
            return f"d_{name}"
        if name.startswith(HEAP_PREFIX):
            return name
        if name in self.scratch:
            return f"({ptype}) {SCRATCH_PREFIX}{name}"
        dev = loop_bind.device_value(name, ptype, self.info, self.scratch,
                                     getattr(self.plan, "aliases", None) or {})
        return name if dev is None else _expr_text(self.gen, dev)

    def _need_scalars(self, r, texts, host_texts=()) -> None:
        """Scalar entry parameters named in ``texts``, and host scalar locals (visible at the
        launch) named in ``host_texts``, the expressions built from the analysis."""
        have = {n for n, _ in r.params}
        for p in self.program.entry.params:
            if p.kind != "pointer" and p.name not in have and \
                    any(re.search(rf"\b{re.escape(p.name)}\b", t) for t in texts):
                r.params.append((p.name, p.type))
                have.add(p.name)
        for name, ptype in r.host.items():
            if name not in have and any(re.search(rf"\b{re.escape(name)}\b", t) for t in host_texts):
                r.params.append((name, ptype))
                have.add(name)
        order = {p.name: k for k, p in enumerate(self.program.entry.params)}
        r.params.sort(key=lambda p: (0, order[p[0]]) if p[0] in order else (1, 0))

    def _heap_repl(self, r, nodes) -> dict:
        """Declarations of symbolic-size heap arrays in ``nodes`` -> a pointer into this
        task's slice of a GDRAM buffer the host allocates for every task (the kernel gets it
        as parameter ``__xp_heap_<name>``); constant-size ones stay local arrays."""
        repl = {}
        for n in (x for node in nodes for x in canon.walk(node)):
            h = self.heaps.get(id(n))
            if h is None or h.const:
                continue
            if not h.host_ok:
                raise TaskBindError("XP-TASK-BIND-006", f"the size of the per-iteration buffer "
                                    f"'{h.name}' ({h.count}) is not computable before the "
                                    f"launch (it names kernel locals)", n)
            repl[id(n)] = _slice_decl(h)
            uses = self.heap_uses.setdefault(r.name, [])
            if h not in uses:
                uses.append(h)
                r.params.append((h.param, f"{h.etype} *"))
        return repl

    def _single(self, r) -> str:
        repl = self._heap_repl(r, r.stmts)
        body = "\n".join(_stmt_text(self.gen, kernel_ast.clean(_copy_replace(s, repl)))
                         for s in r.stmts)
        self._need_scalars(r, [body])
        return (f"__mlu_global__ void {r.name}({kernel_ast.param_decls(r.params)})\n{{\n"
                f"  if (taskId != 0) return;\n{body}\n}}\n")

    def _kernel(self, r) -> str:
        info, lp = self.info, r.loops[0]
        heap_repl = self._heap_repl(r, [lp.node.stmt])
        body_node = lp.node.stmt
        have = {n for n, _ in r.params}
        arrays = self._stageable_scratch(r, have)
        buffers = plan_buffers(info, lp, body_node, {uid: n for n, (uid, _, _) in arrays.items()})
        for n, b in buffers.items():
            if b.mode == "stage" and n not in have:
                # reached only through a host pointer local the kernel receives rebased
                # (float *o = out + 8): the window would be copied from a name it lacks
                b.mode, b.reason = "direct", "reached through a host pointer local"
        staged = {n: b for n, b in buffers.items() if b.mode == "stage"}
        for n, b in buffers.items():
            (self.stats["staged"] if b.mode == "stage" else self.stats["direct"]).append(
                f"{r.name}:{n}" + ("" if b.mode == "stage" else f" ({b.reason})"))
        count = _expr_text(self.gen, kernel_ast.count_ast(lp, info))
        var = self._var_decl(lp, "__xp_t")
        direct_body = _stmt_text(self.gen, kernel_ast.clean(_copy_replace(body_node, heap_repl)))
        prelude = self._prelude(r)
        head = prelude + [f"const long long __xp_n = {count};",
                "const long long __xp_per = (__xp_n + taskDim - 1) / taskDim;",
                "const long long __xp_lo = (long long) taskId * __xp_per;",
                "long long __xp_hi = __xp_lo + __xp_per;",
                "if (__xp_hi > __xp_n) __xp_hi = __xp_n;",
                "if (__xp_lo >= __xp_hi) return;"]
        direct_loop = (f"for (long long __xp_t = __xp_lo; __xp_t < __xp_hi; ++__xp_t) {{\n"
                       f"{var}\n{direct_body}\n}}")
        texts = [count, var, direct_body] + prelude
        if not staged:
            lines = head + [direct_loop]
            self._need_scalars(r, texts)
            return self._wrap(r, lines)
        # tile size: sum over staged buffers of es * (alpha * step * (tile - 1) + beta)
        # bytes, each slot rounded up to 128 B plus 128 B of slack, within the pool
        order = list(staged)
        etype = {n: arrays[n][1] if n in arrays else _elem_type(self.params[n]) for n in order}
        es = {n: self._elem_size(n, etype[n]) for n in order}
        grow = affine.Poly()
        base = affine.Poly()
        for n in order:
            b = staged[n]
            grow = grow + affine.Poly.const(es[n] * lp.step) * b.alpha
            base = base + affine.Poly.const(es[n]) * b.beta + affine.Poly.const(256)
        lines = list(head)
        const = grow.is_const() and base.is_const()
        if const:
            g, bb = grow.value(), base.value()
            if bb > self.pool:
                raise TaskBindError("XP-TASK-BIND-003", f"one iteration of the loop over "
                                    f"'{lp.var}' needs {bb} bytes of NRAM windows "
                                    f"({', '.join(order)}), the pool of profile "
                                    f"{self.prof['name']} holds {self.pool}", lp.node)
            tile = (self.pool - bb) // g + 1 if g > 0 else None
            lines.append(f"long long __xp_tile = {tile if tile is not None else '__xp_per'};")
        else:
            gt, bt = _poly_text(grow), _poly_text(base)
            texts += [gt, bt]
            lines += [f"const long long __xp_g = {gt};", f"const long long __xp_bb = {bt};",
                      f"long long __xp_tile = __xp_g > 0 ? ({self.pool}LL - __xp_bb) / __xp_g + 1"
                      f" : __xp_per;",
                      f"if (__xp_bb > {self.pool}LL) __xp_tile = 0;"]
        lines.append("if (__xp_tile > __xp_per) __xp_tile = __xp_per;")
        if not const:
            lines.append(f"if (__xp_tile < 1) {{\n{direct_loop}\nreturn;\n}}")
        off = "0"
        for n in order:
            b = staged[n]
            et = etype[n]
            size = (f"({es[n]}LL * (({_poly_text(b.alpha)}) * {lp.step} * (__xp_tile - 1) + "
                    f"({_poly_text(b.beta)})) + 127) / 128 * 128 + 128")
            texts.append(size)
            lines.append(f"{et} *__xp_{n}_n = ({et} *) ({POOL_NAME} + {off});")
            self.stats["nram_buffers"].add(f"__xp_{n}_n")
            lines.append(f"const long long __xp_o_{n} = {off} + {size};")
            off = f"__xp_o_{n}"
        ext = {n: str(arrays[n][2]) if n in arrays else str(self.plan.sizes[n]) for n in order}
        texts += list(ext.values())
        tile_lines, after = [], []
        for n in order:
            b = staged[n]
            lo, hi = _poly_text(b.lo), _poly_text(b.hi)
            texts += [lo, hi]
            win = [f"long long __xp_w0_{n} = {lo};", f"long long __xp_w1_{n} = ({hi}) + 1;",
                   f"if (__xp_w0_{n} < 0) __xp_w0_{n} = 0;",
                   f"if (__xp_w1_{n} > (long long) ({ext[n]})) __xp_w1_{n} = {ext[n]};",
                   f"if (__xp_w1_{n} > __xp_w0_{n}) {{",
                   f"  const long long __xp_nb = (__xp_w1_{n} - __xp_w0_{n}) * {es[n]};",
                   f"  __memcpy(__xp_{n}_n, {n} + __xp_w0_{n}, (unsigned int) __xp_nb, GDRAM2NRAM);",
                   f"  if (__xp_nb % 128 != 0) __memset_nram((char *) __xp_{n}_n + __xp_nb, "
                   f"(unsigned int) (128 - __xp_nb % 128), (char) 0);",
                   "}"]
            if b.hoist:
                lines += win
            else:
                tile_lines += win
            if b.written:
                after.append(f"if (__xp_w1_{n} > __xp_w0_{n}) __memcpy({n} + __xp_w0_{n}, "
                             f"__xp_{n}_n, (unsigned int) ((__xp_w1_{n} - __xp_w0_{n}) * "
                             f"{es[n]}), NRAM2GDRAM);")
        repl = dict(heap_repl)
        # the windows and staged subscripts are built from the analysis, which names the
        # values copies resolve to (int j0__i1 = j0: the host loop variable j0)
        host_texts = [t for n in order for t in (_poly_text(staged[n].lo), _poly_text(staged[n].hi),
                                                 _poly_text(staged[n].alpha), _poly_text(staged[n].beta))]
        for n in order:
            for acc in staged[n].accesses:
                idx = kernel_ast.ir_ast(acc.index, info)
                host_texts.append(_expr_text(self.gen, idx))
                repl[id(target(acc))] = c_ast.ArrayRef(
                    c_ast.ID(f"__xp_{n}_n"), c_ast.BinaryOp("-", idx, c_ast.ID(f"__xp_w0_{n}")))
        staged_body = _stmt_text(self.gen, kernel_ast.clean(_copy_replace(body_node, repl)))
        start = self._start_text(lp)
        tile = ["const long long __xp_c = __xp_hi - __xp_b < __xp_tile ? __xp_hi - __xp_b : "
                "__xp_tile;",
                f"const long long {IMIN} = {start} + __xp_b * {lp.step};",
                f"const long long {IMAX} = {start} + (__xp_b + __xp_c - 1) * {lp.step};"]
        tile += tile_lines
        tile.append(f"for (long long __xp_t = __xp_b; __xp_t < __xp_b + __xp_c; ++__xp_t) {{\n"
                    f"{var}\n{staged_body}\n}}")
        tile += after
        lines.append("for (long long __xp_b = __xp_lo; __xp_b < __xp_hi; __xp_b += __xp_tile) {\n"
                     + "\n".join(tile) + "\n}")
        self._need_scalars(r, texts + [staged_body], host_texts)
        return self._wrap(r, lines)

    def _prelude(self, r) -> list[str]:
        """Declarations every task needs before its chunk: the variables of the extent-1
        loops around the bound loop (``loop_bind``'s units: their one value, which window
        bounds and the body may use) and one copy per task of each privatised array (the
        verdict proves every iteration overwrites what it reads, so the copy may be reused
        by the task's iterations; ``static`` and initialisers dropped as in loop_bind)."""
        out = []
        for lp in r.units:
            d = copy.deepcopy(lp.node.init.decls[0])
            out.append(_stmt_text(self.gen, d))
        for name, decl in r.private.items():
            d = copy.deepcopy(decl)
            d.storage = [x for x in (d.storage or []) if x != "static"]
            d.init = None
            out.append(_stmt_text(self.gen, d))
        return out

    def _wrap(self, r, lines) -> str:
        return (f"__mlu_global__ void {r.name}({kernel_ast.param_decls(r.params)})\n{{\n"
                + "\n".join(lines) + "\n}\n")

    def _stageable_scratch(self, r, have) -> dict[str, tuple[str, str, int]]:
        """Host arrays this kernel receives as GDRAM buffers that can be staged like pointer
        parameters: one dimension of constant length (the element index is then the offset
        from the buffer the kernel gets) and an element type of known size. name -> (uid,
        element type, element count)."""
        out = {}
        for uid, var in self.info.locals.items():
            name = var.name
            if name not in self.scratch or name not in have or var.kind != "array" or \
                    var.decl is not self.scratch[name] or len(var.dims or ()) != 1 or \
                    not isinstance(var.dims[0], int) or var.dims[0] <= 0:
                continue
            t = var.decl.type.type
            if not (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)):
                continue
            et = " ".join(t.type.names)
            if et in self.sizes:
                out[name] = (uid, et, var.dims[0])
        return out

    def _elem_size(self, name: str, et: str) -> int:
        et = " ".join(et.split())
        if et not in self.sizes:
            raise TaskBindError("XP-TASK-BIND-008", f"element type '{et}' of '{name}' has no "
                                "known size on the MLU")
        return self.sizes[et][0]

    def _start_text(self, lp) -> str:
        start = affine.to_poly(lp.start)
        if start is not None and kernel_ast.poly_ok(start):
            return f"(long long) ({_poly_text(start)})"
        return f"(long long) ({_expr_text(self.gen, kernel_ast.ir_ast(lp.start, self.info))})"

    def _var_decl(self, lp, t: str) -> str:
        tname = kernel_ast.loop_type(lp) or "int"
        step = f"{t}" if lp.step == 1 else f"{t} * {lp.step}"
        return f"{tname} {lp.var} = ({tname}) ({self._start_text(lp)} + {step});"


def _slice_decl(h):
    """``T *p = __xp_heap_p + taskId * count;``: this task's slice of heap buffer ``h``."""
    return canon.parse_stmts(f"{h.etype} *{h.name} = {h.param} + "
                             f"(long long) taskId * ({h.count});")[0]


def _same_decls(old, new, by_decl: dict) -> dict:
    """``by_decl`` (id of a declaration of ``old`` -> value) keyed by the same declarations of
    ``new``, a rewritten copy of ``old`` that keeps its declarations in order (the k-th
    declaration of a name in one is the k-th of that name in the other)."""
    if old is new or not by_decl:
        return by_decl

    def decls(program):
        out: dict[str, list] = {}
        for n in canon.walk(program.ast):
            if isinstance(n, c_ast.Decl) and n.name:
                out.setdefault(n.name, []).append(n)
        return out
    before, after = decls(old), decls(new)
    moved = {}
    for name, nodes in before.items():
        for k, n in enumerate(nodes):
            if id(n) in by_decl and k < len(after.get(name, [])):
                moved[id(after[name][k])] = by_decl[id(n)]
    return moved


def _in_host_code(regions, heaps):
    """A heap buffer (not a small constant one) whose declaration lies outside every kernel
    and single-task region, else None."""
    seen = set()

    def go(rs):
        for r in rs:
            if r.kind == "kernel":
                seen.update(id(n) for lp in r.loops for n in canon.walk(lp.node))
            elif r.kind == "hostloop":
                go(r.inner)
            elif r.kind == "hostif":
                go(r.inner)
                go(r.orelse)
            elif r.kind != "host":
                seen.update(id(n) for st in r.stmts for n in canon.walk(st))

    go(regions)
    return next((h for k, h in heaps.items() if k not in seen and not h.const), None)


def _free_wrapper_names(program):
    """``loop_bind.free_wrapper_names`` for the CNRT wrapper: ``d_P`` of each pointer parameter
    ``P`` and the queue / dim / ktype locals; a clash it cannot rename is refused."""
    params = list(program.entry.params) if program.entry else []
    wrapper = {f"d_{p.name}" for p in params if p.kind == "pointer"} | set(cnrt_names(params).values())
    program, stuck = loop_bind.free_wrapper_names(program, wrapper)
    if stuck:
        raise TaskBindError("XP-TASK-BIND-006", f"the host wrapper declares '{stuck}' (a device "
                            f"buffer or the CNRT launch state), which the entry already "
                            f"names as a parameter or file-scope variable")
    return program


def _pointer_inductions(program):
    """``pointer_iv.rewrite`` on a copy of the entry (the same facts: nothing is added)."""
    fdef = affine.entry_function(program) if program.ast is not None and program.entry else None
    if fdef is None:
        return program
    ast = copy.deepcopy(program.ast)
    fdef = next(e for e in ast.ext if isinstance(e, c_ast.FuncDef) and
                e.decl.name == program.entry.name)
    return replace(program, ast=ast) if pointer_iv.rewrite(fdef) else program


def _host_extents(program) -> dict[str, str]:
    """Element counts of pointer parameters recorded by ``devcopy{extents=true}`` (the host
    allocation sizes): used where the access analysis cannot bound a buffer's subscripts."""
    out = {}
    if program.ast is None or program.entry is None:
        return out
    import passes.canon as canon

    params = {p.name: p for p in program.entry.params}
    sizes = type_sizes(program.ast)
    # names a kernel can read: the entry's scalars, macros, file-scope names, enumerators
    known = {p.name for p in program.entry.params if p.kind != "pointer"}
    known |= set((program.facts or {}).get("defines") or {})
    known |= set(canon.file_scope_decls(program.ast))
    known |= {n.name for n in canon.walk(program.ast) if isinstance(n, c_ast.Enumerator)}
    for name, size in devcopy.recorded_extents(program.ast).items():
        p = params.get(name)
        if p is None or p.kind != "pointer":
            continue
        try:
            names = canon.ids_in(canon.parse_expr(size))
        except Exception:                 # not a C expression we can read: no fact
            continue
        if not names <= known:            # host locals (int OH = ...) are not kernel inputs
            continue
        es = sizes.get(" ".join(_elem_type(p).split()), (None,))[0]
        if es:
            out[name] = f"(({size}) / {es})"
    return out


_const_int = loop_bind.const_count   # an element count as an integer constant, else None


def _is_pointer(name: str, params: dict) -> bool:
    p = params.get(name)
    return p is not None and p.kind == "pointer"


def _elem_type(p) -> str:
    from platforms.common.hostgen import element_type

    return element_type(p)


def _poly_text(p: affine.Poly) -> str:
    return p.c_text()


def _generator(program):
    from platforms.common.generator import XGenerator

    return XGenerator(program.facts)


def _stmt_text(gen, node) -> str:
    if isinstance(node, c_ast.Compound):
        return gen.visit(node)
    text = gen.visit(node)
    if isinstance(node, (c_ast.For, c_ast.If, c_ast.While, c_ast.DoWhile, c_ast.Pragma,
                         c_ast.Switch)):
        return text
    return text + ";"


def _expr_text(gen, node) -> str:
    return gen.visit(node)


def _copy_replace(node, repl: dict):
    """Deep copy of ``node`` where nodes whose id is in ``repl`` are replaced."""
    return canon.rebuild(node, lambda n: copy.deepcopy(repl[id(n)]) if id(n) in repl else None)

# ------------------------------------------------------------------------------ the pass
@register(PassInfo(
    name=NAME,
    lowers=True,
    summary="canonical C -> BANG C: parallel loop nests become __mlu_global__ kernels split "
            "across taskDim tasks, tiles staged GDRAM->NRAM->GDRAM; CNRT host entry",
    options={"clusters": Option(int, 4, "clusters of the UNION launch (1, 2, 4, 8, 16)"),
             "cores": Option(int, 4, "cores per cluster (4)"),
             "profile": Option(str, "", "BANG device profile sizing the NRAM tiles "
                                        "(empty: the default profile)"),
             "extents": Option(str, "", "element counts the entry's caller guarantees, "
                               "'name:count ...' (as for loop_bind); used only where the "
                               "analysis cannot bound a pointer")},
    requires=("at least one loop without a loop-carried dependence (XP-TASK-BIND-001)",
              "computable access extents for every pointer parameter (XP-TASK-BIND-002)",
              "one iteration's staged windows fit the NRAM pool (XP-TASK-BIND-003)",
              "well-formed extents and a known profile (XP-TASK-BIND-004)",
              "cores == 4 and clusters in 1, 2, 4, 8, 16 within the profile (XP-TASK-BIND-005)",
              "canonical C (platform vnni) without intrinsics, traceable pointers, "
              "device-callable calls, no device->host scalars (XP-TASK-BIND-006)",
              "host arrays / pointer locals used by device code movable to GDRAM "
              "(XP-TASK-BIND-007)",
              "staged element types with a known MLU size (XP-TASK-BIND-008)"),
    guarantees=("same outputs on the virtual device (strict mode)",
                "every launch uses clusters*cores tasks; NRAM within the profile's capacity",
                "entry name and parameters kept"),
    introduces=("__mlu_global__ kernels", "__nram__ pool", "__memcpy GDRAM2NRAM/NRAM2GDRAM",
                "__memset_nram", "CNRT host API", "<<<dim, ktype, queue>>> launches"),
))
def task_bind(program, *, clusters: int = 4, cores: int = 4, profile: str = "", extents: str = "",
              plan: _Lowering | None = None):
    import platforms
    from platforms import parse as parse_source

    low = canon.plan_or_refuse(NAME, plan if plan is not None else
                               _lowering(program, clusters, cores, profile, extents))
    backend = platforms.module("bang", "backend")
    marker = "__xp_marker_kernel"
    ktype = "CNRT_FUNC_TYPE_BLOCK" if clusters * cores == 1 else f"CNRT_FUNC_TYPE_UNION{clusters}"
    sizes = {n: str(v) for n, v in low.plan.sizes.items()}
    host = backend.emit_host_entry(program.entry.name, list(program.entry.params), marker,
                                   {"dim": (str(clusters * cores), "1", "1"), "ktype": ktype},
                                   sizes=sizes)
    lines = host.split("\n")
    at = next(k for k, l in enumerate(lines) if marker in l)
    lines[at] = low.host_text
    host = "\n".join(lines)
    head, _, entry_fn = host.partition('extern "C"')
    gen = low.gen
    pre = [l for l in head.strip().split("\n") if l.strip()]
    for line in program.facts.get("preamble", []):
        if loop_bind.HOST_ONLY_INCLUDES.search(line) or line in pre or \
                re.match(r"\s*#\s*pragma\s+omp", line):
            continue
        pre.append(line)
    ext = []
    for e in program.ast.ext:
        if isinstance(e, c_ast.FuncDef):
            if e.decl.name == program.entry.name:
                continue
            e = copy.deepcopy(e)
            if e.decl.name in low.plan.helpers:
                spec = [s for s in e.decl.funcspec or [] if s not in ("__mlu_func__", "inline")]
                e.decl.funcspec = spec + ["__mlu_func__"]
                e.decl.storage = [s for s in e.decl.storage or [] if s != "static"]
            ext.append(gen.visit(e) + "\n")
        elif isinstance(e, c_ast.Decl) and isinstance(e.type, c_ast.FuncDecl) and \
                e.name == program.entry.name:
            continue
        elif isinstance(e, c_ast.Pragma):
            if not e.string.strip().startswith(("omp", devcopy.EXTENT_PRAGMA)):
                ext.append(gen.visit(e) + "\n")
        elif _is_float16_typedef(e):
            continue                      # BANG C declares half itself
        else:
            ext.append(gen.visit(e) + ";\n")
    pool = ""
    if "__xp_" in "".join(low.kernels) and f"{POOL_NAME} +" in "".join(low.kernels):
        pool = f"__nram__ char {POOL_NAME}[{low.pool}];\n"
    text = ("\n".join(pre) + "\n\n" + "".join(ext) + pool + "\n".join(low.kernels) + "\n"
            + 'extern "C"' + entry_fn)
    # binary16 is spelled half in BANG C (the entry's parameter types are the same type)
    text = re.sub(r"\b(?:%s)\b" % "|".join(_FLOAT16_NAMES), "half", text)
    path = _target_path(program.path)
    out = parse_source(text, "bang", path, entry=program.entry.name)
    facts = dict(out.facts)
    facts["task_bind"] = {"tasks": clusters * cores, "kernels": low.stats["kernels"],
                          "staged": low.stats["staged"], "direct": low.stats["direct"],
                          "pool_bytes": low.pool if pool else 0, "profile": low.prof["name"],
                          # the pool's staging buffers: each kernel's are disjoint regions of it
                          "nram_buffers": sorted(low.stats["nram_buffers"])}
    return replace(out, facts=facts)


def _is_float16_typedef(e) -> bool:
    """``typedef _Float16 half;`` / ``typedef _Float16 __half;`` of a lifted program."""
    return isinstance(e, c_ast.Typedef) and e.name in ("half",) + _FLOAT16_NAMES and \
        isinstance(e.type, c_ast.TypeDecl) and isinstance(e.type.type, c_ast.IdentifierType) \
        and e.type.type.names in (["half"], *([n] for n in _FLOAT16_NAMES))


def _target_path(path: str) -> str:
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return stem + ".mlu"


def _lowering(program, clusters, cores, profile, extents) -> _Lowering | list[Diagnostic]:
    """The analysis and lowering of ``task_bind``, run once: its kernels and host text (the
    rewrite only assembles them), or the refusal."""
    try:
        return _Lowering(program, clusters, cores, profile, extents)
    except TaskBindError as exc:
        return [_diag(program, exc.code, exc.message, exc.node)]


@task_bind.legality
def _task_bind_legal(program, *, clusters: int = 4, cores: int = 4, profile: str = "",
                     extents: str = ""):
    return _lowering(program, clusters, cores, profile, extents)
