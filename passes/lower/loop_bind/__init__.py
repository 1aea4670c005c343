"""loop_bind: lower canonical sequential C to CUDA or HIP by binding parallel loops to threads.

Summary
    The entry's statements are partitioned in order (``plan``): a loop nest whose outermost
    loop carries no dependence (``passes.analysis.affine.parallel``) is outlined into a ``__global__``
    kernel, its outermost parallel loop - fused with the next one when both are parallel, the
    nest is perfect, the inner bounds do not depend on the outer variable and the outer trip
    count alone would not fill the GPU - bound to ``blockIdx.x * blockDim.x + threadIdx.x``;
    inner loops stay sequential inside the kernel. A sequential loop that contains parallel
    loops stays on the host and launches their kernels in each iteration. Statements that
    touch no pointer parameter stay on the host; a ``memcpy`` between device buffers (pointer
    parameters, host arrays that become scratch buffers) whose byte count the host can
    evaluate becomes a device-to-device ``cudaMemcpy`` / ``hipMemcpy`` (copies stay copies);
    other statements (between nests) become one single-thread kernel. ``#pragma omp`` lines
    are dropped. The host entry keeps the entry's
    name and parameter list and is produced by the target back-end's ``emit_host_entry``
    (``platforms/common/hostgen.py``): device buffers sized by ``affine.extents``, every
    buffer copied in, the launches, outputs copied back, buffers freed.
Requires
    1. The program is canonical C (platform ``vnni``) with a defined entry function, and uses
       no intrinsics (``_mm*``: run a VNNI detensorize first)  [XP-BIND-003].
    2. At least one loop carries no dependence (Z3 proof)  [XP-BIND-001].
    3. The element count each pointer parameter is accessed with is computable
       (``affine.extents``), given by the caller (``extents``) or declared by the source's
       host code (``Param.size``: the ``cudaMalloc`` of a lifted GPU program)  [XP-BIND-002].
    4. Pointers are traceable to parameters or local arrays; calls go to pure math functions,
       ``memcpy``/``memmove``/``memset`` or helpers defined in the file; no scalar computed in
       device code is needed later on the host  [XP-BIND-003].
    5. ``1 <= block <= 1024`` (threads per block, CUDA/HIP limit)  [XP-BIND-004].
    6. Host locals device code uses are scalars or arrays with constant bounds (not of
       pointers) to which device code applies neither ``sizeof`` nor ``&``; no pointer local
       declared on the host is used in device code; no ``return`` in host code of a block
       that holds such an array  [XP-BIND-005].
Privatised arrays
    A loop that is parallel except for local arrays declared outside it that every
    iteration overwrites before reading (``affine.privatizable``: attention scores ``p[j]``
    rewritten for every query row) is bound with a copy of each such array declared inside
    the kernel (per thread; ``static`` and initialiser dropped: no value from another
    iteration or from before the loop is ever read).
Thread arrays
    An array of one iteration whose length is not a constant but known to the host (a
    per-iteration heap buffer ``float *p = malloc(sizeof(float) * S)``, which ``heap_locals``
    makes ``float p[...]``; a privatised array of such a length) is a thread's slice of a
    device buffer: ``float *p = __xp_thr_p + __xp_slot * (long long) (len);`` with ``__xp_slot``
    the thread's global index; the kernel runs grid-strided (a thread reuses its slice for
    its iterations, one after another) and the host caps the grid so that all slices fit
    256 MiB, allocates the buffer around the launch and frees it. Legality
    (``_thread_arrays``, XP-BIND-005): one dimension, a scalar element type, declared once,
    no ``sizeof``/``&`` of it, a length over entry scalars the entry never assigns and
    file-scope constants.
Scratch arrays
    A host array (``alignas(64) static int16_t Aq[M * NP];``, ``const int zp[4] = {...}``)
    that device code uses becomes a device scratch buffer (``_scratch_refusal`` is the
    legality, ``_scratch_alloc``/``_scratch_release`` the rewrite): after its declaration the
    host allocates ``sizeof(array)`` bytes and copies the array in (its initialiser, or the
    values a ``static`` array kept from the previous call); kernels receive a pointer to its
    first element (row); at the end of the declaring block a non-const ``static`` array gets
    the device values back (so it persists as in C), then the buffer is freed.
Two levels (``levels=2``)
    A kernel region whose band starts with a canonical loop (no extent-1 loops around it, no
    privatised arrays) is scheduled by ``passes/lower/loop_bind/blocks.py`` (legality:
    ``schedule``; rewrite: ``build``): the loop runs over blocks (``for (b = blockIdx.x;
    b < n; b += gridDim.x)``, grid min(n, 65535)), the arrays declared in its body become
    ``__shared__`` while they fit the profile's ``shared_mem_bytes`` (the rest: slices of a
    per-block global scratch buffer the host allocates around the launch), its parallel
    inner loops (rectangular bands collapsed) are strided over ``threadIdx.x``, the rest runs
    redundantly (scalar-only statements) or in thread 0, with ``__syncthreads()`` between
    phases in block-uniform control flow only. blockDim: the largest constant inner trip
    count rounded up to 32 (at least 64), else ``block``. A region keeps one level when no
    inner loop is parallel, all inner parallel loops are shorter than a warp, a fused band
    has no local arrays, or the schedule's legality fails (thread 0 assigning a scalar other
    threads read, address-taken variables other than those declared in a thread loop's
    body, ``return``/``goto``, ``break``/``continue`` across a barrier, arrays without
    constant bounds).
Guarantees
    Same outputs on the virtual device; every kernel launches at most ``block`` threads per
    block and at most 2^31-1 blocks (grid-stride loop with at most 65535 blocks when the
    trip count may exceed that or when the body uses ``continue``). Helpers called from
    kernels become ``__host__ __device__``; file-scope ``const`` scalars become
    ``constexpr`` (usable in device code).
Options
    to: ``cuda`` or ``hip``.  block: threads per block (default 256; smaller constant trip
    counts get a block of the trip count rounded up to 32).  levels: 1 (default) or 2
    (blocks x threads, see above)  [XP-BIND-006].
Example
    ``for (int i = 0; i < n; ++i) out[i] = x[i] + y[i];``  ->
    ``__global__ void add_k0(const float *x, const float *y, float *out, int n)
    { long long __xp_t = ...; if (__xp_t < __xp_n) { int i = (int) (0 + __xp_t * 1); out[i] = x[i] + y[i]; } }``
    and a host entry ``add(x, y, out, n)`` that copies n floats of x, y, out in, launches
    ``add_k0<<<dim3((__xp_n0 + 255) / 256), dim3(256)>>>`` and copies out back.
"""
from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass, field, replace

from pycparser import c_ast

from xpiler.ir.errors import Coord, Diagnostic

import passes.analysis.affine as affine
import passes.canon as canon
from passes.base import Option, PassInfo, register
from passes.lower.heap_locals import heap_locals
from passes.lower.loop_bind.kernel_ast import (clean, count_ast, fill, ir_names, is_omp, loop_type,
                                               loop_var_decls, mentions_loop, only_loop, param_decls,
                                               parse_snippet, strip_quals, typedefs)

NAME = "loop_bind"
RETRY_TIMEOUT_MS = 30000      # second dependence test of a loop the first (3 s) did not prove
FILL_THREADS = 8192           # fuse two parallel loops when the outer trip count is below this
MAX_GRID = 2147483647
STRIDE_GRID = 65535
DEVICE_LIBRARY = frozenset({"memcpy", "memset", "printf", "assert"}) | affine.PURE_FUNCTIONS
# types the CUDA / HIP runtime headers define (a lifted GPU program carries C stand-ins)
RUNTIME_TYPES = frozenset("dim3 uint3 int2 int3 int4 uint2 uint4 float2 float3 float4 double2 "
                          "half __half half2 __half2 char4 uchar4 short2 ushort2".split())
HOST_ONLY_INCLUDES = re.compile(r"#\s*include\s*[<\"](?:immintrin|x86intrin|omp|xmmintrin|"
                                r"emmintrin|smmintrin|avxintrin)\.h[>\"]")


def runtime_functions(to: str) -> frozenset[str]:
    """The lift's C stand-ins (``gpu_lift_support.MATH``: ``__expf``, ``__fdividef``, ...) that
    the target's GPU runtime defines itself; their definitions are dropped from the lowered
    program (a second definition does not compile). Read from the virtual device's runtime
    headers, the one home of what the runtime provides."""
    return _runtime_functions(to)


@functools.lru_cache(maxsize=None)
def _runtime_functions(to: str) -> frozenset[str]:
    from passes.lift.loop_recovery.support import MATH

    import platforms

    provided = platforms.runtime_provided(to)
    return frozenset(n for n in MATH if n in provided)


class BindError(Exception):
    def __init__(self, code: str, message: str, node=None, scalar: str | None = None):
        super().__init__(message)
        self.code, self.message, self.node = code, message, node
        self.scalar = scalar        # a host scalar device code computes (promotable)


# ------------------------------------------------------------------------------ plan
@dataclass
class Region:
    kind: str                           # host | kernel | single | copy | hostloop | hostif
    stmts: list                         # original statements (host / single / copy: [memcpy];
                                        # hostloop: [For]; hostif: [If])
    loops: list = field(default_factory=list)      # kernel: bound LoopInfo (1 or 2)
    units: list = field(default_factory=list)      # kernel: extent-1 loops around them
    private: dict = field(default_factory=dict)    # kernel: arrays each thread gets a copy of
    inner: list = field(default_factory=list)      # hostloop: regions of the body; hostif: then
    orelse: list = field(default_factory=list)     # hostif: regions of the else branch
    params: list = field(default_factory=list)     # kernel/single: [(name, type text, kind)]
    name: str = ""
    block: int = 256
    stride: bool = False
    sched: object = None                # kernel: loop_bind_blocks.Schedule (levels=2)
    host: dict = field(default_factory=dict)       # kernel: host scalar locals at the launch -> type
    # kernel: arrays of each iteration whose length the host computes (a thread's slice of a
    # device buffer): [(name, element type text, length AST)]
    thread_arrays: list = field(default_factory=list)


