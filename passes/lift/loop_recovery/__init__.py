"""loop_recovery: lift a CUDA or HIP program to sequential C++ loops (the canonical form).

Summary
    Turns the SIMT program into plain C++ that g++ compiles natively (platform ``vnni``), with
    the same ``extern "C"`` entry (name, parameters, host pointers). Host code: device
    allocations/copies/frees become host memory operations, synchronisation and error queries
    become no-ops, every ``<<<grid, block, shmem>>>`` launch (and ``hipLaunchKernelGGL``) becomes a
    call of the lifted kernel with the launch values. Kernels: the block index becomes a loop nest
    (``#pragma omp parallel for collapse(3)``: CUDA/HIP blocks are independent; with
    floating-point atomics the blocks run in order so sums are bit-identical), the body is cut at
    every ``__syncthreads()``/``__syncwarp()`` into regions each run in its own thread loop
    (barriers inside block-uniform loops and ifs split inside that construct: loop fission),
    thread-private values live across a cut become per-thread arrays, ``__shared__`` arrays
    (static and ``extern`` dynamic) become per-block arrays, an early ``return`` marks the thread
    done (it skips the rest of its region and all later regions; exited threads count as arrived,
    as on the virtual device). Warp shuffles become exchange points: the shuffled value is stored
    per thread, the region is cut, and the reader picks the source lane by the ``source_lane``
    formula of ``platforms/<p>/intrinsics/warp.toml`` (out-of-range, missing or exited lanes: own
    value). Warp votes (``__ballot_sync``/``__any_sync``/``__all_sync``, HIP ``__ballot``/``__any``/
    ``__all``) and block votes (``__syncthreads_count/_and/_or``) exchange their predicates the
    same way; the reader builds the ballot (count) of the lanes (threads) that take part. Device functions that synchronise or read thread built-ins are inlined first.
    Detensorize (in this pass): wmma fragments are per-warp matrices (lane L's ``x[e]`` is element
    ``L*E + e``, wmma.toml ``lane_map``), wmma calls run once per warp with helpers generated from
    the wmma.toml reference bodies; MFMA builtins exchange their per-lane operands like a shuffle
    and compute through the mfma.toml lane maps and reference body. Atomics become OpenMP
    atomic read-modify-writes; half is ``_Float16`` (IEEE binary16, round-to-nearest-even).
Requires
    1. The program is CUDA or HIP and its entry is a host function that launches the kernels
       (XP-RECOVER-003 otherwise).
    2. Every barrier, shuffle, wmma or MFMA call is reached under block-uniform control flow:
       conditions and loop bounds built from constants, parameters, blockIdx/blockDim/gridDim and
       block-level variables (XP-RECOVER-001); shuffles and ``__syncwarp`` may also sit under a
       thread-dependent (warp-uniform) ``if`` or loop, run per thread with its predicate.
    3. No construct outside the supported subset: ``__match_*``/``__reduce_*_sync``, cooperative groups, goto,
       C++ references in kernels, MFMA modifiers, runtime API calls without a host meaning, ...
       (XP-RECOVER-002 names the construct).
Guarantees
    Same outputs as the source on the virtual device (verified by the driver); a self-contained
    C++ file (includes, half type, helpers) that compiles with ``g++ -O2 -march=native -fopenmp``.
Options
    omp: emit OpenMP pragmas (parallel block loop, ``omp simd`` on barrier-free thread loops
    without early exits, atomics, or writes to block-level scalars). Default true.
Example
    ``__global__ void k(float *y, const float *x) { int i = blockIdx.x * 256 + threadIdx.x;
    y[i] = 2 * x[i]; }`` launched ``k<<<n / 256, 256>>>(d_y, d_x)`` becomes
    ``static void k(float *y, const float *x, dim3 xp_grid, dim3 xp_block, unsigned long xp_shmem)``
    with ``for (xp_bz..) for (xp_by..) for (xp_bx..) { for (xp_tz..) for (xp_ty..) for (xp_tx..) {
    int i = xp_bx * 256 + xp_tx; y[i] = 2 * x[i]; } }`` and the host calls
    ``k(d_y, d_x, xp_dim3(n / 256, 1, 1), xp_dim3(256, 1, 1), 0)``.
"""
from __future__ import annotations

