"""Shared helpers of the CUDA and HIP corpus generators (tools/gen_corpus_cuda.py, gen_corpus_hip.py).

A generator is a table of *entries*: one kernel file plus its case file (``<name>.json``, the
``xpiler.ops`` case schema: op, name, args, attributes, params in entry order). Generation is
deterministic (no clocks, no randomness, sorted output); ``--check`` compares the files on disk
with what would be written and exits 1 on any difference (CI uses it to catch hand edits).

Every case is checked with ``xpiler.ops.validate_case`` and written as ``xpiler.ops.dump_case``
text. Keys besides op, name, args and the operator's attributes:

``platform``, ``file``  dialect id and the kernel's file name
``entry``   the function ``xpiler.run_kernel`` should call (host wrapper or kernel)
``launch``  only for kernel-only files: ``{"grid": [x,y,z], "block": [x,y,z], "shmem": n}``
``params``  ``[{name, dtype, role, shape, tensor}]`` for pointers (``tensor`` = the operator's
            logical tensor), ``{name, dtype, role: "scalar", value}`` for scalars
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any, Callable, Iterable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
CORPUS = ROOT / "xpiler" / "corpus"

# every operator of OPS.md (the generators must cover all of them)
OPERATORS = (
    "add", "sub", "sign", "sin", "relu", "gelu", "sigmoid",
    "sum", "mean", "max", "min",
    "gemm", "gemv", "bmm", "dense",
    "conv1d", "conv2d", "conv2dnchw", "depthwiseconv",
    "batchnorm", "layernorm", "rmsnorm", "instancenorm",
    "softmax",
    "maxpool", "avgpool", "minpool", "sumpool",
    "gather", "scatter", "concat", "transpose",
    "mha", "gqa", "gatemlp", "deformable",
)


# ----------------------------------------------------------------------------- small helpers
def flit(v: float) -> str:
    """A float literal the way TVM prints it: ``1.000000e+00f``."""
    return f"{float(v):.6e}f"


def fill(template: str, **kw: Any) -> str:
    """``$name`` / ``${name}`` substitution (C braces stay untouched); every key must exist."""
    return Template(template).substitute(**{k: str(v) for k, v in kw.items()})


def prod(xs: Iterable[int]) -> int:
    out = 1
    for x in xs:
        out *= int(x)
    return out


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def ptr(name: str, dtype: str, role: str, shape, tensor: str | None = None, **extra) -> dict:
    """A pointer parameter of a case."""
    d = {"name": name, "dtype": dtype, "role": role, "shape": [int(s) for s in shape]}
    if tensor is not None:
        d["tensor"] = tensor
    d.update(extra)
    return d


def scalar(name: str, value, dtype: str = "int32") -> dict:
    return {"name": name, "dtype": dtype, "role": "scalar", "value": value}


# ----------------------------------------------------------------------------- host wrappers
_API = {
    "cuda": {"malloc": "cudaMalloc", "memcpy": "cudaMemcpy", "free": "cudaFree",
             "h2d": "cudaMemcpyHostToDevice", "d2h": "cudaMemcpyDeviceToHost",
             "sync": "cudaDeviceSynchronize"},
    "hip": {"malloc": "hipMalloc", "memcpy": "hipMemcpy", "free": "hipFree",
            "h2d": "hipMemcpyHostToDevice", "d2h": "hipMemcpyDeviceToHost",
            "sync": "hipDeviceSynchronize"},
}


@dataclass
class Buf:
    """One host pointer of a wrapper: ``count`` is a C expression (elements)."""

    name: str
    ctype: str
    count: str
    role: str = "input"          # input | output | temp (device only)


def host_wrapper(api: str, fname: str, bufs: list[Buf], scalars: list[tuple[str, str]],
                 launch: str, *, prefix: str = "d_", cast: bool = False, sync: bool = False,
                 comment: str | None = None) -> str:
    """``extern "C" void fname(<host pointers>, <scalars>)``: allocate, copy in, launch, copy out.

    ``launch`` is the C text (one or more statements, already indented by two spaces) using the
    device pointers ``<prefix><name>``; temp buffers are device-only scratch arrays.
    """
    A = _API[api]
    sig = [f"{b.ctype}* {b.name}" for b in bufs if b.role != "temp"]
    sig += [f"{t} {n}" for n, t in scalars]
    lines = []
    if comment:
        lines.append(f"// {comment}")
    lines.append(f'extern "C" void {fname}({", ".join(sig)}) {{')
    for b in bufs:
        lines.append(f"  {b.ctype}* {prefix}{b.name};")
    for b in bufs:
        target = f"(void**)&{prefix}{b.name}" if cast else f"&{prefix}{b.name}"
        lines.append(f"  {A['malloc']}({target}, {_paren(b.count)} * sizeof({b.ctype}));")
    for b in bufs:
        if b.role == "input":
            lines.append(f"  {A['memcpy']}({prefix}{b.name}, {b.name}, {_paren(b.count)} * sizeof({b.ctype}), "
                         f"{A['h2d']});")
    lines.append(launch.rstrip("\n"))
    if sync:
        lines.append(f"  {A['sync']}();")
    for b in bufs:
        if b.role == "output":
            lines.append(f"  {A['memcpy']}({b.name}, {prefix}{b.name}, {_paren(b.count)} * sizeof({b.ctype}), "
                         f"{A['d2h']});")
    for b in bufs:
        lines.append(f"  {A['free']}({prefix}{b.name});")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- entries
@dataclass
class Entry:
    """One corpus kernel: file ``<name><suffix>`` and its case ``<name>.json``."""

    op: str
    name: str
    args: list[int]
    source: str
    entry: str
    params: list[dict]
    attrs: dict = field(default_factory=dict)
    launch: dict | None = None

    def case(self, platform: str, suffix: str) -> dict:
        c: dict[str, Any] = {"op": self.op, "name": self.name, "platform": platform,
                             "file": self.name + suffix, "entry": self.entry, "args": list(self.args)}
        c.update(self.attrs)
        if self.launch is not None:
            c["launch"] = self.launch
        c["params"] = self.params
        return c


def _paren(expr: str) -> str:
    return expr if expr.replace("_", "").isalnum() else f"({expr})"


def render(entries: list[Entry], platform: str, suffix: str) -> dict[str, str]:
    """File name -> text for every entry (kernel + case, canonical ``xpiler.ops`` case text)."""
    from xpiler.ops import dump_case, validate_case

    files: dict[str, str] = {}
    for e in entries:
        src = e.source if e.source.endswith("\n") else e.source + "\n"
        if f"{e.name}{suffix}" in files:
            raise SystemExit(f"duplicate corpus entry {e.name}")
        files[f"{e.name}{suffix}"] = src
        case = e.case(platform, suffix)
        validate_case(case)
        files[f"{e.name}.json"] = dump_case(case)
    return files


def validate(entries: list[Entry]) -> None:
    """Cheap self-checks: every operator covered twice, names follow OPS.md, params sane."""
    seen: dict[str, int] = {}
    for e in entries:
        seen[e.op] = seen.get(e.op, 0) + 1
        want = e.op + "_" + "_".join(str(a) for a in e.args)
        if e.name != want:
            raise SystemExit(f"{e.name}: name does not match op/args ({want})")
        for p in e.params:
            if p["role"] == "scalar" and "value" not in p:
                raise SystemExit(f"{e.name}: scalar {p['name']} has no value")
            if p["role"] != "scalar" and "shape" not in p:
                raise SystemExit(f"{e.name}: pointer {p['name']} has no shape")
    missing = [op for op in OPERATORS if seen.get(op, 0) < 2]
    if missing:
        raise SystemExit(f"operators with fewer than 2 corpus files: {', '.join(missing)}")


def main(dialect: str, suffix: str, build: Callable[[], list[Entry]], argv=None) -> int:
    ap = argparse.ArgumentParser(description=f"Write the {dialect} corpus into xpiler/corpus/{dialect}/")
    ap.add_argument("--check", action="store_true", help="only compare with the files on disk")
    ap.add_argument("--out", type=Path, default=CORPUS / dialect, help="output folder")
    ap.add_argument("--list", action="store_true", help="print the entry names and exit")
    ns = ap.parse_args(argv)
    entries = build()
    validate(entries)
    if ns.list:
        for e in entries:
            print(e.name)
        return 0
    files = render(entries, dialect, suffix)
    out: Path = ns.out
    existing = {p.name for p in out.glob("*") if p.suffix in (suffix, ".json")} if out.exists() else set()
    stale = sorted(existing - set(files))
    changed = sorted(n for n, t in files.items()
                     if not (out / n).exists() or (out / n).read_text() != t)
    if ns.check:
        for n in changed:
            print(f"out of date: {out / n}")
        for n in stale:
            print(f"not generated: {out / n}")
        return 1 if changed or stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for n in stale:
        (out / n).unlink()
    for n in changed:
        (out / n).write_text(files[n])
    print(f"{dialect}: {len(entries)} kernels ({len(changed)} files written, {len(stale)} removed) "
          f"in {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit("run tools/gen_corpus_cuda.py or tools/gen_corpus_hip.py")