@dataclass
class Plan:
    regions: list
    sizes: dict
    helpers: set
    info: affine.NestInfo
    scratch: dict = field(default_factory=dict)     # host array name -> Decl (device buffer)
    aliases: dict = field(default_factory=dict)     # host pointer local -> Decl (rebased)
    two_level: list = field(default_factory=list)   # levels=2: (kernel, None or why one level)
    program: object = None       # the program planned (array sizeof folded, scalars promoted)


def _diag(program, code: str, message: str, node=None) -> Diagnostic:
    c = getattr(node, "coord", None)
    coord = Coord(getattr(c, "file", None) or program.path, getattr(c, "line", 0) or 0,
                  getattr(c, "column", 0) or 0)
    return Diagnostic(code, message, coord, pass_name=NAME)


def plan(program, block: int = 256, extents: dict | None = None, levels: int = 1,
         shared_limit: int = 0, device_copies: bool = False,
         dynamic_limit: int = 0, thread_slices: bool = False) -> tuple[Plan | None, list[Diagnostic]]:
    """The lowering plan, or None with the diagnostics that refuse it (legality). With
    ``levels=2`` kernel regions get a two-level schedule (``loop_bind_blocks``) where one
    applies within ``shared_limit`` bytes of static shared memory per block (and up to
    ``dynamic_limit`` bytes in all with dynamic shared memory). With ``device_copies``
    a ``memcpy`` between device buffers is a ``copy`` region (the caller emits the runtime's
    device-to-device copy), else a single-thread region. With ``thread_slices`` an array of
    one iteration whose length is not a constant becomes each thread's slice of a device
    buffer (``Region.thread_arrays``); without, it stays as declared (the caller's business)."""
    try:
        return _plan_promoting(program, block, extents, levels, shared_limit,
                               device_copies, dynamic_limit, thread_slices), []
    except BindError as exc:
        return None, [_diag(program, exc.code, exc.message, exc.node)]


def _plan_promoting(program, block, extents, levels, shared_limit, device_copies,
                    dynamic_limit=0, thread_slices=False) -> Plan:
    """``_plan`` of the program with ``sizeof`` of local arrays folded; a host scalar that
    device code computes (a reduction's result read by later device statements) becomes a
    one-element array, which device code reaches as a buffer, and the plan is made again."""
    program = fold_array_sizeof(program)
    promoted: list[str] = []
    while True:
        try:
            the_plan = _plan(program, block, extents, levels, shared_limit, device_copies,
                             dynamic_limit, thread_slices)
            the_plan.program = program
            return the_plan
        except BindError as exc:
            if exc.scalar is None or exc.scalar in promoted or len(promoted) >= 16:
                raise
            new = promote_scalar(program, exc.scalar)
            if new is None:
                raise
            promoted.append(exc.scalar)
            program = new


def promote_scalar(program, name: str):
    """``program`` with the entry's scalar local ``name`` declared ``T name[1]`` and read and
    written as ``name[0]`` (its initialiser an assignment after the declaration); None when
    ``name`` is not one such local (declared once, a plain scalar, written by no loop that
    ``#pragma omp parallel for`` asserts parallel: its threads would share the element; the
    dependence test keeps any other loop writing it sequential)."""
    ast = copy.deepcopy(program.ast)
    fdef = canon.entry_def(ast, program.entry.name) if program.entry else None
    if fdef is None:
        return None
    decls = [(n, parent) for n, parent in _with_parents(fdef.body)
             if isinstance(n, c_ast.Decl) and n.name == name]
    if len(decls) != 1:
        return None
    decl, parent = decls[0]
    if not isinstance(parent, c_ast.Compound) or not isinstance(decl.type, c_ast.TypeDecl) or \
            not isinstance(decl.type.type, c_ast.IdentifierType) or \
            isinstance(decl.init, c_ast.InitList) or (decl.storage or []):
        return None
    asserted: set[int] = set()
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Compound):
            asserted |= _omp_parallel_loops(n.block_items or [])
    if any(id(n) in asserted and name in canon.written_names(n) for n in canon.walk(fdef.body)):
        return None        # written in a loop asserted parallel: its threads would share it
    elem = c_ast.ArrayRef(c_ast.ID(name), c_ast.Constant("int", "0"))
    k = next(i for i, s in enumerate(parent.block_items) if s is decl)
    init = decl.init
    decl.init = None
    decl.type = c_ast.ArrayDecl(decl.type, c_ast.Constant("int", "1"), [])
    rest = [canon.substitute(s, {name: elem}) for s in parent.block_items[k + 1:]]
    first = [c_ast.Assignment("=", copy.deepcopy(elem), init)] if init is not None else []
    parent.block_items[k + 1:] = first + rest
    # uses in enclosing blocks after the declaration's block cannot exist (scope), and uses
    # before it are other variables of the same name: there are none (declared once)
    return canon.reparse(program, ast)


def _with_parents(node, parent=None):
    yield node, parent
    for _, c in node.children():
        yield from _with_parents(c, node)


def _plan(program, block: int, extents: dict | None = None, levels: int = 1,
          shared_limit: int = 0, device_copies: bool = False, dynamic_limit: int = 0,
          thread_slices: bool = False) -> Plan:
    if not 1 <= block <= 1024:
        raise BindError("XP-BIND-004", f"block={block}: CUDA/HIP blocks hold 1..1024 threads")
    if levels not in (1, 2):
        raise BindError("XP-BIND-006", f"levels={levels}: 1 (threads) or 2 (blocks x threads)")
    if program.platform != "vnni":
        raise BindError("XP-BIND-003", f"loop_bind lowers canonical C (platform vnni), not "
                        f"{program.platform}: lift the program first")
    if program.entry is None or affine.entry_function(program) is None:
        raise BindError("XP-BIND-003", "no entry function definition")
    intr = [i for i in program.intrinsics if i.startswith("_mm")] or _intrinsic_calls(program)
    if intr:
        raise BindError("XP-BIND-003", f"the program uses x86 intrinsics ({intr[0]}, ...): "
                        "detensorize them into scalar loops first")
    info = affine.analyze(program)
    if info.problems:
        code, msg, node = info.problems[0]
        raise BindError(code, msg, node)
    sizes = affine.extents(info)
    recorded = _recorded_extents(program)
    if extents is None:
        extents = recorded
    for name in sizes:                   # caller-known element counts (e.g. host allocations)
        if sizes[name] is None and extents and extents.get(name) is not None:
            sizes[name] = extents[name]
    for name in sizes:
        # the source's host code allocated (and copied) exactly this many elements: the buffer
        # the caller provides. The analysis bound may be larger (a read under a guard it
        # cannot see: `if (ih >= height) continue;`), and copying that many would read past it
        if recorded.get(name) is not None:
            sizes[name] = recorded[name]
    declared = {p.name: p.size for p in program.entry.params if p.kind == "pointer"}
    for name in sizes:
        # the source's host code allocated this many elements (the cudaMalloc / hipMalloc of
        # a lifted GPU program): the buffer the entry's caller provides
        if sizes[name] is None and declared.get(name):
            sizes[name] = declared[name]
    # a caller-known constant count is the caller's allocation: where the analysis bound is
    # a larger constant (a subscript under a guard it cannot see, e.g. `if (r >= H) continue`
    # with r from an || condition), copying that many elements reads past the caller's buffer.
    # The source ran guarded within the allocation, so its accesses stay inside the smaller one.
    for name in sizes:
        known = const_count((extents or {}).get(name)) or const_count(declared.get(name))
        have = const_count(sizes[name])
        if known is not None and have is not None and known < have:
            sizes[name] = str(known)
    for name in sizes:
        if sizes[name] is None:
            # no closed form and no caller-known count: a count Z3 proves over the scalars
            sizes[name] = affine.proved_extent(info, name)
    for name, size in sizes.items():
        if size is None:
            acc = next((a for a in info.accesses if a.buffer == name and
                        affine.max_index(a) is None), None)
            raise BindError("XP-BIND-002", f"the number of elements of '{name}' the program "
                            "accesses is not computable (non-affine subscript or bound)",
                            acc.node if acc else None)
    builder = _Planner(program, info, block, levels, shared_limit, device_copies, dynamic_limit,
                       thread_slices)
    params = [p.name for p in program.entry.params]
    regions = builder.partition(list(info.function.body.block_items or []),
                                {n: None for n in params})
    if not builder.kernels:
        why = builder.first_refusal
        msg = "no loop without a loop-carried dependence was found; refusing to emit a " \
              "single-thread GPU program"
        node = None
        if why is not None:
            msg += f" ({why.reason})"
            node = why.node
        raise BindError("XP-BIND-001", msg, node)
    return Plan(regions, sizes, builder.helpers, info, builder.scratch, builder.aliases,
                builder.two_level)


def const_count(v) -> int | None:
    """``v`` (an element count: int, Poly or C text) as an integer constant, else None."""
    if v is None:
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, affine.Poly):
        return v.value() if v.is_const() else None
    try:
        return int(str(v).strip().strip("()"))
    except ValueError:
        return None


def parse_extents(text: str) -> dict[str, str]:
    """``"data:2048 idx:16"`` -> ``{"data": "2048", "idx": "16"}`` (the ``extents`` option of
    loop_bind / task_bind; counts are non-negative integers)."""
    out = {}
    for item in (text or "").split():
        name, sep, count = item.partition(":")
        if not sep or not name.isidentifier() or not count.isdigit():
            raise ValueError(f"extents: expected 'name:count' items, got {item!r}")
        out[name] = count
    return out


def _given_extents(program, text: str) -> dict | None:
    """Caller-given element counts merged over the ones devcopy recorded (None: use the
    recorded ones only, as ``plan`` does by default)."""
    given = parse_extents(text)
    if not given:
        return None
    params = {p.name for p in program.entry.params if p.kind == "pointer"} if program.entry else set()
    unknown = sorted(set(given) - params)
    if unknown:
        raise ValueError(f"extents: {', '.join(unknown)} is not a pointer parameter of the entry")
    merged = dict(_recorded_extents(program))
    for name, count in given.items():
        merged.setdefault(name, count)
    return merged