import copy
import re
from dataclasses import replace

from pycparser import c_ast

from xpiler.ir.errors import Coord, Diagnostic

import platforms
import passes.lift.loop_recovery.engine as G
import passes.lift.loop_recovery.support as S
from passes.base import Option, PassInfo, PassRefused, register

PASS = "loop_recovery"

# The runtime API's host meaning: one home, platforms/common/host_runtime.toml.
_HOST = platforms.host_runtime()
# runtime API (name after the cuda / hip prefix) -> (helper, argument indices kept)
HOST_API = {name: (helper, tuple(keep)) for name, (helper, keep) in _HOST["calls"].items()}
_API = re.compile(r"^(cuda|hip)([A-Z]\w*)$")
_TYPES = {name: [host] for name, host in _HOST["types"].items()}
_VALUES = dict(_HOST["values"])


def _attributes() -> dict[str, str]:
    """Device attribute (CUDA and HIP spellings) -> the ``xp_device_prop`` field answering it."""
    to_hip = platforms.api_map()["names"]
    out = dict(_HOST["attributes"])
    out.update({to_hip[c]: f for c, f in _HOST["attributes"].items() if c in to_hip})
    return out


def _coord(program, node) -> Coord:
    c = getattr(node, "coord", None)
    if c is None:
        return Coord(program.path)
    return Coord(getattr(c, "file", None) or program.path, c.line or 0, c.column or 0)


@register(PassInfo(
    name=PASS,
    lowers=True,
    summary="CUDA/HIP -> sequential C++ loops (vnni): blocks and threads become loops, barrier-aware",
    options={"omp": Option(bool, True, "emit OpenMP parallel/simd/atomic pragmas")},
    requires=("program is CUDA or HIP with a host entry that launches its kernels",
              "barriers and warp collectives under block-uniform control flow only (XP-RECOVER-001)",
              "only supported constructs (XP-RECOVER-002 names the rest)"),
    guarantees=("same outputs on the virtual device", "same extern \"C\" entry, host pointers",
                "self-contained C++ (g++ -O2 -march=native -fopenmp)"),
    introduces=("#pragma omp parallel for", "#pragma omp simd", "#pragma omp atomic", "_Float16"),
))
def loop_recovery(program, *, omp: bool = True, plan=None):
    lifted = plan if plan is not None else _legal(program, omp=omp)
    if isinstance(lifted, list):
        raise PassRefused(f"{PASS} does not apply: {lifted[0].message}", diagnostics=lifted)
    return lifted


@loop_recovery.legality
def _legal(program, *, omp: bool = True):
    """The lift itself, run once: the lifted Program is the plan the rewrite returns."""
    try:
        return _lift(program, omp)
    except G.Refuse as r:
        return [Diagnostic(r.code, r.message, _coord(program, r.node), construct=r.construct, pass_name=PASS)]


