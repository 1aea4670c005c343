"""Verification inputs inferred from the program when the user gives none.

``infer_inputs(program, path, seed) -> Inference``

What it establishes
    The smallest scalar values (integer scalars all take the same candidate value, tried in
    ``CANDIDATES`` order, smallest first) for which every access of the entry stays inside the
    host allocations, and the element count of every pointer argument at those values. With
    two or more integer scalars, distinct values derived from that candidate ``c`` are tried
    next (doubling: ``c, 2c, 4c, ...`` in parameter order; then alternating ``c, 2c, c, ...``)
    and kept when the source runs on them in bounds and writes its outputs: equal sizes hide
    swapped dimensions (a square gemm verifies a kernel that mixes up M and N).

How
    1. Pointer sizes. Each pointer parameter's element count is, in order of trust:
       the host allocation the front-end found (``Param.size``, a C expression over the entry's
       scalars: ``cudaMalloc``/``cnrtMalloc`` + copies in the host wrapper); otherwise the
       extent the entry touches, from the Z3/affine analysis ``passes.analysis.affine.extents`` (exact
       elimination of the loop variables; the program is first lifted to canonical C with
       ``loop_recovery,devcopy,devtemp`` for CUDA/HIP (the host's device buffers become the
       entry's pointers) and ``detensorize,task_recovery`` for BANG, then the
       clean-up passes ``inline,scalarize_structs,const_prop,unit_loops,flatten_blocks`` where
       registered; the lift is only used for this analysis, never emitted); otherwise a
       fallback guess (the product of the integer scalars, or ``256 x candidate`` elements
       without integer scalars), which only stands if the guarded run below confirms it.
    2. Static check: where both a host allocation and an analysed extent exist, the extent at
       the candidate values is compared with the allocation; ``extent <= allocation`` proves
       those accesses in bounds (recorded per candidate). The extent is an upper bound (guards
       it cannot relate to the launch make it larger than the true maximum), so a larger one is
       recorded as "not proved" and the guarded run decides.
    3. Guarded run: the source runs on the virtual device with the candidate arguments; each
       pointer argument ends at a PROT_NONE guard page, so an overrun is reported as
       ``OutOfBoundsAccess`` and the next candidate is tried; an overrun of a *guessed* pointer
       (no allocation, no extent) instead grows that guess to cover the access (at least
       doubling, ``GROWTHS`` times per pointer and value) and runs again, so a kernel whose
       footprint is not a product of its scalars (fixed tiles, task splits) still gets inputs
       at the candidate value. (An access beyond the guard page
       may land in other mapped memory unnoticed; that is why analysed sizes come first, and
       why a source reading such garbage then fails the differential verification rather
       than passing it.) A run that leaves every output
       untouched, or holding one repeated value (more than one element, all equal: a host
       wrapper copies back device buffers the kernel never wrote, e.g. when a mode scalar is
       outside the values the kernel handles), is a degenerate input (e.g. all work guarded off)
       and is passed over while another candidate may do better.
    4. Grid (a CUDA/HIP kernel entry launched with no given launch): the profile's default
       launch (one block) may cover only part of the problem the scalars describe (a kernel
       that maps one row per warp covers ``blockDim / warpSize`` rows), leaving most of the
       outputs unwritten and the scalars meaningless. The grid's x dimension is doubled while
       the source, run on the same arguments, writes more output elements (at most
       ``GRID_MAX`` blocks, within the budget); a grid-stride kernel stops at the first try.
       The launch found is the verification launch (``Inference.launch``). Its block is the
       kernel's ``__launch_bounds__`` when it declares one; otherwise the profile's default,
       and when every candidate then overflows a ``__shared__`` array (a tile sized for fewer
       threads) the search runs again with blocks of 128, 64 and 32 threads.
    5. Footprint: a guessed size that held is usually larger than what the source touches, and
       a buffer larger than the source's footprint hides a translation that reads past it. Each
       guessed pointer is cut to the smallest size (to the 64-byte granule) at which guarded
       runs of the source stay in bounds (binary search, at most ``SHRINK_BUDGET`` seconds).
    Case selectors (``mode_scalars``: an integer scalar the entry converts to an enum type or
    switches on, or one used for nothing but comparisons with constants, followed into the
    functions and kernels it is passed to) are not sizes: they get the enum's first
    enumerator, the first case label or the first constant, and keep it at the second size.
    Values of 16 and up come first (a size below a vector width or a warp verifies little);
    only when none of them works are ``SMALL`` values (8, 4, 2, 1) tried, largest first.
    Floating-point scalars get ``0.5`` (not 0 or 1, so a dropped multiply is seen); pointers
    get seeded random data (``xpiler.argspec.random_array``), except 32/64-bit integer input
    pointers (index tensors of gathers, scatters, offsets), which first get valid indices in
    ``[0, candidate)`` (random small integers include negative ones, and an underrun is not
    caught by the guard pages); if that run fails or leaves most output elements undefined
    (unsorted CSR row pointers make rows overlap, so several threads write one element), they
    get sorted offsets in ``[0, candidate]``, and then random data.
    A run after which most output elements are undefined (they change with another fill of
    fresh memory or with the blocks and threads in reverse order: ``xpiler.verify.
    undefined_elements``, the definition the verification uses) is degenerate too.

Guarantees
    ``Inference.ok`` only when a guarded run of the source succeeded on the returned arguments;
    otherwise ``reason`` says why nothing could be established (the translation is then
    "unverified", exit 3). Deterministic for a given seed.
"""
from __future__ import annotations

