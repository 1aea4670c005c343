"""task_recovery: a (detensorized) BANG program becomes plain C++ for the vnni target.

Summary
    Recovers the loop over tasks that the BANG launch implies, following the emulator's
    conventions (PLATFORMS.md §1.2 design choices, ``platforms/bang/runtime/xp_bang.h``):

    * ``k<<<dim, ktype, q>>>(args)`` and, for a kernel-only file, the kernel entry with the
      default launch of the device profile (``platforms/bang/profile.toml``) become a call of
      ``k__launch(dim.x, dim.y, dim.z, ktype, args)``: tasks run in groups of ``ktype`` cores
      (UNIONn) one group after the other; inside a group ``taskId = first + k``,
      ``taskIdX/Y/Z`` from the dim, ``coreId = taskId % 4``, ``clusterId = taskId / 4 % n``,
      ``coreDim = 4``, ``clusterDim = n`` (BLOCK: ``coreDim = 1``, ``coreId = clusterId =
      clusterDim = 0``), plus one MPU participant per cluster (``coreId = 0x80``) for kernels
      that test ``__is_mpu()`` / ``coreId == 0x80`` (the emulator's own test, ``platforms/bang/kernels.py``'s ``mpu_kernels``).
    * The task built-ins become parameters of the lifted kernel (and of the device functions
      that need them); ``__is_mpu()`` / ``__is_ipu()`` become ``coreId ==/!= 0x80``.
    * ``__nram__`` / ``__wram__`` / ``__ldram__`` buffers become per-core-slot arrays
      (``xp_nram_a[slot]``), ``__mlu_shared__`` per-cluster arrays, ``__mlu_device__`` /
      ``__mlu_const__`` variables plain globals; initialised on-chip buffers are copied into
      every slot at each launch, as the emulator does.
    * ``__sync_all()`` / ``__sync_cluster()`` at the top level of a kernel split it into phases
      (loop fission at the barriers): each phase is a function run for every task of the group
      before the next phase starts; locals that live across a barrier (and parameters the
      kernel assigns) are expanded per task (``xp_live_k_v[slot]``); a task that returns skips
      the later phases. Pipeline syncs (``__sync()``, ``__sync_io()``...) are no-ops (copies
      are synchronous) and are removed.
    * The task loop of each phase is ``#pragma omp parallel for`` (option ``omp``); the element
      loops of detensorize keep their ``#pragma omp simd``.
    * CNRT host code becomes plain host code: ``cnrtMalloc`` -> ``malloc``, ``cnrtMemcpy`` ->
      ``memcpy``, ``cnrtFree`` -> ``free``, queues removed, ``cnrtDim3_t`` -> ``xp_dim3_t``,
      function types -> their core counts. A kernel-only file gets an ``extern "C"`` function
      with the kernel's name and parameters that runs all tasks.
    * The file is self-contained: C++ headers, ``typedef _Float16 half`` (IEEE binary16, each
      operation rounded to nearest even: the emulator's type), the ``xpd_*`` helpers of
      detensorize, ``#pragma GCC optimize("fp-contract=off")`` (the emulator compiles with
      ``-ffp-contract=off``, so float results match bit for bit).
    * ``form=flat`` (the input of the GPU lowering ``loop_bind``): instead of the launch
      emulation, every launch (the kernel-only entry's default launch, or ``k<<<dim, ktype,
      q>>>`` with ``cnrtDim3_t dim = {x, y, z}``, or ``dim.x = ..; dim.y = ..; dim.z = ..;``
      stores in the declaring block before the launch, or any other ``dim`` variable, and a
      function type constant) becomes ``for (int taskId = 0; taskId < x*y*z; ++taskId)
      k__task(args, taskIdX, ..., coreDim)`` with every built-in a plain expression of
      ``taskId`` and the launch constants (same numbering as above); the on-chip buffers a
      kernel uses become locals of ``k__task`` (private to a task), so ``inline`` leaves one
      loop nest whose task loop carries no dependence. A task loop of a kernel whose tasks
      share nothing (no barrier, SRAM, memory core or atomic) gets ``#pragma omp parallel
      for``: concurrent tasks writing one element would race, so the kernel's contract is
      that its tasks are independent (as the GPU lift states for a grid's blocks). The
      runner (a function named after the kernel, ``k__cfgN`` for further configurations)
      replaces the launch. Cluster state is
      kept for launches of exactly one group of tasks (taskDim = the UNIONn core count): a
      ``__mlu_shared__`` buffer ``b[D]`` becomes ``xp_sram_b[n * D]`` in the runner, indexed
      ``xp_sram_b + clusterId * D``; barriers at the kernel's top level split it into phases
      ``k__phaseI``, run one after the other over all tasks (loop fission: every task reaches
      the barrier before any continues); MPU participants run as a loop over the clusters
      (``coreId = 0x80``, ``taskId = 4c``) before the tasks of each phase; a kernel that
      begins with Cambricon's ``if (__is_mpu()) return;`` (also ``coreId == 0x80``,
      ``!__is_ipu()``; only declarations without calls or writes before it) loses that
      statement and runs no MPU participant: the compute cores never take it and the memory
      core does nothing before leaving (``strip_mpu_exits``, both forms; a kernel without an
      MPU participant also takes ``__sync_all_ipu()`` / ``__sync_all_ipu_within_cluster()`` as
      ``__sync_all()`` / ``__sync_cluster()``, ``alias_ipu_barriers``). Launch dimensions computed on the
      host at run time are taken: a field given by a side-effect-free expression over host
      parameters and locals that are never written becomes that expression over runner
      parameters ``xp_h_<name>`` (the launch passes the values), any other field a runner
      parameter ``xp_dim_<f>`` receiving ``dim.<f>`` at the launch (``_launch_config``). In the
      task functions a select between two pointers into one buffer (ping-pong buffers: ``c ? ping
      : pong``) becomes that buffer plus a selected offset (``passes/lift/pointer_select.py``, its
      legality there), so the lowering traces one buffer. A local that a
      later phase reads is rematerialized there (its declaration copied to the start of the
      phase, with those of the locals it reads) when it is declared once at the top level with
      a scalar type and never written, and its initializer reads only constants, task
      built-ins, never-written parameters and such locals (no memory, calls or side effects):
      the same task computes the same value in every phase (``_remat``). Refused
      (XP-TASK-011): other locals or task-private buffers used on both sides of a barrier (a
      buffer the kernel declares at its top level and names in one phase only is declared in
      that phase, ``_movable_buffers``), a return
      before a barrier, other SRAM shapes (a 1-D array without initializer at the top level of
      a kernel body is moved to file scope first, ``hoist_kernel_sram``), SRAM used by device functions, ``sizeof`` / ``&`` of
      an on-chip buffer in a device function (other uses are passed: file-scope task-private
      buffers a device function names become its trailing parameters, ``_buffer_params``), cluster
      state with more than one group (or a run-time number of tasks); a function type that is
      not a compile-time constant (XP-TASK-012). NRAM contents do
      not carry from one task to the next (a BANG program that relied on that would read
      uninitialised memory on hardware too).
Requires
    1. The program is BANG and detensorized: no ``__bang_*`` / ``__memcpy`` call left
       (XP-TASK-006).
    2. Cluster/all barriers only at the top level of a kernel body (XP-TASK-001 when under a
       task-dependent condition, XP-TASK-002 otherwise); no split barriers or IPU/MPU-only
       barriers (XP-TASK-003).
    3. Task built-ins and on-chip buffers are used by device code only (XP-TASK-004); no
       ``bfloat16_t`` / ``int4x2_t`` (XP-TASK-005); no local shadowing an on-chip buffer or a
       barrier-crossing local declared twice (XP-TASK-007); barrier-crossing locals without
       initializer lists, no ``goto`` in a phased kernel (XP-TASK-008); only the CNRT calls
       with a plain-C equivalent (XP-TASK-009); no ``extern`` on-chip declarations (XP-TASK-010).
Guarantees
    Same outputs as the BANG program on the virtual device, for every launch the program makes;
    the output is C++17 that ``g++ -O2 -march=native -fopenmp -c`` compiles.
Options
    omp: ``#pragma omp parallel for`` over the tasks of a phase (default true).
    profile: BANG device profile whose default launch a kernel-only file uses ("" = default).
    form: ``launch`` (default: group/slot emulation, any launch, barriers) or ``flat`` (one
    sequential loop over the tasks, task-private buffers; XP-TASK-011/012/013).
Example
    ``__mlu_global__ void k(float *x) { ... taskId ... }`` (kernel-only) ->
    ``static void k__task(float *x, int taskIdX, ..., int xp_core_slot, int xp_cluster_slot)``,
    ``static void k__launch(unsigned int xp_dx, ..., int xp_ktype, float *x)`` (group loop,
    ``#pragma omp parallel for`` over the tasks), ``extern "C" void k(float *x)
    { k__launch(16, 1, 1, 16, x); }``
"""
from __future__ import annotations

import copy
import re
from dataclasses import replace

from pycparser import c_ast

from xpiler.ir.errors import Coord, Diagnostic

import passes.canon as canon
import passes.lift.bang_lower as bl
from passes.base import Option, PassInfo, PassRefused, register
from passes.lift.detensorize import is_special, statement_slots, used_ids
from passes.lift.pointer_select import file_variables, fold_pointer_selects

NAME = "task_recovery"
BUILTINS = ("taskIdX", "taskIdY", "taskIdZ", "taskId", "taskDimX", "taskDimY", "taskDimZ", "taskDim",
            "clusterId", "clusterDim", "coreId", "coreDim")
CTX = BUILTINS + ("xp_core_slot", "xp_cluster_slot")
ONCHIP = {"__nram__": "nram", "__wram__": "wram", "__ldram__": "ldram", "__mlu_shared__": "sram"}
KERNEL_SPECS = {"__mlu_global__", "__mlu_entry__"}
BARRIERS = {"__sync_all", "__sync_cluster"}
NOOP_SYNCS = {"__sync", "__sync_io", "__sync_compute", "__sync_move", "__sync_io_move_compute"}
BAD_SYNCS = {"__sync_all_ipu", "__sync_all_ipu_within_cluster", "__sync_all_mpu", "__sync_all_arrive",
             "__sync_all_wait"}
KTYPES = {"block": 1, "union1": 4, "union2": 8, "union4": 16, "union8": 32, "union16": 64}
FUNC_TYPES = {"CNRT_FUNC_TYPE_BLOCK": 1, "CNRT_FUNC_TYPE_BLOCK0": 1, "CNRT_FUNC_TYPE_UNION1": 4,
              "CNRT_FUNC_TYPE_UNION2": 8, "CNRT_FUNC_TYPE_UNION4": 16, "CNRT_FUNC_TYPE_UNION8": 32,
              "CNRT_FUNC_TYPE_UNION16": 64, "cnrtFuncTypeBlock": 1, "cnrtFuncTypeUnion1": 4,
              "cnrtFuncTypeUnion2": 8, "cnrtFuncTypeUnion4": 16, "cnrtFuncTypeUnion8": 32,
              "cnrtFuncTypeUnion16": 64}
CNRT_DROP = {"cnrtQueueCreate", "cnrtCreateQueue", "cnrtQueueDestroy", "cnrtDestroyQueue", "cnrtQueueSync",
             "cnrtSyncQueue", "cnrtQueueQuery", "cnrtInit", "cnrtDestroy", "cnrtSetDevice", "cnrtGetDevice",
             "cnrtSetCurrentDevice", "cnrtGetDeviceHandle", "cnrtSyncDevice", "cnrtDeviceReset",
             "cnrtGetDeviceCount"}