def _recorded_extents(program) -> dict[str, str]:
    """Element counts of pointer parameters that ``devcopy{extents=true}`` recorded from the
    lifted host code (its allocation sizes in bytes, divided by the element size)."""
    import passes.cleanup.devcopy as devcopy
    out = {}
    params = {p.name: p for p in program.entry.params if p.kind == "pointer"}
    for name, nbytes in devcopy.recorded_extents(program.ast).items():
        p = params.get(name)
        es = affine.bytes_of_words(affine.type_names_text(p.type)) if p is not None else None
        if es is None and p is not None and ("half" in p.type or "_Float16" in p.type):
            es = 2                      # half / _Float16 (BANG half of the flat form): binary16
        if es:
            out[name] = f"(({nbytes}) / {es})"
    return out


def _intrinsic_calls(program) -> list[str]:
    found = []

    class V(c_ast.NodeVisitor):
        def visit_FuncCall(self, n):
            if isinstance(n.name, c_ast.ID) and n.name.name.startswith("_mm"):
                found.append(n.name.name)
            self.generic_visit(n)

    V().visit(program.ast)
    return found


class _Names(c_ast.NodeVisitor):
    """IDs referenced, names declared and names assigned in a statement list."""

    def __init__(self):
        self.used: list[str] = []
        self.declared: set[str] = set()
        self.assigned: set[str] = set()
        self.calls: list[tuple[str, c_ast.Node]] = []

    def visit_Decl(self, n):
        if n.name:
            self.declared.add(n.name)
        self.generic_visit(n)

    def visit_ID(self, n):
        if n.name not in self.used:
            self.used.append(n.name)

    def visit_StructRef(self, n):
        self.visit(n.name)               # the field is not a variable

    def visit_Assignment(self, n):
        if isinstance(n.lvalue, c_ast.ID):
            self.assigned.add(n.lvalue.name)
        self.generic_visit(n)

    def visit_UnaryOp(self, n):
        if n.op in ("++", "--", "p++", "p--", "&") and isinstance(n.expr, c_ast.ID):
            self.assigned.add(n.expr.name)
        self.generic_visit(n)

    def visit_FuncCall(self, n):
        if isinstance(n.name, c_ast.ID):
            self.calls.append((n.name.name, n))
        else:
            self.visit(n.name)
        if n.args is not None:
            self.visit(n.args)


def _names(stmts) -> _Names:
    v = _Names()
    for s in stmts:
        v.visit(s)
    return v