from dataclasses import dataclass, field

CANDIDATES = (16, 32, 64, 128, 256, 512, 1024)
SMALL = (8, 4, 2, 1)                     # tried (largest first) only when no candidate above works
FLOAT_VALUE = 0.5
MAX_ELEMENTS = 1 << 24                   # never allocate more than this per pointer while guessing
SHRINK_BUDGET = 20.0                     # seconds spent cutting guessed sizes to the footprint
BUDGET = 20.0                            # seconds for the whole inference (translate --infer-budget)
GROWTHS = 6                              # times a guessed pointer size grows after an overrun, per value
GRID_MAX = 256                           # blocks the grid of a kernel entry grows to at most


@dataclass
class SizeRule:
    """Where a pointer's element count comes from."""

    pointer: str
    host: str | None = None              # host allocation (Param.size), C text
    extent: object = None                # analysed extent: int, C text, or None
    fallback: bool = False               # neither known: product of the integer scalars

    def to_json(self) -> dict:
        return {"pointer": self.pointer, "host_allocation": self.host, "analysed_extent": self.extent,
                "fallback": self.fallback}


@dataclass
class Inference:
    ok: bool
    scalars: dict = field(default_factory=dict)     # name -> value
    sizes: dict = field(default_factory=dict)       # pointer -> element count
    rules: list = field(default_factory=list)       # SizeRule per pointer
    tried: list = field(default_factory=list)       # [{"value": v, "outcome": text}]
    reason: str = ""
    args: list | None = None
    analysis: str = ""                              # what the static analysis could say
    launch: dict | None = None                      # a kernel entry's launch, when one was chosen

    def describe(self) -> str:
        if not self.ok:
            return f"no verification inputs: {self.reason}"
        vals = ", ".join(f"{k}={v}" for k, v in self.scalars.items()) or "no scalars"
        sizes = ", ".join(f"{k}[{v}]" for k, v in self.sizes.items())
        grid = f"; grid {self.launch['grid'][0]} x block {self.launch['block'][0]}" \
            if self.launch else ""
        return f"inferred inputs: {vals}; {sizes}{grid} (confirmed by a guarded run of the source)"

    def to_json(self) -> dict:
        return {"ok": self.ok, "scalars": self.scalars, "sizes": self.sizes,
                "rules": [r.to_json() for r in self.rules], "tried": self.tried,
                "reason": self.reason, "analysis": self.analysis, "launch": self.launch}


def _int_scalar(p) -> bool:
    return p.kind == "scalar" and p.dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                              "uint32", "uint64")


def _informative(after, before) -> bool:
    """An output the run says something with: changed, and (beyond one element) not a single
    repeated value. A host wrapper copies its device buffers back whether the kernel wrote them
    or not, so an output whose work was all guarded off still "changes" (to whatever the fresh
    device allocation held: zeros, or the strict-mode poison)."""
    import numpy as np

    if np.array_equal(after, before, equal_nan=True):
        return False
    flat = np.asarray(after).reshape(-1)
    return flat.size <= 1 or not np.array_equal(flat, np.full_like(flat, flat[0]), equal_nan=True)


def mode_scalars(program) -> dict[str, tuple[int, str]]:
    """Integer scalars of the entry that select a case instead of sizing anything: converted to
    an enum type (``(enum ggml_op_pool) op``) or the condition of a ``switch`` in the entry.
    Name -> (the value they get: the enum's first enumerator, or the first case label; why).
    A size candidate there (16, 32, ...) falls outside the cases the source handles (its
    ``default: assert(false)``), so no candidate would ever work."""
    from pycparser import c_ast

    from passes import canon

    ast = getattr(program, "ast", None)
    if ast is None or program.entry is None:
        return {}
    entry = canon.entry_def(ast, program.entry.name)
    ints = {p.name for p in program.params if _int_scalar(p)}
    if entry is None or not ints:
        return {}
    enums: dict[str, list[int]] = {}          # enum tag -> enumerator values, in order
    constants: dict[str, int] = {}            # enumerator -> value
    for node in canon.walk(ast):
        if isinstance(node, c_ast.Enum) and node.values is not None:
            value, values = -1, []
            for e in node.values.enumerators:
                given = _int_constant(e.value, constants) if e.value is not None else value + 1
                if given is None:
                    values = []
                    break
                value = constants[e.name] = given
                values.append(value)
            if node.name and values:
                enums[node.name] = values
    out: dict[str, tuple[int, str]] = {}
    for node in canon.walk(entry.body):
        if isinstance(node, c_ast.Cast) and isinstance(node.expr, c_ast.ID) and node.expr.name in ints:
            t = node.to_type.type
            while isinstance(t, c_ast.TypeDecl):
                t = t.type
            if isinstance(t, c_ast.Enum) and enums.get(t.name):
                out.setdefault(node.expr.name, (enums[t.name][0], f"converted to enum {t.name}"))
        elif isinstance(node, c_ast.Switch) and isinstance(node.cond, c_ast.ID) and node.cond.name in ints:
            labels = [_int_constant(c.expr, constants) for c in canon.walk(node.stmt) if isinstance(c, c_ast.Case)]
            labels = [v for v in labels if v is not None]
            if labels:
                out.setdefault(node.cond.name, (labels[0], "a switch selector"))
    funcs = canon.func_defs(ast)
    for name in sorted(ints - set(out), key=[p.name for p in program.params].index):
        values = _compared_constants(funcs, entry, name, constants, set())
        if values:
            out[name] = (values[0], f"compared with {', '.join(map(str, dict.fromkeys(values)))} only")
    return out