# ----------------------------------------------------------------------------- program
def _lift(program, omp: bool):
    if program.platform not in ("cuda", "hip"):
        raise G.Refuse("XP-RECOVER-003", f"loop_recovery lifts cuda or hip programs, not {program.platform}")
    if program.entry is None:
        raise G.Refuse("XP-RECOVER-003", "the program has no entry")
    if program.platform == "hip":
        program = replace(program, ast=S.normalize_hip_builtins(copy.deepcopy(program.ast)))
    info = G.ProgramInfo(program)
    kernel_entry = program.entry.kind != "host"
    if kernel_entry and program.entry.name not in info.kernels:
        raise G.Refuse("XP-RECOVER-003", f"entry {program.entry.name} is neither a host function nor a kernel")
    out, helpers = [], {}
    kernels = set(info.kernels)
    dims = _Dim3Facts(program.ast)
    for ext in program.ast.ext:
        if isinstance(ext, c_ast.FuncDef):
            name = ext.decl.name
            if name in kernels:
                kl = G.KernelLift(info, ext, omp)
                fd = kl.run()
                helpers.update(kl.helpers)
                if kernel_entry and name == program.entry.name:
                    out.extend(_kernel_entry(fd, program))
                else:
                    out.append(fd)
            elif name in info.inline:
                continue
            elif name in info.device:
                fd = copy.deepcopy(ext)
                fd.decl.funcspec = ["inline"]
                fd.decl.storage = ["static"]
                out.append(fd)
            else:
                out.append(_host(copy.deepcopy(ext), kernels, program, dims))
        elif isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
            spec = set(ext.funcspec or [])
            if "__device__" in spec and "__global__" not in spec and ext.name in info.device:
                # the prototype of a device helper defined after its callers (a kernel calling
                # a functor lambda's function): declared as the helper is defined
                d = copy.deepcopy(ext)
                d.funcspec, d.storage = ["inline"], ["static"]
                out.append(G.transform(d, _host_names))
                continue
            if spec & {"__global__", "__device__"}:
                continue
            out.append(G.transform(copy.deepcopy(ext), _host_names))
        elif isinstance(ext, c_ast.Decl):
            d = copy.deepcopy(ext)
            if set(d.storage or []) & {"__shared__", "__managed__"}:
                raise G.Refuse("XP-RECOVER-002", "file-scope __shared__/__managed__ variable", ext)
            d.storage = [s for s in (d.storage or []) if s not in ("__constant__", "__device__")]
            out.append(G.transform(d, _host_names))
        elif isinstance(ext, c_ast.Typedef):
            out.append(G.transform(_vector_typedef(copy.deepcopy(ext)), _host_names))
        else:
            out.append(copy.deepcopy(ext))
    out = _declare_kernels_before_use(out, kernels)
    out = _drop_unused_runtime_typedefs(out, program.facts.get("preamble", []))
    ast = c_ast.FileAST(out)
    names = {n.name for n in G.walk(ast) if isinstance(n, c_ast.ID)}
    names |= {x for n in G.walk(ast) if isinstance(n, c_ast.IdentifierType) for x in n.names}
    names -= {e.decl.name for e in ast.ext if isinstance(e, c_ast.FuncDef)}   # the program's own
    extra = [helpers[k] for k in sorted(helpers, key=_helper_order)]
    if "xp_get_device_properties" in names:
        import platforms

        extra.insert(0, S.device_prop(program.platform, platforms.profile(program.platform)))
    text = S.support_code(names, program.platform, extra)
    import platforms

    vnni_frontend = platforms.module("vnni", "frontend")

    probe = 'extern "C" void xp_support_probe(void) {}\n'    # the front-end wants an entry
    support = vnni_frontend.parse("\n".join(S.INCLUDES) + "\n" + text + probe, path="<xpiler-support>")
    # one rounding per C operation, as on the virtual device (g++ -march=native would contract a*b+c)
    ast.ext = [c_ast.Pragma('GCC optimize ("fp-contract=off")')] + \
        [e for e in support.ast.ext if getattr(getattr(e, "decl", None), "name", None) != "xp_support_probe"] \
        + ast.ext
    facts = copy.deepcopy(program.facts)
    facts["extern_c"] = [n for n in facts.get("extern_c", [])
                         if n not in kernels or (kernel_entry and n == program.entry.name)]
    if kernel_entry and program.entry.name not in facts["extern_c"]:
        facts["extern_c"].append(program.entry.name)
    keep = [l for l in facts.get("preamble", []) if not S.GPU_HEADERS.search(l)
            and not re.match(r"\s*using\s+namespace\s+nvcuda", l) and not S.collective_macro(l)]
    facts["preamble"] = S.INCLUDES + [S.lift_macro_line(l) for l in keep if l.strip() not in S.INCLUDES]
    facts["includes"] = [h for h in facts.get("includes", []) if not S.GPU_HEADERS.search(f"#include <{h}>")]
    facts["ctor_decls"] = {}
    facts.pop("launch", None)       # the lifted entry has the launch built in
    facts["namespaces"] = []
    return replace(program, platform="vnni", ast=ast, facts=facts, source="",
                   intrinsics=[], launches=[], buffers=[], allocations=[])