class _Planner:
    def __init__(self, program, info: affine.NestInfo, block: int, levels: int = 1,
                 shared_limit: int = 0, device_copies: bool = False, dynamic_limit: int = 0,
                 thread_slices: bool = False):
        self.program, self.info, self.block = program, info, block
        self.thread_slices = thread_slices
        self.device_copies = device_copies
        self.levels, self.shared_limit = levels, shared_limit
        self.dynamic_limit = dynamic_limit
        # file-scope names and named constants a host condition may read
        self.globals_ = set(canon.file_scope_decls(program.ast)) | \
            set((program.facts or {}).get("constants") or {})
        self.two_level: list = []                  # (kernel name, schedule or reason)
        self.verdicts: dict = {}                   # id(LoopInfo) -> affine.Verdict
        self.entry = program.entry
        self.pointer_params = {p.name for p in self.entry.params if p.kind == "pointer"}
        self.access_nodes = {id(a.node): a for a in info.accesses}
        self.helpers_defs = {e.decl.name: e for e in program.ast.ext
                             if isinstance(e, c_ast.FuncDef) and e.decl.name != self.entry.name}
        self.helpers: set[str] = set()
        self.kernels = 0
        self.first_refusal = None
        self.counter = 0
        self.scratch: dict[str, c_ast.Decl] = {}   # host-declared arrays device code uses
        self.aliases: dict[str, c_ast.Decl] = {}   # host pointer locals rebased for kernels
        self.asserted: set[int] = set()            # id(For) under omp parallel for
        self.written = _assigned_names(self.info.function.body)

    # -- partition ---------------------------------------------------------------------
    def partition(self, items: list, scope: dict) -> list[Region]:
        """Regions of a statement list; ``scope`` maps host-visible names -> Decl (None for
        entry parameters)."""
        out: list[Region] = []
        scope = dict(scope)
        self.asserted |= _omp_parallel_loops(items)
        items = [s for s in items if not is_omp(s)]
        for k, s in enumerate(items):
            region = self._classify(s, scope)
            if region.kind == "single" and out and out[-1].kind == "single":
                out[-1].stmts.append(s)
            else:
                out.append(region)
            if region.kind in ("host",) and isinstance(s, c_ast.Decl) and s.name:
                scope[s.name] = s
            if region.kind == "single" and isinstance(s, c_ast.Decl) and s.name:
                later = _names(items[k + 1:]).used
                if s.name in later:
                    raise BindError("XP-BIND-003", f"'{s.name}' is computed from device data "
                                    "and used later on the host (needs a device-to-host "
                                    "scalar copy, not supported)", s, scalar=s.name)
        for r in out:
            self._finish(r, scope)
        return out

    def _touches(self, s) -> bool:
        found = False

        class V(c_ast.NodeVisitor):
            def generic_visit(v, n):
                nonlocal found
                if id(n) in self.access_nodes:
                    found = True
                    return
                for c in n:
                    v.visit(c)

        V().visit(s)
        return found

    def _classify(self, s, scope) -> Region:
        if isinstance(s, c_ast.For) and id(s) in self.info.loop_of:
            lp = self.info.loop_of[id(s)]
            units = []
            while _trip_count_const(lp) == 1 and self._parallel(lp).parallel:
                inner = only_loop(lp.node.stmt)      # an extent-1 loop around a nest
                if inner is None or id(inner) not in self.info.loop_of:
                    break
                units.append(lp)
                lp = self.info.loop_of[id(inner)]
            verdict = self._parallel(lp)
            if verdict.parallel:
                self.kernels += 1
                private = {self.info.locals[u].name: self.info.locals[u].decl
                           for u in verdict.private}
                return Region("kernel", [s], loops=self._band(lp, verdict.private),
                              units=units, private=private)
            lp = self.info.loop_of[id(s)]
            verdict = self._parallel(lp)
            if self.first_refusal is None:
                self.first_refusal = verdict
            if lp.canonical and not lp.escapes and not lp.unknown_calls and \
                    self._host_bounds(lp, scope) and self._touches(s):
                body = s.stmt.block_items if isinstance(s.stmt, c_ast.Compound) else [s.stmt]
                inner_scope = dict(scope)
                inner_scope[lp.var] = s.init.decls[0]
                before = self.kernels
                try:
                    inner = self.partition(list(body or []), inner_scope)
                except BindError:
                    inner = None
                if inner is not None and self.kernels > before:
                    return Region("hostloop", [s], inner=inner)
                self.kernels = before
        if isinstance(s, c_ast.If) and self._touches(s) and self._host_condition(s.cond, scope):
            # an if whose condition the host can evaluate (simsimd's size classes, special
            # cases of alpha and beta): each branch is partitioned on its own
            before = self.kernels
            try:
                then = self.partition(canon.as_items(s.iftrue), scope)
                orelse = self.partition(canon.as_items(s.iffalse), scope) \
                    if s.iffalse is not None else []
            except BindError as exc:
                if exc.scalar is not None:
                    raise
                then = None
            if then is not None and self.kernels > before:
                return Region("hostif", [s], inner=then, orelse=orelse)
            self.kernels = before
        if self._touches(s):
            if self.device_copies and self._device_copy(s, scope):
                return Region("copy", [s])
            return Region("single", [s])
        return Region("host", [s])

    def _device_copy(self, s, scope) -> bool:
        """``memcpy(D, S, n)`` whose buffers are both device-resident (pointer parameters,
        host arrays that become scratch buffers, rebased pointer locals; plus host-visible
        offsets) and whose byte count the host can evaluate: a device-to-device copy, not a
        single-thread kernel (copies stay copies)."""
        if not (isinstance(s, c_ast.FuncCall) and isinstance(s.name, c_ast.ID) and
                s.name.name == "memcpy" and s.args is not None and len(s.args.exprs) == 3):
            return False
        dst, src, count = s.args.exprs
        return self._host_condition(count, scope) and self._device_operand(dst, scope) and \
            self._device_operand(src, scope)

    def _device_operand(self, e, scope) -> bool:
        """A copy operand ``(T *) B + k``: ``B`` device-resident, ``k`` host-visible."""
        while True:
            if isinstance(e, c_ast.Cast):
                e = e.expr
            elif isinstance(e, c_ast.BinaryOp) and e.op == "+" and \
                    self._host_condition(e.right, scope):
                e = e.left
            else:
                break
        if not isinstance(e, c_ast.ID):
            return False
        decl = scope.get(e.name, False)
        if decl is None:
            return e.name in self.pointer_params
        return isinstance(decl, c_ast.Decl) and isinstance(decl.type, (c_ast.ArrayDecl,
                                                                        c_ast.PtrDecl))

    def _host_condition(self, cond, scope) -> bool:
        """``cond`` reads no device data, changes nothing and names only host-visible
        values (entry parameters, host locals, file-scope constants)."""
        if self._touches(cond) or canon.has_side_effects(cond):
            return False
        names = _names([cond])
        if names.calls:
            return False
        return all(n in scope or n in self.globals_ for n in names.used)

    def _host_bounds(self, lp: affine.LoopInfo, scope) -> bool:
        for ir in (lp.lo, lp.hi, lp.start):
            if ir is None or ir_names(ir, self.info) is None:
                return False
            if any(n not in scope for n in ir_names(ir, self.info)):
                return False
        return True

    def _parallel(self, lp: affine.LoopInfo) -> affine.Verdict:
        """The loop's verdict: proved by ``affine.parallel``, or asserted by the program
        (``#pragma omp parallel for [collapse(n)]`` over canonical loops whose bodies have
        no atomic or critical sections and assign no scalar declared outside them: the
        OpenMP contract that iterations are independent, which the GPU lift states for grid
        loops)."""
        if id(lp.node) in self.asserted and lp.canonical and not lp.escapes and \
                not lp.unknown_calls and all(any(o is lp for o in var.owners)
                                             for var, _, _ in lp.scalar_writes):
            return affine.Verdict(True)
        cached = self.verdicts.get(id(lp))
        if cached is None:
            cached = affine.parallel(self.info, lp, privatize=True)
            if not cached.parallel and cached.code == "XP-BIND-001" and \
                    "may access the same element" in cached.reason:
                # the dependence test ran out of time or found a conflict: ask again with a
                # longer limit (a loaded machine makes the 3 s default too short for deep nests)
                cached = affine.parallel(self.info, lp, timeout_ms=RETRY_TIMEOUT_MS,
                                         privatize=True)
            self.verdicts[id(lp)] = cached
        return cached

    def _band(self, lp: affine.LoopInfo, private=frozenset()) -> list:
        """``[lp]``, or ``[lp, inner]`` when the perfectly nested inner loop is parallel too
        (with the same privatised arrays, so each fused iteration still has its own)."""
        band = [lp]
        body = lp.node.stmt
        if isinstance(body, c_ast.Compound) and len(body.block_items or []) == 1:
            body = body.block_items[0]
        if not isinstance(body, c_ast.For) or id(body) not in self.info.loop_of:
            return band
        inner = self.info.loop_of[id(body)]
        count = _trip_count_const(lp)
        if count is not None and count >= FILL_THREADS:
            return band
        v = self._parallel(inner)
        if not v.parallel or set(v.private) != set(private):
            return band
        if any(mentions_loop(ir, lp.uid) for ir in (inner.lo, inner.hi, inner.start)):
            return band
        if any(ir_names(ir, self.info) is None for ir in (inner.lo, inner.hi, inner.start)):
            return band
        return band + [inner]

    # -- kernel parameters ---------------------------------------------------------------
    def _finish(self, r: Region, scope) -> None:
        if r.kind in ("hostloop", "hostif"):
            return
        names = _names(r.stmts)
        for fname, node in names.calls:
            if fname in self.helpers_defs:
                if r.kind != "host":
                    self._mark_helper(fname)
                continue
            if r.kind != "host" and fname not in DEVICE_LIBRARY:
                raise BindError("XP-BIND-003", f"call to '{fname}', which is neither a math "
                                "function nor defined in this file, cannot run on the device",
                                node)
        if r.kind == "host":
            return
        for name in names.used:
            decl = scope.get(name, False)
            if decl is False or name in names.declared and name not in self.pointer_params:
                continue
            if name in r.private:
                continue                     # declared in the kernel, one copy per thread
            if decl is not None and isinstance(decl.type, c_ast.ArrayDecl):
                # a copy's byte count (sizeof(array)) is evaluated on the host
                why = _scratch_refusal(decl, r.stmts if r.kind != "copy"
                                       else r.stmts[0].args.exprs[:2])
                if why is not None:
                    raise BindError("XP-BIND-005", f"host array '{name}' is used in device "
                                    f"code and cannot become a device buffer: {why}", decl)
                self.scratch[name] = decl
                r.params.append((name, _scratch_param_type(decl)))
                continue
            if decl is not None and isinstance(decl.type, c_ast.PtrDecl):
                why = self._alias_refusal(decl, scope, r.stmts)
                if why is not None:
                    raise BindError("XP-BIND-005", f"host pointer '{name}' is used in device "
                                    f"code and cannot be rebased onto a device buffer: {why}",
                                    decl)
                self.aliases[name] = decl
                r.params.append((name, self._param_type(name, decl)))
                continue
            if r.kind == "single" and name in names.assigned:
                raise BindError("XP-BIND-003", f"'{name}' is assigned in device code but lives "
                                "on the host", r.stmts[0], scalar=name)
            r.params.append((name, self._param_type(name, decl)))
        if r.kind == "copy":
            return                           # no kernel: the host copies between device buffers
        if r.kind == "single" and self.thread_slices:
            self._no_device_vla(r.stmts)
        if r.kind == "kernel":
            # what a lowering may still pass (task_bind's staged windows name the values the
            # analysis resolved copies to, e.g. a host loop variable)
            r.host = {n: self._param_type(n, d) for n, d in scope.items()
                      if isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.TypeDecl)}
            for lp in r.loops:               # bounds may use names the body does not
                for ir in (lp.lo, lp.hi, lp.start):
                    for n in ir_names(ir, self.info) or ():
                        if n in scope and n not in [p[0] for p in r.params]:
                            r.params.append((n, self._param_type(n, scope[n])))
        order = {p.name: k for k, p in enumerate(self.entry.params)}
        r.params.sort(key=lambda p: (0, order[p[0]]) if p[0] in order else (1, 0))
        self.counter += 1
        r.name = f"{self.entry.name}_k{self.counter - 1}"
        r.block = self.block
        if r.kind == "kernel":
            count = 1
            for lp in r.loops:
                c = _trip_count_const(lp)
                count = None if c is None or count is None else count * c
            if count is not None and count < self.block:
                r.block = max(32, (count + 31) // 32 * 32) if count > 0 else 32
                r.block = min(r.block, self.block) if self.block >= 32 else self.block
            symbolic = count is None
            wide = any(loop_type(lp) not in ("int", "unsigned", "unsigned int", "short",
                                             "char", "int32_t", "uint32_t")
                       for lp in r.loops)
            cont = any(k == "continue" for lp in r.loops for k, _ in lp.escapes)
            r.stride = cont or (symbolic and (len(r.loops) > 1 or wide)) or (
                count is not None and count > MAX_GRID * r.block)
            if self.levels == 2:
                self._two_level(r, scope)
            if r.sched is None and self.thread_slices:
                r.thread_arrays = self._thread_arrays(r)
            if r.thread_arrays:           # one slice per thread, reused by its iterations
                r.stride = True
                r.params += [(_thread_buffer(n), f"{t} *") for n, t, _ in r.thread_arrays]

    def _no_device_vla(self, stmts) -> None:
        """Legality of a single-thread kernel: it declares no array whose length is not a
        constant (device code has no variable-length arrays; nvcc refuses them)."""
        constants = self.program.facts.get("constants") or {}
        for s in stmts:
            for d in canon.walk(s):
                if isinstance(d, c_ast.Decl) and _variable_length(d, constants):
                    raise BindError("XP-BIND-005", f"array '{d.name}' has a length that is not "
                                    "a constant, in statements that run as a single-thread "
                                    "kernel (device code has no variable-length arrays)", d)

    def _thread_arrays(self, r: Region) -> list:
        """Legality of per-thread slices: the arrays of one iteration (declared in the bound
        loop's body, or privatised) whose length is not a constant, each one-dimensional, of
        a scalar type, declared once, neither ``sizeof`` nor ``&`` operand, with a length over
        entry scalars nobody assigns and file-scope constants (the host computes it before
        the launch). [(name, element type, length AST)]; BindError when one is not legal."""
        import passes.lower.loop_bind.blocks as blocks
        body = r.loops[-1].node.stmt
        decls = [n for n in canon.walk(body) if isinstance(n, c_ast.Decl) and n.name]
        decls += list(r.private.values())
        scalars = {p.name for p in self.entry.params if p.kind != "pointer"}
        fdef = affine.entry_function(self.program)
        fixed = scalars - _assigned_names(fdef.body) if fdef is not None else set()
        constants = self.program.facts.get("constants") or {}
        out = []
        for d in decls:
            if not _variable_length(d, constants):
                continue
            t = d.type.type
            why = None
            if not (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)):
                why = "it has more than one dimension or no scalar element type"
            elif sum(x.name == d.name for x in decls) != 1:
                why = "its name is declared more than once in the kernel"
            elif d.init is not None or set(d.storage or []) & {"static", "extern"}:
                why = "it is static, extern or initialised"
            else:
                why = blocks.whole_array_use(body, d.name)
                bad = canon.ids_in(d.type.dim) - fixed - self.globals_
                if why is None and bad:
                    why = (f"its length reads {', '.join(sorted(bad))}, which the host does not "
                           "know at the launch")
            if why is not None:
                raise BindError("XP-BIND-005", f"array '{d.name}' of each iteration has a length "
                                f"that is not a constant and cannot be a thread's slice of a "
                                f"device buffer: {why}", d)
            out.append((d.name, " ".join(t.type.names), copy.deepcopy(d.type.dim)))
        return out

    def _reserved(self) -> frozenset:
        """Entry parameters and file-scope names (functions, globals, typedefs)."""
        names = {p.name for p in self.entry.params}
        for e in self.program.ast.ext:
            if isinstance(e, c_ast.FuncDef):
                names.add(e.decl.name)
            elif isinstance(e, (c_ast.Decl, c_ast.Typedef)) and e.name:
                names.add(e.name)
        return frozenset(names)

    def _two_level(self, r: Region, scope) -> None:
        """Give kernel region ``r`` a blocks x threads schedule when one applies (legality of
        the two-level rewrite: ``loop_bind_blocks.schedule``); else it keeps one level. The
        thread loops' trip counts are written over the names the analysis resolved them to
        (an entry scalar behind a chain of copies): those become parameters too."""
        import passes.lower.loop_bind.blocks as blocks
        if r.units or r.private:
            self.two_level.append((r.name, "extent-1 loops or privatised arrays around it"))
            return
        try:
            r.sched = blocks.schedule(r.loops[0], self.info, min(self.block, 1024),
                                      self.shared_limit,
                                      self.program.facts.get("constants") or {},
                                      self._reserved(), self.dynamic_limit)
        except blocks.NotTwoLevel as exc:
            self.two_level.append((r.name, str(exc)))
            return
        if len(r.loops) == 2 and not r.sched.shared and not r.sched.scratch and \
                not r.sched.dynamic:
            r.sched = None               # the fused band already spreads both loops over threads
            self.two_level.append((r.name, "two fused parallel loops, no local arrays"))
            return
        r.loops = r.loops[:1]            # the inner loop of a fused band is scheduled in the body
        r.block = r.sched.block
        have = {p[0] for p in r.params}
        for band in r.sched.thread_loops:
            for lp in band:
                for ir in (lp.lo, lp.hi, lp.start):
                    for n in ir_names(ir, self.info) or ():
                        if n in scope and n not in have:
                            r.params.append((n, self._param_type(n, scope[n])))
                            have.add(n)
        order = {p.name: k for k, p in enumerate(self.entry.params)}
        r.params.sort(key=lambda p: (0, order[p[0]]) if p[0] in order else (1, 0))
        if r.sched.scratch_bytes:         # arrays over the shared limit: per-block global slices
            r.params.append(("__xp_scratch", "char *"))
        self.two_level.append((r.name, None))

    def _alias_refusal(self, decl: c_ast.Decl, scope, stmts) -> str | None:
        """Legality of rebasing the host pointer local ``decl`` (``const float *a = A + bb *
        I * J;``) for kernels: it is never assigned after its declaration, its initialiser is
        a pointer parameter, a host array (then a scratch buffer) or another such local, plus
        integer offsets over scalars that are never assigned or are variables of the host
        loops around it (fixed while the launches of one iteration run). None when legal."""
        if decl.init is None:
            return "it has no initialiser"
        if decl.name in self.written:
            return "it is assigned after its declaration"
        roots = []

        def walk(e) -> str | None:
            if isinstance(e, c_ast.Cast):
                return walk(e.expr)
            if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
                pl = _is_pointerish(e.left, scope, self.pointer_params)
                pr = _is_pointerish(e.right, scope, self.pointer_params)
                if pl and not pr:
                    return walk(e.left) or offset(e.right)
                if pr and not pl and e.op == "+":
                    return walk(e.right) or offset(e.left)
                return "pointer arithmetic the pass cannot follow"
            if isinstance(e, c_ast.ID):
                d = scope.get(e.name, False)
                if d is None and e.name in self.pointer_params:
                    roots.append(e.name)
                    return None
                if d is not False and d is not None and isinstance(d.type, c_ast.ArrayDecl):
                    why = _scratch_refusal(d, stmts)
                    if why is None:
                        self.scratch[e.name] = d
                        roots.append(e.name)
                    return why
                if d is not False and d is not None and isinstance(d.type, c_ast.PtrDecl):
                    why = self._alias_refusal(d, scope, stmts)
                    if why is None:
                        self.aliases[e.name] = d
                        roots.append(e.name)
                    return why
                return f"'{e.name}' is not a parameter or host array"
            return "an initialiser that is not a pointer plus offsets"

        def offset(e) -> str | None:
            for n in _ids(e):
                d = scope.get(n, False)
                if d is False:
                    if n in self.info.params or self.program.facts.get("constants", {}).get(n) \
                            is not None:
                        continue
                    return f"'{n}' in its offset is not visible on the host"
                if n in self.written and not _is_loop_decl(d, self.info):
                    return f"'{n}' in its offset is assigned"
            return None

        why = walk(decl.init)
        if why is None and len(roots) != 1:
            why = "not exactly one base pointer"
        return why

    def _param_type(self, name: str, decl) -> str:
        if decl is None:
            p = next(p for p in self.entry.params if p.name == name)
            return p.type
        from platforms.common.generator import type_text
        t = copy.deepcopy(decl.type)
        strip_quals(t)
        return type_text(t)

    def _mark_helper(self, name: str) -> None:
        if name in self.helpers:
            return
        self.helpers.add(name)
        for fname, _ in _names([self.helpers_defs[name].body]).calls:
            if fname in self.helpers_defs:
                self._mark_helper(fname)