CNRT_TYPES = {"cnrtDim3_t": "xp_dim3_t", "cnrtFunctionType_t": "int", "cnrtRet_t": "int",
              "cnrtError_t": "int", "cnrtDev_t": "int", "cnrtMemTransDir_t": "int"}
DROP_TYPES = {"cnrtQueue_t", "cnrtNotifier_t"}
BANG_HEADERS = re.compile(r"#\s*include\s*[<\"](bang|cnrt|mlu|cn_api|cnrt_data|bang_device_functions|"
                          r"bang_device_types)(\.h)?[>\"]")
BLOCK_GROUP = 16          # BLOCK tasks run this many at a time, each on its own core slot
INCLUDES = ["#include <cmath>", "#include <cstring>", "#include <cstdlib>", "#include <cstdint>",
            "#include <cstddef>", "#include <cstdio>"]


def _bang_macros(ast, preamble: list[str]) -> list[str]:
    """``#define`` lines for the BANG predefined macros (``__MLU_NRAM_SIZE__``, ``__BANG_ARCH__``,
    ...) that the output still names: the BANG toolchain defines them for the source, the target's
    does not (values of the default BANG profile, as the virtual device used for the source)."""
    import platforms
    from platforms.common.generator import XGenerator

    text = "\n".join(preamble) + "\n" + XGenerator().visit(ast)
    return platforms.module("bang", "backend").carried_macros(text)


class Refusal(Exception):
    def __init__(self, code: str, message: str, node=None):
        super().__init__(message)
        self.code, self.node = code, node


def _coord(program, node) -> Coord:
    c = getattr(node, "coord", None)
    if c is None:
        return Coord(program.path)
    return Coord(getattr(c, "file", None) or program.path, getattr(c, "line", 0) or 0,
                 getattr(c, "column", 0) or 0)


def _is_kernel(fd: c_ast.FuncDef) -> bool:
    return bool(set(fd.decl.funcspec or []) & KERNEL_SPECS)


def _call_name(n) -> str | None:
    if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID):
        return n.name.name
    return None


def _params(fd) -> list:
    ft = fd.decl.type if isinstance(fd, c_ast.FuncDef) else fd.type
    if not ft.args:
        return []
    return [p for p in ft.args.params if isinstance(p, c_ast.Decl) and p.name]


def _int_param(name: str) -> c_ast.Decl:
    return c_ast.Decl(name, [], [], [], [], c_ast.TypeDecl(name, [], None, c_ast.IdentifierType(["int"])),
                      None, None)


def _set_declname(t, name):
    while not isinstance(t, c_ast.TypeDecl):
        t = t.type
    t.declname = name


def _rename_function(decl: c_ast.Decl, name: str) -> None:
    decl.name = name
    _set_declname(decl.type.type, name)


def _quote(text: str, **nodes):
    """Statements parsed from ``text``; identifiers named ``__q_<key>`` replaced by ``nodes[key]``."""
    block = bl.parse_block(text, extra_types=("xp_dim3_t",))
    _substitute(block, {f"__q_{k}": v for k, v in nodes.items()})
    return block.block_items or []


def _substitute(root, mapping: dict) -> None:

    def go(node):
        for cname, child in node.children():
            if isinstance(child, c_ast.ID) and child.name in mapping:
                canon.replace_child(node, cname, copy.deepcopy(mapping[child.name]))
            else:
                go(child)
    go(root)


def rename_shadowing_locals(program):
    """``program`` with the parameters and plain locals of device helpers that are named like
    an on-chip buffer declared elsewhere (mmcv's ``computeReluN(T *nram_dst, ...)`` beside a
    kernel's ``__nram__ float nram_dst[..]``) renamed ``name__h`` with their uses: the lift
    gives every on-chip buffer one program-wide name, which such a local would otherwise
    shadow (XP-TASK-007). A name the helper declares more than once is left as it is."""
    if program.ast is None:
        return program
    onchip = {e.name for e in bl.walk(program.ast) if isinstance(e, c_ast.Decl) and e.name
              and set(e.storage or []) & set(ONCHIP)}
    if not onchip:
        return program
    ast = None
    for k, ext in enumerate(program.ast.ext):
        if not isinstance(ext, c_ast.FuncDef) or _is_kernel(ext) or \
                not set(ext.decl.funcspec or []) & {"__mlu_func__", "__mlu_device__"}:
            continue
        decls = [n for n in bl.walk(ext) if isinstance(n, c_ast.Decl) and n.name and
                 not isinstance(n.type, c_ast.FuncDecl) and not set(n.storage or []) & set(ONCHIP)]
        names = [d.name for d in decls]
        clash = sorted({n for n in names if n in onchip and names.count(n) == 1})
        if not clash:
            continue
        if ast is None:
            ast = copy.deepcopy(program.ast)
        fd = ast.ext[k]
        mapping = {n: c_ast.ID(f"{n}__h") for n in clash}
        fd.body = canon.substitute(fd.body, mapping)
        for n in bl.walk(fd):
            if isinstance(n, c_ast.Decl) and n.name in mapping and \
                    not set(n.storage or []) & set(ONCHIP):
                canon.set_declname(n, f"{n.name}__h")
    return program if ast is None else replace(program, ast=ast)


class _IdMap(c_ast.NodeVisitor):
    """Replaces IDs by expressions (node factories); StructRef fields untouched."""

    def __init__(self, mapping: dict):
        self.m = mapping

    def generic_visit(self, node):

        for cname, child in node.children():
            if isinstance(node, c_ast.StructRef) and cname == "field":
                continue
            if isinstance(child, c_ast.ID) and child.name in self.m:
                canon.replace_child(node, cname, self.m[child.name]())
            else:
                self.visit(child)


def _slot_ref(array: str, slot: str):
    return lambda: c_ast.ArrayRef(c_ast.ID(array), c_ast.ID(slot))


def _ids(node) -> set[str]:
    return set(used_ids(node))


# ------------------------------------------------------------------------------ analysis
def _array_identity_uses(body, names: set) -> dict:
    """{buffer: 'sizeof' | 'the address'} for ``sizeof b`` / ``&b`` over names of ``names``
    in ``body``: where an array and a pointer to its first element differ."""
    out = {}
    for n in bl.walk(body):
        if isinstance(n, c_ast.UnaryOp) and n.op in ("sizeof", "&") and isinstance(n.expr, c_ast.ID) \
                and n.expr.name in names:
            out.setdefault(n.expr.name, "sizeof" if n.op == "sizeof" else "the address")
    return out


def _is_mpu_test(e) -> bool:
    """``__is_mpu()``, ``!__is_ipu()``, ``coreId == 0x80`` / ``0x80 == coreId`` (HDR: the MPU
    is the participant with ``coreId == 0x80``)."""
    if isinstance(e, c_ast.FuncCall) and _call_name(e) == "__is_mpu" and not (e.args and e.args.exprs):
        return True
    if isinstance(e, c_ast.UnaryOp) and e.op == "!" and isinstance(e.expr, c_ast.FuncCall) \
            and _call_name(e.expr) == "__is_ipu" and not (e.expr.args and e.expr.args.exprs):
        return True
    if isinstance(e, c_ast.BinaryOp) and e.op == "==":
        for a, b in ((e.left, e.right), (e.right, e.left)):
            if isinstance(a, c_ast.ID) and a.name == "coreId" and isinstance(b, c_ast.Constant) \
                    and b.type == "int" and _int_value(b.value) == 0x80:
                return True
    return False


def _int_value(text: str):
    try:
        return int(text.rstrip("uUlL"), 0)
    except ValueError:
        return None


