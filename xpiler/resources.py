"""What a program uses of its device: parallel units, on-chip buffers, special instructions.

``resources(program, scalars=None, launch=None) -> dict`` is the per-program part of the
translation report (issue 4, item 8: a translation keeps the parallelism), computed from the
front-end's facts (``Program.launches``, ``buffers``, ``intrinsics``) and the platform's device
profile (``platforms/<p>/profile.toml``, default profile):

``parallel``
    GPU (cuda, hip): one entry per launch with ``grid``/``block`` (evaluated at the
    verification scalars where the expressions allow; C text otherwise), ``threads_per_block``,
    ``blocks``, ``threads``, ``within_limits`` (None when a dimension is unknown), and the
    profile limits (``max_threads_per_block``, ``max_grid_dims``, ``warp_size``). A kernel entry (no host launch) reports the launch it is
    run with (a case file's, else the profile default), marked ``"from": "caller"``.
    Each launch also says whether its kernel does ``constant_work`` (loops counted by
    constants, constant copy sizes: a one-thread launch of it loses no parallelism).
    BANG: per launch ``task_dim`` (product of the cnrtDim3_t), function type, the clusters
    and cores it occupies and ``within_limits`` (UNION<n> needs n <= clusters and taskDim a
    multiple of n x cores), against the profile's ``clusters x cores_per_cluster``.
    VNNI: OpenMP parallel loops, ``omp simd`` loops and AVX-512 intrinsic calls in the text,
    against the host's cores and the 512-bit vector width.
``units_used`` / ``units_available``
    One number each: GPU threads per block (max over launches) vs ``max_threads_per_block``;
    BANG cores (max over launches) vs clusters x cores; VNNI ``"omp"`` cores when an OpenMP
    parallel loop is present (else 1) vs the host's cores.
``buffers``
    On-chip buffers (shared memory / NRAM / WRAM / SRAM / LDRAM) with bytes, and the total per
    space in ``on_chip_bytes``. A kernel's dynamic shared memory (``extern __shared__``) has
    the bytes its launches pass (the largest constant third ``<<<>>>`` parameter).
Buffers and instructions count only in the functions the entry and its launched kernels
reach (``reachable_functions``): a helper header's unused functions are not the program's.

``special_instructions``
    The front-end's special-instruction list (wmma, MFMA, shuffles, ``__bang_*``,
    dpbusd/dpwssd, ...) without the pure data movement (``__memcpy``, ``__bang_write_zero``,
    barriers), which is listed in ``data_movement``.
"""
from __future__ import annotations

import os
import re

_ON_CHIP = ("shared", "nram", "wram", "sram", "ldram")
_KTYPE_CLUSTERS = {"CNRT_FUNC_TYPE_BLOCK": 0, "CNRT_FUNC_TYPE_UNION1": 1, "CNRT_FUNC_TYPE_UNION2": 2,
                   "CNRT_FUNC_TYPE_UNION4": 4, "CNRT_FUNC_TYPE_UNION8": 8, "CNRT_FUNC_TYPE_UNION16": 16,
                   "block": 0, "union1": 1, "union2": 2, "union4": 4, "union8": 8, "union16": 16}
_KTYPE_NUM = {1: 0, 4: 1, 8: 2, 16: 4, 32: 8, 64: 16}
_IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
# special instructions by kind (structure_notes): matrix units, and SIMD lane-wise vector
# instructions (BANG __bang_*, VNNI dot products), which a GPU runs as threads
_MATRIX = re.compile(r"^(?:wmma::\w+|__builtin_amdgcn_mfma_\w+|__bang_(?:conv|matmul|mlp)\w*)$")
_LANE_VECTOR = re.compile(r"^(?:__bang_\w+|_mm(?:512|256)?_(?:mask_|maskz_)?dp\w+)$")
# intrinsics that only move or fill memory (DMA copies, fills, barriers): listed apart from the
# special (compute) instructions
_DATA_MOVEMENT = re.compile(r"^(?:__memcpy\w*|__memset\w*|__sync\w*|__bang_write_(?:zero|value))$")