# ------------------------------------------------------------------------------ scratch
def fold_array_sizeof(program):
    """``program`` with ``sizeof(a)`` of each local array of constant dimensions written
    ``(N * sizeof(T))``: device code receives such an array as a pointer to its element, where
    ``sizeof(a)`` would be a pointer's size (the detensorized bit casts
    ``memcpy(u, f, sizeof(u))``). The same program when there is none."""
    def dims_of(decl):
        t, n = decl.type, 1
        while isinstance(t, c_ast.ArrayDecl):
            if not isinstance(t.dim, c_ast.Constant) or not t.dim.value.isdigit():
                return None
            n *= int(t.dim.value)
            t = t.type
        return (n, t) if isinstance(t, c_ast.TypeDecl) and n > 0 else None

    ast = copy.deepcopy(program.ast)
    done = 0
    for fdef in (e for e in ast.ext if isinstance(e, c_ast.FuncDef)):
        decls: dict[str, list] = {}
        for n in canon.walk(fdef.body):
            if isinstance(n, c_ast.Decl) and n.name:
                decls.setdefault(n.name, []).append(n)
        # names declared once, as an array of constant dimensions: (count, element TypeDecl)
        arrays = {name: dims_of(ds[0]) for name, ds in decls.items()
                  if len(ds) == 1 and isinstance(ds[0].type, c_ast.ArrayDecl)}

        def fold(n):
            nonlocal done
            if isinstance(n, c_ast.UnaryOp) and n.op == "sizeof" and isinstance(n.expr, c_ast.ID):
                got = arrays.get(n.expr.name)
                if got is not None:
                    t = copy.deepcopy(got[1])
                    canon.strip_coords(t)
                    t.declname = None
                    t.quals = []
                    done += 1
                    return c_ast.BinaryOp("*", c_ast.Constant("int", str(got[0])), c_ast.UnaryOp(
                        "sizeof", c_ast.Typename(None, [], None, t)))
            return None

        canon.replace_nodes(fdef.body, fold)
    return canon.reparse(program, ast) if done else program


def _scratch_refusal(decl: c_ast.Decl, stmts) -> str | None:
    """Why the host array ``decl`` cannot become a device scratch buffer used by ``stmts``
    (legality of the scratch rewrite), or None. Device code receives a pointer to the
    array's first element (row), so it must not apply ``sizeof`` or ``&`` to the array
    itself; the array must not be ``extern`` or ``thread_local`` storage."""
    if set(decl.storage or []) & {"extern", "thread_local", "_Thread_local"}:
        return f"storage class {' '.join(decl.storage)}"
    t = decl.type
    while isinstance(t, c_ast.ArrayDecl):
        if t.dim is None:
            return "an array of unknown bound"
        t = t.type
    if isinstance(t, c_ast.PtrDecl):
        return "an array of pointers (host addresses)"
    found = None

    class V(c_ast.NodeVisitor):
        def visit_UnaryOp(v, n):
            nonlocal found
            if n.op in ("sizeof", "&") and isinstance(n.expr, c_ast.ID) and \
                    n.expr.name == decl.name:
                found = f"device code applies '{n.op}' to the whole array"
            v.generic_visit(n)

    for st in stmts:
        V().visit(st)
    return found


def _scratch_param_type(decl: c_ast.Decl) -> str:
    """Kernel parameter type of a scratch array: a pointer to its element (1-D) or row.
    Attributes of the array's declaration (``float __attribute__((aligned(64))) t[16]``)
    are dropped: they are not part of the element type, and a parameter declared with an
    alignment does not compile (the device buffer is allocated aligned anyway)."""
    from platforms.common.generator import type_text
    inner = _without_attributes(copy.deepcopy(decl.type.type))
    strip_quals(inner)
    return type_text(c_ast.PtrDecl([], inner))


def _without_attributes(t):
    """Type node ``t`` with its ``AttributedType`` wrappers removed (in place where nested)."""
    while isinstance(t, c_ast.AttributedType):
        t = t.type
    n = t
    while n is not None and hasattr(n, "type"):
        inner = n.type
        while isinstance(inner, c_ast.AttributedType):
            inner = inner.type
        if inner is not n.type:
            n.type = inner
        n = inner if isinstance(inner, c_ast.Node) else None
    return t


def _scratch_name(name: str) -> str:
    return f"__xp_d_{name}"


def _thread_buffer(name: str) -> str:
    """Device buffer of the per-thread slices of the iteration array ``name``."""
    return f"__xp_thr_{name}"


def _variable_length(decl: c_ast.Decl, constants: dict) -> bool:
    """``decl`` declares an array with a dimension that is not a constant."""
    t = decl.type
    while isinstance(t, c_ast.ArrayDecl):
        if t.dim is not None and _const_length(t.dim, constants) is None:
            return True
        t = t.type
    return False


def _const_length(dim, constants: dict) -> int | None:
    """Value of a constant array length (literals, named constants, ``sizeof`` of scalar
    types), else None."""
    import passes.lower.loop_bind.blocks as blocks
    from passes.lower.heap_locals import const_bytes
    got = blocks.const_int(dim, constants)
    if got is None:
        from platforms.common.generator import XGenerator
        got = const_bytes(XGenerator({}).visit(dim))
    return got


def _thread_slices(body, arrays: list) -> None:
    """In place: each declaration ``T a[n];`` of ``arrays`` in ``body`` -> ``T *a =
    __xp_thr_a + __xp_slot * (long long) (n);`` (this thread's slice)."""
    lengths = {name: length for name, _, length in arrays}
    types = {name: t for name, t, _ in arrays}

    def repl(n):
        if isinstance(n, c_ast.Decl) and n.name in lengths and isinstance(n.type, c_ast.ArrayDecl):
            (d,) = parse_snippet(f"{types[n.name]} *{n.name} = {_thread_buffer(n.name)} + "
                                 "__xp_slot * (long long) (__xp_len);")
            return fill(d, {"__xp_len": lengths[n.name]})
        return None
    canon.replace_nodes(body, repl)


def _scratch_alloc(decl: c_ast.Decl, rt) -> list:
    """Host statements after the declaration of scratch array ``decl``: a device buffer of
    ``sizeof(decl)`` bytes holding a copy of the host array (its initialiser or, for a
    ``static`` array, the values the previous call left)."""
    d = _scratch_name(decl.name)
    return parse_snippet(
        f"char *{d} = 0; {rt.malloc}((void **)&{d}, sizeof({decl.name}));"
        f"{rt.memcpy}({d}, {decl.name}, sizeof({decl.name}), {rt.h2d});")


def _scratch_release(decl: c_ast.Decl, rt) -> list:
    """Host statements at the end of the scratch array's block: a ``static`` array gets the
    device values back (they persist to the next call), then the buffer is freed."""
    d = _scratch_name(decl.name)
    code = ""
    if "static" in (decl.storage or []) and "const" not in (decl.quals or []):
        code += f"{rt.memcpy}({decl.name}, {d}, sizeof({decl.name}), {rt.d2h});"
    code += f"{rt.free}({d});"
    return parse_snippet(code)