def _callee(call) -> str | None:
    """The function a call runs: ``f(...)``, or the kernel of a launch ``__xp_launch(k, ...)(...)``."""
    from pycparser import c_ast

    from passes import canon

    inner = call.name
    if isinstance(inner, c_ast.FuncCall) and canon.call_name(inner) == "__xp_launch" and inner.args \
            and isinstance(inner.args.exprs[0], c_ast.ID):
        return inner.args.exprs[0].name
    return canon.call_name(call)


def _compared_constants(funcs: dict, fdef, name: str, constants: dict, seen: set) -> list[int] | None:
    """The integer constants a parameter ``name`` of ``fdef`` is compared with (``==``, ``!=``, a
    ``switch``), following it into the functions and kernels it is passed to, when that is all
    it is used for (a mode flag such as roi_align's ``pool_mode == 0`` / ``== 1`` in its kernel);
    None as soon as it is used any other way (a size, an index, arithmetic, written)."""
    from pycparser import c_ast

    from passes import canon

    if fdef.decl.name in seen:
        return None
    seen = seen | {fdef.decl.name}
    values: list[int] = []
    uses = 0

    def visit(node, parent) -> bool:
        nonlocal uses
        if isinstance(node, c_ast.ID) and node.name == name:
            uses += 1
            return use(node, parent)
        if isinstance(node, c_ast.Decl) and node.name == name:
            return False                            # shadowed: too subtle to follow
        return all(visit(c, node) for _, c in node.children())

    def use(node, parent) -> bool:
        if isinstance(parent, c_ast.BinaryOp) and parent.op in ("==", "!="):
            other = parent.right if parent.left is node else parent.left
            v = _int_constant(other, constants)
            if v is not None:
                values.append(v)
                return True
            return False
        if isinstance(parent, c_ast.Switch) and parent.cond is node:
            labels = [_int_constant(c.expr, constants) for c in canon.walk(parent.stmt) if isinstance(c, c_ast.Case)]
            values.extend(v for v in labels if v is not None)
            return bool(labels) and None not in labels
        if isinstance(parent, c_ast.ExprList):
            call = call_of.get(id(parent))
            target = funcs.get(_callee(call)) if call is not None else None
            params = target.decl.type.args.params if target is not None and target.decl.type.args else []
            index = next(i for i, e in enumerate(parent.exprs) if e is node)
            if index >= len(params) or not isinstance(params[index], c_ast.Decl):
                return False
            inner = _compared_constants(funcs, target, params[index].name, constants, seen)
            if not inner:
                return False
            values.extend(inner)
            return True
        return False

    call_of = {id(n.args): n for n in canon.walk(fdef.body) if isinstance(n, c_ast.FuncCall) and n.args is not None}
    if not visit(fdef.body, fdef) or not uses:
        return None
    return values