def _local_definitions(source: str) -> dict[str, str]:
    """``NAME = expr;`` assignments / initialisations in the text (first one wins): used to see
    through host locals such as ``unsigned __xp_g0 = (n + 255) / 256;`` in launch expressions."""
    out: dict[str, str] = {}
    for m in re.finditer(r"\b([A-Za-z_]\w*)\s*=(?!=)\s*([^;{}]+);", source):
        out.setdefault(m.group(1), m.group(2).strip())
    return out


def evaluate(program, text, scalars: dict | None, defs: dict | None = None):
    """An int for a C expression over the entry's scalars, file constants and host locals;
    the text itself when it cannot be evaluated."""
    from .verify import evaluate_size

    if text is None:
        return None
    if isinstance(text, int):
        return text
    expr = str(text)
    defs = defs if defs is not None else _local_definitions(program.source)
    for _ in range(4):  # substitute host locals a few levels deep
        value = evaluate_size(program, expr, scalars or {})
        if value is not None:
            return value
        names = [n for n in _IDENT.findall(expr) if n in defs and n not in (scalars or {})]
        if not names:
            break
        for n in set(names):
            expr = re.sub(rf"\b{re.escape(n)}\b", f"({defs[n]})", expr)
    return str(text)


def _product(dims) -> int | None:
    out = 1
    for d in dims or ():
        if not isinstance(d, int):
            return None
        out *= d
    return out


def _gpu(program, scalars, launch, prof) -> dict:
    defs = _local_definitions(program.source)
    launches = []
    for l in program.launches:
        grid = [evaluate(program, g, scalars, defs) for g in (l.grid or ())]
        block = [evaluate(program, b, scalars, defs) for b in (l.block or ())]
        shmem = evaluate(program, l.shmem, scalars, defs) if l.shmem else None
        launches.append({"kernel": l.kernel, "from": l.caller, "grid": grid, "block": block,
                         "dynamic_shared": shmem if isinstance(shmem, int) else None})
    if not program.launches and program.entry is not None and program.entry.kind == "kernel":
        grid = list((launch or {}).get("grid") or prof.get("default_grid") or [1, 1, 1])
        block = list((launch or {}).get("block") or prof.get("default_block") or [1, 1, 1])
        launches.append({"kernel": program.entry.name, "from": "caller", "grid": grid, "block": block})
    for l in launches:
        l["threads_per_block"] = _product(l["block"])
        l["blocks"] = _product(l["grid"])
        l["threads"] = (l["blocks"] * l["threads_per_block"]
                        if l["blocks"] is not None and l["threads_per_block"] is not None else None)
        l["within_limits"] = _gpu_within(l, prof)
        l["constant_work"] = constant_work(program, l["kernel"])
    tpb = [l["threads_per_block"] for l in launches if l["threads_per_block"] is not None]
    return {"kind": "gpu", "launches": launches,
            "limits": {"max_threads_per_block": prof.get("max_threads_per_block"),
                       "max_grid_dims": prof.get("max_grid_dims"), "warp_size": prof.get("warp_size")},
            "units": "threads per block",
            "units_used": max(tpb) if tpb else None,
            "units_available": prof.get("max_threads_per_block"),
            "max_threads": max((l["threads"] for l in launches if l["threads"] is not None), default=None)}


def _gpu_within(l: dict, prof: dict):
    """True / False when every dimension is known, None otherwise."""
    dims = list(l["grid"]) + list(l["block"])
    if not all(isinstance(d, int) for d in dims):
        return None
    max_block, max_grid = prof.get("max_block_dims") or [], prof.get("max_grid_dims") or []
    ok = l["threads_per_block"] <= (prof.get("max_threads_per_block") or l["threads_per_block"])
    ok &= all(d <= m for d, m in zip(l["block"], max_block)) and all(d <= m for d, m in zip(l["grid"], max_grid))
    return bool(ok and all(d >= 1 for d in dims))