def _assigned_names(body) -> set[str]:
    """Names assigned anywhere in ``body`` (``=``, compound assignment, ``++``/``--``, ``&``)."""
    v = _Names()
    v.visit(body)
    return v.assigned


def _ids(e) -> list[str]:
    out = []

    class V(c_ast.NodeVisitor):
        def visit_ID(v, n):
            out.append(n.name)

        def visit_UnaryOp(v, n):
            if n.op != "sizeof":
                v.generic_visit(n)

    V().visit(e)
    return out


def _is_pointerish(e, scope, pointer_params) -> bool:
    """Is ``e`` pointer-valued (a cast to a pointer, a pointer parameter, an array or pointer
    local, or pointer arithmetic on one)?"""
    while isinstance(e, c_ast.Cast):
        if isinstance(e.to_type.type, c_ast.PtrDecl):
            return True
        e = e.expr
    if isinstance(e, c_ast.ID):
        d = scope.get(e.name, False)
        if d is None:
            return e.name in pointer_params
        return d is not False and isinstance(d.type, (c_ast.PtrDecl, c_ast.ArrayDecl))
    if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
        return _is_pointerish(e.left, scope, pointer_params) or \
            (e.op == "+" and _is_pointerish(e.right, scope, pointer_params))
    return False


def _is_loop_decl(decl, info) -> bool:
    """Is ``decl`` the induction variable declaration of a canonical loop (written only by
    the loop header, constant during one iteration's launches)?"""
    return any(lp.canonical and lp.node.init is not None and
               isinstance(lp.node.init, c_ast.DeclList) and lp.node.init.decls[0] is decl
               for lp in info.loops)


_COLLAPSE = re.compile(r"\bcollapse\s*\(\s*(\d+)\s*\)")


def _omp_parallel_loops(items) -> set[int]:
    """id() of the For loops a ``#pragma omp parallel for [collapse(n)]`` in ``items``
    covers (the loop after it and n-1 perfectly nested ones), unless the covered body holds
    an ``omp atomic`` / ``omp critical`` / ``omp barrier`` pragma or an ``atomic*`` call, or
    the pragma has a ``reduction`` clause (then iterations do interact: OpenMP combines
    private copies of the variable, the dependence test sees one shared scalar)."""
    out: set[int] = set()
    for k, s in enumerate(items[:-1]):
        if not (isinstance(s, c_ast.Pragma) and
                re.match(r"\s*omp\s+parallel\s+for\b", s.string)) or \
                re.search(r"\breduction\s*\(", s.string):
            continue
        loop = items[k + 1]
        if not isinstance(loop, c_ast.For) or _interacting(loop):
            continue
        m = _COLLAPSE.search(s.string)
        depth = int(m.group(1)) if m else 1
        while loop is not None and depth > 0:
            out.add(id(loop))
            depth -= 1
            loop = only_loop(loop.stmt)
    return out


def _interacting(node) -> bool:
    for n in _walk(node):
        if isinstance(n, c_ast.Pragma) and re.match(r"\s*omp\s+(atomic|critical|barrier)",
                                                    n.string):
            return True
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and \
                "atomic" in n.name.name.lower():
            return True
    return False


def _trip_count_const(lp: affine.LoopInfo) -> int | None:
    lo, hi = affine.to_poly(lp.lo), affine.to_poly(lp.hi)
    if lo is None or hi is None or not (hi - lo).is_const():
        return None
    span = (hi - lo).value()
    s = abs(lp.step)
    return max(0, (span + s - 1) // s)


# ------------------------------------------------------------------------------ AST build
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")


def _kernel_def(region: Region, info, generator_facts) -> c_ast.FuncDef:
    from pycparser.c_parser import CParser

    # restrict qualifiers are dropped: pycparser reads neither __restrict nor __restrict__, and
    # C++ (CUDA / HIP) has no `restrict`; without them the kernel only promises less aliasing
    # so are attributes (an alignment promise of a host array: __attribute__((aligned(64)))),
    # which pycparser does not read in a parameter
    params = [(n, re.sub(r"\b(?:__restrict__|__restrict|restrict)\b", " ",
                         _ATTRIBUTE.sub(" ", t))) for n, t in region.params]
    head = f"void {region.name}({param_decls(params)}) {{ }}"
    try:
        fdef = CParser().parse(typedefs(params) + head).ext[-1]
    except Exception:                    # unusual parameter types: refuse, do not guess
        raise BindError("XP-BIND-003", f"cannot declare kernel parameters "
                        f"({param_decls(region.params)})")
    canon.strip_coords(fdef)
    fdef.decl.funcspec = ["__global__"]
    if region.kind == "single":
        items = [clean(s) for s in region.stmts]
        fdef.body.block_items = items
        return fdef
    loops = region.loops
    if region.sched is not None:
        return _kernel_def_blocks(fdef, region, info)
    body = clean(loops[-1].node.stmt)
    decls = []
    if len(loops) == 1:
        idx = {"__xp_k0": c_ast.ID("__xp_t")}
    else:
        idx = {"__xp_k0": c_ast.BinaryOp("/", c_ast.ID("__xp_t"), c_ast.ID("__xp_e1")),
               "__xp_k1": c_ast.BinaryOp("%", c_ast.ID("__xp_t"), c_ast.ID("__xp_e1"))}
        (e1,) = parse_snippet("const long long __xp_e1 = 0;")
        e1.init = count_ast(loops[1], info)
        decls.append(e1)
    (n_decl,) = parse_snippet("const long long __xp_n = 0;")
    n_decl.init = count_ast(loops[0], info)
    if len(loops) == 2:
        n_decl.init = c_ast.BinaryOp("*", n_decl.init, c_ast.ID("__xp_e1"))
    decls.append(n_decl)
    var_decls = loop_var_decls(loops, info, idx)
    unit_decls = []
    for name, decl in region.private.items():   # privatised arrays: one copy per iteration
        d = copy.deepcopy(decl)
        canon.strip_coords(d)
        d.storage = [x for x in (d.storage or []) if x != "static"]
        d.init = None
        unit_decls.append(d)
    for lp in region.units:              # extent-1 loops around the band: their one value
        d = copy.deepcopy(lp.node.init.decls[0])
        canon.strip_coords(d)
        unit_decls.append(d)
    inner = c_ast.Compound(unit_decls + var_decls +
                           (body.block_items or [] if isinstance(body, c_ast.Compound)
                            else [body]))
    if region.thread_arrays:
        _thread_slices(inner, region.thread_arrays)
        decls += parse_snippet("const long long __xp_slot = (long long)blockIdx.x * blockDim.x "
                               "+ threadIdx.x;")
    if region.stride:
        (loop,) = parse_snippet(
            "for (long long __xp_t = (long long)blockIdx.x * blockDim.x + threadIdx.x; "
            "__xp_t < __xp_n; __xp_t += (long long)gridDim.x * blockDim.x) { }")
        loop.stmt = inner
        fdef.body.block_items = decls + [loop]
    else:
        (t_decl, guard) = parse_snippet(
            "const long long __xp_t = (long long)blockIdx.x * blockDim.x + threadIdx.x;"
            "if (__xp_t < __xp_n) { }")
        guard.iftrue = inner
        fdef.body.block_items = decls + [t_decl, guard]
    return fdef


def _kernel_def_blocks(fdef, region: Region, info) -> c_ast.FuncDef:
    """Kernel body of a two-level region: ``__shared__`` arrays, then a block-strided loop
    over the bound loop (``for (b = blockIdx.x; b < n; b += gridDim.x)``) whose body is the
    schedule of ``loop_bind_blocks`` (rewrite; the schedule is the legality)."""
    import passes.lower.loop_bind.blocks as blocks
    lp = region.loops[0]
    shared, body = blocks.build(region.sched, clean, info)
    (n_decl, loop) = parse_snippet(
        "const long long __xp_n = 0;"
        "for (long long __xp_b = blockIdx.x; __xp_b < __xp_n; __xp_b += gridDim.x) { }")
    n_decl.init = count_ast(lp, info)
    var_decls = loop_var_decls([lp], info, {"__xp_k0": c_ast.ID("__xp_b")})
    loop.stmt = c_ast.Compound(var_decls + body)
    fdef.body.block_items = shared + [n_decl, loop]
    return fdef


def device_value(name: str, ptype: str | None, info, scratch, aliases):
    """Host expression for the device counterpart of a pointer-valued host name: ``d_P`` for
    a pointer parameter, the scratch buffer for a host array, the rebased initialiser for a
    host pointer local (``A + bb * I * J`` -> ``d_A + bb * I * J``); None for other names."""
    if _is_pointer_param(name, info):
        return c_ast.ID(f"d_{name}")
    if name in scratch:
        t = ptype or _scratch_param_type(scratch[name])
        return c_ast.Cast(_typename_of(t), c_ast.ID(_scratch_name(name)))
    if name in aliases:
        from platforms.common.generator import type_text
        decl = aliases[name]
        e = copy.deepcopy(decl.init)
        canon.strip_coords(e)

        def sub(n):
            canon.replace_nodes(n, lambda x: device_value(x.name, None, info, scratch, aliases)
                                if isinstance(x, c_ast.ID) else None)

        if isinstance(e, c_ast.ID):
            e = device_value(e.name, None, info, scratch, aliases) or e
        else:
            sub(e)
        t = copy.deepcopy(decl.type)
        strip_quals(t)
        return c_ast.Cast(_typename_of(ptype or type_text(t)), e)
    return None


def _launch_stmts(region: Region, info, k: int, scratch=None, aliases=None, rt=None) -> list:
    """Host statements launching ``region`` (count, grid, <<<>>>); a two-level region with
    per-block scratch gets a buffer of grid x slice bytes around its launch."""
    args = []
    for n, t in region.params:
        dev = device_value(n, t, info, scratch or {}, aliases or {})
        args.append(dev if dev is not None else c_ast.ID(n))
    if region.kind == "single":
        grid, blk = _dim3(c_ast.Constant("int", "1")), _dim3(c_ast.Constant("int", "1"))
        return [_launch(region.name, grid, blk, args)]
    loops = region.loops
    n = count_ast(loops[0], info)
    if len(loops) == 2:
        n = c_ast.BinaryOp("*", n, count_ast(loops[1], info))
    b = region.block
    cap = STRIDE_GRID if region.stride else MAX_GRID
    per = b                              # iterations per block
    if region.sched is not None:         # two levels: one block per iteration, block-strided
        cap, per = STRIDE_GRID, 1
        if region.sched.scratch_bytes:
            from passes.lower.loop_bind.blocks import SCRATCH_BUDGET
            cap = max(1, min(STRIDE_GRID, SCRATCH_BUDGET // region.sched.scratch_bytes))
    stmts = parse_snippet(
        f"const long long __xp_n{k} = 0;"
        f"if (__xp_n{k} > 0) {{ long long __xp_g{k} = (__xp_n{k} + {per - 1}) / {per};"
        f" if (__xp_g{k} > {cap}) __xp_g{k} = {cap}; }}")
    stmts[0].init = n
    grid = _dim3(c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
        None, [], None, c_ast.IdentifierType(["unsigned"]))), c_ast.ID(f"__xp_g{k}")))
    blk = _dim3(c_ast.Constant("int", str(b)))
    body = stmts[1].iftrue.block_items
    from platforms.common.hostgen import CUDA_RUNTIME
    rt = rt or CUDA_RUNTIME
    dynamic = region.sched.dynamic_bytes if region.sched is not None else 0
    if dynamic:                          # arrays over the static limit: opt in, pass the bytes
        body += parse_snippet(rt.max_dynamic_shared.format(kernel=region.name, bytes=dynamic))
    launch = _launch(region.name, grid, blk, args, dynamic)
    if region.thread_arrays:
        body += _thread_buffers(region, k, rt, launch)
    elif region.sched is not None and region.sched.scratch_bytes:
        body += parse_snippet(
            f"char *__xp_scratch = 0; {rt.malloc}((void **)&__xp_scratch, "
            f"(unsigned long long) __xp_g{k} * {region.sched.scratch_bytes});")
        body.append(launch)
        body += parse_snippet(f"{rt.free}(__xp_scratch);")
    else:
        body.append(launch)
    return [c_ast.Compound(stmts)]