def _kernel_entry(fd, program):
    """A kernel that is the entry (no host code): the lifted body under ``<name>_xp_body`` and an
    ``extern "C"`` entry with the kernel's parameters calling it with the launch the source runs
    with: ``facts["launch"]`` (a case file's launch, set by the driver) else the one the virtual
    device gives a kernel entry without an explicit launch (``platforms.launch_config``, the run
    driver's own resolution of the device profile, so both sides run the same configuration)."""
    import platforms

    profile = platforms.profile(program.platform)
    cfg = platforms.launch_config(program.platform, program.facts.get("launch"), profile)
    name = fd.decl.name
    body_name = f"{name}_xp_body"
    fd.decl.name = body_name
    G.set_declname(fd.decl.type, body_name)
    params = [p for p in fd.decl.type.args.params if p.name not in ("xp_grid", "xp_block", "xp_shmem")]
    args = [c_ast.ID(p.name) for p in params]
    args += [_dim3_call([c_ast.Constant("int", str(v)) for v in cfg.grid]),
             _dim3_call([c_ast.Constant("int", str(v)) for v in cfg.block]),
             c_ast.Constant("int", str(cfg.shmem))]
    ftype = c_ast.FuncDecl(c_ast.ParamList(copy.deepcopy(params)), copy.deepcopy(fd.decl.type.type))
    G.set_declname(ftype, name)
    decl = c_ast.Decl(name, [], [], [], [], ftype, None, None)
    entry = c_ast.FuncDef(decl, None, G.block([c_ast.FuncCall(c_ast.ID(body_name), c_ast.ExprList(args))]))
    return [fd, entry]


def _helper_order(name: str):
    # dependencies first: source-lane formulas before pickers, saturate before mma
    return (0 if name.startswith("xp_shfl_src") or name == "saturate" else 1, name)


def _vector_typedef(td):
    """clang ``ext_vector_type(N)`` -> GCC ``vector_size(N * sizeof(T))`` (same subscripting)."""
    elem = G.base_names(td.type) or []
    size = {"float": 4, "int": 4, "_Float16": 2, "half": 2, "__half": 2, "double": 8, "short": 2,
            "unsigned int": 4, "char": 1, "unsigned char": 1, "signed char": 1}.get(" ".join(elem))
    for n in G.walk(td):
        if isinstance(n, c_ast.Attribute) and n.name == "ext_vector_type":
            if size is None:
                raise G.Refuse("XP-RECOVER-002", f"vector of {' '.join(elem)}", td)
            count = int(str(_attr_arg(n.arguments)).strip())
            n.name = "vector_size"
            n.arguments = _attr_value(n.arguments, str(count * size))
    return td


def _attr_arg(a):
    if isinstance(a, c_ast.ExprList):
        return a.exprs[0].value
    if isinstance(a, c_ast.Constant):
        return a.value
    return a


def _attr_value(orig, value: str):
    if isinstance(orig, c_ast.ExprList):
        return c_ast.ExprList([c_ast.Constant("int", value)])
    if isinstance(orig, c_ast.Constant):
        return c_ast.Constant("int", value)
    return value


# ----------------------------------------------------------------------------- host code
def _is_dim3_type(t) -> bool:
    return isinstance(t, c_ast.TypeDecl) and G.base_names(t) == ["dim3"]


