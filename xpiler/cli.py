"""The ``xpiler`` command line: a thin layer over the library.

``main()`` runs the click group and maps every ``XpilerError`` to its exit code with a one-line
(or diagnostic-list) message on stderr, never a traceback (``XPILER_DEBUG=1`` shows one).
Heavy modules (numpy, the front-ends, TVM) are imported inside the commands so ``--help``
answers at once.
"""
from __future__ import annotations

import json
import os
import shutil
import sys

import click

from . import __version__
from .ir.errors import UsageError, XpilerError, debug_enabled

PLATFORM_CHOICES = ["cuda", "hip", "bang", "vnni", "mlu", "cpp", "c"]


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _dims(text: str | None):
    if text is None:
        return None
    try:
        vals = tuple(int(x) for x in text.replace("x", ",").split(",") if x.strip())
    except ValueError:
        raise UsageError(f"bad dimensions '{text}' (expected e.g. 64,1,1 or 64x4)") from None
    if not 1 <= len(vals) <= 3:
        raise UsageError(f"bad dimensions '{text}'")
    return vals


def _launch(grid, block, shmem, clusters, cores, ktype):
    launch = {}
    if grid:
        launch["grid"] = _dims(grid)
    if block:
        launch["block"] = _dims(block)
    if shmem:
        launch["shmem"] = shmem
    if clusters:
        launch["clusters"] = clusters
    if cores:
        launch["cores"] = cores
    if ktype:
        launch["type"] = ktype
    return launch or None