def _thread_buffers(region: Region, k: int, rt, launch) -> list:
    """Host statements around ``launch`` of a region with per-thread arrays: the grid capped
    so that all threads' slices fit SCRATCH_BUDGET bytes, one device buffer per array (grid x
    block slices of its length), the launch, the buffers freed."""
    from passes.lower.loop_bind.blocks import SCRATCH_BUDGET
    b, g = region.block, f"__xp_g{k}"
    per = " + ".join(f"(long long) (__xp_len{j}) * (long long) sizeof({t})"
                     for j, (_, t, _) in enumerate(region.thread_arrays))
    code = (f"long long __xp_tb{k} = {per};"
            f"if (__xp_tb{k} < 1) __xp_tb{k} = 1;"
            f"if ({g} > {SCRATCH_BUDGET}LL / ((long long) {b} * __xp_tb{k})) "
            f"{g} = {SCRATCH_BUDGET}LL / ((long long) {b} * __xp_tb{k});"
            f"if ({g} < 1) {g} = 1;")
    for j, (name, t, _) in enumerate(region.thread_arrays):
        buf = _thread_buffer(name)
        code += (f"{t} *{buf} = 0; {rt.malloc}((void **)&{buf}, (unsigned long long) {g} * {b} * "
                 f"(unsigned long long) (__xp_len{j}) * sizeof({t}));")
    stmts = parse_snippet(code)
    fill(c_ast.Compound(stmts), {f"__xp_len{j}": length
                                 for j, (_, _, length) in enumerate(region.thread_arrays)})
    stmts.append(launch)
    stmts += parse_snippet("".join(f"{rt.free}({_thread_buffer(n)});"
                                   for n, _, _ in region.thread_arrays))
    return stmts


def _typename_of(text: str):
    """``Typename`` node of a type spelling (parameter types of this pass)."""
    from pycparser.c_parser import CParser
    text = _ATTRIBUTE.sub(" ", text)
    ast = CParser().parse(typedefs([("", text)]) + f"void __xp_tmpl(void) {{ ({text}) 0; }}")
    t = ast.ext[-1].body.block_items[0].to_type
    canon.strip_coords(t)
    return t


def _is_pointer_param(name: str, info) -> bool:
    p = info.params.get(name)
    return p is not None and p.kind == "pointer"


def _dim3(e):
    return c_ast.FuncCall(c_ast.ID("dim3"), c_ast.ExprList([e]))


def _launch(kernel: str, grid, block, args, dynamic_shared: int = 0):
    from platforms.common.lexer import LAUNCH

    config = [c_ast.ID(kernel), grid, block]
    if dynamic_shared:
        config.append(c_ast.Constant("int", str(dynamic_shared)))
    inner = c_ast.FuncCall(c_ast.ID(LAUNCH), c_ast.ExprList(config))
    return c_ast.FuncCall(inner, c_ast.ExprList(args))


# ------------------------------------------------------------------------------ the pass
@register(PassInfo(
    name=NAME,
    lowers=True,
    summary="canonical C -> CUDA/HIP: outline parallel loop nests into kernels bound to "
            "blockIdx.x*blockDim.x+threadIdx.x; host entry via hostgen",
    options={"to": Option(str, "cuda", "target platform: cuda or hip"),
             "block": Option(int, 256, "threads per block (<= 1024)"),
             "levels": Option(int, 1, "1: one thread per parallel iteration; 2: the outer "
                              "parallel loop over blocks, its inner parallel loops over the "
                              "block's threads, its local arrays in __shared__ memory"),
             "extents": Option(str, "", "element counts the entry's caller guarantees, "
                               "'name:count name:count' (the declared interface, e.g. a case "
                               "file's constant shapes); used only where the analysis cannot "
                               "bound a pointer")},
    requires=("canonical C (platform vnni) without intrinsics",
              "at least one loop without a loop-carried dependence (XP-BIND-001)",
              "computable access extents for every pointer parameter (XP-BIND-002)",
              "traceable pointers, device-callable functions, no device->host scalars "
              "(XP-BIND-003)", "1 <= block <= 1024 (XP-BIND-004)",
              "host arrays used on the device have constant bounds; no host pointer locals "
              "in device code (XP-BIND-005)", "levels is 1 or 2 (XP-BIND-006)"),
    guarantees=("same outputs on the virtual device", "<= block threads per block, grid within "
                "limits (grid-stride loop otherwise)", "entry name and parameters kept",
                "levels=2: barriers only in block-uniform control flow; phases that share "
                "memory separated by __syncthreads()"),
    introduces=("__global__ kernels", "CUDA/HIP runtime API", "<<<>>> launches",
                "__xp_d_<array> device scratch buffers for host arrays"),
))
def loop_bind(program, *, to: str = "cuda", block: int = 256, extents: str = "",
              levels: int = 1, plan: BindPlan | None = None):
    import platforms
    from platforms import parse as parse_source

    bound = canon.plan_or_refuse(NAME, plan if plan is not None else bind_plan(
        program, to=to, block=block, extents=extents, levels=levels))
    program, the_plan, kernels, host_items = (bound.program, bound.schedule, bound.kernels,
                                              bound.host_items)
    backend = platforms.module(to, "backend")
    sizes = {n: str(v) for n, v in the_plan.sizes.items()}
    marker = "__xp_marker_kernel"
    host_text = backend.emit_host_entry(program.entry.name, list(program.entry.params), marker,
                                        {"grid": ("1",), "block": ("1",)}, sizes=sizes)
    host_prog = parse_source(host_text, to, "<hostgen>")
    host_fn = next(e for e in host_prog.ast.ext if isinstance(e, c_ast.FuncDef))
    canon.strip_coords(host_fn)
    items = host_fn.body.block_items
    at = next(k for k, s in enumerate(items) if _is_marker_launch(s, marker))
    # hostgen's "dim3 grid(...); dim3 block(...);" precede its launch: ours replace all three
    start = at
    while start > 0 and isinstance(items[start - 1], c_ast.Decl) and \
            items[start - 1].name in ("grid", "block"):
        start -= 1
    host_fn.body.block_items = items[:start] + host_items + items[at + 1:]

    ext = []
    for e in program.ast.ext:
        if isinstance(e, c_ast.FuncDef):
            if e.decl.name == program.entry.name or e.decl.name in runtime_functions(to):
                continue                 # the entry is rebuilt; the runtime defines the others
            e = copy.deepcopy(e)
            if e.decl.name in the_plan.helpers:
                spec = [s for s in e.decl.funcspec or [] if s not in ("__host__", "__device__")]
                e.decl.funcspec = spec + ["__host__", "__device__"]
            ext.append(e)
        elif isinstance(e, c_ast.Decl) and isinstance(e.type, c_ast.FuncDecl) and \
                e.name == program.entry.name:
            continue
        elif isinstance(e, c_ast.Pragma) and (e.string.strip().startswith("omp") or
                                              e.string.strip().startswith("xpiler")):
            continue
        elif isinstance(e, c_ast.Typedef) and e.name in RUNTIME_TYPES:
            continue                     # a lift's stand-in for a type the GPU runtime defines
        else:
            ext.append(_constexpr(copy.deepcopy(e)))
    ast = c_ast.FileAST(ext + kernels + [host_fn])
    facts = copy.deepcopy(program.facts)
    preamble = [l for l in host_prog.facts.get("preamble", [])]
    for line in program.facts.get("preamble", []):
        if HOST_ONLY_INCLUDES.search(line) or line in preamble:
            continue
        preamble.append(line)
    facts["preamble"] = preamble
    facts["extern_c"] = [program.entry.name]
    draft = replace(program, platform=to, ast=ast, facts=facts, source="",
                    launches=[], intrinsics=[])
    text = backend.emit(draft)
    return parse_source(text, to, _target_path(program.path, to), entry=program.entry.name)