def _ktype_clusters(ktype) -> int | None:
    if ktype is None:
        return None
    if isinstance(ktype, int):
        return _KTYPE_NUM.get(ktype)
    text = str(ktype).strip()
    if text.isdigit():
        return _KTYPE_NUM.get(int(text))
    return _KTYPE_CLUSTERS.get(text.split("::")[-1])


def _bang(program, scalars, launch, prof) -> dict:
    defs = _local_definitions(program.source)
    clusters, cores = prof.get("clusters"), prof.get("cores_per_cluster")
    launches = []
    for l in program.launches:
        dim = [evaluate(program, d, scalars, defs) for d in (l.dim or ())]
        launches.append({"kernel": l.kernel, "from": l.caller, "dim": dim, "ktype": l.ktype})
    if not program.launches and program.entry is not None and program.entry.kind == "kernel":
        if launch and (launch.get("clusters") or launch.get("type")):
            ncl = launch.get("clusters") or 1
            ncore = launch.get("cores") or cores or 1
            dim = [ncl * ncore, 1, 1]
            ktype = launch.get("type") or f"union{ncl}"
        else:
            dim = list(prof.get("default_dim") or [1, 1, 1])
            ktype = prof.get("default_ktype")
        launches.append({"kernel": program.entry.name, "from": "caller", "dim": dim, "ktype": ktype})
    for l in launches:
        if isinstance(l["ktype"], int) and l["ktype"] in _KTYPE_NUM:   # profile default: a number
            n = _KTYPE_NUM[l["ktype"]]
            l["ktype"] = "CNRT_FUNC_TYPE_BLOCK" if n == 0 else f"CNRT_FUNC_TYPE_UNION{n}"
        task_dim = _product(l["dim"])
        l["constant_work"] = constant_work(program, l["kernel"])
        ncl = _ktype_clusters(l["ktype"])
        l["task_dim"] = task_dim
        l["union_clusters"] = ncl           # 0 = BLOCK task (one core)
        l["cores"] = (1 if ncl == 0 else task_dim) if task_dim is not None else None
        # a UNION<n> task needs n clusters of the profile and taskDim a multiple of n x cores
        l["within_limits"] = (None if task_dim is None or ncl is None else
                              ncl == 0 or (clusters is not None and cores is not None and ncl <= clusters
                                           and task_dim % (ncl * cores) == 0))
    used = [l["cores"] for l in launches if l["cores"] is not None]
    return {"kind": "bang", "launches": launches,
            "limits": {"clusters": clusters, "cores_per_cluster": cores},
            "units": "cores",
            "units_used": max(used) if used else None,
            "units_available": clusters * cores if clusters and cores else None}


_OMP_PARALLEL = re.compile(r"#\s*pragma\s+omp\s+parallel\b")
_OMP_SIMD = re.compile(r"#\s*pragma\s+omp\s+(?:parallel\s+for\s+)?simd\b|#\s*pragma\s+omp\s+for\s+simd\b")
_AVX512 = re.compile(r"\b_mm512_\w+\s*\(")


def _vnni(program, prof) -> dict:
    text = program.source
    omp = len(_OMP_PARALLEL.findall(text))
    simd = len(_OMP_SIMD.findall(text))
    vec = len(_AVX512.findall(text))
    cores = os.cpu_count() or 1
    return {"kind": "cpu", "omp_parallel_loops": omp, "simd_loops": simd, "avx512_calls": vec,
            "vector_bits": prof.get("vector_bits", 512),
            "units": "cores", "units_used": cores if omp else 1, "units_available": cores,
            "vectorised": bool(simd or vec)}