def _launch_options(f):
    opts = [
        click.option("--grid", help="Grid for a device-kernel entry, e.g. 64,1,1 (CUDA/HIP)."),
        click.option("--block", help="Block for a device-kernel entry, e.g. 256 (CUDA/HIP)."),
        click.option("--shmem", type=int, default=0, help="Dynamic shared memory bytes (CUDA/HIP)."),
        click.option("--clusters", type=int, help="BANG clusters for a kernel entry."),
        click.option("--cores", type=int, help="BANG cores per cluster for a kernel entry."),
        click.option("--ktype", help="BANG function type: block, union1, union2, union4, ..."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="xpiler")
def cli():
    """xpiler: translate tensor-program kernels between CUDA, HIP, BANG C and AVX-512 VNNI,
    verified on a CPU virtual device."""


# ------------------------------------------------------------------------------ parse
@cli.command()
@click.argument("file", type=click.Path())
@click.option("--platform", "-p", type=click.Choice(PLATFORM_CHOICES), help="Dialect (default: detected).")
@click.option("--entry", help="Entry function when the file has several candidates.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable summary (schema in README).")
@click.option("--arg", "args", multiple=True, metavar="NAME=VALUE",
              help="Scalar values for evaluating launch dimensions in 'resources'. Repeatable.")
def parse(file, platform, entry, as_json, args):
    """Parse FILE and print the program summary.

    Besides the front-end's summary, ``resources`` gives the launch configuration actually used
    (each host launch with grid/block or taskDim/function type, evaluated where the scalars allow;
    a kernel entry's default launch from the device profile), parallel units used vs available,
    on-chip buffer bytes and special instructions (see xpiler/resources.py)."""
    from .parse import parse_file
    from .resources import one_line, resources

    program = parse_file(file, platform, entry=entry)
    summary = program.summary()
    scalars = {}
    for text in args:
        name, value = _pair(text, "--arg")
        try:
            scalars[name] = int(value, 0)
        except ValueError:
            raise UsageError(f"--arg {name}: '{value}' is not an integer") from None
    res = resources(program, scalars)
    if as_json:
        summary["resources"] = res
        click.echo(json.dumps(summary, indent=2))
        return
    _print_summary(summary)
    _console().print(one_line(res), markup=False)


def _print_summary(s: dict) -> None:
    from rich.table import Table

    con = _console()
    entry = s["entry"]
    con.print(f"[bold]{s['file']}[/bold]  platform [cyan]{s['platform']}[/cyan]  entry "
              f"[green]{entry['name'] if entry else '-'}[/green] ({entry['kind'] if entry else 'none'})")
    con.print(f"kernels: {', '.join(s['kernels']) or '-'}   device functions: "
              f"{', '.join(s['device_functions']) or '-'}   host functions: {', '.join(s['host_functions']) or '-'}")
    if s["params"]:
        t = Table(title="entry parameters", show_edge=False)
        for col in ("name", "type", "kind", "dtype", "role"):
            t.add_column(col)
        for p in s["params"]:
            t.add_row(p["name"], p["type"], p["kind"], p["dtype"], p["role"])
        con.print(t)
    for l in s["launch"]:
        if l.get("dim"):
            con.print(f"launch {l['kernel']}<<<dim=({', '.join(l['dim'])}), {l.get('ktype')}>>> from {l['caller']}")
        else:
            extra = f", shmem={l['shmem']}" if l.get("shmem") else ""
            con.print(f"launch {l['kernel']}<<<grid=({', '.join(l['grid'] or ['?'])}), "
                      f"block=({', '.join(l['block'] or ['?'])}){extra}>>> from {l['caller']}")
    for b in s["buffers"]:
        con.print(f"buffer {b['space']:>8} {b['dtype']} {b['name']}[{']['.join(b['shape'])}]"
                  f" = {b['bytes'] if b['bytes'] is not None else '?'} bytes")
    if s["intrinsics"]:
        con.print(f"special instructions: {', '.join(s['intrinsics'])}")
    for d in s["diagnostics"]:
        con.print(f"{d['file']}:{d['line']}:{d['col']}: {d['severity']} {d['code']}: {d['message']}")


# ------------------------------------------------------------------------------ run
@cli.command()
@click.argument("file", type=click.Path())
@click.option("--platform", "-p", type=click.Choice(PLATFORM_CHOICES), help="Dialect (default: detected).")
@click.option("--entry", help="Entry function (default: the extern \"C\" host function, else the kernel).")
@click.option("--arg", "args", multiple=True, metavar="NAME=SPEC",
              help="NAME=VALUE | NAME=@in.npy | NAME=zeros|ones|random|arange:SHAPE[:DTYPE]. Repeatable.")
@click.option("--save", multiple=True, metavar="NAME=out.npy", help="Save an argument after the run.")
@click.option("--print", "print_args", multiple=True, metavar="NAME", help="Print an argument after the run.")
@_launch_options
@click.option("--strict", is_flag=True, help="Enforce the target's rules (alignment, capacities, limits).")
@click.option("--profile", help="Device profile name (default: the platform's profile.toml).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for random:SHAPE arguments.")
@click.option("--timeout", type=float, default=60, show_default=True, help="Seconds before the kernel is stopped.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable result.")
def run(file, platform, entry, args, save, print_args, grid, block, shmem, clusters, cores, ktype,
        strict, profile, seed, timeout, as_json):
    """Run FILE's entry on the virtual device (native for vnni)."""
    import numpy as np

    from .argspec import parse_arg_specs
    from .parse import parse_file
    from .run import run_kernel
    from .verify import make_args

    program = parse_file(file, platform, entry=entry)
    specs = parse_arg_specs(args)
    values = make_args(program, specs, seed)
    saves = dict(_pair(s, "--save") for s in save)
    names = [p.name for p in program.params]
    for n in list(saves) + list(print_args):
        if n not in names:
            raise UsageError(f"no parameter named '{n}' (parameters: {', '.join(names)})")
    result = run_kernel(file, args=values, program=program, timeout=timeout, strict=strict,
                        profile=profile, launch=_launch(grid, block, shmem, clusters, cores, ktype))
    by_name = dict(zip(names, values))
    for n, path in saves.items():
        np.save(path, by_name[n])
    if as_json:
        out = result.to_json()
        out["outputs"] = {p.name: _array_summary(by_name[p.name]) for p in program.params
                          if p.kind == "pointer" and p.role in ("output", "inout")}
        click.echo(json.dumps(out, indent=2))
        return
    con = _console()
    if result.stdout:
        con.print(result.stdout, markup=False)
    for w in result.warnings:
        con.print(f"[yellow]warning:[/yellow] {w}", markup=True)
    con.print(f"ran {result.entry} on the {result.platform} virtual device in {result.time_s * 1e3:.2f} ms"
              f"{' (strict)' if strict else ''}; build {'cached' if result.cached else f'{result.build_s:.1f} s'}")
    for n in print_args:
        con.print(f"{n} = {np.array2string(np.asarray(by_name[n]), threshold=64)}", markup=False)


def _array_summary(a) -> dict:
    import numpy as np

    a = np.asarray(a)
    f = a.astype(np.float64)
    return {"shape": list(a.shape), "dtype": str(a.dtype), "min": float(np.nanmin(f)) if a.size else None,
            "max": float(np.nanmax(f)) if a.size else None, "sum": float(np.nansum(f))}


def _pair(text: str, opt: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name or not value:
        raise UsageError(f"{opt} expects NAME=VALUE, got '{text}'")
    return name.strip(), value.strip()


# ------------------------------------------------------------------------------ check
@cli.command()
@click.argument("a", type=click.Path())
@click.argument("b", type=click.Path())
@click.option("--arg", "args", multiple=True, metavar="NAME=SPEC", help="As for `xpiler run`. Repeatable.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random inputs.")
@click.option("--entry-a", help="Entry of A.")
@click.option("--entry-b", help="Entry of B.")
@click.option("--strict-b", is_flag=True, help="Run B in strict mode (as translations are).")
@click.option("--timeout", type=float, default=60, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report.")
def check(a, b, args, seed, entry_a, entry_b, strict_b, timeout, as_json):
    """Run A and B on the same seeded random inputs and compare every output.

    Exit 0 when all outputs agree within the per-dtype tolerance, 1 otherwise."""
    from .argspec import parse_arg_specs
    from .ir.errors import MismatchError
    from .verify import check as run_check

    report = run_check(a, b, parse_arg_specs(args), seed, timeout=timeout, strict_b=strict_b,
                       entry_a=entry_a, entry_b=entry_b)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        from rich.table import Table

        t = Table(title=f"{a} vs {b} (seed {seed})", show_edge=False)
        for col in ("argument", "role", "dtype", "max abs err", "max rel err", "tolerance (rtol, atol)", "result"):
            t.add_column(col)
        for c in report.comparisons:
            t.add_row(c.name, c.role, c.dtype, f"{c.max_abs:.3g}", f"{c.max_rel:.3g}", f"{c.rtol:g}, {c.atol:g}",
                      "[green]ok[/green]" if c.ok else f"[red]{c.mismatches}/{c.size} differ[/red]")
        _console().print(t)
    if not report.ok:
        raise MismatchError("outputs differ beyond tolerance") if not as_json else SystemExit(1)


# ------------------------------------------------------------------------------ passes
@cli.command(name="passes")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable list.")
def list_passes(as_json):
    """List the passes by stage (with what they require and guarantee) and the translation plans
    composed from passes/plans.toml."""
    from passes.base import REGISTRY
    from passes.plans import PLANS, STAGES, load_passes, stage_of

    load_passes()
    if as_json:
        click.echo(json.dumps({
            "passes": {n: {"stage": stage_of(n), "summary": e.info.summary, "requires": list(e.info.requires),
                           "guarantees": list(e.info.guarantees),
                           "options": {k: {"type": o.type.__name__, "default": o.default, "help": o.help}
                                       for k, o in e.info.options.items()}}
                       for n, e in sorted(REGISTRY.items())},
            "plans": {f"{a}->{b}": p for (a, b), p in sorted(PLANS.items())}}, indent=2))
        return
    con = _console()
    order = {s: i for i, s in enumerate((*STAGES, "schedule"))}
    for name, e in sorted(REGISTRY.items(), key=lambda kv: (order.get(stage_of(kv[0]), 99), kv[0])):
        con.print(f"[dim]{stage_of(name):>9}[/dim]  [bold]{name}[/bold]: {e.info.summary}")
    con.print("")
    for (a, b), p in sorted(PLANS.items()):
        for i, text in enumerate([p] if isinstance(p, str) else p):
            con.print(f"{a} -> {b}{'' if i == 0 else f' (alternative {i + 1})'}: {text}", markup=False)


# ------------------------------------------------------------------------------ translate
@cli.command()
@click.argument("src", type=click.Path())
@click.option("--to", "to", required=True, type=click.Choice(PLATFORM_CHOICES), help="Target platform.")
@click.option("-o", "--output", "out", required=True, type=click.Path(), help="Output file.")
@click.option("--arg", "args", multiple=True, metavar="NAME=SPEC", help="Verification input (as for `xpiler run`).")
@click.option("--config", type=click.Path(),
              help="Verification inputs: an xpiler.ops case file or {\"args\": {NAME: SPEC}} "
                   "(default: SRC's <stem>.json if present).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random inputs.")
@click.option("--entry", help="Entry function when the source has several.")
@click.option("--report", "report_path", type=click.Path(), help="Write the JSON report here.")
@click.option("--explain", is_flag=True, help="Print the pass log.")
@click.option("--allow-unverified", is_flag=True, help="Write OUT even when no inputs allow verification (exit 3).")
@click.option("--infer/--no-infer", "infer", default=True, show_default=True,
              help="Without --arg/--config/case file, infer the smallest scalar values whose accesses stay "
                   "inside the allocations (confirmed by a guarded run of SRC).")
@click.option("--strict/--no-strict", default=True, show_default=True, help="Run the output in strict mode.")
@click.option("--timeout", type=float, default=60, show_default=True, help="Seconds before a kernel run is stopped.")
@click.option("--time-limit", "time_limit", type=float, default=600, show_default=True,
              help="Seconds for the whole translation (front-end, passes, verification); 0: no limit. "
                   "Past it nothing is written and the exit status is 1.")
@click.option("--infer-budget", "infer_budget", type=float, default=20, show_default=True,
              help="Seconds for inferring verification inputs (the guarded runs, after the source's "
                   "one-time analysis and build); 0: no limit. Past it no further candidate is "
                   "tried (exit 3 when none worked).")
@click.option("--second-size/--one-size", "second_size", default=True, show_default=True,
              help="Re-verify the final output at a second input size found like inferred inputs "
                   "(integer scalars moved away from the first inputs'); a difference there fails the "
                   "translation. Skipped (and said) when the entry's sizes are fixed.")
def translate(src, to, out, args, config, seed, entry, report_path, explain, allow_unverified, infer, strict,
              timeout, time_limit, infer_budget, second_size):
    """Translate SRC to another platform; exit 0 only when OUT is verified (1 failed, also past
    --time-limit; 2 bad input; 3 unverified: no inputs could be given or inferred)."""
    from pathlib import Path

    from .argspec import parse_arg_specs
    from .ir.errors import TranslationFailed, Unverified
    from .translate import (TranslationReport, config_paths, check_output_path, same_file,
                            translate as run_translate)

    if infer_budget < 0 or infer_budget != infer_budget:
        raise UsageError(f"--infer-budget {infer_budget:g}: expected seconds >= 0 (0: no limit)")
    if time_limit < 0 or time_limit != time_limit:
        raise UsageError(f"--time-limit {time_limit:g}: expected seconds >= 0 (0: no limit)")
    out_path = Path(out)
    configs = [str(c) for c in config_paths(Path(src), config)]
    protected = [src, *configs]  # never removed, never overwritten
    if report_path:
        for path, what in ((src, "the source"), (out, "-o"), *((c, "the config file") for c in configs)):
            if same_file(report_path, path):
                raise UsageError(f"refusing to write the report over {what} {path}: choose another --report")
        check_output_path(Path(report_path), "--report")  # before the (slow) translation
        protected.append(report_path)
    try:
        report = run_translate(src, to, out, arg_specs=parse_arg_specs(args), config=config, seed=seed,
                               entry=entry, allow_unverified=allow_unverified, strict=strict, timeout=timeout,
                               infer=infer, time_limit=time_limit or None, infer_budget=infer_budget,
                               second_size=second_size)
    except XpilerError as exc:
        report = TranslationReport(src, to, out, status="failed", message=exc.render())
        # a usage error (bad option, unusable path, OUT = SRC) ran nothing: every file stays as it was
        _finish_translation(report, report_path, out_path, explain,
                            None if isinstance(exc, UsageError) else protected)
        raise
    _finish_translation(report, report_path, out_path, explain, protected)
    if report.status == "unverified":
        raise Unverified(f"{out if report.written else 'nothing'} written: unverified ({report.message})")
    if report.status != "verified":
        raise TranslationFailed(f"translation failed: {report.message}",
                                detail="\n".join(f"  {s.line()}" for s in report.steps))


def _finish_translation(report, report_path, out_path, explain, protected) -> None:
    """Remove a stale OUT behind a failed translation (``protected``: the files that are never
    removed, SRC, the config and the report; None: remove nothing), write the report, print."""
    from pathlib import Path

    from .translate import write_atomically, is_generated, same_file

    if protected is not None and not report.written and out_path.is_file() and report.status != "verified":
        # never leave a stale OUT of an earlier run behind a failure; only files with the banner
        if is_generated(out_path) and not any(same_file(out_path, p) for p in protected):
            try:
                out_path.unlink()
            except OSError as exc:  # the failure being reported matters more
                _console(stderr=True).print(f"warning: cannot remove the stale {out_path}: "
                                            f"{exc.strerror or exc}", markup=False)
    if report_path:
        write_atomically(Path(report_path), json.dumps(report.to_json(), indent=2))
    con = _console(stderr=True)
    if explain:
        con.print(f"pipeline: {report.pipeline or '-'}   inputs: {report.inputs or '-'}", markup=False)
        con.print(f"applied: {report.applied or '-'}", markup=False)
        for s in report.steps:     # unchanged and refused steps of a verified translation are no errors
            con.print(f"  {s.line(report.status == 'verified')}", markup=False)
        inf = report.inference
        if inf:
            for t in inf.get("tried", []):
                con.print(f"  inference: value {t['value']}: {t['outcome']}", markup=False)
            if inf.get("analysis"):
                con.print(f"  inference: {inf['analysis']}", markup=False)
        from .resources import one_line

        for key in ("source", "output"):
            res = report.resources.get(key)
            if res and "error" not in res:
                con.print(f"{key} ({res['platform']}): {one_line(res)}", markup=False)
    second = report.second_size
    if explain and second:
        con.print(f"second size: {second['status']}: {second['inputs'] or '-'}"
                  f"{'; ' + second['message'] if second['message'] else ''}", markup=False)
    if report.status == "verified":
        also = ""
        if second and second["status"] == "verified":
            also = "; also verified at a second size"
        elif second and second["status"] == "skipped":
            also = f"; one size only: {second['message']}"
        con.print(f"{report.output}: verified translation {report.source} -> {report.target} "
                  f"({report.seconds:.1f} s, pipeline {report.pipeline}{also})", markup=False)
        for note in report.structure:
            con.print(f"{report.output}: warning: degenerate structure: {note}", markup=False)


# ------------------------------------------------------------------------------ retarget
@cli.command()
@click.argument("src_dir", type=click.Path())
@click.option("--to", "to", required=True, type=click.Choice(PLATFORM_CHOICES), help="Target platform.")
@click.option("-o", "--output", "out_dir", required=True, type=click.Path(),
              help="Output directory (mirrors SRC_DIR; never inside it, nor containing it).")
@click.option("--jobs", "-j", type=int, default=None, help="Files translated at once (default: the number of cores).")
@click.option("--include", multiple=True, metavar="GLOB",
              help="Only files whose relative path or name matches GLOB. Repeatable.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Leave out files matching GLOB. Repeatable.")
@click.option("--no-copy", "no_copy", is_flag=True, help="Do not copy files that are not translated.")
@click.option("--resume", is_flag=True, help="Finish an interrupted job: keep the files whose source, headers, "
                                             "case file and options did not change and whose output is intact.")
@click.option("--force", is_flag=True, help="Redo every file, replacing what an earlier run wrote "
                                            "(never a file xpiler did not write).")
@click.option("--report", "report_path", type=click.Path(),
              help="Report path (default: OUT_DIR/xpiler-report.json, .md or .html by --format).")
@click.option("--format", "fmt", type=click.Choice(["json", "md", "html"]), default="json", show_default=True,
              help="Report format; the JSON report is always written (OUT_DIR/xpiler-report.json for md/html).")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="local: a pool of worker processes; dask: a Dask cluster (xpiler[dask]).")
@click.option("--scheduler", metavar="ADDR", help="Dask scheduler, e.g. tcp://host:8786 (default: a LocalCluster).")
@click.option("--allow-unverified", is_flag=True, help="Write outputs that could not be verified (status unverified).")
@click.option("--timeout", type=float, default=300, show_default=True,
              help="Seconds per file (translation and verification); a file past it is stopped and fails.")
def retarget(src_dir, to, out_dir, jobs, include, exclude, no_copy, resume, force, report_path, fmt, executor,
             scheduler, allow_unverified, timeout):
    """Translate every kernel file under SRC_DIR to another platform into OUT_DIR.

    OUT_DIR mirrors the tree with the target's suffix (nn/a.cu -> nn/a.mlu); files that are
    not kernels are copied. Exit status: 0 every kernel verified; 1 some file failed; 2 bad
    usage (e.g. OUT_DIR inside SRC_DIR, or an earlier run's output without --resume/--force);
    3 some kernel unverified and none failed."""
    from .retarget import exit_status, retarget as run_retarget

    if scheduler and executor != "dask":
        raise UsageError("--scheduler needs --executor dask")
    progress = _RetargetProgress(sys.stderr.isatty())
    try:
        doc = run_retarget(src_dir, to, out_dir, jobs=jobs, include=include, exclude=exclude, resume=resume,
                           force=force, report=report_path, fmt=fmt, executor=executor, scheduler=scheduler,
                           allow_unverified=allow_unverified, timeout=timeout, copy=not no_copy,
                           progress=progress)
    finally:
        progress.stop()
    _retarget_summary(doc)
    code = exit_status(doc)
    if code:
        raise SystemExit(code)


class _RetargetProgress:
    """A rich progress bar on a terminal (done / verified / unverified / failed, elapsed, ETA),
    plain lines otherwise."""

    def __init__(self, tty: bool):
        self.tty, self.bar, self.task = tty, None, None
        self.counts = {"verified": 0, "unverified": 0, "failed": 0}
        self.done = self.total = 0

    def __call__(self, event, data):
        if event == "start":
            self.total, self.done = data["total"], data["done"]
            for e in data["entries"]:
                if e["status"] in self.counts:
                    self.counts[e["status"]] += 1
            if self.tty:
                from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                           TimeElapsedColumn, TimeRemainingColumn)

                self.bar = Progress(TextColumn("retarget"), BarColumn(), MofNCompleteColumn(),
                                    TextColumn("{task.fields[counts]}"), TimeElapsedColumn(),
                                    TimeRemainingColumn(), console=_console(stderr=True))
                self.bar.start()
                self.task = self.bar.add_task("files", total=self.total, completed=self.done,
                                              counts=self._counts())
            else:
                click.echo(f"retarget: {self.total} files, {data['pending']} to translate, "
                           f"{self.done} done already", err=True)
            return
        self.done += 1
        if data["status"] in self.counts:
            self.counts[data["status"]] += 1
        if self.bar is not None:
            self.bar.update(self.task, completed=self.done, counts=self._counts())
        else:
            click.echo(f"[{self.done}/{self.total}] {data['status']:<10} {data['source']}"
                       f"{' -> ' + data['output'] if data['output'] else ''} ({data['seconds']:.1f} s)", err=True)

    def _counts(self) -> str:
        c = self.counts
        return f"{c['verified']} verified, {c['unverified']} unverified, {c['failed']} failed"

    def stop(self):
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def _retarget_summary(doc: dict) -> None:
    from rich.table import Table

    t = Table(title=f"retarget {doc['source_dir']} -> {doc['target']}", show_edge=False)
    for col in ("status", "files"):
        t.add_column(col)
    for s in ("verified", "unverified", "failed", "copied", "skipped", "total"):
        t.add_row(s, str(doc["counts"][s]))
    con = _console(stderr=True)
    con.print(t)
    for f in doc["files"]:
        if f["status"] == "failed":
            d = f["diagnostics"][0] if f["diagnostics"] else {"code": "", "message": ""}
            con.print(f"failed: {f['source']}: {d['code']} {d['message']}".rstrip()[:300], markup=False)
    con.print(f"report: {', '.join(doc['report_paths'])}", markup=False)


# ------------------------------------------------------------------------------ bench
@cli.command()
@click.option("--only", help="Comma-separated SRC:DST directions (default: all 12).")
@click.option("--limit", type=int, default=0, help="At most N kernels per direction (0: all).")
@click.option("--jobs", "-j", type=int, default=1, show_default=True, help="Kernels translated in parallel (processes).")
@click.option("--compile-check", is_flag=True,
              help="Compile verified outputs with nvcc / hipcc (gfx90a) / g++ where installed; BANG counts its "
                   "strict-mode verification.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the per-direction figures here.")
@click.option("--jsonl", type=click.Path(dir_okay=False), help="Write one JSON record per kernel here.")
@click.option("--resume", is_flag=True, help="Keep the records already in --jsonl and run only the missing kernels.")
@click.option("--timeout", type=float, default=60, show_default=True, help="Seconds per kernel run.")
@click.option("--infer-inputs", is_flag=True,
              help="Ignore the case files: verification inputs are inferred (measures input inference).")
@click.option("--corpus", type=click.Path(file_okay=False),
              help="Measure DIR/<platform>/ kernels with case files (e.g. tests/realworld) instead of xpiler/corpus.")
def bench(only, limit, jobs, compile_check, json_path, jsonl, resume, timeout, infer_inputs, corpus):
    """Translate the bundled corpus in every direction and print the table (verified/total,
    compile checks, median/max seconds, parallel units, on-chip buffers, special instructions)."""
    from .bench import main_cli

    main_cli(only, limit, jobs, compile_check, json_path, jsonl, resume, timeout, infer_inputs, corpus)


# ------------------------------------------------------------------------------ cache
@cli.command()
@click.option("--prune", is_flag=True, help="Delete stale temporaries, then least-recently-used builds down to 80% of the cap.")
@click.option("--clear", is_flag=True, help="Delete every cached build and stale temporary (rebuilt on demand).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def cache(prune, clear, as_json):
    """Show the build cache (directory, size, cap); prune or clear it.

    Everything under the directory is counted, including temporaries left by killed builds.
    The cap is $XPILER_CACHE_MAX_MB (default 4096; 0: no cap); every fresh build checks it
    from time to time, deleting stale temporaries and the least recently used objects."""
    from .run import cache_limit_bytes, cache_usage, clear_cache, prune_cache

    if prune and clear:
        raise UsageError("--prune and --clear exclude each other")
    deleted = freed = 0
    if clear:
        deleted, freed = clear_cache()
    elif prune:
        deleted, freed = prune_cache(min_age=0)
    info = {**cache_usage(), "cap_bytes": cache_limit_bytes(), "deleted": deleted, "freed_bytes": freed}
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    mb = 1 << 20
    cap = f"{info['cap_bytes'] / mb:.0f} MB" if info["cap_bytes"] else "none"
    click.echo(f"{info['directory']}: {info['files']} files, {info['bytes'] / mb:.1f} MB (cap {cap})")
    if info["temporaries"]:
        n = info["temporaries"]
        click.echo(f"of which {n} {'temporary' if n == 1 else 'temporaries'} of builds, {info['temporary_bytes'] / mb:.1f} MB "
                   f"({info['stale_temporaries']} stale, {info['stale_temporary_bytes'] / mb:.1f} MB: "
                   "left by killed builds, removed by --prune)")
    if prune or clear:
        click.echo(f"deleted {deleted} files, {freed / mb:.1f} MB")


# ------------------------------------------------------------------------------ entry point
def main(argv=None) -> int:
    try:
        cli.main(args=argv, prog_name="xpiler", standalone_mode=False)
        return 0
    except XpilerError as exc:
        if debug_enabled():
            raise
        _console(stderr=True).print(exc.render(), markup=False)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return 2
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