def _mpu_exit_index(fd) -> int | None:
    """Index of a leading ``if (__is_mpu()) return;`` in kernel ``fd``'s body: no else, a plain
    ``return;`` (or ``{ return; }``), preceded only by declarations whose initializers call
    nothing and write nothing (so the memory core does nothing observable before it leaves)."""
    for k, s in enumerate(fd.body.block_items or []):
        if isinstance(s, c_ast.If):
            body = s.iftrue
            if isinstance(body, c_ast.Compound) and len(body.block_items or []) == 1:
                body = body.block_items[0]
            if s.iffalse is None and _is_mpu_test(s.cond) and isinstance(body, c_ast.Return) and body.expr is None:
                return k
            return None
        if not isinstance(s, c_ast.Decl) or isinstance(s.type, c_ast.FuncDecl):
            return None
        if s.init is not None and any(isinstance(n, (c_ast.FuncCall, c_ast.Assignment))
                                      or (isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"))
                                      for n in bl.walk(s.init)):
            return None
    return None


def hoist_kernel_sram(program):
    """``program`` with each ``__mlu_shared__`` array that a kernel declares at the top level of
    its body (no initializer, a name declared nowhere else) moved to file scope just before the
    kernel: SRAM is one buffer per cluster whatever the declaration's scope (PLATFORMS.md §1.3),
    so form=flat then treats it like a file-scope SRAM buffer (per cluster in the runner)."""
    counts: dict = {}
    for n in bl.walk(program.ast):
        if isinstance(n, c_ast.Decl) and n.name:
            counts[n.name] = counts.get(n.name, 0) + 1
        if isinstance(n, c_ast.FuncDef):
            for p in _params(n):
                counts[p.name] = counts.get(p.name, 0) + 1
    ast = None
    out = []
    for ext in program.ast.ext:
        moved = []
        if isinstance(ext, c_ast.FuncDef) and _is_kernel(ext):
            keep = []
            for s in ext.body.block_items or []:
                if isinstance(s, c_ast.Decl) and "__mlu_shared__" in (s.storage or []) and s.init is None \
                        and "extern" not in (s.storage or []) and counts.get(s.name) == 1 \
                        and isinstance(s.type, c_ast.ArrayDecl):
                    d = copy.deepcopy(s)
                    d.storage = [x for x in d.storage if x != "static"]
                    moved.append(d)
                else:
                    keep.append(s)
            if moved:
                ext = copy.copy(ext)
                ext.body = c_ast.Compound(keep, ext.body.coord)
        out += moved + [ext]
        if moved and ast is None:
            ast = True
    if ast is None:
        return program
    new = copy.copy(program.ast)
    new.ext = out
    return replace(program, ast=new)


IPU_BARRIERS = {"__sync_all_ipu": "__sync_all", "__sync_all_ipu_within_cluster": "__sync_cluster"}


def alias_ipu_barriers(program):
    """``program`` with ``__sync_all_ipu()`` -> ``__sync_all()`` and
    ``__sync_all_ipu_within_cluster()`` -> ``__sync_cluster()`` in the kernels that run no
    memory-core participant (they never test ``__is_mpu()`` / ``coreId == 0x80``, PLATFORMS.md
    §1.2 design choice; or lost the ``if (__is_mpu()) return;`` idiom): their participants are
    exactly the compute cores, so the compute-core barrier and the full one coincide (the
    virtual device's ``participates``). Kernels with an MPU participant keep them (XP-TASK-003)."""
    import platforms

    if not any(_call_name(n) in IPU_BARRIERS for n in bl.walk(program.ast)):
        return program
    text = platforms.module("bang", "backend").emit(program)
    mpu = set(platforms.module("bang", "kernels").mpu_kernels(text))
    ast = copy.copy(program.ast)
    ast.ext = []
    for ext in program.ast.ext:
        if isinstance(ext, c_ast.FuncDef) and _is_kernel(ext) and ext.decl.name not in mpu \
                and any(_call_name(n) in IPU_BARRIERS for n in bl.walk(ext.body)):
            ext = copy.deepcopy(ext)
            for n in bl.walk(ext.body):
                if isinstance(n, c_ast.FuncCall) and _call_name(n) in IPU_BARRIERS:
                    n.name = c_ast.ID(IPU_BARRIERS[n.name.name], n.name.coord)
        ast.ext.append(ext)
    return replace(program, ast=ast)


def strip_mpu_exits(program):
    """(program', kernels): kernels that begin with the ``if (__is_mpu()) return;`` idiom of
    Cambricon's samples (MOG §4.2) lose that statement, and their names are returned. Exact:
    the compute cores' ``coreId`` is never 0x80 (their test is false, the statement a no-op)
    and the memory core leaves before doing anything, so such a kernel needs no MPU
    participant at all (form=flat then runs the compute-core tasks only)."""
    names: set[str] = set()
    ast = None
    for k, ext in enumerate(program.ast.ext):
        if isinstance(ext, c_ast.FuncDef) and _is_kernel(ext):
            at = _mpu_exit_index(ext)
            if at is None:
                continue
            if ast is None:
                ast = copy.copy(program.ast)
                ast.ext = list(program.ast.ext)
            fd = copy.deepcopy(ext)
            del fd.body.block_items[at]
            ast.ext[k] = fd
            names.add(fd.decl.name)
    if ast is None:
        return program, names
    return replace(program, ast=ast), names


class Lift:
    """Legality analysis and rewrite of one program (``check()`` never mutates)."""

    def __init__(self, program, omp: bool = True, profile: str = "", form: str = "launch"):
        import platforms

        program = rename_shadowing_locals(program)
        self.mpu_exits: set[str] = set()
        program, self.mpu_exits = strip_mpu_exits(program)
        if form == "flat":
            program = hoist_kernel_sram(program)
        program = alias_ipu_barriers(program)
        self.program = program
        self.omp = omp
        self.form = form
        self.ctx = CTX if form == "launch" else BUILTINS
        self.prof = platforms.profile("bang", profile or None)
        self.ast = program.ast

    # ---------------------------------------------------------------- legality
    def check(self) -> list[Diagnostic]:
        out: list[Diagnostic] = []

        def diag(code, msg, node=None, construct=None):
            out.append(Diagnostic(code, msg, _coord(self.program, node), construct=construct, pass_name=NAME))

        if self.program.platform != "bang":
            diag("XP-TASK-000", f"task_recovery lifts BANG programs, not {self.program.platform}")
            return out
        onchip = self._onchip_names()
        seen: set[str] = set()
        for e in bl.walk(self.ast):
            if isinstance(e, c_ast.Decl) and set(e.storage or []) & set(ONCHIP):
                if e.name in seen:
                    diag("XP-TASK-007", f"on-chip buffer name '{e.name}' is declared more than once", e, e.name)
                seen.add(e.name)
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.Decl) and set(ext.storage or []) & set(ONCHIP) and "extern" in (ext.storage or []):
                diag("XP-TASK-010", f"extern on-chip declaration '{ext.name}' is not supported", ext, ext.name)
        for n in bl.walk(self.ast):
            name = _call_name(n)
            if name and is_special(name):
                diag("XP-TASK-006", f"'{name}' is still a BANG special instruction: run detensorize first", n, name)
            if name in BAD_SYNCS:
                diag("XP-TASK-003", f"'{name}' (split or IPU/MPU-only barrier) has no task-loop equivalent here", n, name)
            if isinstance(n, c_ast.IdentifierType) and {"bfloat16_t", "int4x2_t", "bfloat16"} & set(n.names):
                diag("XP-TASK-005", f"type '{' '.join(n.names)}' has no vnni equivalent", n)
        for ext in self.ast.ext:
            if not isinstance(ext, c_ast.FuncDef):
                continue
            device = _is_kernel(ext) or bool(set(ext.decl.funcspec or []) & {"__mlu_func__", "__mlu_device__"})
            ids = _ids(ext.body)
            if not device:
                bad = sorted((ids & (set(BUILTINS) | onchip)))
                if bad:
                    diag("XP-TASK-004", f"host function '{ext.decl.name}' uses device state '{bad[0]}'", ext, bad[0])
                for n in bl.walk(ext.body):
                    nm = _call_name(n)
                    if nm and (nm.startswith("cnrt") or nm.startswith("CNRT")) and nm not in CNRT_DROP | {
                            "cnrtMalloc", "cnrtFree", "cnrtMemcpy", "cnrtMemcpyAsync", "cnrtMemset", "CNRT_CHECK",
                            "CNRT_CHECK_RETURN"}:
                        diag("XP-TASK-009", f"CNRT call '{nm}' has no plain C++ equivalent here", n, nm)
                continue
            locals_ = {n.name for n in bl.walk(ext.body) if isinstance(n, c_ast.Decl) and n.name
                       and not set(n.storage or []) & set(ONCHIP)}
            locals_ |= {p.name for p in _params(ext)}
            clash = sorted(locals_ & (onchip | set(BUILTINS)))
            if clash:
                diag("XP-TASK-007", f"'{clash[0]}' in '{ext.decl.name}' shadows an on-chip buffer or a task built-in",
                     ext, clash[0])
            self._check_barriers(ext, diag)
        if self.form != "launch" and not out:
            for code, msg, node, construct in self._flat_problems():
                diag(code, msg, node, construct)
        return out

    def _flat_problems(self) -> list:
        """Why ``form=flat`` (one sequential loop over the tasks, on-chip buffers local to a
        task) would not keep the program's meaning: (code, message, node, construct) tuples."""
        out = []
        if self.form not in ("launch", "flat"):
            return [("XP-TASK-013", f"form={self.form!r}: expected 'launch' or 'flat'", None, None)]
        onchip = self._onchip_names()
        file_sram = {e.name for e in self.ast.ext if isinstance(e, c_ast.Decl) and "__mlu_shared__" in (e.storage or [])}
        for n in bl.walk(self.ast):
            if isinstance(n, c_ast.Decl) and "__mlu_shared__" in (n.storage or []) and (
                    n.name not in file_sram or not isinstance(n.type, c_ast.ArrayDecl)
                    or isinstance(n.type.type, c_ast.ArrayDecl) or n.init is not None):
                out.append(("XP-TASK-011", f"'{n.name}': cluster-shared SRAM is supported as a one-dimensional "
                            "array without initializer, declared at file scope or at the top level of a kernel "
                            "body under a name used nowhere else", n, n.name))
        private = onchip - file_sram
        for ext in self.ast.ext:
            if not isinstance(ext, c_ast.FuncDef):
                continue
            if _is_kernel(ext):
                phases = self._split(ext)
                if len(phases) > 1:
                    kname = ext.decl.name
                    remat = self._remat(ext)
                    stuck = sorted(set(self._live(ext)) - set(remat) - set(self._movable_buffers(ext)))
                    if stuck:
                        v = stuck[0]
                        out.append(("XP-TASK-011", f"'{v}' of '{kname}' lives across a barrier (the flat form "
                                    "keeps no per-task state between phases)", ext, v))
                    for ph in phases[:-1]:
                        for s in ph:
                            if any(isinstance(m, c_ast.Return) for m in bl.walk(s)):
                                out.append(("XP-TASK-011", f"a task of '{kname}' may return before a barrier",
                                            s, kname))
                    used = [set().union(*[_ids(s) for s in ph]) & private if ph else set() for ph in phases]
                    for b in sorted(private):
                        if sum(b in u for u in used) > 1:
                            out.append(("XP-TASK-011", f"task-private buffer '{b}' of '{kname}' is used on "
                                        "both sides of a barrier", ext, b))
            elif set(ext.decl.funcspec or []) & {"__mlu_func__", "__mlu_device__"}:
                used = _ids(ext.body)
                bad = sorted(used & file_sram)
                if bad:
                    out.append(("XP-TASK-011", f"device function '{ext.decl.name}' uses the cluster-shared "
                                f"buffer '{bad[0]}' (SRAM is supported in kernel bodies only)", ext, bad[0]))
                for b, why in sorted(_array_identity_uses(ext.body, used & onchip).items()):
                    out.append(("XP-TASK-011", f"device function '{ext.decl.name}' takes {why} of the on-chip "
                                f"buffer '{b}' (it receives the task's buffer as a pointer parameter)", ext, b))
            else:
                for n in bl.walk(ext.body):
                    lp = _launch_of(n)
                    if lp is not None and self._launch_config(ext, lp) is None:
                        out.append(("XP-TASK-012", "the launch's function type is not a compile-time constant "
                                    "(a CNRT_FUNC_TYPE_* / cnrtFuncType* name, a number, or a never-assigned local "
                                    "initialised with one), or its dimension is not a variable or field "
                                    "(the task numbering coreId/clusterId follows from the function type)",
                                    n, lp[0].name))
        return out

    def _const_launch(self, fd, lp):
        """(dim expressions, ktype) of a launch ``k<<<dim, ktype, q>>>`` in host function ``fd``
        when both are fixed: ``dim`` a never-assigned local initialised with ``{x, y, z}`` of
        side-effect free expressions over names the function never assigns, ``ktype`` a function
        type constant (or a never-assigned local initialised with one)."""
        _, cfg = lp
        assigned = set()
        for n in bl.walk(fd.body):
            if isinstance(n, c_ast.Assignment):
                t = n.lvalue
                while isinstance(t, (c_ast.StructRef, c_ast.ArrayRef)):
                    t = t.name
                if isinstance(t, c_ast.ID):
                    assigned.add(t.name)
            if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&") and isinstance(n.expr, c_ast.ID):
                assigned.add(n.expr.name)
        decls = {n.name: n for n in bl.walk(fd.body) if isinstance(n, c_ast.Decl) and n.name}
        dim = cfg[0] if cfg else None
        if not isinstance(dim, c_ast.ID) or dim.name not in decls:
            return None
        if dim.name in assigned and decls[dim.name].init is not None:
            return None
        init = decls[dim.name].init
        if init is None:
            exprs = self._field_stores(fd, decls[dim.name], dim)
            if exprs is None:
                return None
        elif not isinstance(init, c_ast.InitList) or not 1 <= len(init.exprs) <= 3:
            return None
        else:
            exprs = list(init.exprs) + [c_ast.Constant("int", "1")] * (3 - len(init.exprs))
        for e in exprs:
            for n in bl.walk(e):
                ok = isinstance(n, (c_ast.Constant, c_ast.BinaryOp, c_ast.TernaryOp, c_ast.Cast, c_ast.Typename,
                                    c_ast.TypeDecl, c_ast.IdentifierType)) \
                    or (isinstance(n, c_ast.ID) and n.name not in assigned and n.name not in decls) \
                    or (isinstance(n, c_ast.UnaryOp) and n.op in ("-", "+", "~", "!", "sizeof"))
                if not ok:
                    return None
        kt = cfg[1] if len(cfg) > 1 else c_ast.Constant("int", "1")
        if isinstance(kt, c_ast.ID) and kt.name in decls and kt.name not in assigned:
            kt = decls[kt.name].init
        if isinstance(kt, c_ast.ID) and kt.name in FUNC_TYPES:
            ktype = FUNC_TYPES[kt.name]
        elif isinstance(kt, c_ast.Constant) and kt.type == "int":
            ktype = int(kt.value.rstrip("uUlL"), 0)
        else:
            return None
        if ktype == 0:
            ktype = 1
        if ktype not in KTYPES.values():
            return None
        return exprs, ktype

    def _launch_config(self, fd, lp):
        """(dims, ktype, extra) of launch ``k<<<dim, ktype, q>>>`` in host function ``fd`` for
        form=flat, or None when the function type is not a compile-time constant (or ``dim`` is
        not a variable or a field of one). ``dims`` are the three task-count expressions the
        runner's task loop uses; ``extra`` the runner parameters they need, ``(name, C type,
        argument at the launch)``:

        * a field given at compile time (constants, file-scope names): itself;
        * a field computed on the host from the function's parameters and locals, each never
          assigned after its declaration (``{(n + 63) / 64, 1, 1}``, or ``d.x = blocks;``): the
          same expression over runner parameters ``xp_h_<name>`` that receive those values
          (the runner runs at the launch, where they hold the same values);
        * any other field (set under a condition, read from memory, a variable written more
          than once): ``xp_dim_<f>``, receiving ``dim.<f>`` as the launch reads it."""
        cfg = lp[1]
        if not cfg:
            return None
        kt = cfg[1] if len(cfg) > 1 else c_ast.Constant("int", "1")
        ktype = self._const_ktype(fd, kt)
        if ktype is None:
            return None
        const = self._const_launch(fd, lp)
        if const is not None and all(self._file_scope_expr(fd, e) for e in const[0]):
            return const[0], const[1], []
        dim = cfg[0]
        t = dim
        while isinstance(t, c_ast.StructRef) and t.type == ".":
            t = t.name
        if not isinstance(t, c_ast.ID):
            return None
        exprs = self._dim_exprs(fd, dim)
        dims, extra, seen = [], [], set()
        for k, f in enumerate("xyz"):
            e = exprs[k] if exprs is not None else None
            names = self._host_names(fd, e) if e is not None else None
            if names is None:
                extra.append((f"xp_dim_{f}", "int", c_ast.Cast(bl.parse_block("__r = (int)0;").block_items[0].rvalue.to_type,
                                                                   c_ast.StructRef(copy.deepcopy(dim), ".", c_ast.ID(f)))))
                dims.append(c_ast.ID(f"xp_dim_{f}"))
                continue
            holder = c_ast.ExprList([copy.deepcopy(e)])
            _substitute(holder, {v: c_ast.ID(f"xp_h_{v}") for v in names})
            e = holder.exprs[0]
            for v, ty in sorted(names.items()):
                if v not in seen:
                    seen.add(v)
                    extra.append((f"xp_h_{v}", ty, c_ast.ID(v)))
            dims.append(e)
        return dims, ktype, extra

    @staticmethod
    def _const_ktype(fd, kt):
        decls = {n.name: n for n in bl.walk(fd.body) if isinstance(n, c_ast.Decl) and n.name}
        assigned = {n.lvalue.name for n in bl.walk(fd.body)
                    if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID)}
        if isinstance(kt, c_ast.ID) and kt.name in decls and kt.name not in assigned:
            kt = decls[kt.name].init
        if isinstance(kt, c_ast.ID) and kt.name in FUNC_TYPES:
            ktype = FUNC_TYPES[kt.name]
        elif isinstance(kt, c_ast.Constant) and kt.type == "int":
            ktype = _int_value(kt.value)
        else:
            return None
        ktype = 1 if ktype == 0 else ktype
        return ktype if ktype in KTYPES.values() else None

    @staticmethod
    def _function_names(fd) -> dict:
        """Names a host function declares (parameters and locals) -> their declarations."""
        out: dict = {}
        for p in _params(fd):
            out.setdefault(p.name, []).append(p)
        for n in bl.walk(fd.body):
            if isinstance(n, c_ast.Decl) and n.name:
                out.setdefault(n.name, []).append(n)
        return out

    def _file_scope_expr(self, fd, e) -> bool:
        """``e`` names nothing that ``fd`` declares (it means the same inside the runner)."""
        local = self._function_names(fd)
        return not any(isinstance(n, c_ast.ID) and n.name in local for n in bl.walk(e))

    def _host_names(self, fd, e) -> dict | None:
        """{name: C type} of the parameters and locals of ``fd`` that side-effect-free ``e``
        reads, when each is declared once with an arithmetic scalar type and never written
        (no assignment, increment or address); None when ``e`` is not such an expression."""
        from platforms.common.generator import type_text

        local = self._function_names(fd)
        written = set()
        for n in bl.walk(fd.body):
            t = None
            if isinstance(n, c_ast.Assignment):
                t = n.lvalue
            elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
                t = n.expr
            while isinstance(t, (c_ast.StructRef, c_ast.ArrayRef)):
                t = t.name
            if isinstance(t, c_ast.ID):
                written.add(t.name)
        out = {}
        for n in bl.walk(e):
            ok = isinstance(n, (c_ast.Constant, c_ast.BinaryOp, c_ast.TernaryOp, c_ast.Cast, c_ast.Typename,
                                c_ast.TypeDecl, c_ast.IdentifierType, c_ast.ID)) \
                or (isinstance(n, c_ast.UnaryOp) and n.op in ("-", "+", "~", "!", "sizeof"))
            if not ok:
                return None
            if isinstance(n, c_ast.ID) and n.name in local:
                ds = local[n.name]
                d = ds[0]
                if len(ds) != 1 or n.name in written or not isinstance(d.type, c_ast.TypeDecl) \
                        or not isinstance(d.type.type, c_ast.IdentifierType) or set(d.storage or []) - {"const"}:
                    return None
                t = copy.deepcopy(d.type)
                t.quals = [q for q in t.quals or [] if q != "const"]
                out[n.name] = type_text(t)
        return out

    def _dim_exprs(self, fd, dim):
        """``[x, y, z]`` expressions a variable dimension is given (its ``{x, y, z}``
        initializer when it is never written otherwise, or its one store per field before the
        launch, see ``_field_stores``), or None."""
        if not isinstance(dim, c_ast.ID):
            return None
        decls = [n for n in bl.walk(fd.body) if isinstance(n, c_ast.Decl) and n.name == dim.name]
        if len(decls) != 1:
            return None
        decl = decls[0]
        touched = False
        for n in bl.walk(fd.body):
            t = None
            if isinstance(n, c_ast.Assignment):
                t = n.lvalue
            elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
                t = n.expr
            while isinstance(t, (c_ast.StructRef, c_ast.ArrayRef)):
                t = t.name
            touched |= isinstance(t, c_ast.ID) and t.name == dim.name
        if decl.init is None:
            return self._field_stores(fd, decl, dim)
        if touched or not isinstance(decl.init, c_ast.InitList) or not 1 <= len(decl.init.exprs) <= 3:
            return None
        return list(decl.init.exprs) + [c_ast.Constant("int", "1")] * (3 - len(decl.init.exprs))

    @staticmethod
    def _field_stores(fd, decl, dim):
        """``[x, y, z]`` of a dimension declared without initialiser and set field by field
        (``cnrtDim3_t d; d.x = 4; d.y = 1; d.z = 1; k<<<d, t, q>>>(...)``): the declaration,
        exactly one plain store ``d.f = e`` per field as statements of the declaring block
        after it, and the launch in a later statement of that block; ``d`` written in no other
        way (no other store, increment or address). None otherwise."""
        stores, others = {}, 0
        for n in bl.walk(fd.body):
            if isinstance(n, c_ast.Assignment):
                t = n.lvalue
                if isinstance(t, c_ast.StructRef) and t.type == "." and isinstance(t.name, c_ast.ID) \
                        and t.name.name == dim.name and n.op == "=" and t.field.name in ("x", "y", "z") \
                        and t.field.name not in stores:
                    stores[t.field.name] = n
                    continue
                while isinstance(t, (c_ast.StructRef, c_ast.ArrayRef)):
                    t = t.name
                others += isinstance(t, c_ast.ID) and t.name == dim.name
            elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
                t = n.expr
                while isinstance(t, (c_ast.StructRef, c_ast.ArrayRef)):
                    t = t.name
                others += isinstance(t, c_ast.ID) and t.name == dim.name
        if others or set(stores) != {"x", "y", "z"}:
            return None
        for blk in bl.walk(fd.body):
            items = blk.block_items or [] if isinstance(blk, c_ast.Compound) else []
            if not any(it is decl for it in items):
                continue
            pos = {id(it): k for k, it in enumerate(items)}
            at = pos[id(decl)]
            where = [pos.get(id(stores[f]), -1) for f in ("x", "y", "z")]
            launch = [k for k, it in enumerate(items)
                      if any((lp := _launch_of(m)) is not None and lp[1] and lp[1][0] is dim for m in bl.walk(it))]
            if min(where) <= at or len(launch) != 1 or launch[0] <= max(where):
                return None
            return [stores[f].rvalue for f in ("x", "y", "z")]
        return None

    def _check_barriers(self, fd, diag):
        kernel = _is_kernel(fd)
        top = set(id(s) for s in (fd.body.block_items or []))
        tainted = self._tainted(fd)

        def visit(node, conds):
            for cname, child in node.children():
                c = conds
                if isinstance(node, (c_ast.If, c_ast.While, c_ast.DoWhile, c_ast.TernaryOp)) and cname != "cond":
                    c = conds + [node.cond]
                if isinstance(node, c_ast.For) and cname == "stmt":
                    c = conds + [x for x in (node.init, node.cond, node.next) if x is not None]
                if isinstance(node, (c_ast.Switch, c_ast.Case)) and cname not in ("cond", "expr"):
                    c = conds + [getattr(node, "cond", None) or getattr(node, "expr", None)]
                nm = _call_name(child)
                if nm in BARRIERS:
                    if not kernel:
                        diag("XP-TASK-002", f"'{nm}' inside device function '{fd.decl.name}' is not supported "
                             "(barriers must be at the top level of a kernel)", child, nm)
                    elif id(child) not in top or c:
                        dep = any(_ids(x) & tainted or _has_memory_read(x) for x in c)
                        if dep:
                            diag("XP-TASK-001", f"'{nm}' under a task-dependent condition: tasks would not all "
                                 "reach the barrier", child, nm)
                        else:
                            diag("XP-TASK-002", f"'{nm}' inside a loop or branch is not supported (only at the "
                                 "top level of the kernel body)", child, nm)
                    continue
                visit(child, c)
        visit(fd.body, [])
        if kernel and self._phases_needed(fd):
            for n in bl.walk(fd.body):
                if isinstance(n, (c_ast.Goto, c_ast.Label)):
                    diag("XP-TASK-008", "goto/labels in a kernel with barriers are not supported", n)
            live = self._live(fd)
            for v, d in live.items():
                if isinstance(d, c_ast.Decl) and isinstance(d.init, c_ast.InitList):
                    diag("XP-TASK-008", f"'{v}' lives across a barrier and has an initializer list", d, v)
            decl_count = {}
            for n in bl.walk(fd.body):
                if isinstance(n, c_ast.Decl) and n.name in live:
                    decl_count[n.name] = decl_count.get(n.name, 0) + 1
            for v, k in decl_count.items():
                if k > 1 or (k == 1 and v in {p.name for p in _params(fd)}):
                    diag("XP-TASK-007", f"'{v}' lives across a barrier and is declared more than once", fd, v)

    def _tainted(self, fd) -> set[str]:
        tainted = set(BUILTINS)
        changed = True
        while changed:
            changed = False
            for n in bl.walk(fd.body):
                target, value = None, None
                if isinstance(n, c_ast.Decl) and n.init is not None:
                    target, value = n.name, n.init
                elif isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
                    target, value = n.lvalue.name, n.rvalue
                if target and target not in tainted and (_ids(value) & tainted or _has_memory_read(value)
                                                         or "__is_mpu" in _ids(value) or "__is_ipu" in _ids(value)):
                    tainted.add(target)
                    changed = True
        return tainted | {"__is_mpu", "__is_ipu"}

    def _onchip_names(self) -> set[str]:
        return {e.name for e in bl.walk(self.ast) if isinstance(e, c_ast.Decl) and set(e.storage or []) & set(ONCHIP)}

    def _phases_needed(self, fd) -> bool:
        return any(_call_name(s) in BARRIERS for s in (fd.body.block_items or []))

    def _split(self, fd) -> list[list]:
        phases, cur = [], []
        for s in fd.body.block_items or []:
            if _call_name(s) in BARRIERS:
                phases.append(cur)
                cur = []
            else:
                cur.append(s)
        phases.append(cur)
        return phases

    def _live(self, fd) -> dict:
        """Locals (top-level declarations) used in a later phase, and assigned parameters."""
        phases = self._split(fd)
        live: dict = {}
        for i, ph in enumerate(phases):
            later = set()
            for ph2 in phases[i + 1:]:
                for s in ph2:
                    later |= _ids(s)
            for s in ph:
                if isinstance(s, c_ast.Decl) and s.name in later:
                    live[s.name] = s
        if len(phases) > 1:
            assigned = set()
            for n in bl.walk(fd.body):
                if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
                    assigned.add(n.lvalue.name)
                if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and isinstance(n.expr, c_ast.ID):
                    assigned.add(n.expr.name)
            for p in _params(fd):
                if p.name in assigned:
                    live[p.name] = p
        return live

    def _remat(self, fd) -> dict:
        """Barrier-crossing locals that a later phase may recompute instead of keeping
        (rematerialization, form=flat): name -> top-level declaration, for each local ``v`` of
        the kernel's first phases that is

        * declared once in the kernel, at the top level, with an arithmetic scalar type and an
          initializer, and never written afterwards (no assignment, increment or address);
        * initialised by an expression without memory reads, calls or side effects over
          constants, task built-ins, parameters the kernel never writes, and other such locals.

        The value is then a function of the task's identity and the launch arguments only, so
        every phase computes the same value for the same task."""
        phases = self._split(fd)
        if len(phases) < 2:
            return {}
        counts: dict = {}
        written: set = set()
        for n in bl.walk(fd.body):
            if isinstance(n, c_ast.Decl) and n.name:
                counts[n.name] = counts.get(n.name, 0) + 1
            if isinstance(n, c_ast.Assignment):
                t = n.lvalue
                while isinstance(t, (c_ast.StructRef, c_ast.ArrayRef)):
                    t = t.name
                if isinstance(t, c_ast.ID):
                    written.add(t.name)
            if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
                t = n.expr
                while isinstance(t, (c_ast.StructRef, c_ast.ArrayRef)):
                    t = t.name
                if isinstance(t, c_ast.ID):
                    written.add(t.name)
        params = {p.name for p in _params(fd)}
        ok: dict = {}
        for ph in phases[:-1]:
            for s in ph:
                if not (isinstance(s, c_ast.Decl) and s.name and s.init is not None and counts.get(s.name) == 1
                        and s.name not in written and not s.storage and isinstance(s.type, c_ast.TypeDecl)
                        and isinstance(s.type.type, c_ast.IdentifierType)):
                    continue
                if _pure_value(s.init, lambda v: v in BUILTINS or v in ok or (v in params and v not in written)):
                    ok[s.name] = s
        return ok

    # ---------------------------------------------------------------- rewrite
    def run(self):
        import platforms

        self.ast = copy.deepcopy(self.program.ast)
        text = platforms.module("bang", "backend").emit(self.program)
        self.mpu = set(platforms.module("bang", "kernels").mpu_kernels(text)) - self.mpu_exits
        if self.form == "flat":
            return self._run_flat()
        self.kernels = {e.decl.name: e for e in self.ast.ext if isinstance(e, c_ast.FuncDef) and _is_kernel(e)}
        launches = self._launch_ktypes()
        gmax = max([KTYPES["union4"]] + [(BLOCK_GROUP if k == 1 else k) for k in launches if k])
        nclmax = max([4] + [k // 4 for k in launches if k and k > 1])
        if any(k is None for k in launches):
            gmax, nclmax = 64, 16
        self.core_slots, self.cluster_slots = gmax + nclmax, nclmax
        self.inits: list[tuple[str, str]] = []         # (slot array, init twin) copied at launch
        self.onchip: dict[str, tuple[str, str]] = {}   # name -> (array, slot variable)
        new_ext: list = []
        for ext in self.ast.ext:
            new_ext += self._global(ext)
        self.ast.ext = new_ext
        self.ctx_funcs = self._ctx_functions()
        out: list = []
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.FuncDef):
                out += self._function(ext)
            elif isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
                if set(ext.funcspec or []) & KERNEL_SPECS:
                    continue                                  # kernel prototype
                ext.funcspec = [f for f in ext.funcspec or [] if not f.startswith("__mlu")]
                out.append(ext)
            else:
                out.append(ext)
        entry = self.program.entry
        extern_c = list(self.program.facts.get("extern_c", []))
        if entry is not None and entry.kind == "kernel" and entry.name in self.kernels:
            out += self._wrapper(self.kernels[entry.name])
            extern_c.append(entry.name)
        head = [c_ast.Pragma('GCC optimize ("fp-contract=off")'),
                c_ast.Typedef("half", [], ["typedef"], c_ast.TypeDecl("half", [], None, c_ast.IdentifierType(["_Float16"])))]
        if any(isinstance(n, c_ast.IdentifierType) and "xp_dim3_t" in n.names for n in bl.walk(c_ast.FileAST(out))):
            head += bl.parse_decls("typedef struct { unsigned int x, y, z; } xp_dim3_t;")
        self.ast.ext = head + out
        _drop_empty(self.ast)
        facts = copy.deepcopy(self.program.facts)
        pre = [l for l in facts.get("preamble", []) if not BANG_HEADERS.match(l.strip())]
        have = {l.strip() for l in pre}
        facts["preamble"] = [i for i in INCLUDES if i not in have] + _bang_macros(self.ast, pre) + pre
        facts["includes"] = [h for h in facts.get("includes", []) if not BANG_HEADERS.match(f"#include <{h}>")]
        facts["extern_c"] = sorted(set(extern_c))
        facts.setdefault("statistics", {})[NAME] = {"kernels": len(self.kernels), "mpu_kernels": len(self.mpu),
                                                   "core_slots": self.core_slots}
        return self.ast, facts

    # ---------------------------------------------------------------- form=flat
    def _run_flat(self):
        """The flat form: every launch becomes ``for (int taskId = 0; taskId < N; ++taskId)
        k__task(args, taskIdX, ..., coreDim)`` with the task built-ins derived from ``taskId``
        and the launch constants; on-chip buffers become locals of ``k__task`` (task-private)."""
        problems = self._flat_problems()
        if problems:
            code, msg, node, _ = problems[0]
            raise Refusal(code, msg, node)
        self.kernels = {e.decl.name: copy.deepcopy(e) for e in self.ast.ext if isinstance(e, c_ast.FuncDef) and _is_kernel(e)}
        self.onchip, self.inits = {}, []
        self.flat_bufs: dict = {}
        self.sram_bufs: dict = {}
        self.selects = 0
        self.file_vars = file_variables(self.ast)
        kept: list = []
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.Decl) and not isinstance(ext.type, c_ast.FuncDecl):
                spaces = [x for x in ext.storage or [] if x in ONCHIP]
                if spaces:
                    d = copy.deepcopy(ext)
                    d.storage = [x for x in d.storage if x not in ONCHIP and x not in ("static", "extern")]
                    d.funcspec = [f for f in d.funcspec or [] if not f.startswith("__mlu")]
                    if "__mlu_shared__" in spaces:
                        self.sram_bufs[ext.name] = d
                    else:
                        self.flat_bufs[ext.name] = d
                    continue
                ext.funcspec = [f for f in ext.funcspec or [] if f not in ("__mlu_device__", "__mlu_const__")]
                ext.storage = [x for x in ext.storage or [] if x not in ("__mlu_const__",)]
            kept.append(ext)
        self.ast.ext = kept
        self._buffer_params()
        self.ctx_funcs = self._ctx_functions()
        # runners: one function per kernel and distinct launch configuration, running the task
        # loop; the kernel-only entry's runner is the entry itself (its default launch)
        self.runners: dict = {}
        entry = self.program.entry
        if entry is not None and entry.kind == "kernel" and entry.name in self.kernels:
            dim, ktype = self._default_launch()
            self._runner(entry.name, [c_ast.Constant("int", str(d)) for d in dim], ktype, [])
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.FuncDef) and not _is_kernel(ext):
                for n in bl.walk(ext.body):
                    lp = _launch_of(n)
                    if lp is not None:
                        self._runner(lp[0].name, *self._launch_config(ext, lp))
        out: list = []
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.FuncDef):
                if _is_kernel(ext):
                    out += self._kernel_flat(ext)
                else:
                    out += self._function(ext)
            elif isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
                if set(ext.funcspec or []) & KERNEL_SPECS:
                    continue
                ext.funcspec = [f for f in ext.funcspec or [] if not f.startswith("__mlu")]
                out.append(ext)
            else:
                out.append(ext)
        extern_c = list(self.program.facts.get("extern_c", []))
        if entry is not None and entry.kind == "kernel" and entry.name in self.kernels:
            extern_c.append(entry.name)
        head = [c_ast.Pragma('GCC optimize ("fp-contract=off")')]
        for n in bl.walk(c_ast.FileAST(out)):    # BANG half is IEEE binary16 (no typedef: GPU
            if isinstance(n, c_ast.IdentifierType) and "half" in n.names:   # headers own 'half')
                n.names = ["_Float16" if x == "half" else x for x in n.names]
        if any(isinstance(n, c_ast.IdentifierType) and "xp_dim3_t" in n.names for n in bl.walk(c_ast.FileAST(out))):
            head += bl.parse_decls("typedef struct { unsigned int x, y, z; } xp_dim3_t;")
        self.ast.ext = head + out
        _drop_empty(self.ast)
        facts = copy.deepcopy(self.program.facts)
        pre = [l for l in facts.get("preamble", []) if not BANG_HEADERS.match(l.strip())]
        have = {l.strip() for l in pre}
        facts["preamble"] = [i for i in INCLUDES if i not in have] + _bang_macros(self.ast, pre) + pre
        facts["includes"] = [h for h in facts.get("includes", []) if not BANG_HEADERS.match(f"#include <{h}>")]
        facts["extern_c"] = sorted(set(extern_c))
        facts.setdefault("statistics", {})[NAME] = {"kernels": len(self.kernels), "form": "flat",
                                                   "task_local_buffers": len(self.flat_bufs),
                                                   "pointer_selects_folded": self.selects}
        return self.ast, facts

    def _buffer_params(self) -> None:
        """File-scope task-private buffers (``__nram__`` / ``__wram__`` / ``__ldram__``) that
        device functions use: each such function (and each one calling it, transitively) takes
        them as trailing parameters of the declared type (``float buf[N]`` -> ``float *``), and
        every call passes them on; a kernel then declares them as locals of its task function,
        as for the buffers its own body names. Exact: a device function runs inside one task,
        and the legality check refused ``sizeof`` / ``&`` of such a buffer there (the only
        uses where an array and a pointer to its first element differ)."""
        funcs = {e.decl.name: e for e in self.ast.ext if isinstance(e, c_ast.FuncDef)
                 and not _is_kernel(e) and set(e.decl.funcspec or []) & {"__mlu_func__", "__mlu_device__"}}
        need = {name: [b for b in self.flat_bufs if b in _ids(fd.body)] for name, fd in funcs.items()}
        changed = True
        while changed:
            changed = False
            for name, fd in funcs.items():
                for n in bl.walk(fd.body):
                    callee = _call_name(n)
                    if callee in need and callee != name:
                        for b in need[callee]:
                            if b not in need[name]:
                                need[name].append(b)
                                changed = True
        order = list(self.flat_bufs)
        need = {k: sorted(v, key=order.index) for k, v in need.items() if v}
        self.buffer_params = need
        if not need:
            return
        for ext in self.ast.ext:
            fdecl = ext.decl if isinstance(ext, c_ast.FuncDef) else ext
            if isinstance(fdecl, c_ast.Decl) and isinstance(fdecl.type, c_ast.FuncDecl) and fdecl.name in need:
                fdecl.type.args = fdecl.type.args or c_ast.ParamList([])
                extra = []
                for b in need[fdecl.name]:
                    d = copy.deepcopy(self.flat_bufs[b])
                    extra.append(c_ast.Decl(b, [q for q in d.quals or [] if q != "const"], [], [], [], d.type,
                                            None, None))
                fdecl.type.args.params = [p for p in fdecl.type.args.params if not _is_void(p)] + extra
            if isinstance(ext, c_ast.FuncDef):
                for n in bl.walk(ext.body):
                    callee = _call_name(n)
                    if callee in need and isinstance(n, c_ast.FuncCall):
                        n.args = n.args or c_ast.ExprList([])
                        n.args.exprs = list(n.args.exprs) + [c_ast.ID(b) for b in need[callee]]

    def _kernel_flat(self, fd) -> list:
        """``k`` -> ``static void k__task(params, [T *xp_sram_b, ...,] int taskIdX, ..., int
        coreDim)`` (``k__phaseN`` per barrier-separated phase) whose body declares the task-private
        on-chip buffers it uses (file-scope ones first, in file order); a cluster-shared buffer
        ``b`` becomes ``xp_sram_b + clusterId * DIM`` in a per-cluster array the runner owns.
        Then the runners of its launch configurations."""
        name = fd.decl.name
        kernel = self.kernels[name]
        srams = [n for n in self.sram_bufs if n in _ids(fd.body)]
        phases = self._split(fd)
        mapping = {}
        for b in srams:
            dim = self.sram_bufs[b].type.dim
            mapping[b] = (lambda b=b, dim=dim: c_ast.BinaryOp(
                "+", c_ast.ID(f"xp_sram_{b}"), c_ast.BinaryOp("*", c_ast.ID("clusterId"), copy.deepcopy(dim))))
        fnames = []
        out = []
        for i, ph in enumerate(phases):
            f = copy.deepcopy(fd) if len(phases) > 1 else fd
            if len(phases) > 1:
                moved = [copy.deepcopy(d) for n, d in self._movable_buffers(fd).items()
                         if d not in ph and n in _ids(c_ast.Compound(list(ph)))]
                f.body = c_ast.Compound(moved + self._rematerialized(fd, phases[:i], ph) + copy.deepcopy(ph))
            used = _ids(f.body)
            bufs = [copy.deepcopy(d) for n, d in self.flat_bufs.items() if n in used]
            for n in bl.walk(f.body):
                if isinstance(n, c_ast.Decl) and set(n.storage or []) & set(ONCHIP):
                    n.storage = [x for x in n.storage if x not in ONCHIP]
            _IdMap(mapping).visit(f.body)
            f.body.block_items = bufs + list(f.body.block_items or [])
            fname = f"{name}__task" if len(phases) == 1 else f"{name}__phase{i}"
            _rename_function(f.decl, fname)
            f.decl.funcspec = []
            f.decl.storage = ["static"]
            f.decl.type.args = f.decl.type.args or c_ast.ParamList([])
            sparams = []
            for b in srams:
                t = copy.deepcopy(self.sram_bufs[b].type.type)
                _set_declname(t, f"xp_sram_{b}")
                sparams.append(c_ast.Decl(f"xp_sram_{b}", [], [], [], [], c_ast.PtrDecl([], t), None, None))
            f.decl.type.args.params = [p for p in f.decl.type.args.params if not _is_void(p)] + sparams + \
                [_int_param(x) for x in BUILTINS]
            self.selects += fold_pointer_selects(f, self.file_vars)
            self._device_rewrite(f.body)
            out.append(f)
            fnames.append(fname)
        entry = self.program.entry
        shared = bool(srams) or len(phases) > 1 or name in self.mpu
        # tasks that share nothing (no barrier, SRAM, memory core or atomic) run concurrently
        # on the device, in any order: a write two of them make to one element is a race, so
        # the task loop's iterations are independent by the kernel's own contract (as a CUDA
        # grid's blocks are); the pragma states it for the binders
        independent = not shared and not any(
            "atomic" in (canon.call_name(n) or "") for n in bl.walk(fd.body)
            if isinstance(n, c_ast.FuncCall))
        for _key, dims, ktype, rname, extra in self.runners.get(name, []):
            decl = copy.deepcopy(kernel.decl)
            _rename_function(decl, rname)
            if extra:
                decl.type.args = decl.type.args or c_ast.ParamList([])
                decl.type.args.params = [p for p in decl.type.args.params if not _is_void(p)] + \
                    [bl.parse_decls(f"void f({ty} {pn});")[0].type.args.params[0] for pn, ty, _ in extra]
            decl.funcspec = []
            decl.storage = [] if entry is not None and entry.kind == "kernel" and rname == entry.name else ["static"]
            ncl = 1 if ktype == 1 else ktype // 4
            if shared:
                total = self._const_total(dims)
                if ktype == 1 or total != ktype:
                    raise Refusal("XP-TASK-011", f"kernel '{name}' shares cluster state (barriers, SRAM or the "
                                  f"memory core) and is launched with {total or 'a non-constant number of'} tasks "
                                  f"for function type {ktype}: one group of tasks per launch is supported", kernel)
            stmts = []
            for b in srams:
                t = copy.deepcopy(self.sram_bufs[b].type)
                _set_declname(t, f"xp_sram_{b}")
                t.dim = c_ast.BinaryOp("*", c_ast.Constant("int", str(ncl)), copy.deepcopy(t.dim))
                stmts.append(c_ast.Decl(f"xp_sram_{b}", [], [], [], [], t, None, None))
            args = [c_ast.ID(p.name) for p in _params(kernel)] + [c_ast.ID(f"xp_sram_{b}") for b in srams]
            for fname in fnames:
                if name in self.mpu and ktype != 1:
                    stmts.append(self._task_loop(fname, dims, ktype, args, mpu=True))
                if independent:
                    stmts.append(c_ast.Pragma("omp parallel for"))
                stmts.append(self._task_loop(fname, dims, ktype, args))
            out.append(c_ast.FuncDef(decl, None, c_ast.Compound(stmts)))
        return out

    def _movable_buffers(self, fd) -> dict:
        """Task-private on-chip buffers a kernel declares at its top level (no initializer) and
        names in one phase only: name -> declaration. Nothing of them crosses a barrier, so
        form=flat declares each in the phase that uses it (a later one than its declaration's)."""
        phases = self._split(fd)
        if len(phases) < 2:
            return {}
        uses = [_ids(c_ast.Compound(list(ph))) for ph in phases]
        out = {}
        for ph in phases:
            for s in ph:
                if isinstance(s, c_ast.Decl) and s.init is None and set(s.storage or []) & {"__nram__", "__wram__", "__ldram__"} \
                        and sum(s.name in u for u in uses) == 1:
                    out[s.name] = s
        return out

    def _rematerialized(self, fd, before: list, ph: list) -> list:
        """Copies of the declarations of the earlier phases' rematerializable locals that phase
        ``ph`` reads (with the locals their initializers read), in source order."""
        remat = self._remat(fd)
        need = set(_ids(c_ast.Compound(list(ph)))) & set(remat)
        todo = list(need)
        while todo:
            for v in _ids(remat[todo.pop()].init):
                if v in remat and v not in need:
                    need.add(v)
                    todo.append(v)
        return [copy.deepcopy(s) for p in before for s in p if isinstance(s, c_ast.Decl) and s.name in need]

    @staticmethod
    def _const_total(dims):
        vals = [int(d.value, 0) if isinstance(d, c_ast.Constant) and d.type == "int" and d.value.isdigit() else None
                for d in dims]
        return None if None in vals else vals[0] * vals[1] * vals[2]

    def _runner(self, kernel: str, dims: list, ktype: int, extra: list) -> str:
        """Name of the function running ``kernel``'s tasks for this launch configuration (the
        kernel's own name for its first configuration, ``k__cfgN`` for the others); ``extra``:
        the runner parameters the dims read (``_launch_config``), after the kernel's."""
        from pycparser import c_generator

        gen = c_generator.CGenerator()
        key = (tuple(gen.visit(d) for d in dims), ktype, tuple((pn, ty) for pn, ty, _ in extra))
        known = self.runners.setdefault(kernel, [])
        for k, _, _, name, _ in known:
            if k == key:
                return name
        name = kernel if not known else f"{kernel}__cfg{len(known)}"
        known.append((key, [copy.deepcopy(d) for d in dims], ktype, name, list(extra)))
        return name

    def _task_loop(self, fname: str, dims: list, ktype: int, args: list, mpu: bool = False) -> c_ast.For:
        """``for (int taskId = 0; taskId < X*Y*Z; ++taskId) fname(args, built-ins)``: the
        emulator's numbering (taskIdX fastest; UNIONn: coreId = taskId % 4, clusterId =
        taskId / 4 % n; BLOCK: one core, coreId = clusterId = clusterDim = 0). ``mpu``: the
        loop over the memory-core participants instead, one per cluster ``c`` (taskId = 4c,
        coreId = 0x80, clusterId = c)."""
        block = ktype == 1
        ncl = 0 if block else ktype // 4
        q = {f"d{i}": copy.deepcopy(d) for i, d in enumerate(dims)}
        q.update({f"a{i}": a for i, a in enumerate(args)})
        one = [isinstance(d, c_ast.Constant) and d.value == "1" for d in dims]
        consts = [int(d.value, 0) if isinstance(d, c_ast.Constant) and d.type == "int" and d.value.isdigit() else None
                  for d in dims]
        total = str(consts[0] * consts[1] * consts[2]) if None not in consts else "__q_d0 * __q_d1 * __q_d2"
        tx = "taskId" if one[1] and one[2] else "taskId % __q_d0"
        ty = "0" if one[1] else "taskId / __q_d0 % __q_d1"
        tz = "0" if one[2] else "taskId / (__q_d0 * __q_d1)"
        ctx = {"taskIdX": tx, "taskIdY": ty, "taskIdZ": tz, "taskId": "taskId",
               "taskDimX": "__q_d0", "taskDimY": "__q_d1", "taskDimZ": "__q_d2",
               "taskDim": total,
               "clusterId": "0" if block else f"taskId / 4 % {ncl}", "clusterDim": str(ncl),
               "coreId": "0" if block else "taskId % 4", "coreDim": "1" if block else "4"}
        bound = total
        if mpu:
            ctx.update({"taskId": "4 * xp_c", "taskIdX": "4 * xp_c % __q_d0", "taskIdY": "4 * xp_c / __q_d0 % __q_d1",
                        "taskIdZ": "4 * xp_c / (__q_d0 * __q_d1)", "coreId": "0x80", "clusterId": "xp_c"})
            bound = str(ncl)
        call = ", ".join([f"__q_a{i}" for i in range(len(args))] + [ctx[b] for b in BUILTINS])
        var = "xp_c" if mpu else "taskId"
        text = f"for (int {var} = 0; {var} < {bound}; ++{var}) {{ {fname}({call}); }}"
        return _quote(text, **q)[0]

    def _launch_ktypes(self) -> list:
        """ktype of every launch (None when not a compile-time constant), and the default launch
        of a kernel-only entry."""
        out = []
        consts = {}
        assigned = {n.lvalue.name for n in bl.walk(self.ast)
                    if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID)}
        for n in bl.walk(self.ast):
            if isinstance(n, c_ast.Decl) and isinstance(n.init, c_ast.ID) and n.init.name in FUNC_TYPES \
                    and n.name not in assigned:
                consts[n.name] = FUNC_TYPES[n.init.name]
        from platforms.common.generator import launch_parts

        for n in bl.walk(self.ast):
            lp = launch_parts(n)
            if lp is None:
                continue
            kt = lp[1][1] if len(lp[1]) > 1 else None
            if isinstance(kt, c_ast.ID):
                out.append(FUNC_TYPES.get(kt.name, consts.get(kt.name)))
            elif isinstance(kt, c_ast.Constant) and kt.type == "int":
                out.append(int(kt.value, 0))
            else:
                out.append(None)
        entry = self.program.entry
        if entry is not None and entry.kind == "kernel":
            out.append(self._default_launch()[1])
        return out

    def _default_launch(self):
        d = dict(self.prof.get("default_launch") or {})
        clusters = int(d.get("clusters", self.prof.get("clusters", 4)))
        cores = int(d.get("cores", self.prof.get("cores_per_cluster", 4)))
        kind = str(d.get("type") or ("block" if cores == 1 and clusters == 1 else f"union{clusters}")).lower()
        dim = d.get("dim") or (clusters * cores, 1, 1)
        dim = tuple(dim) + (1,) * (3 - len(dim))
        return dim, KTYPES[kind]

    # ---------------------------------------------------------------- globals
    def _global(self, ext) -> list:
        if isinstance(ext, c_ast.FuncDef):
            self._hoist_locals(ext)
            return self._hoisted.pop(ext.decl.name, []) + [ext]
        if not isinstance(ext, c_ast.Decl) or isinstance(ext.type, c_ast.FuncDecl):
            return [ext]
        spaces = [s for s in ext.storage or [] if s in ONCHIP]
        ext.funcspec = [f for f in ext.funcspec or [] if f not in ("__mlu_device__", "__mlu_const__")]
        ext.storage = [s for s in ext.storage or [] if s not in ("__mlu_const__",)]
        if not spaces:
            return [ext]
        return self._onchip_decl(ext, ONCHIP[spaces[0]], ext.name)

    _hoisted: dict = {}

    def _onchip_decl(self, decl, space: str, newbase: str) -> list:
        array = f"xp_{space}_{newbase}"
        slot = "xp_cluster_slot" if space == "sram" else "xp_core_slot"
        slots = self.cluster_slots if space == "sram" else self.core_slots
        self.onchip[decl.name] = (array, slot)
        out = []
        if decl.init is not None:
            twin = f"xp_init_{newbase}"
            t = copy.deepcopy(decl.type)
            _set_declname(t, twin)
            _add_const(t)
            out.append(c_ast.Decl(twin, ["const"], [], ["static"], [], t, decl.init, None))
            self.inits.append((array, twin))
        t = copy.deepcopy(decl.type)
        _set_declname(t, array)
        t = c_ast.ArrayDecl(t, c_ast.Constant("int", str(slots)), [])
        out.append(c_ast.Decl(array, [q for q in decl.quals or [] if q != "const"], [c_ast.Alignas(c_ast.Constant("int", "64"))],
                              ["static"], [], t, None, None))
        return out

    def _hoist_locals(self, fd) -> None:
        self._hoisted = dict(self._hoisted)
        hoisted = []

        def visit(node):
            for container, k in statement_slots(node):
                s = canon.get_slot(container, k)
                if isinstance(s, c_ast.Decl) and set(s.storage or []) & set(ONCHIP):
                    sp = ONCHIP[[x for x in s.storage if x in ONCHIP][0]]
                    hoisted.extend(self._onchip_decl(s, sp, f"{fd.decl.name}_{s.name}"))
                    canon.set_slot(container, k, c_ast.EmptyStatement())
                elif s is not None:
                    visit(s)
        visit(fd.body)
        self._hoisted[fd.decl.name] = hoisted

    # ---------------------------------------------------------------- functions
    def _ctx_functions(self) -> set[str]:
        """Device functions that need the task context (transitively)."""
        funcs = {e.decl.name: e for e in self.ast.ext if isinstance(e, c_ast.FuncDef)
                 and set(e.decl.funcspec or []) & {"__mlu_func__", "__mlu_device__"}}
        need = set()
        state = set(BUILTINS) | set(self.onchip) | {"__is_mpu", "__is_ipu"} | BARRIERS
        changed = True
        while changed:
            changed = False
            for name, fd in funcs.items():
                if name not in need and _ids(fd.body) & (state | need):
                    need.add(name)
                    changed = True
        return need

    def _device_rewrite(self, body) -> None:
        """Built-in predicates, on-chip buffers, pipeline syncs and calls needing the context."""
        mapping = {name: _slot_ref(arr, slot) for name, (arr, slot) in self.onchip.items()}
        _IdMap(mapping).visit(body)
        ctx = self.ctx_funcs
        xs = self.ctx

        class V(c_ast.NodeVisitor):
            def generic_visit(v, node):

                for cname, child in node.children():
                    nm = _call_name(child)
                    if nm in ("__is_mpu", "__is_ipu"):
                        canon.replace_child(node, cname, c_ast.BinaryOp("==" if nm == "__is_mpu" else "!=",
                                                                   c_ast.ID("coreId"), c_ast.Constant("int", "0x80")))
                        continue
                    if nm == "__bang_printf":
                        child.name.name = "printf"
                    if nm in ctx:
                        child.args = child.args or c_ast.ExprList([])
                        child.args.exprs += [c_ast.ID(x) for x in xs]
                    v.visit(child)
        V().visit(body)
        for container, k in _all_slots(body):
            if _call_name(canon.get_slot(container, k)) in NOOP_SYNCS:
                canon.set_slot(container, k, c_ast.EmptyStatement())

    def _function(self, fd) -> list:
        spec = set(fd.decl.funcspec or [])
        if _is_kernel(fd):
            return self._kernel(fd)
        if spec & {"__mlu_func__", "__mlu_device__"}:
            fd.decl.funcspec = ["inline"]
            fd.decl.storage = [s for s in fd.decl.storage or [] if s != "static"] + ["static"]
            if fd.decl.name in self.ctx_funcs:
                fd.decl.type.args = fd.decl.type.args or c_ast.ParamList([])
                fd.decl.type.args.params = [p for p in fd.decl.type.args.params if not _is_void(p)] + \
                    [_int_param(x) for x in self.ctx]
            self._device_rewrite(fd.body)
            return [fd]
        fd.decl.funcspec = [f for f in fd.decl.funcspec or [] if not f.startswith("__mlu")]
        self._host_rewrite(fd)
        return [fd]

    def _kernel(self, fd) -> list:
        name = fd.decl.name
        params = [p for p in _params(fd)]
        phases = self._split(fd)
        out: list = []
        if len(phases) > 1:
            live = self._live(fd)
            done = f"xp_done_{name}"
            out.append(c_ast.Decl(done, [], [], ["static"], [], c_ast.ArrayDecl(
                c_ast.TypeDecl(done, [], None, c_ast.IdentifierType(["int"])),
                c_ast.Constant("int", str(self.core_slots)), []), None, None))
            mapping = {}
            for v, d in live.items():
                arr = f"xp_live_{name}_{v}"
                t = copy.deepcopy(d.type)
                _strip_const(t)
                _set_declname(t, arr)
                out.append(c_ast.Decl(arr, [], [], ["static"], [], c_ast.ArrayDecl(
                    t, c_ast.Constant("int", str(self.core_slots)), []), None, None))
                mapping[v] = _slot_ref(arr, "xp_core_slot")
            new_phases = []
            for i, ph in enumerate(phases):
                stmts = []
                if i == 0:
                    stmts += _quote(f"{done}[xp_core_slot] = 0;")
                    for p in params:
                        if p.name in live:
                            stmts.append(c_ast.Assignment("=", c_ast.ID(p.name), c_ast.ID(f"__xpparam_{p.name}")))
                else:
                    stmts += _quote(f"if ({done}[xp_core_slot]) return;")
                for s in ph:
                    if isinstance(s, c_ast.Decl) and s.name in live:
                        if s.init is not None:
                            stmts.append(c_ast.Assignment("=", c_ast.ID(s.name), s.init))
                        continue
                    stmts.append(s)
                body = c_ast.Compound(stmts)
                _mark_returns(body, done)
                _IdMap(mapping).visit(body)
                if i == 0:   # copy-in of assigned parameters: right-hand side is the parameter itself
                    _IdMap({f"__xpparam_{p.name}": (lambda n=p.name: c_ast.ID(n)) for p in params}).visit(body)
                new_phases.append(body)
        else:
            new_phases = [fd.body]
        fnames = []
        for i, body in enumerate(new_phases):
            f = copy.deepcopy(fd)
            f.body = body
            fname = f"{name}__task" if len(new_phases) == 1 else f"{name}__phase{i}"
            _rename_function(f.decl, fname)
            f.decl.funcspec = []
            f.decl.storage = ["static"]
            f.decl.type.args = f.decl.type.args or c_ast.ParamList([])
            f.decl.type.args.params = [p for p in f.decl.type.args.params if not _is_void(p)] + \
                [_int_param(x) for x in CTX]
            self._device_rewrite(f.body)
            out.append(f)
            fnames.append(fname)
        out.append(self._launcher(fd, fnames))
        return out

    def _launcher(self, fd, fnames) -> c_ast.FuncDef:
        name = fd.decl.name
        pnames = [p.name for p in _params(fd)]
        mpu = name in self.mpu
        call_args = ", ".join(pnames + list(CTX))
        loops = []
        for fname in fnames:
            loops.append(("#pragma omp parallel for\n" if self.omp else "") + f"""
    for (int xp_k = 0; xp_k < xp_cnt + xp_nmpu; ++xp_k) {{
      int xp_m = xp_k >= xp_cnt;
      unsigned long long xp_id = xp_first + (xp_m ? 4ull * (unsigned long long)(xp_k - xp_cnt) : (unsigned long long)xp_k);
      int taskId = (int)xp_id;
      int taskIdX = (int)(xp_id % xp_dx);
      int taskIdY = (int)(xp_id / xp_dx % xp_dy);
      int taskIdZ = (int)(xp_id / ((unsigned long long)xp_dx * xp_dy));
      int taskDimX = (int)xp_dx;
      int taskDimY = (int)xp_dy;
      int taskDimZ = (int)xp_dz;
      int taskDim = taskDimX * taskDimY * taskDimZ;
      int coreId = xp_m ? 0x80 : (xp_block ? 0 : (int)(xp_id % 4));
      int clusterId = xp_block ? 0 : (int)(xp_id / 4 % xp_ncl);
      int coreDim = xp_block ? 1 : 4;
      int clusterDim = xp_ncl;
      int xp_core_slot = xp_m ? (int)xp_gsize + (xp_k - xp_cnt) : xp_k;
      int xp_cluster_slot = xp_block ? 0 : (xp_m ? xp_k - xp_cnt : xp_k / 4);
      {fname}({call_args});
    }}""")
        inits = "\n".join(f"  for (int xp_s = 0; xp_s < {self.cluster_slots if a.startswith('xp_sram') else self.core_slots}; ++xp_s) "
                          f"memcpy(&{a}[xp_s], &{t}, sizeof({t}));" for a, t in self.inits)
        text = f"""
  if (xp_ktype == 0) xp_ktype = 1;
  int xp_block = xp_ktype == 1;
  int xp_ncl = xp_block ? 0 : xp_ktype / 4;
  unsigned long long xp_total = (unsigned long long)xp_dx * xp_dy * xp_dz;
  unsigned long long xp_gsize = xp_block ? {BLOCK_GROUP}ull : (unsigned long long)xp_ktype;
  if (xp_total == 0 || xp_gsize + xp_ncl > {self.core_slots}ull || xp_ncl > {self.cluster_slots}) {{
    fprintf(stderr, "{name}: launch {{%u, %u, %u}} with function type %d is outside what this translation supports\\n", xp_dx, xp_dy, xp_dz, xp_ktype);
    abort();
  }}
{inits}
  for (unsigned long long xp_first = 0; xp_first < xp_total; xp_first += xp_gsize) {{
    int xp_cnt = (int)(xp_total - xp_first < xp_gsize ? xp_total - xp_first : xp_gsize);
    int xp_nmpu = {"xp_block ? 0 : ((xp_cnt + 3) / 4 < xp_ncl ? (xp_cnt + 3) / 4 : xp_ncl)" if mpu else "0"};
{"".join(loops)}
  }}
"""
        body = c_ast.Compound(_quote(text))
        decl = copy.deepcopy(fd.decl)
        _rename_function(decl, f"{name}__launch")
        decl.funcspec = []
        decl.storage = ["static"]
        head = bl.parse_decls("void f(unsigned int xp_dx, unsigned int xp_dy, unsigned int xp_dz, int xp_ktype);")[0]
        decl.type.args = decl.type.args or c_ast.ParamList([])
        decl.type.args.params = head.type.args.params + [p for p in decl.type.args.params if not _is_void(p)]
        return c_ast.FuncDef(decl, None, body)

    def _wrapper(self, fd) -> list:
        name = fd.decl.name
        dim, ktype = self._default_launch()
        decl = copy.deepcopy(fd.decl)
        decl.funcspec = []
        decl.storage = []
        args = ", ".join([str(d) for d in dim] + [str(ktype)] + [p.name for p in _params(fd)])
        body = c_ast.Compound(_quote(f"{name}__launch({args});"))
        return [c_ast.FuncDef(decl, None, body)]

    # ---------------------------------------------------------------- host code
    def _host_rewrite(self, fd) -> None:
        from platforms.common.generator import launch_parts, type_text

        env = {}
        for n in bl.walk(fd):
            if isinstance(n, c_ast.Decl) and n.name and not isinstance(n.type, c_ast.FuncDecl):
                env[n.name] = n

        def rewrite_stmt(s):
            nm = _call_name(s)
            if nm in ("CNRT_CHECK", "CNRT_CHECK_RETURN") and s.args and s.args.exprs:
                return rewrite_stmt(s.args.exprs[0])
            if isinstance(s, c_ast.Decl) and isinstance(s.type, (c_ast.TypeDecl, c_ast.PtrDecl)):
                base = bl.decl_type(s.type).base
                if base in DROP_TYPES:
                    return c_ast.EmptyStatement()
            if nm in CNRT_DROP:
                return c_ast.EmptyStatement()
            if nm == "cnrtMalloc" and len(s.args.exprs) == 2:
                p, nbytes = s.args.exprs
                target = _address_of(p)
                if target is not None and isinstance(target, c_ast.ID) and target.name in env:
                    t = type_text(env[target.name].type)
                    return _quote(f"__q_t = ({t})malloc(__q_n);", t=target, n=nbytes)[0]
                return _quote("*(void **)(__q_p) = malloc(__q_n);", p=p, n=nbytes)[0]
            return s

        for container, k in _all_slots(fd.body):
            canon.set_slot(container, k, rewrite_stmt(canon.get_slot(container, k)))

        class V(c_ast.NodeVisitor):
            def generic_visit(v, node):

                for cname, child in node.children():
                    lp = launch_parts(child)
                    if lp is not None and self.form == "flat":
                        cfg = self._launch_config(fd, lp)
                        rname = self._runner(lp[0].name, *cfg)
                        args = list(child.args.exprs) if child.args else []
                        args += [copy.deepcopy(a) for _, _, a in cfg[2]]
                        new = c_ast.FuncCall(c_ast.ID(rname), c_ast.ExprList(args))
                        canon.replace_child(node, cname, new)
                        v.visit(new)
                        continue
                    if lp is not None:
                        kernel, cfg = lp
                        dim = cfg[0]
                        kt = cfg[1] if len(cfg) > 1 else c_ast.Constant("int", "1")
                        args = [c_ast.StructRef(copy.deepcopy(dim), ".", c_ast.ID(f)) for f in "xyz"]
                        args.append(kt)
                        args += list(child.args.exprs) if child.args else []
                        new = c_ast.FuncCall(c_ast.ID(f"{kernel.name}__launch"), c_ast.ExprList(args))
                        canon.replace_child(node, cname, new)
                        v.visit(new)
                        continue
                    nm = _call_name(child)
                    if nm in ("cnrtMemcpy", "cnrtMemcpyAsync"):
                        child.name.name = "memcpy"
                        child.args.exprs = child.args.exprs[:3]
                    elif nm == "cnrtFree":
                        child.name.name = "free"
                    elif nm == "cnrtMemset":
                        child.name.name = "memset"
                    if isinstance(child, c_ast.ID) and child.name in FUNC_TYPES:
                        canon.replace_child(node, cname, c_ast.Constant("int", str(FUNC_TYPES[child.name])))
                        continue
                    if isinstance(child, c_ast.IdentifierType):
                        child.names = [CNRT_TYPES.get(x, x) for x in child.names]
                    v.visit(child)
        V().visit(fd)