class _Dim3Facts:
    """Where the program's host code holds ``dim3`` values beyond its locals: struct fields (a
    launch-parameter struct) and function parameters taken by value, which C++ initialises from
    an integer through dim3's converting constructor (``f(n_blocks)`` for ``f(dim3 grid)``)."""

    def __init__(self, ast):
        kinds: dict[str, set[bool]] = {}
        self.params: dict[str, set[int]] = {}
        for n in G.walk(ast):
            if isinstance(n, c_ast.Struct) and n.decls:
                for d in n.decls:
                    if isinstance(d, c_ast.Decl) and d.name:
                        kinds.setdefault(d.name, set()).add(_is_dim3_type(d.type))
            if isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.FuncDecl) and n.type.args:
                idx = {i for i, p in enumerate(n.type.args.params)
                       if isinstance(p, c_ast.Decl) and _is_dim3_type(p.type)}
                if idx:
                    self.params.setdefault(n.name, set()).update(idx)
        self.fields = {name for name, k in kinds.items() if k == {True}}


_RUNTIME_TYPE = re.compile(r"^(?:__)?(?:cuda|hip|nv)_?[A-Za-z]\w*$")


def _drop_unused_runtime_typedefs(out: list, preamble: list[str]) -> list:
    """A file-scope typedef of a GPU runtime type the host does not have (``typedef
    __hip_bfloat16 nv_bfloat16;``, as a port's vendor header writes it) that nothing in the
    lifted program uses is dropped: it would not build on the host and means nothing there."""
    used = {x for e in out if not isinstance(e, c_ast.Typedef) for n in G.walk(e)
            if isinstance(n, c_ast.IdentifierType) for x in n.names}
    used |= {x for e in out if isinstance(e, c_ast.Typedef) for n in G.walk(e.type)
             if isinstance(n, c_ast.IdentifierType) for x in n.names}
    text = "\n".join(preamble)
    keep = []
    for e in out:
        if isinstance(e, c_ast.Typedef) and e.name not in used and \
                not re.search(rf"\b{re.escape(e.name)}\b", text) and \
                any(_RUNTIME_TYPE.match(x) for x in (G.base_names(e.type) or [])):
            continue
        keep.append(e)
    return keep


def _declare_kernels_before_use(out: list, kernels: set[str]) -> list:
    """A lifted kernel called by a host function placed before it (a launch helper instantiated
    from a template above the kernel) gets a prototype before its first caller."""
    defined = {e.decl.name: i for i, e in enumerate(out) if isinstance(e, c_ast.FuncDef) and e.decl.name in kernels}
    first_use: dict[str, int] = {}
    for i, e in enumerate(out):
        if not isinstance(e, c_ast.FuncDef):
            continue
        for n in G.walk(e.body):
            k = G.call_name(n)
            if k in defined and i < defined[k]:
                first_use.setdefault(k, i)
    for k, i in sorted(first_use.items(), key=lambda kv: -kv[1]):
        proto = copy.deepcopy(out[defined[k]].decl)
        out.insert(i, proto)
    return out