def _int_constant(e, constants: dict) -> int | None:
    from pycparser import c_ast

    if isinstance(e, c_ast.Constant) and e.type in ("int", "long", "unsigned int", "unsigned long"):
        try:
            return int(e.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
    if isinstance(e, c_ast.ID):
        return constants.get(e.name)
    if isinstance(e, c_ast.UnaryOp) and e.op == "-":
        v = _int_constant(e.expr, constants)
        return -v if v is not None else None
    return None


def analysed_extents(program) -> tuple[dict, str]:
    """Pointer -> extent (int, C text or None) from ``passes.analysis.affine.extents`` of the program
    lifted to canonical C; ({}, why) when the analysis is not possible."""
    try:
        from passes.analysis import affine
        from passes.base import REGISTRY, PassRefused, run_pass
        from passes.plans import analysis_lift, load_passes

        load_passes()
        lifted = program
        for name, options in analysis_lift(program.platform):   # passes/plans.toml [analysis]
            if name not in REGISTRY:     # a clean-up pass this checkout does not have
                continue
            try:
                lifted = run_pass(name, lifted, **options)
            except PassRefused:
                continue
        if lifted.platform != "vnni":
            return {}, f"the {program.platform} source could not be lifted to canonical C for analysis"
        ext = affine.extents(affine.analyze(lifted))
        ext = _in_elements(ext, program, lifted)
    except Exception as exc:  # analysis is best effort; the guarded run decides
        return {}, f"access analysis failed: {type(exc).__name__}: {exc}"
    names = {p.name for p in program.params if p.kind == "pointer"}
    ext = {k: v for k, v in ext.items() if k in names}
    # a pointer the lifted program never touches (extent 0) may be an artefact of the lift
    # (e.g. code it could not see through); treat it as unknown
    ext = {k: (None if v == 0 else v) for k, v in ext.items()}
    known = sorted(k for k, v in ext.items() if v is not None)
    return ext, (f"access extents: {', '.join(f'{k}={ext[k]}' for k in known)}" if known
                 else "access analysis established no extent")


def _in_elements(ext: dict, program, lifted) -> dict:
    """Extents counted in the lifted parameter's pointee type (``__half2``, ``float4``) as
    counts of the parameter's array elements (its dtype: ``float16``, ``float32``): a pointer
    to a vector type is passed as an array of its lanes."""
    import numpy as np

    from passes.analysis.affine.ir import bytes_of_words, type_names_text

    from .run import numpy_dtype

    types = {p.name: p.type for p in lifted.params if p.kind == "pointer"}
    out = dict(ext)
    for p in program.params:
        v = ext.get(p.name)
        if p.kind != "pointer" or v is None or p.name not in types:
            continue
        try:
            item = np.dtype(numpy_dtype(p.dtype)).itemsize
        except TypeError:
            continue
        pointee = bytes_of_words(type_names_text(types[p.name]))
        if pointee and pointee > item and pointee % item == 0:
            k = pointee // item
            out[p.name] = v * k if isinstance(v, int) else f"({v}) * {k}"
    return out


def size_rules(program) -> tuple[list[SizeRule], str]:
    ext, note = analysed_extents(program)
    rules = []
    for p in program.params:
        if p.kind != "pointer":
            continue
        host = getattr(p, "size", None) or None
        extent = ext.get(p.name)
        rules.append(SizeRule(p.name, host, extent, fallback=host is None and extent is None))
    return rules, note


def _evaluate(program, expr, scalars: dict) -> int | None:
    from .verify import evaluate_size

    if isinstance(expr, int):
        return expr
    return evaluate_size(program, expr, scalars)


def candidate_sizes(program, rules, scalars: dict, value: int) -> tuple[dict | None, str]:
    """(element count per pointer, static-check note) at these scalar values, or (None, why)
    when a host allocation cannot be evaluated or a guess grows too large. ``value`` is the
    candidate; without integer scalars the fallback guess is ``256 * value`` elements.

    The note names the pointers whose accesses the analysis proves inside the host allocation
    (analysed extent <= allocation) and those it cannot (the extent is an upper bound, so a
    larger one is no proof of an overrun: the guarded run decides)."""
    ints = [v for p in program.params if _int_scalar(p) for v in [scalars[p.name]]]
    guess = 1
    for v in ints:
        guess *= max(int(v), 1)
    if not ints:
        guess = 256 * value
    sizes, proved, unproved = {}, [], []
    for r in rules:
        host = _evaluate(program, r.host, scalars) if r.host else None
        extent = _evaluate(program, r.extent, scalars) if r.extent is not None else None
        if r.host and host is None and _reads_memory(r.host):
            # a size the host code reads from the data (``offsets[B]`` indices of a CSR
            # input): guessed like an unknown one, the guarded run of the source decides
            unproved.append(f"{r.pointer} (host size {r.host} read from the data)")
        elif r.host and host is None:
            return None, f"host allocation of {r.pointer} ({r.host}) cannot be evaluated"
        if host is not None:
            if extent is not None:
                (proved if extent <= host else unproved).append(
                    r.pointer if extent <= host else f"{r.pointer} (extent {extent} > {host})")
            sizes[r.pointer] = host
        elif extent is not None:
            sizes[r.pointer] = extent
        else:
            sizes[r.pointer] = guess
        if sizes[r.pointer] > MAX_ELEMENTS:
            return None, f"{r.pointer} would need {sizes[r.pointer]} elements"
    notes = []
    if proved:
        notes.append(f"in bounds by analysis: {', '.join(proved)}")
    if unproved:
        notes.append(f"not proved by analysis: {', '.join(unproved)}")
    return sizes, "; ".join(notes)


def _reads_memory(text: str) -> bool:
    """A C size expression that reads an array element or through a pointer (``offsets[B]``)."""
    import re

    return bool(re.search(r"[\w)\]]\s*\[|(^|[^\w)\]\s])\s*\*\s*[A-Za-z_(]", str(text)))


def infer_inputs(program, path, seed: int = 0, timeout: float = 60, launch=None,
                 candidates=CANDIDATES, fixed: dict | None = None,
                 shrink_budget: float = SHRINK_BUDGET, budget: float | None = None) -> Inference:
    """Find verification inputs for ``program`` (see the module docstring). ``fixed`` holds
    scalar values the user gave (``--arg n=64``); only the other scalars are inferred.
    ``budget``: seconds for the search (None: ``BUDGET``; 0: no limit), counted after the
    source's one-time analysis and build; past it no further candidate is tried and the reason
    says so."""
    import time

    budget = BUDGET if budget is None else budget
    fixed = dict(fixed or {})
    selectors = {n: m for n, m in mode_scalars(program).items() if n not in fixed}
    fixed.update({n: v for n, (v, _why) in selectors.items()})
    import numpy as np

    from .argspec import random_array
    from .ir.errors import KernelRuntimeError, KernelTimeout, OutOfBoundsAccess, XpilerError
    from .run import numpy_dtype, oob_argument, run_kernel

    if program.entry is None:
        return Inference(False, reason="the source has no entry function")
    chosen, block_note = None, ""     # the launch of a kernel entry the inference picks
    if launch is None and _gpu_kernel_entry(program):
        bound = launch_bounds_block(program)
        chosen = default_launch(program, bound)
        if bound:
            block_note = f"block of {bound} threads (the kernel's __launch_bounds__)"
        launch = chosen
    odd = [p for p in program.params if p.kind == "scalar" and not _int_scalar(p) and p.name not in fixed
           and p.dtype not in ("float16", "bfloat16", "float32", "float64", "bool")]
    if odd:
        return Inference(False, reason=f"parameter '{odd[0].name}' ({odd[0].type}) has no inferable value")
    rules, note = size_rules(program)
    try:     # the budget is for the search: the source is analysed and built once before it
        from .run import build_program
        build_program(program, path)
    except XpilerError:
        pass                 # the first guarded run reports it
    deadline = time.monotonic() + budget if budget > 0 else float("inf")
    if selectors:
        note += "; " + ", ".join(f"{n}={v} ({why}: a case the source handles, not a size)"
                                 for n, (v, why) in selectors.items())
    inf = Inference(False, rules=rules, analysis=note)
    has_ints = any(_int_scalar(p) and p.name not in fixed for p in program.params)
    needs_guess = any(r.fallback for r in rules)
    values = candidates if has_ints or needs_guess else candidates[:1]
    if has_ints and tuple(candidates) == CANDIDATES:
        values = tuple(values) + SMALL
    int_inputs = [p.name for p in program.params if p.kind == "pointer" and p.role == "input"
                  and p.dtype in ("int32", "int64", "uint32", "uint64")]
    modes = ("indices", "offsets", "random") if int_inputs else ("random",)
    outs = [p for p in program.params if p.kind == "pointer" and p.role in ("output", "inout")]
    free_ints = [p.name for p in program.params if _int_scalar(p) and p.name not in fixed]

    def scalars_for(assign: dict) -> dict:
        return {p.name: fixed[p.name] if p.name in fixed else
                (int(assign[p.name]) if _int_scalar(p) else (1 if p.dtype == "bool" else FLOAT_VALUE))
                for p in program.params if p.kind == "scalar"}

    def attempt(scalars: dict, v: int, tag: str = ""):
        """One guarded run per argument mode: ("ok" | "degenerate" | "failed" | "timeout" |
        "fatal", (scalars, sizes, inputs) or None); the outcome is recorded in ``inf.tried``."""
        sizes, why = candidate_sizes(program, rules, scalars, v)
        if sizes is None:
            inf.tried.append({"value": v, "outcome": f"rejected{tag}: {why}"})
            return "failed", None
        static = f" ({why})" if why else ""
        guessed = {r.pointer for r in rules if r.fallback}
        degenerate = None            # the first run whose outputs were (mostly) undefined
        for mode in modes:
            label = {"random": "", "indices": f" (integer inputs {', '.join(int_inputs)} as indices in [0, {v}))",
                     "offsets": f" (integer inputs {', '.join(int_inputs)} as sorted offsets in [0, {v}])"}[mode]
            growths = dict.fromkeys(guessed, GROWTHS)      # per guessed pointer
            while True:
                rng = np.random.default_rng(seed)
                args = []
                for p in program.params:
                    if p.kind != "pointer":
                        args.append(scalars[p.name])
                    elif mode == "indices" and p.name in int_inputs:
                        # integer inputs as valid indices: [0, candidate)
                        args.append(rng.integers(0, max(int(v), 1), size=(sizes[p.name],)).astype(numpy_dtype(p.dtype)))
                    elif mode == "offsets" and p.name in int_inputs:
                        # non-decreasing offsets in [0, candidate]: CSR row pointers, segment starts
                        args.append(np.sort(rng.integers(0, max(int(v), 1) + 1, size=(sizes[p.name],)))
                                    .astype(numpy_dtype(p.dtype)))
                    else:
                        args.append(random_array(rng, (sizes[p.name],), numpy_dtype(p.dtype)))
                before = [a.copy() if hasattr(a, "copy") else a for a in args]
                try:
                    result = run_kernel(path, args=args, program=program, timeout=timeout,
                                        launch=launch if program.entry.kind == "kernel" else None)
                    break
                except KernelRuntimeError as exc:
                    where = oob_argument(exc) if isinstance(exc, OutOfBoundsAccess) else None
                    if where and growths.get(where[0]) and sizes[where[0]] < MAX_ELEMENTS:
                        # a guessed size the source reads past: grow it to cover the access (the
                        # footprint cut at the end takes it back to what the source touches)
                        item = next(a.itemsize for p, a in zip(program.params, args) if p.name == where[0])
                        old_size = sizes[where[0]]
                        # to the 64-byte granule the guarded runs tell sizes apart by (reads in
                        # the slack after a device copy's end go unnoticed: a size inside the
                        # granule could hide a read the output, allocated tighter, makes)
                        granule = max(1, 64 // max(1, item))
                        # a read that faults right at the end streams through the buffer (a
                        # whole-row copy): its footprint is likely far larger, grow faster
                        factor = 8 if where[1] == old_size * item else 2
                        grown = max(factor * old_size, where[1] // item + 1)
                        sizes[where[0]] = min(MAX_ELEMENTS, -(-grown // granule) * granule)
                        inf.tried.append({"value": v, "outcome": f"{where[0]}[{old_size}] too small{tag}: "
                                                                f"{exc.message}; guessed size grown to "
                                                                f"{sizes[where[0]]}{label}"})
                        growths[where[0]] -= 1
                        continue
                    inf.tried.append({"value": v, "outcome": f"{type(exc).__name__}{tag}: {exc.message}{label}{static}"})
                    if isinstance(exc, KernelTimeout):   # larger values will not be faster
                        return "timeout", None
                    result = None
                    break
                except XpilerError as exc:   # does not build or the arguments are unusable: no candidate helps
                    inf.tried.append({"value": v, "outcome": f"{type(exc).__name__}{tag}: {exc.message}"})
                    inf.reason = f"the source does not run on the virtual device: {exc.message}"
                    return "fatal", None
            if result is None:
                continue
            empty = [w for w in result.warnings if "empty grid or block" in w]
            if empty:       # nothing ran: whatever the outputs hold says nothing about the kernel
                inf.tried.append({"value": v, "outcome": f"degenerate{tag}: {empty[0]}{label}"})
                return "degenerate", (scalars, sizes, before)
            changed = any(_informative(a, b) for p, a, b in zip(program.params, args, before) if p in outs)
            note = ""
            if changed and outs:
                share, what = _undefined_outputs(program, path, before, args, outs, timeout, launch)
                if share in ("all", "most"):
                    # the next way of drawing the integer inputs may define them (sorted offsets)
                    inf.tried.append({"value": v, "outcome": f"degenerate{tag}: {what}{label}"})
                    degenerate = degenerate or (scalars, sizes, before)
                    continue
                note = f" ({what})" if what else ""
            if changed or not outs:
                inf.tried.append({"value": v, "outcome": f"ok{tag}{label}{static}{note}"})
                return "ok", (scalars, sizes, before)
            inf.tried.append({"value": v, "outcome": f"ran in bounds but left every output unchanged or one repeated "
                                                    f"value (degenerate){tag}{label}"})
            return "degenerate", (scalars, sizes, before)
        return ("degenerate", degenerate) if degenerate is not None else ("failed", None)

    safe, slow, found, spent = None, None, None, False
    for v in values:
        if time.monotonic() > deadline:
            inf.tried.append({"value": v, "outcome": f"skipped: the inference budget of {budget:g} s is spent"})
            spent = True
            break
        if slow is not None and v >= slow:
            inf.tried.append({"value": v, "outcome": f"skipped: value {slow} already timed out"})
            continue
        outcome, result = attempt(scalars_for({n: v for n in free_ints}), v)
        if outcome == "fatal":
            return inf
        if outcome == "timeout":
            slow = v
        if result is not None:
            safe = safe or result
        if outcome == "ok":
            safe, found = result, v
            break
    if found is not None and len(free_ints) > 1:
        # Equal sizes hide transposed or swapped dimensions (a square gemm verifies a kernel
        # that mixes up M and N): prefer distinct values when the source runs on them too.
        for pattern in ("doubling", "alternating"):
            if time.monotonic() > deadline:
                break
            assign = {n: found * (2 ** i if pattern == "doubling" else 1 + i % 2) for i, n in enumerate(free_ints)}
            outcome, result = attempt(scalars_for(assign), found, f" [distinct values, {pattern}]")
            if outcome == "fatal":   # cannot happen after a successful run; keep the uniform one
                inf.reason = ""
                break
            if outcome == "ok":
                safe = result
                break
    if safe is None and chosen is not None and not block_note and not spent and \
            any("__shared__" in t["outcome"] for t in inf.tried):
        # the default block overflows a shared array the kernel sizes for fewer threads (a
        # fixed tile `__shared__ float s[BS + 2]` indexed by threadIdx.x): smaller blocks
        for threads in SMALLER_BLOCKS:
            if threads >= chosen["block"][0] or time.monotonic() > deadline:
                continue
            smaller = default_launch(program, threads)
            sub = infer_inputs(program, path, seed=seed, timeout=timeout, launch=smaller,
                               candidates=candidates, fixed=fixed, shrink_budget=shrink_budget,
                               budget=max(0.01, deadline - time.monotonic())
                               if budget > 0 else 0)
            if sub.ok:
                sub.launch = smaller
                sub.analysis += (f"; block of {threads} threads (the default block of "
                                 f"{chosen['block'][0]} overflowed a __shared__ array)")
                sub.tried = inf.tried + sub.tried
                if outs and time.monotonic() < deadline:
                    grown_launch, grown = _grow_grid(program, path, sub.args, outs, timeout,
                                                     deadline, smaller)
                    if grown_launch is not None:
                        sub.launch = grown_launch
                        sub.analysis += "; " + grown
                return sub
    if safe is None:
        last = inf.tried[-1]["outcome"] if inf.tried else "no candidate values"
        extra = " (pointer sizes unknown to the analysis: " + ", ".join(r.pointer for r in rules if r.fallback) + ")" \
            if any(r.fallback for r in rules) else ""
        inf.reason = (f"no candidate scalar values {list(values)} keep every access inside the "
                      f"allocations{extra}; last attempt: {last}")
        if spent:
            inf.reason = (f"the inference budget of {budget:g} s (--infer-budget) was spent before any "
                          f"candidate worked; {inf.reason}")
        return inf
    scalars, sizes, args = safe
    if chosen is not None:
        if block_note:
            inf.launch = chosen
            inf.analysis += "; " + block_note
        if outs and time.monotonic() < deadline:
            grown_launch, grown = _grow_grid(program, path, args, outs, timeout, deadline,
                                             chosen)
            if grown_launch is not None:
                launch = inf.launch = grown_launch
                inf.analysis += "; " + grown
    if needs_guess:
        shrunk = _shrink_to_footprint(program, path, [r.pointer for r in rules if r.fallback],
                                      sizes, args, timeout, launch,
                                      max(0.0, min(shrink_budget, deadline - time.monotonic())))
        inf.analysis += ("; sizes of " + ", ".join(r.pointer for r in rules if r.fallback)
                         + " guessed and confirmed by the guarded run")
        if shrunk:
            inf.analysis += ("; shrunk to the source's footprint (the smallest sizes its guarded runs "
                             "stay inside): " + ", ".join(f"{n}[{sizes[n]}]" for n in shrunk))
    inf.ok, inf.scalars, inf.sizes, inf.args = True, scalars, sizes, args
    return inf


def _gpu_kernel_entry(program) -> bool:
    return program.entry.kind == "kernel" and program.platform in ("cuda", "hip")


SMALLER_BLOCKS = (128, 64, 32)           # blocks tried when the default one overflows __shared__


def launch_bounds_block(program) -> int | None:
    """Threads per block a CUDA/HIP kernel entry declares with ``__launch_bounds__(N, ...)``
    (N a literal or a constant of the file), else None."""
    import re

    from pycparser import c_ast

    from .verify import evaluate_size

    fdef = next((e for e in (program.ast.ext if program.ast is not None else [])
                 if isinstance(e, c_ast.FuncDef) and e.decl.name == program.entry.name), None)
    for spec in (fdef.decl.funcspec or []) if fdef is not None else []:
        m = re.match(r"__launch_bounds__\s*\(\s*([^,)]+)", spec)
        if m:
            n = evaluate_size(program, m.group(1), {})
            if n and 1 <= n <= 1024:
                return n
    return None


def default_launch(program, threads: int | None = None) -> dict:
    """The profile's default launch of a kernel entry, with ``threads`` per block if given."""
    import platforms

    prof = platforms.profile(program.platform)
    grid = [int(x) for x in (prof.get("default_grid") or [1, 1, 1])]
    block = [int(x) for x in (prof.get("default_block") or [256, 1, 1])]
    if threads:
        block = [threads, 1, 1]
    return {"grid": grid, "block": block}


def _grow_grid(program, path, args, outs, timeout, deadline, start) -> tuple[dict | None, str]:
    """(launch, what was done) of a kernel entry whose one-block grid ``start`` covers only
    part of the outputs: the grid's x dimension doubled while a run of the source on ``args``
    writes more output elements; (None, "") when the start already writes as many."""
    import time

    import numpy as np

    from .ir.errors import XpilerError
    from .run import run_kernel

    grid, block = list(start["grid"]), list(start["block"])

    def written(launch) -> int | None:
        run = [a.copy() if hasattr(a, "copy") else a for a in args]
        try:
            run_kernel(path, args=run, program=program, timeout=timeout, launch=launch)
        except XpilerError:
            return None
        return sum(int(np.count_nonzero(a != b)) for p, a, b in zip(program.params, run, args)
                   if p in outs)

    first = written({"grid": grid, "block": block})
    best, count = None, first
    blocks = grid[0]
    while first is not None and blocks * 2 <= GRID_MAX and time.monotonic() < deadline:
        launch = {"grid": [blocks * 2] + grid[1:], "block": block}
        more = written(launch)
        if more is None or more <= count:
            break
        best, count, blocks = launch, more, blocks * 2
    if best is None:
        return None, ""
    return best, (f"grid grown from {grid[0]} to {blocks} blocks of {block[0]} threads (the source "
                  f"writes {count} output elements, {first} with the default launch)")


SECOND_BUDGET = 10.0                     # seconds for finding the second size (translate --second-size)
SECOND_FACTORS = (0.5, 2.0, 0.25, 4.0)   # the integer scalars scaled together, in this order


def second_size_inputs(program, path, scalars: dict, seed: int = 0, timeout: float = 60, launch=None,
                       budget: float = SECOND_BUDGET, larger_first: bool = False) -> Inference:
    """Inputs at a second size, for re-verifying a translation already verified on inputs
    whose scalars are ``scalars`` (issue 16: a translation must not fit one shape).

    Every integer scalar is scaled by the same factor, so the relations between them (a stride
    equal to a width, a square matrix) hold at the second size too. The factors are tried in
    ``SECOND_FACTORS`` order (half first: sizes the user gave may be at the limits of a kernel
    written for one shape, its fixed on-chip capacities, tile counts and launch limits), or
    with ``larger_first`` (first inputs that were inferred: the smallest that worked) the
    factors above 1 first. The pointer sizes and the checks are
    ``infer_inputs``'s (guarded runs of the source, degenerate values passed over, guessed sizes
    cut to the footprint), with another seed so the data differ too. Not ``ok`` when the entry
    has no integer scalar (its sizes are fixed: one size is all there is) or when no scaled
    size keeps the source in bounds and its outputs written."""
    import time

    selectors = mode_scalars(program)      # a case selector keeps its value
    ints = [p.name for p in program.params if _int_scalar(p) and p.name in scalars and p.name not in selectors]
    if not ints:
        return Inference(False, reason="the entry has no integer scalar parameters (its sizes are fixed)")
    deadline = time.monotonic() + budget
    tried = []
    last = None
    factors = sorted(SECOND_FACTORS, key=lambda f: (f < 1, abs(f - 1))) if larger_first else SECOND_FACTORS
    for factor in factors:
        scaled = {n: max(1, int(round(int(scalars[n]) * factor))) for n in ints}
        if all(scaled[n] == int(scalars[n]) for n in ints) or time.monotonic() > deadline:
            continue
        fixed = {n: v for n, v in scaled.items()}
        # the candidate value is also the range of integer index inputs ([0, v)): the smallest
        # scaled size, so indices stay inside every dimension they may index (with the largest,
        # a gather over dim=8 got row indices up to 15 and read past its data)
        inf = infer_inputs(program, path, seed=seed + 1, timeout=timeout, launch=launch, fixed=fixed,
                           candidates=(min(scaled.values()),),
                           budget=max(0.0, deadline - time.monotonic()))
        tried += [{"value": f"x{factor:g}", "outcome": t["outcome"]} for t in inf.tried]
        if inf.ok and any(t["outcome"].startswith("ok") for t in inf.tried):
            inf.tried = tried
            return inf            # (a degenerate run, e.g. an empty grid, is no second size)
        last = inf
    reason = (last.reason if last is not None else "no scaled size differs from the first inputs'")
    return Inference(False, reason=f"no second size found (the integer scalars scaled by "
                                   f"{', '.join(f'{f:g}' for f in SECOND_FACTORS)}): {reason}", tried=tried)


def _undefined_outputs(program, path, before, after, outs, timeout, launch) -> tuple[str, str]:
    """The output elements of the run ``before`` -> ``after`` that the source does not define
    (``xpiler.verify.undefined_elements``: they change with another fill of fresh memory or with
    its blocks, threads or tasks in reverse order). ("all" | "most" | "some" | "", what): "most"
    when more than half of the elements of the outputs it writes in part are undefined, the share
    at which a translation's verification gives up (a CSR row-pointer array drawn as random
    indices makes the rows overlap: several threads write one element)."""
    from .verify import undefined_elements

    masks = undefined_elements(program, path, before, after, timeout, launch)
    if masks is None:
        return "", ""
    counts = [(int(m.sum()), m.size) for p, m in zip(program.params, masks) if p in outs and m is not None]
    undefined, total = sum(u for u, _ in counts), sum(n for _, n in counts)
    if not undefined:
        return "", ""
    if undefined == total:
        return "all", "every output element depends on uninitialised memory or on the order of its threads"
    partly = [(u, n) for u, n in counts if u < n]
    u_part, n_part = sum(u for u, _ in partly), sum(n for _, n in partly)
    what = f"{undefined} of {total} output elements undefined"
    return ("most" if 2 * u_part > n_part else "some"), what


def _shrink_to_footprint(program, path, pointers, sizes, args, timeout, launch, budget) -> list[str]:
    """Guessed pointer sizes cut down to what the source touches (issue 16: a buffer larger than
    the source's footprint hides a translation that reads past it): per pointer, the smallest
    element count, rounded up to the 64-byte granule of device allocations, at which a
    guarded run of the source still stays in bounds (binary search; a run in bounds at n is in
    bounds at any larger n). ``sizes`` and ``args`` are updated in place; returns the pointers
    made smaller. Stops (keeping what it has) when ``budget`` seconds are spent."""
    import time

    from .ir.errors import KernelRuntimeError, KernelTimeout
    from .run import run_kernel

    t0 = time.monotonic()
    index = {p.name: k for k, p in enumerate(program.params)}
    done = []

    def runs(name: str, n: int) -> bool:
        trial = [a.copy() if hasattr(a, "copy") else a for a in args]
        trial[index[name]] = trial[index[name]][:n].copy()
        try:
            run_kernel(path, args=trial, program=program, timeout=timeout,
                       launch=launch if program.entry.kind == "kernel" else None)
        except KernelTimeout:
            raise
        except KernelRuntimeError:
            return False
        return True

    for name in pointers:
        if name not in index or not hasattr(args[index[name]], "itemsize"):
            continue
        size = int(sizes[name])
        # device copies of a kernel entry's arguments are 64-byte aligned: reads in the slack
        # before the guard page go unnoticed, so sizes are only told apart to 64 bytes
        granule = max(1, 64 // max(1, args[index[name]].itemsize))
        lo, hi = 0, size                  # runs(hi) holds (the confirmed size); find the least
        try:
            while hi - lo > granule and time.monotonic() - t0 < budget:
                mid = (lo + hi) // 2
                if mid > 0 and runs(name, mid):
                    hi = mid
                else:
                    lo = mid
        except KernelTimeout:
            break
        best = min(size, -(-hi // granule) * granule)    # >= hi, so in bounds too
        if best < size:
            args[index[name]] = args[index[name]][:best].copy()
            sizes[name] = best
            done.append(name)
        if time.monotonic() - t0 >= budget:
            break
    return done