def reachable_functions(program) -> set[str] | None:
    """Names of the functions the entry and the launched kernels reach through calls (a
    helper header's unused functions are not the program's structure); None without an
    AST or an entry."""
    from pycparser import c_ast
    import passes.canon as canon
    ast = getattr(program, "ast", None)
    if ast is None or program.entry is None:
        return None
    defs = {e.decl.name: e for e in ast.ext if isinstance(e, c_ast.FuncDef)}
    todo = [program.entry.name] + [l.kernel for l in program.launches or []]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        for n in canon.walk(defs[name]):
            if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID):
                todo.append(n.name.name)
            elif isinstance(n, c_ast.ID) and n.name in defs:
                todo.append(n.name)          # a kernel or helper named, not called here
    return seen


def reachable_calls(program, reached: set[str] | None) -> set[str] | None:
    """Names called in the reachable functions, each also without its leading namespaces
    (``nvcuda::wmma::mma_sync`` is the intrinsic ``wmma::mma_sync``); None when reachability
    is unknown."""
    from pycparser import c_ast
    import passes.canon as canon
    if reached is None:
        return None
    out = set()
    for e in program.ast.ext:
        if isinstance(e, c_ast.FuncDef) and e.decl.name in reached:
            for n in canon.walk(e):
                if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID):
                    parts = n.name.name.split("::")
                    out.update("::".join(parts[k:]) for k in range(len(parts)))
    return out


def resources(program, scalars: dict | None = None, launch: dict | None = None) -> dict:
    import platforms

    prof = platforms.profile(program.platform)      # the default device profile
    if program.platform in ("cuda", "hip"):
        par = _gpu(program, scalars, launch, prof)
    elif program.platform == "bang":
        par = _bang(program, scalars, launch, prof)
    else:
        par = _vnni(program, prof)
    reached = reachable_functions(program)
    # dynamic shared memory (``extern __shared__ T a[];``): the bytes its launches pass
    dynamic = {}
    for l in par.get("launches", []):
        if l.get("dynamic_shared"):
            dynamic[l["kernel"]] = max(dynamic.get(l["kernel"], 0), l["dynamic_shared"])
    buffers, totals = [], {}
    for b in program.buffers:
        if b.space not in _ON_CHIP or reached is not None and b.function and \
                b.function not in reached:
            continue
        size = b.bytes
        if size is None and b.space == "shared" and b.function in dynamic:
            size = dynamic.pop(b.function)      # the kernel's one dynamic allocation
        buffers.append({"name": b.name, "space": b.space, "dtype": b.dtype, "bytes": size,
                        "function": b.function})
        if size is not None:
            totals[b.space] = totals.get(b.space, 0) + size
    capacity = {s: prof.get(f"{s}_bytes" if s != "shared" else "shared_mem_bytes")
                for s in totals if prof.get(f"{s}_bytes" if s != "shared" else "shared_mem_bytes")}
    calls = reachable_calls(program, reached)
    names = sorted(n for n in set(program.intrinsics) if calls is None or n in calls)
    return {"platform": program.platform, "parallel": par, "buffers": buffers,
            "on_chip_bytes": totals, "on_chip_capacity": capacity,
            "special_instructions": [n for n in names if not _DATA_MOVEMENT.match(n)],
            "data_movement": [n for n in names if _DATA_MOVEMENT.match(n)]}


def one_line(res: dict) -> str:
    """A short human summary (``--explain``, bench)."""
    par = res.get("parallel", {})
    used, avail = par.get("units_used"), par.get("units_available")
    units = f"{used if used is not None else '?'}/{avail if avail is not None else '?'} {par.get('units', 'units')}"
    if par.get("kind") == "gpu":
        shapes = "; ".join(f"{l['kernel']}<<<{_dims(l['grid'])}, {_dims(l['block'])}>>>" for l in par["launches"])
        units += f" ({shapes})" if shapes else ""
    elif par.get("kind") == "bang":
        shapes = "; ".join(f"{l['kernel']} taskDim={l['task_dim'] if l['task_dim'] is not None else '?'} "
                           f"{l['ktype']}" for l in par["launches"])
        units += f" ({shapes})" if shapes else ""
    else:
        units += f" ({par.get('omp_parallel_loops', 0)} omp parallel, {par.get('simd_loops', 0)} simd loops, " \
                 f"{par.get('avx512_calls', 0)} avx512 calls)"
    bufs = ", ".join(f"{s} {n} B" for s, n in sorted(res.get("on_chip_bytes", {}).items())) or "none"
    special = ", ".join(res.get("special_instructions") or []) or "none"
    moves = ", ".join(res.get("data_movement") or [])
    return (f"parallel units {units}; on-chip buffers: {bufs}; special instructions: {special}"
            + (f"; data movement: {moves}" if moves else ""))