def _launch_of(n):
    from platforms.common.generator import launch_parts

    return launch_parts(n)


def _address_of(p):
    while isinstance(p, c_ast.Cast):
        p = p.expr
    if isinstance(p, c_ast.UnaryOp) and p.op == "&":
        return p.expr
    return None


def _is_void(p) -> bool:
    return isinstance(p, c_ast.Typename) and bl.decl_type(p.type) == bl.CType("void")


def _add_const(t):
    while not isinstance(t, c_ast.TypeDecl):
        t = t.type
    if "const" not in t.quals:
        t.quals = ["const"] + list(t.quals)


def _strip_const(t):
    while not isinstance(t, c_ast.TypeDecl):
        if isinstance(t, c_ast.PtrDecl):
            t.quals = [q for q in t.quals if q != "const"]
        t = t.type
    t.quals = [q for q in t.quals if q != "const"]


def _pure_value(e, allowed) -> bool:
    """``e`` reads no memory, calls nothing, has no side effect and reads only names for which
    ``allowed(name)`` holds (constants, casts, arithmetic, comparisons, conditionals, sizeof)."""
    for n in bl.walk(e):
        if isinstance(n, c_ast.ID):
            if not allowed(n.name):
                return False
        elif isinstance(n, c_ast.UnaryOp):
            if n.op not in ("-", "+", "~", "!", "sizeof"):
                return False
        elif not isinstance(n, (c_ast.Constant, c_ast.BinaryOp, c_ast.TernaryOp, c_ast.Cast, c_ast.Typename,
                                c_ast.TypeDecl, c_ast.IdentifierType)):
            return False
    return True