def _host(fd, kernels: set[str], program, dims: _Dim3Facts | None = None):
    # functions the program defines or declares itself (an error-check helper named
    # cudaCheck / hipCheck...) are calls of the program, not of the runtime
    own = {e.decl.name for e in program.ast.ext if isinstance(e, c_ast.FuncDef)} | \
        {e.name for e in program.ast.ext if isinstance(e, c_ast.Decl) and isinstance(e.type, c_ast.FuncDecl)}
    dims = dims or _Dim3Facts(c_ast.FileAST([]))
    dim3_vars = set()
    for n in G.walk(fd):
        if isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.TypeDecl) and (
                G.base_names(n.type) == ["dim3"]
                # auto blocks = dim3(x, y): a dim3 too (declared as one below)
                or "auto" in (n.storage or []) and G.call_name(n.init) == "dim3"):
            dim3_vars.add(n.name)
    params = {id(p) for p in (fd.decl.type.args.params if fd.decl.type.args else [])}

    def is_dim(e):
        return (isinstance(e, c_ast.ID) and e.name in dim3_vars) or \
            (isinstance(e, c_ast.StructRef) and e.field.name in dims.fields) or \
            G.call_name(e) == "xp_dim3"

    def as_dim(e):
        if is_dim(e):
            return e
        if G.call_name(e) == "dim3":
            return _dim3_call(e.args.exprs if e.args else [])
        return _dim3_call([e])

    def fn(node):
        if isinstance(node, c_ast.FuncCall) and G.call_name(node) in dims.params and node.args:
            for i in dims.params[G.call_name(node)]:
                if i < len(node.args.exprs):
                    node.args.exprs[i] = as_dim(node.args.exprs[i])
        if id(node) in params:
            return node                     # a dim3 parameter has no initialiser
        lp = _launch(node)
        if lp is not None:
            k, cfg, args = lp
            if k not in kernels:
                raise G.Refuse("XP-RECOVER-002", f"launch of unknown kernel {k}", node)
            shmem = cfg[2] if len(cfg) > 2 else c_ast.Constant("int", "0")
            return c_ast.FuncCall(c_ast.ID(k), c_ast.ExprList(list(args) + [as_dim(cfg[0]), as_dim(cfg[1]), shmem]))
        if isinstance(node, c_ast.Decl) and node.name in dim3_vars and "auto" in (node.storage or []) and \
                isinstance(node.type, c_ast.TypeDecl):
            # auto blocks = dim3(x, y) -> dim3 blocks = xp_dim3(x, y, 1): the type spelled out
            node.storage = [s for s in node.storage if s != "auto"]
            node.type = c_ast.TypeDecl(node.name, list(node.type.quals or []), None,
                                       c_ast.IdentifierType(["dim3"]), coord=node.type.coord)
        if isinstance(node, c_ast.Decl) and G.base_names(node.type) == ["dim3"] and \
                isinstance(node.type, c_ast.TypeDecl):
            if node.init is None:
                node.init = _dim3_call([])
            elif isinstance(node.init, c_ast.InitList):
                node.init = _dim3_call(node.init.exprs)
            elif G.call_name(node.init) == "dim3":
                node.init = _dim3_call(node.init.args.exprs if node.init.args else [])
            return node
        name = G.call_name(node)
        if name == "dim3":
            return _dim3_call(node.args.exprs if node.args else [])
        if name and name not in own and _API.match(name):
            api = _API.match(name).group(2)
            if api not in HOST_API and not api.startswith(("MemcpyToSymbol", "MemcpyFromSymbol")):
                raise G.Refuse("XP-RECOVER-002", f"runtime call {name} has no host equivalent here", node, name)
            args = node.args.exprs if node.args else []
            if api in ("MemcpyToSymbol", "MemcpyFromSymbol", "MemcpyToSymbolAsync", "MemcpyFromSymbolAsync"):
                return _symbol_copy(api, args, node)
            helper, keep = HOST_API[api]
            new_args = [args[i] for i in keep if i < len(args)]
            if helper == "xp_malloc":
                new_args[0] = c_ast.Cast(_void_pp(), new_args[0])
            if helper == "xp_device_attribute":
                new_args[1] = _attribute_value(new_args[1], program, node)
            return c_ast.FuncCall(c_ast.ID(helper), c_ast.ExprList(new_args))
        return _host_names(node)

    fd = G.transform(fd, fn)
    for n in G.walk(fd.body):
        if isinstance(n, c_ast.ID) and _API.match(n.name) and n.name not in own and \
                not n.name.startswith(("cudaMemcpy", "hipMemcpy")):
            raise G.Refuse("XP-RECOVER-002", f"runtime name {n.name} has no host equivalent here", n, n.name)
        if isinstance(n, c_ast.IdentifierType) and any(_API.match(x) for x in n.names):
            raise G.Refuse("XP-RECOVER-002", f"runtime type {' '.join(n.names)} has no host equivalent here", n)
    # __host__ __device__ functions are host functions here
    spec = [{"__forceinline__": "inline", "__inline__": "inline"}.get(s, s) for s in (fd.decl.funcspec or [])
            if s not in ("__host__", "__device__", "__noinline__")]
    fd.decl.funcspec = list(dict.fromkeys(spec))
    return fd