def _dims(d) -> str:
    return ",".join(str(x) for x in d) if d else "?"


def _parallel_units(res: dict) -> int | None:
    """Threads (GPU, the largest launch), cores (BANG) or 1 for a serial CPU program."""
    par = res.get("parallel") or {}
    if par.get("kind") == "gpu":
        return par.get("max_threads")
    if par.get("kind") == "bang":
        return par.get("units_used")
    if par.get("kind") == "cpu":
        return None if (par.get("omp_parallel_loops") or par.get("vectorised")) else 1
    return None


def _is_const_expr(e) -> bool:
    """An integer constant expression by its form: literals, ``sizeof`` of a type, casts and
    arithmetic of those."""
    from pycparser import c_ast
    if isinstance(e, c_ast.Constant):
        return e.type in ("int", "long", "unsigned", "unsigned int", "long long",
                          "unsigned long", "unsigned long long") or e.type.endswith("int")
    if isinstance(e, c_ast.UnaryOp):
        return e.op == "sizeof" and isinstance(e.expr, c_ast.Typename) or \
            e.op in ("-", "+") and _is_const_expr(e.expr)
    if isinstance(e, c_ast.Cast):
        return _is_const_expr(e.expr)
    if isinstance(e, c_ast.BinaryOp):
        return e.op in ("+", "-", "*", "/", "%", "<<", ">>") and _is_const_expr(e.left) and \
            _is_const_expr(e.right)
    return False


def _counted_by_constants(loop) -> bool:
    """``for (v = c0; v < c1; v += c2)`` with constant c0, c1, c2 (either direction)."""
    from pycparser import c_ast
    init, cond, nxt = loop.init, loop.cond, loop.next
    if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
        var, start = init.decls[0].name, init.decls[0].init
    elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
        var, start = init.lvalue.name, init.rvalue
    else:
        return False
    if not _is_const_expr(start):
        return False
    if not (isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">=", "!=") and
            isinstance(cond.left, c_ast.ID) and cond.left.name == var and _is_const_expr(cond.right)):
        return False
    if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++", "--", "p--"):
        return isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == var
    return isinstance(nxt, c_ast.Assignment) and nxt.op in ("+=", "-=") and \
        isinstance(nxt.lvalue, c_ast.ID) and nxt.lvalue.name == var and _is_const_expr(nxt.rvalue)


def constant_work(program, kernel: str, _depth: int = 0) -> bool:
    """The kernel's work does not grow with the data: its loops are counted by constants,
    its ``memcpy``/``memmove``/``memset`` sizes are constant, and the functions of the file
    it calls are such too (a lane reduction, a scalar result store). False when unknown."""
    from pycparser import c_ast
    ast = getattr(program, "ast", None)
    defs = {e.decl.name: e for e in (ast.ext if ast is not None else [])
            if isinstance(e, c_ast.FuncDef)}
    fdef = defs.get(kernel)
    if fdef is None or _depth > 4:
        return False
    stack = [fdef.body]
    while stack:
        n = stack.pop()
        if isinstance(n, (c_ast.While, c_ast.DoWhile, c_ast.Goto)):
            return False
        if isinstance(n, c_ast.For) and not _counted_by_constants(n):
            return False
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID):
            name = n.name.name
            if name in ("memcpy", "memmove", "memset"):
                args = n.args.exprs if n.args is not None else []
                if len(args) != 3 or not _is_const_expr(args[2]):
                    return False
            elif name in defs and not constant_work(program, name, _depth + 1):
                return False
        stack.extend(c for _, c in n.children())
    return True