def _has_memory_read(e) -> bool:
    for n in bl.walk(e):
        if isinstance(n, c_ast.ArrayRef) or (isinstance(n, c_ast.UnaryOp) and n.op == "*") \
                or isinstance(n, c_ast.FuncCall) or isinstance(n, c_ast.StructRef):
            return True
    return False


def _all_slots(node):
    """Every statement position under ``node`` (pre-order, computed before any replacement)."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        slots = statement_slots(n)
        out += slots
        for container, k in slots:
            stack.append(canon.get_slot(container, k))
        if not slots:
            for _, c in n.children():
                if isinstance(c, (c_ast.Compound, c_ast.If, c_ast.For, c_ast.While, c_ast.DoWhile,
                                  c_ast.Switch, c_ast.Label, c_ast.Case, c_ast.Default)):
                    stack.append(c)
    return out


def _drop_empty(root) -> None:
    """Remove the empty statements the rewrites leave in statement lists."""
    for n in bl.walk(root):
        if isinstance(n, c_ast.Compound) and n.block_items:
            n.block_items = [s for s in n.block_items if not isinstance(s, c_ast.EmptyStatement)]


def _mark_returns(body, done: str) -> None:
    for container, k in _all_slots(body):
        s = canon.get_slot(container, k)
        if isinstance(s, c_ast.Return):
            canon.set_slot(container, k, c_ast.Compound(_quote(f"{done}[xp_core_slot] = 1;") + [s]))


@register(PassInfo(
    name=NAME,
    lowers=True,
    summary="BANG -> vnni: task built-ins become a loop over tasks (OpenMP), barriers split it into "
            "phases, on-chip buffers per core/cluster slot, CNRT host code plain C++",
    options={"omp": Option(bool, True, "#pragma omp parallel for over the tasks of a phase"),
             "profile": Option(str, "", "BANG device profile of a kernel-only file's default launch"),
             "form": Option(str, "launch", "launch: group/slot emulation of the launch (any launch, barriers); "
                            "flat: one sequential loop over the tasks with task-private on-chip buffers "
                            "(launches with a constant function type; the input loop_bind lowers)")},
    requires=("BANG program, detensorized (XP-TASK-006)",
              "cluster/all barriers only at the top level of a kernel (XP-TASK-001, XP-TASK-002)",
              "no split or IPU/MPU-only barriers (XP-TASK-003)",
              "task built-ins and on-chip buffers used by device code only (XP-TASK-004)",
              "no bfloat16_t / int4x2_t (XP-TASK-005)",
              "no shadowing of on-chip buffers; barrier-crossing locals declared once (XP-TASK-007)",
              "barrier-crossing locals without initializer lists, no goto in phased kernels (XP-TASK-008)",
              "CNRT calls with a plain C++ equivalent only (XP-TASK-009)",
              "no extern on-chip declarations (XP-TASK-010)",
              "form=flat: independent tasks (XP-TASK-011), a constant function type per launch (XP-TASK-012)"),
    guarantees=("same outputs as the BANG program on the virtual device",
                "plain C++17 that g++ -O2 -march=native -fopenmp compiles"),
    introduces=("k__task / k__phaseN / k__launch functions", "#pragma omp parallel for",
                "typedef _Float16 half", "xp_dim3_t",
                "form=flat: k__task and runner functions k / k__cfgN holding the task loop"),
))
def task_recovery(program, *, omp: bool = True, profile: str = "", form: str = "launch"):
    lift = Lift(program, omp, profile, form)
    try:
        ast, facts = lift.run()
    except Refusal as exc:
        raise PassRefused(f"{NAME}: {exc}", diagnostics=[Diagnostic(exc.code, str(exc), _coord(program, exc.node),
                                                                    pass_name=NAME)]) from None
    return replace(program, platform="vnni", ast=ast, facts=facts, source="", launches=[], buffers=[],
                   allocations=[], intrinsics=[])


@task_recovery.legality
def _task_recovery_legal(program, *, omp: bool = True, profile: str = "", form: str = "launch") -> list[Diagnostic]:
    return Lift(program, omp, profile, form).check()