def _shared_limits(to: str) -> tuple[int, int]:
    """(static shared memory per block, static + dynamic a kernel may opt in to with
    ``MaxDynamicSharedMemorySize``) of the target's default profile, in bytes."""
    import platforms
    if to not in ("cuda", "hip"):
        return 0, 0
    prof = platforms.profile(to)
    static = int(prof.get("shared_mem_bytes") or 0)
    return static, int(prof.get("shared_mem_optin_bytes") or static)


def _target_path(path: str, to: str) -> str:
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    return stem + (".cu" if to == "cuda" else ".hip")


@dataclass
class BindPlan:
    """What the check proved and built, for the rewrite to emit (passes/base.py: plans):
    ``program`` with the locals that clash with the host wrapper renamed, its ``schedule``
    (the regions and facts of ``plan``), and the lowered ``kernels`` and ``host_items``."""

    program: object
    schedule: Plan
    kernels: list
    host_items: list


def bind_plan(program, *, to: str = "cuda", block: int = 256, extents: str = "",
              levels: int = 1) -> BindPlan | list[Diagnostic]:
    """The analysis and lowering of ``loop_bind``, run once: a BindPlan, or the refusals."""
    if to not in ("cuda", "hip"):
        return [_diag(program, "XP-BIND-003", f"loop_bind targets cuda or hip, not {to}")]
    try:
        given = _given_extents(program, extents)
    except ValueError as exc:
        return [_diag(program, "XP-BIND-002", str(exc))]
    program, stuck = _free_device_names(program)
    if stuck:
        return [_wrapper_clash(program, stuck)]
    program = _without_block_typedefs(program)
    # per-block heap buffers (the lift's dynamic shared memory) of a constant size -> local
    # arrays of the block, which the schedule puts in shared memory; symbolic ones whose
    # length the host knows -> arrays of each iteration, which a kernel gets as its threads'
    # slices of a device buffer (else the program stays as it is)
    with_arrays, heaps = heap_locals(program)
    static, optin = _shared_limits(to)
    the_plan = None
    if heaps and all(h.const or h.host_ok for h in heaps.values()):
        the_plan, problems = plan(with_arrays, block, given, levels, static, device_copies=True,
                                  dynamic_limit=optin, thread_slices=True)
    if the_plan is None and not (heaps and all(h.const for h in heaps.values())):
        the_plan, problems = plan(program, block, given, levels, static, device_copies=True,
                                  dynamic_limit=optin, thread_slices=True)
    if the_plan is None:
        return problems
    program = the_plan.program
    from platforms.common.hostgen import CUDA_RUNTIME, HIP_RUNTIME
    kernels: list[c_ast.FuncDef] = []
    try:
        host_items = _lower_regions(the_plan.regions, the_plan.info, kernels, [0],
                                    the_plan.scratch, HIP_RUNTIME if to == "hip" else CUDA_RUNTIME,
                                    the_plan.aliases)
    except BindError as exc:
        return [_diag(program, exc.code, exc.message, exc.node)]
    return BindPlan(program, the_plan, kernels, host_items)


@loop_bind.legality
def _loop_bind_legal(program, *, to: str = "cuda", block: int = 256,
                     extents: str = "", levels: int = 1):
    return bind_plan(program, to=to, block=block, extents=extents, levels=levels)


def _free_device_names(program):
    """``free_wrapper_names`` for the CUDA / HIP host wrapper: its ``d_P`` device buffers."""
    params = list(program.entry.params) if program.entry else []
    return free_wrapper_names(program, {f"d_{p.name}" for p in params if p.kind == "pointer"})


def _without_block_typedefs(program):
    """The entry's block-scope typedefs of plain types spelled out (canon.without_block_typedefs):
    a kernel outlined from the entry's loops and its parameters name file-scope types only."""
    fdef = affine.entry_function(program)
    plain = canon.without_block_typedefs(fdef) if fdef is not None else fdef
    if plain is fdef:
        return program
    return replace(program, ast=c_ast.FileAST([plain if e is fdef else e
                                               for e in program.ast.ext]))


def _wrapper_clash(program, name: str) -> Diagnostic:
    return _diag(program, "XP-BIND-003", f"the host wrapper declares the device buffer '{name}', "
                 "which the entry already names as a parameter or file-scope variable")


def free_wrapper_names(program, wrapper: set) -> tuple[object, str | None]:
    """(program, None) with entry locals renamed where the generated host wrapper declares the
    same name in the entry's outermost block (``wrapper``: ``d_P`` for each pointer parameter
    ``P``, the CNRT queue / dim / ktype): an unremoved device buffer ``float *d_inp`` of the
    source beside parameter ``inp`` would otherwise be declared twice. A clash with a
    parameter or with a file-scope name the entry uses cannot be renamed locally: (program,
    that name), for the caller to refuse."""
    fdef = affine.entry_function(program) if program.ast is not None and program.entry else None
    if fdef is None:
        return program, None
    params = list(program.entry.params)
    declared = {n.name for n in canon.walk(fdef.body) if isinstance(n, c_ast.Decl) and n.name
                and not isinstance(n.type, c_ast.FuncDecl)}
    used = canon.ids_in(fdef.body)
    outer = {p.name for p in params} | set(canon.file_scope_decls(program.ast))
    for n in sorted(wrapper & ((used - declared) | {p.name for p in params})):
        if n in outer:
            return program, n
    clash = sorted(wrapper & declared)
    if not clash:
        return program, None
    ast = copy.deepcopy(program.ast)
    fdef = next(e for e in ast.ext if isinstance(e, c_ast.FuncDef) and
                e.decl.name == program.entry.name)
    taken = set(wrapper) | {n.name for n in canon.walk(ast) if isinstance(n, c_ast.ID)} | \
        {n.name for n in canon.walk(ast) if isinstance(n, c_ast.Decl) and n.name}
    mapping = {}
    for n in clash:
        k, new = 0, f"{n}_h"
        while new in taken:
            k += 1
            new = f"{n}_h{k}"
        taken.add(new)
        mapping[n] = new
    fdef.body = canon.substitute(fdef.body, {n: c_ast.ID(m) for n, m in mapping.items()})
    for d in canon.walk(fdef.body):
        if isinstance(d, c_ast.Decl) and d.name in mapping:
            canon.set_declname(d, mapping[d.name])
    # the same facts: only entry-local names change
    return replace(program, ast=ast), None


def _is_marker_launch(s, marker: str) -> bool:
    from platforms.common.generator import launch_parts

    parts = launch_parts(s) if isinstance(s, c_ast.FuncCall) else None
    return parts is not None and isinstance(parts[0], c_ast.ID) and parts[0].name == marker


def _lower_regions(regions, info, kernels: list, counter: list, scratch=None, rt=None,
                   aliases=None) -> list:
    """Host statements of ``regions``; kernels are appended to ``kernels``. Host arrays in
    ``scratch`` (name -> Decl) get a device buffer after their declaration, released at the
    end of the statement list that declares them."""
    from platforms.common.hostgen import CUDA_RUNTIME
    scratch, rt = scratch or {}, rt or CUDA_RUNTIME
    out, mine = [], []
    for r in regions:
        if r.kind == "host":
            for s in r.stmts:
                out.append(clean(s))
                if isinstance(s, c_ast.Decl) and scratch.get(s.name) is s:
                    out += _scratch_alloc(s, rt)
                    mine.append(s)
        elif r.kind == "hostloop":
            loop = clean(r.stmts[0])
            loop.stmt = c_ast.Compound(_lower_regions(r.inner, info, kernels, counter,
                                                      scratch, rt, aliases))
            out.append(loop)
        elif r.kind == "hostif":
            node = clean(r.stmts[0])
            then = c_ast.Compound(_lower_regions(r.inner, info, kernels, counter, scratch, rt,
                                                 aliases))
            other = c_ast.Compound(_lower_regions(r.orelse, info, kernels, counter, scratch, rt,
                                                  aliases)) if node.iffalse is not None else None
            out.append(c_ast.If(node.cond, then, other))
        elif r.kind == "copy":
            out.append(_device_copy_stmt(r.stmts[0], info, scratch, aliases, rt))
        else:
            kernels.append(_kernel_def(r, info, None))
            out += _launch_stmts(r, info, counter[0], scratch, aliases, rt)
            counter[0] += 1
    if mine and any(isinstance(n, c_ast.Return) for s in out for n in _walk(s)):
        raise BindError("XP-BIND-005", "a return statement would skip the release of the "
                        f"device buffer of '{mine[0].name}'", mine[0])
    for d in reversed(mine):
        out += _scratch_release(d, rt)
    return out


def _device_copy_stmt(call, info, scratch, aliases, rt):
    """``memcpy(D, S, n)`` of a copy region -> ``cudaMemcpy(d_D, d_S, n, DeviceToDevice)``
    (legality: ``_Planner._device_copy``)."""
    def device(e):
        e = copy.deepcopy(e)
        canon.strip_coords(e)
        node, parent = e, None
        while not isinstance(node, c_ast.ID):
            parent, node = node, node.expr if isinstance(node, c_ast.Cast) else node.left
        dev = device_value(node.name, None, info, scratch, aliases)
        if parent is None:
            return dev
        if isinstance(parent, c_ast.Cast):
            parent.expr = dev
        else:
            parent.left = dev
        return e

    dst, src, count = call.args.exprs
    count = clean(count)
    return c_ast.FuncCall(c_ast.ID(rt.memcpy), c_ast.ExprList(
        [device(dst), device(src), count, c_ast.ID(rt.d2d)]))


def _walk(n):
    yield n
    for _, c in n.children():
        yield from _walk(c)


def _constexpr(e):
    """File-scope ``const`` scalars with initialisers -> ``constexpr`` (device-usable)."""
    if isinstance(e, c_ast.Decl) and e.init is not None and "const" in (e.quals or []) and \
            isinstance(e.type, c_ast.TypeDecl) and "constexpr" not in (e.storage or []):
        e.quals = [q for q in e.quals if q != "const"]
        e.type.quals = [q for q in e.type.quals if q != "const"]
        e.storage = list(e.storage or []) + ["constexpr"]
    return e