def _kernels(names) -> str:
    names = list(dict.fromkeys(names))
    if len(names) == 1:
        return f"kernel {names[0]} runs"
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"{len(names)} kernels ({shown}) run"


def structure_notes(source: dict, output: dict) -> list[str]:
    """What a verified output lost of the structure its source has (issue 16, item 5: no
    degenerate structure), one sentence each; empty when nothing was lost. A degenerate output
    still computes the right values, so it is reported, not refused:

    - parallelism: a GPU launch of one thread or a BANG launch of one task whose work grows
      with the data (``constant_work`` false: a loop not counted by constants, a copy of a
      variable size), or a CPU output with neither an OpenMP parallel loop nor a simd loop,
      where the source runs more than one thread or core (host<->device copies turned into
      single-thread kernels). A one-thread launch of constant work - a scalar result store,
      a horizontal sum of 8 lanes - has nothing to spread over threads;
    - on-chip memory: the source keeps data on chip (shared memory, NRAM, WRAM, SRAM) and the
      output, on a platform that has it, keeps none;
    - special instructions: the source uses some (wmma, MFMA, shuffles, ``__bang_*``, VNNI)
      and the output, on a GPU or BANG target, none; for a GPU target the lane-wise vector
      instructions of a SIMD source (``__bang_*`` other than conv/matmul/mlp, VNNI dot
      products) do not count, since its threads are their lanes;
    - BANG outputs without any ``__bang_*`` vector instruction or NRAM buffer (scalar code in a
      task loop)."""
    if not source or not output or "error" in source or "error" in output:
        return []
    notes = []
    src_units = _parallel_units(source)
    par = output.get("parallel") or {}
    if src_units is None or src_units > 1:
        many = f" where the source runs {src_units}" if src_units else ""
        if par.get("kind") == "gpu":
            single = [l["kernel"] for l in par.get("launches", []) if l.get("threads") == 1
                      and not l.get("constant_work")]
            if single:
                notes.append(f"{_kernels(single)} on a single thread{many}")
        elif par.get("kind") == "bang":
            single = [l["kernel"] for l in par.get("launches", []) if l.get("task_dim") == 1
                      and not l.get("constant_work")]
            if single:
                notes.append(f"{_kernels(single)} as a single task{many}")
        elif par.get("kind") == "cpu" and _parallel_units(output) == 1 and src_units:
            notes.append(f"the output runs serially (no OpenMP parallel or simd loop){many} threads")
    platform = output.get("platform")
    src_chip = source.get("on_chip_bytes") or {}
    if src_chip and platform in ("cuda", "hip", "bang") and not output.get("on_chip_bytes"):
        kept = ", ".join(f"{space} {n} B" for space, n in sorted(src_chip.items()))
        notes.append(f"the source keeps data on chip ({kept}); the output keeps none")
    src_special = source.get("special_instructions") or []
    # a GPU's threads are the lanes of a SIMD source's element-wise vector instructions: it
    # has no instruction of that kind to keep (matrix ones, shuffles and atomics it has)
    kept = [n for n in src_special if platform not in ("cuda", "hip") or not _LANE_VECTOR.match(n)
            or _MATRIX.match(n)]
    if kept and platform in ("cuda", "hip", "bang") and not output.get("special_instructions"):
        shown = ", ".join(kept[:4]) + (", ..." if len(kept) > 4 else "")
        notes.append(f"the source uses special instructions ({shown}); the output none")
    elif platform == "bang" and not output.get("special_instructions") and not output.get("on_chip_bytes") \
            and not (src_special or src_chip):
        notes.append("the BANG output is scalar code in a task loop: no __bang_* vector instruction, "
                     "no NRAM buffer")
    return notes