def _host_names(node):
    """Runtime types and constants given their host meaning (``host_runtime.toml``): in host
    functions and in file-scope declarations (a struct with a ``cudaStream_t`` field, a
    prototype taking one)."""
    if isinstance(node, c_ast.ID) and node.name in _VALUES:
        return c_ast.Constant("int", _VALUES[node.name])
    if isinstance(node, c_ast.IdentifierType):
        for t, repl in _TYPES.items():
            if t in node.names:
                node.names = list(repl)
    return node


def _attribute_value(attr, program, node):
    """The value the virtual device reports for a device attribute (device 0, the profile's
    facts), as a constant: the attribute must be one the lift knows."""
    name = attr.name if isinstance(attr, c_ast.ID) else None
    field = _attributes().get(name) if name else None
    if field is None:
        what = name or "a computed attribute"
        raise G.Refuse("XP-RECOVER-002", f"device attribute {what} has no host value here", node,
                       G.call_name(node))
    facts = S.device_facts(program.platform, platforms.profile(program.platform))
    return c_ast.Constant("int", str(int(facts[field])))


def _symbol_copy(api, args, node):
    """``cudaMemcpyToSymbol(sym, src, n[, off])`` -> ``xp_memcpy((char *)&sym + off, src, n)``
    (and the reverse for FromSymbol): the ``__constant__``/``__device__`` symbol is a host global."""
    if len(args) < 3:
        raise G.Refuse("XP-RECOVER-002", f"{G.call_name(node)} with too few arguments", node)
    sym_pos = 0 if "To" in api else 1
    sym = args[sym_pos]
    if G.call_name(sym) == "HIP_SYMBOL" and sym.args:
        sym = sym.args.exprs[0]
    char_p = c_ast.Typename(None, [], None, c_ast.PtrDecl([], c_ast.TypeDecl(None, [], None,
                                                                               c_ast.IdentifierType(["char"]))))
    addr = c_ast.Cast(char_p, c_ast.UnaryOp("&", sym))
    if len(args) > 3:
        addr = c_ast.BinaryOp("+", addr, args[3])
    pair = [addr, args[1]] if sym_pos == 0 else [args[0], addr]
    return c_ast.FuncCall(c_ast.ID("xp_memcpy"), c_ast.ExprList(pair + [args[2]]))


def _launch(node):
    parts = G.launch_parts(node) if isinstance(node, c_ast.FuncCall) else None
    if parts is not None:
        k, cfg = parts
        if not isinstance(k, c_ast.ID):
            raise G.Refuse("XP-RECOVER-002", "launch of a kernel expression", node)
        return k.name, cfg, node.args.exprs if node.args else []
    if G.call_name(node) == "hipLaunchKernelGGL":
        a = node.args.exprs
        k = a[0]
        if G.call_name(k) == "HIP_KERNEL_NAME" and k.args and len(k.args.exprs) == 1:
            k = k.args.exprs[0]
        if not isinstance(k, c_ast.ID):
            raise G.Refuse("XP-RECOVER-002", "hipLaunchKernelGGL of a kernel expression", node)
        return k.name, [a[1], a[2], a[3]], a[5:]
    return None


def _dim3_call(exprs):
    exprs = list(exprs) + [c_ast.Constant("int", "1")] * (3 - len(exprs))
    return c_ast.FuncCall(c_ast.ID("xp_dim3"), c_ast.ExprList(exprs[:3]))


def _void_pp():
    return c_ast.Typename(None, [], None, c_ast.PtrDecl([], c_ast.PtrDecl([], c_ast.TypeDecl(
        None, [], None, c_ast.IdentifierType(["void"])))))
