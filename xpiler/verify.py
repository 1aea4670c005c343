"""Differential checking: run two kernels on the same seeded random inputs and compare.

``check(a, b, arg_specs, seed)`` is the engine of ``xpiler check`` and of every pass
verification: both sides receive identical copies of every argument; afterwards every pointer
argument is compared (inputs must stay unchanged on both sides too, so a kernel that scribbles
over an input is caught). Tolerances per dtype come from ``tolerance()`` (documented in README):
``|a - b| <= atol + rtol * |b|`` element-wise, NaN only matching NaN.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .ir.errors import UsageError

def tolerance(dtype: str) -> tuple[float, float]:
    """(rtol, atol) for comparing two kernels' ``dtype`` outputs.

    The classes live in one place, ``xpiler/ops/tolerances.toml`` (shared with the operator
    references); integer dtypes compare exactly. A differential check has no reduction length
    to scale by, so the unscaled class values apply.
    """
    from .ops.check import tolerance_table

    cls = tolerance_table().get(dtype)
    if cls is None:
        return (0.0, 0.0)
    return float(cls["rtol"]), float(cls["atol"])


@dataclass
class Comparison:
    name: str
    dtype: str
    role: str
    max_abs: float
    max_rel: float
    mismatches: int
    size: int
    rtol: float
    atol: float
    undefined: int = 0        # elements the reference leaves undefined, not compared

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    def to_json(self) -> dict:
        return {"name": self.name, "dtype": self.dtype, "role": self.role, "max_abs_err": self.max_abs,
                "max_rel_err": self.max_rel, "mismatches": self.mismatches, "size": self.size,
                "rtol": self.rtol, "atol": self.atol, "ok": self.ok, "undefined": self.undefined}


@dataclass
class CheckReport:
    a: str
    b: str
    seed: int
    comparisons: list[Comparison] = field(default_factory=list)
    runs: list[Any] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.comparisons)

    def to_json(self) -> dict:
        return {"a": self.a, "b": self.b, "seed": self.seed, "ok": self.ok,
                "outputs": [c.to_json() for c in self.comparisons],
                "runs": [r.to_json() for r in self.runs]}


FRESH_FILL = 0x3F    # fresh memory of a second run: 0.747 as float, 1.8 as half (not a tiny value that
                     # vanishes in a sum), 0x3F3F3F3F as int32; the first run has zeros


def differing_elements(a, b):
    """Elements of two results of one argument that differ bit for bit (None for a scalar):
    two runs of a program whose fresh memory held different bytes differ exactly where the
    result depends on uninitialised memory."""
    import numpy as np

    if not isinstance(a, np.ndarray):
        return None
    x, y = np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1)
    width = max(1, x.dtype.itemsize)
    return (x.view(np.uint8).reshape(-1, width) != y.view(np.uint8).reshape(-1, width)).any(axis=1)


def compare_arrays(name: str, got, want, dtype: str, role: str = "output",
                   tol: tuple[float, float] | None = None, undefined=None) -> Comparison:
    """``undefined``: a boolean mask (the shape of ``want``) of the elements whose reference value
    is not defined (it depends on uninitialised memory): they are not compared, only counted."""
    import numpy as np

    rtol, atol = tol or tolerance(dtype)
    g = np.asarray(got).astype(np.float64).reshape(-1)
    w = np.asarray(want).astype(np.float64).reshape(-1)
    if g.shape != w.shape:
        return Comparison(name, dtype, role, float("inf"), float("inf"), max(g.size, w.size), w.size, rtol, atol)
    skipped = 0
    if undefined is not None:
        keep = ~np.asarray(undefined, dtype=bool).reshape(-1)
        skipped = int(w.size - keep.sum())
        g, w = g[keep], w[keep]
    nan_g, nan_w = np.isnan(g), np.isnan(w)
    both_finite = ~(nan_g | nan_w)
    with np.errstate(divide="ignore", invalid="ignore"):       # inf - inf where both are inf
        diff = np.where(both_finite, np.abs(g - w), 0.0)
        rel = np.where(both_finite & (w != 0), diff / np.abs(w), 0.0)
    same_inf = np.isinf(g) & np.isinf(w) & (np.sign(g) == np.sign(w))
    bad = (nan_g != nan_w) | (both_finite & ~same_inf & (diff > atol + rtol * np.abs(w)))
    max_abs = float(np.max(np.where(same_inf, 0.0, diff), initial=0.0))
    max_rel = float(np.max(np.where(same_inf, 0.0, rel), initial=0.0))
    return Comparison(name, dtype, role, max_abs, max_rel, int(bad.sum()), int(w.size) + skipped, rtol, atol,
                      skipped)


def make_args(program, specs: dict, seed: int) -> list:
    """Build one value per entry parameter from ``specs`` (name -> ArgSpec), seeded.

    A pointer without a spec gets ``random`` data of the element count the front-end found for
    it (``Param.size``, a C expression over the entry's scalars), evaluated with the scalar
    values given; scalars always need a value.
    """
    import numpy as np

    from .argspec import materialise, random_array
    from .run import numpy_dtype

    rng = np.random.default_rng(seed)
    names = {p.name for p in program.params}
    unknown = sorted(set(specs) - names)
    if unknown:
        raise UsageError(f"--arg {', '.join(unknown)}: {program.entry.name} has no such parameter "
                         f"(parameters: {', '.join(p.name for p in program.params)})")
    scalars = {p.name: materialise(specs[p.name], p, rng) for p in program.params
               if p.kind == "scalar" and p.name in specs}
    values = []
    for p in program.params:
        spec = specs.get(p.name)
        if spec is not None:
            values.append(scalars[p.name] if p.kind == "scalar" else materialise(spec, p, rng))
            continue
        count = element_count(program, p, scalars) if p.kind == "pointer" else None
        if count is None:
            what = "random:SHAPE" if p.kind == "pointer" else "a number"
            why = (f" (its size {p.size} could not be evaluated from the scalars given)"
                   if p.kind == "pointer" and getattr(p, "size", None) else "")
            raise UsageError(f"no value for parameter '{p.name}' ({p.type}) of {program.entry.name}{why}; "
                             f"give --arg {p.name}={what}")
        values.append(random_array(rng, (count,), numpy_dtype(p.dtype)))
    return values


def element_count(program, param, scalars: dict) -> int | None:
    """Evaluate ``param.size`` with the file's constants and the given scalar values."""
    return evaluate_size(program, getattr(param, "size", None), scalars)


def evaluate_size(program, size: str | None, scalars: dict) -> int | None:
    """Evaluate a C size expression (``Param.size``, an analysed extent, a launch dimension)
    with the file's constants and the given scalar values; None when it is not computable."""
    if not size:
        return None
    import re

    from platforms.common.consts import ConstantTable
    from .ir.program import DTYPES

    table = ConstantTable(program.facts.get("defines", {}), lambda t: DTYPES.get(t, t),
                          program.facts.get("expression_functions"))
    for name, value in scalars.items():
        if isinstance(value, (int,)) or float(value).is_integer():
            table.values[name] = int(value)
    for name, value in (program.facts.get("constants") or {}).items():
        if isinstance(value, int):
            table.values.setdefault(name, value)
    size = re.sub(r"\(\s*(?:const\s+)?(?:unsigned|signed|int|long|size_t|u?int(?:32|64)_t)"
                  r"(?:\s+(?:int|long))*\s*\)", "", str(size))     # integer casts
    count = table.evaluate(size)
    return count if isinstance(count, int) and count >= 0 else None


def signature_mismatch(pa, pb) -> str | None:
    if len(pa) != len(pb):
        return f"parameter counts differ ({len(pa)} vs {len(pb)})"
    for x, y in zip(pa, pb):
        if x.kind != y.kind:
            return f"parameter '{x.name}' is a {x.kind} in one file and a {y.kind} in the other"
        if x.kind == "pointer" and x.dtype != y.dtype and "void" not in (x.dtype, y.dtype):
            return f"parameter '{x.name}' points to {x.dtype} in one file and {y.dtype} in the other"
    return None


def check(a: str, b: str, specs: dict, seed: int = 0, *, timeout: float = 60, strict_b: bool = False,
          launch_a: dict | None = None, launch_b: dict | None = None, entry_a: str | None = None,
          entry_b: str | None = None, platform_a: str | None = None, platform_b: str | None = None,
          tolerances: dict | None = None) -> CheckReport:
    from .parse import parse_file
    from .run import run_kernel

    pa = parse_file(a, platform_a, entry=entry_a)
    pb = parse_file(b, platform_b, entry=entry_b)
    if pa.entry is None or pb.entry is None:
        raise UsageError("both files need an entry function")
    why = signature_mismatch(pa.params, pb.params)
    if why:
        raise UsageError(f"{a} and {b} do not have the same entry signature: {why}")
    args_a = make_args(pa, specs, seed)
    args_b = [x.copy() if hasattr(x, "copy") else x for x in args_a]
    report = CheckReport(a, b, seed)
    report.runs.append(run_kernel(a, args=args_a, program=pa, timeout=timeout, launch=launch_a))
    report.runs.append(run_kernel(b, args=args_b, program=pb, timeout=timeout, launch=launch_b,
                                  strict=strict_b))
    for p, x, y in zip(pa.params, args_a, args_b):
        if p.kind == "pointer":
            tol = (tolerances or {}).get(p.name)
            report.comparisons.append(compare_arrays(p.name, y, x, p.dtype, p.role, tol))
    return report


def undefined_elements(program, src_path, args, reference, timeout, launch):
    """Per argument, the elements of the source's result (``reference``, from ``args``) that
    the source does not define: they change when it runs again with fresh memory holding
    another byte (uninitialised memory), or with its CUDA/HIP blocks and threads or BANG tasks in
    reverse order (several of them write the element, or threads race on shared memory: its
    value depends on an order the platform does not fix; a VNNI program runs as written, and
    the rerun changes nothing). None when those runs fail."""
    from .ir.errors import XpilerError
    from .run import run_kernel

    reruns = [{"fresh_fill": FRESH_FILL}, {"reverse_blocks": True}]
    masks = None
    for extra in reruns:
        try:
            other = [a.copy() if hasattr(a, "copy") else a for a in args]
            run_kernel(src_path, args=other, program=program, timeout=timeout, launch=launch, **extra)
        except XpilerError:
            return None
        got = [differing_elements(a, b) for a, b in zip(reference, other)]
        masks = got if masks is None else [m if g is None else (g if m is None else (m | g))
                                           for m, g in zip(masks, got)]
    return masks
