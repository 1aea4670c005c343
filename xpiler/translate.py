"""Translation driver: plan passes, verify every step on the virtual device, write atomically.

``translate(src, to, out, ...) -> TranslationReport``

1. Parse the source (front-end of its platform).
2. Fix the verification inputs: ``--arg`` specs, a config file (an ``xpiler.ops`` case file, or
   ``{"args": {"name": "spec"}}``), or the case file beside the source (``<stem>.json``).
   Without inputs nothing can be verified: the result is "unverified" (exit 3, and only written
   with ``allow_unverified``).
3. Run the source once on those inputs (lenient: foreign code runs as written).
4. Apply the plan's passes one by one; after each, emit the candidate, run it on identical
   inputs (strict mode once it is in the target dialect) and compare every pointer argument. A
   pass that is refused or fails verification is recorded and dropped; the pipeline continues
   from the last verified program. A pass that finds nothing to do (a not-applicable code,
   ``passes/base.py``), or whose candidate prints the same text as its input, is recorded as
   ``unchanged``: nothing to verify, no run. ``TranslationReport.applied`` lists the steps that
   changed the program; ``pipeline`` is the plan.
5. The result is verified only if the final program is in the target dialect and passed.

Plans are data (``passes/plans.toml``, composed by ``passes.plans``: lift[source] + cleanup +
lower[target] + tensorize[target]); directions without a plan are reported as not yet supported
(exit 1), never as success.
"""
from __future__ import annotations

import json
import os
import signal
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import passes.plans as plan_table
import platforms
from .ir.errors import TranslationFailed, TranslationTimeLimit, UsageError, XpilerError, debug_enabled


@dataclass
class StepRecord:
    name: str
    options: dict
    status: str                    # verified | unchanged | refused | failed-verification | error
                                   # (| unverified: no inputs)
    seconds: float
    message: str = ""
    outputs: list = field(default_factory=list)
    code: str = ""                 # the deciding diagnostic's code (refused, unchanged)
    reason: str = ""               # "CODE: message" of it, without location or severity

    def to_json(self) -> dict:
        return {"pass": self.name, "options": self.options, "status": self.status,
                "seconds": round(self.seconds, 4), "message": self.message, "outputs": self.outputs,
                "code": self.code}

    def line(self, verified: bool = False) -> str:
        """How the step is printed (``translate --explain``, a failed translation's detail).
        An unchanged step is not an error: the pass had nothing to do. In a translation that
        ends ``verified`` a refusal is an alternative the driver did not keep, not an error."""
        head = f"{self.name} {self.options or ''}".rstrip() + ":"
        if self.status == "unchanged":
            return f"{head} unchanged ({self.reason})"
        if self.status == "refused" and verified:
            return f"{head} refused (alternative not kept): {self.reason}"
        return f"{head} {self.status} ({self.seconds:.2f} s) {self.message}".rstrip()


def _reason(diagnostic) -> str:
    return f"{diagnostic.code}: {diagnostic.message}" if diagnostic.code else diagnostic.message


@dataclass
class TranslationReport:
    source: str
    target: str
    output: str | None
    status: str = "failed"         # verified | unverified | failed
    pipeline: str = ""             # the plan (the alternative kept; the first when none is)
    applied: str = ""              # its steps that changed the program (verified or unverified)
    steps: list[StepRecord] = field(default_factory=list)
    inputs: str = ""
    seconds: float = 0.0
    message: str = ""
    written: bool = False
    summary: dict = field(default_factory=dict)
    inference: dict | None = None        # xpiler.infer.Inference.to_json() when inputs were inferred
    resources: dict = field(default_factory=dict)   # {"source": ..., "output": ...} (xpiler.resources)
    causes: list[StepRecord] = field(default_factory=list)  # failed: the deciding step of each alternative
    second_size: dict | None = None      # the re-verification at a second size (``_second_size``)
    structure: list = field(default_factory=list)   # what a verified output lost of the source's structure
    output_entry: str | None = None      # the output's function that stands for the source's entry
    entries: list = field(default_factory=list)     # several entries: each one's report (to_json)

    def to_json(self) -> dict:
        return {"source": self.source, "target": self.target, "output": self.output, "status": self.status,
                "written": self.written, "pipeline": self.pipeline, "applied": self.applied,
                "inputs": self.inputs,
                "inference": self.inference, "seconds": round(self.seconds, 3), "message": self.message,
                "passes": [s.to_json() for s in self.steps], "resources": self.resources,
                "target_summary": self.summary, "causes": [s.to_json() for s in self.causes],
                "second_size": self.second_size, "structure": self.structure,
                "output_entry": self.output_entry, "entries": self.entries}


# Plans: (source, target) -> candidate pipelines, composed from passes/plans.toml (the one home
# of the plans); every step is a registered pass, verified on the virtual device. A direction
# missing there is reported as unsupported. ``PLANS`` is that table (the same object).
PLANS = plan_table.PLANS
load_passes = plan_table.load_passes


def plans(source_platform: str, target: str) -> list[list[tuple[str, dict]]]:
    """The candidate pipelines for a direction, in order of preference (a PLANS value is one
    pipeline string or a list of them; the driver keeps the first that verifies)."""
    from passes.base import parse_pipeline

    text = PLANS.get((source_platform, target))
    if text is None:
        have = ", ".join(f"{a} -> {b}" for a, b in PLANS)
        raise TranslationFailed(f"translation {source_platform} -> {target} is not implemented yet "
                                f"(available: {have})")
    pipelines = [parse_pipeline(t) for t in ([text] if isinstance(text, str) else text)]
    if not pipelines:
        raise TranslationFailed(f"translation {source_platform} -> {target} has no candidate pipeline "
                                "(an empty list in PLANS)")
    return pipelines


def plan(source_platform: str, target: str) -> list[tuple[str, dict]]:
    return plans(source_platform, target)[0]


def _inputs(program, src: Path, specs: dict, config: str | None, seed: int, infer: bool = True,
            timeout: float = 60, report: "TranslationReport | None" = None, infer_budget: float | None = None):
    """(args, description, launch) or (None, reason, None); launch is a case file's launch for a
    kernel-only source, or the one the inference chose (``Inference.launch``). Without --arg, --config or a case file the inputs are inferred
    (``xpiler.infer``) unless ``infer`` is False; the inference is recorded in ``report``."""
    from .verify import make_args

    if specs:
        missing = [p.name for p in program.params if p.kind == "scalar" and p.name not in specs]
        only_scalars = all(p.kind == "scalar" for p in program.params if p.name in specs)
        if not (infer and missing and only_scalars):
            return make_args(program, specs, seed), "command-line --arg", None
        # some scalars given, the rest (and every pointer size) inferred around them
        from .argspec import materialise
        from .infer import infer_inputs
        import numpy as np

        rng = np.random.default_rng(seed)
        fixed = {p.name: materialise(specs[p.name], p, rng) for p in program.params if p.name in specs}
        inf = infer_inputs(program, src, seed=seed, timeout=timeout, fixed=fixed, budget=infer_budget)
        if report is not None:
            report.inference = inf.to_json()
        if not inf.ok:
            return None, f"{inf.describe()}; give --arg for {', '.join(missing)} and the pointers", None
        return inf.args, f"command-line --arg with {inf.describe()}", inf.launch
    case_path = Path(config) if config else src.with_suffix(".json")
    if config and not case_path.exists():
        raise UsageError(f"config file {config} not found")
    if case_path.exists():
        try:
            data = json.loads(case_path.read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"{case_path}: not a JSON config: {exc}") from None
        if "params" in data:
            from . import ops
            from .ops.schema import CaseError

            try:
                return ops.make_inputs(data, seed=seed), f"case file {case_path}", data.get("launch")
            except CaseError as exc:  # e.g. an operator xpiler.ops does not know
                raise UsageError(f"{case_path}: not a usable case file: {exc}") from None
        if "args" in data:
            from .argspec import parse_arg_specs

            specs = parse_arg_specs([f"{k}={v}" for k, v in data["args"].items()])
            return make_args(program, specs, seed), f"config file {case_path}", data.get("launch")
        raise UsageError(f"{case_path}: expected 'params' (a case file) or 'args'")
    hint = ("give --arg NAME=SPEC for every parameter (pointer sizes follow from the scalars when the "
            "host code shows them) or --config FILE")
    if not infer:
        return None, f"no verification inputs (inference disabled): {hint}", None
    from .infer import infer_inputs

    inf = infer_inputs(program, src, seed=seed, timeout=timeout, budget=infer_budget)
    if report is not None:
        report.inference = inf.to_json()
    if not inf.ok:
        return None, f"{inf.describe()}; {hint}", None
    return inf.args, inf.describe(), inf.launch


def _declared_extents(program, src: Path, config: str | None, specs: dict) -> str:
    """The element counts a case file declares for the entry's pointers, as a pass option
    (``"name:count ..."``), for an entry without scalar parameters (its shapes are then part of
    its interface: constant). Passes that lower to a device use them only where the analysis
    cannot bound a pointer (data-dependent subscripts: gather, scatter, deformable); the
    option is visible in the report's pipeline. Empty when nothing is declared."""
    if specs or program.entry is None or any(p.kind == "scalar" for p in program.params):
        return ""
    case_path = Path(config) if config else src.with_suffix(".json")
    try:
        data = json.loads(case_path.read_text())
    except (OSError, ValueError):
        return ""
    pointers = {p.name for p in program.params if p.kind == "pointer"}
    counts = []
    for item in data.get("params", []) if isinstance(data, dict) else []:
        shape = item.get("shape") if isinstance(item, dict) else None
        if item.get("name") in pointers and isinstance(shape, list) and shape and \
                all(isinstance(d, int) and d > 0 for d in shape):
            n = 1
            for d in shape:
                n *= d
            counts.append(f"{item['name']}:{n}")
    return " ".join(counts)


def _with_extents(steps, extents: str):
    """Hand declared extents to the steps whose pass takes an ``extents`` string option
    (``name:count ...``; devcopy's boolean ``extents`` is another thing) and does not set one."""
    from passes.base import REGISTRY

    if not extents:
        return steps
    out = []
    for name, options in steps:
        entry = REGISTRY.get(name)
        option = entry.info.options.get("extents") if entry is not None else None
        if option is not None and option.type is str and "extents" not in options:
            options = {**options, "extents": extents}
        out.append((name, options))
    return out


def _copy(args):
    return [a.copy() if hasattr(a, "copy") else a for a in args]


class _TimeUp(BaseException):
    """Raised by the time limit's SIGALRM handler wherever the translation stands. A
    BaseException: the ``except Exception`` guards around passes and verification must not
    turn it into a failed step; ``translate`` turns it into ``TranslationTimeLimit``."""


class TimeLimit:
    """The time bound of one translation (``seconds``; None or <= 0: none).

    In the main thread, with SIGALRM unused, an interval timer interrupts whatever runs when the
    time is up: the front-end, a pass, a compile (``subprocess.run`` kills the compiler), a Z3
    query as soon as it returns. A kernel run is never interrupted from outside: its forked
    child has its own time limit (``--timeout``) and is waited for, so the alarm is put off
    while ``xpiler.run`` waits for a child and fires right after. Elsewhere (a worker thread,
    SIGALRM already in use) the bound is checked between steps only. ``stage`` names the step
    running, for the message."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds if seconds is not None and seconds > 0 else None
        self.start = time.monotonic()
        self.stage = "loading the passes"
        self._armed = False
        self._previous = None

    def __enter__(self) -> "TimeLimit":
        if self.seconds is not None and hasattr(signal, "setitimer") and \
                threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None) and \
                signal.getitimer(signal.ITIMER_REAL)[0] == 0:
            self._previous = signal.signal(signal.SIGALRM, self._on_alarm)
            self._armed = True
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
        return self

    def __exit__(self, *exc) -> None:
        self.disarm()

    def disarm(self) -> None:
        if self._armed:
            self._armed = False                     # an alarm from now on is ignored
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous)

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def check(self, stage: str | None = None) -> None:
        """Between steps: stop when the time is up (the only check off the main thread)."""
        if stage is not None:
            self.stage = stage
        if self.seconds is not None and self.elapsed() > self.seconds:
            raise _TimeUp()

    def _on_alarm(self, signum, frame) -> None:
        if not self._armed:
            return
        if _waiting_for_kernel(frame):
            signal.setitimer(signal.ITIMER_REAL, 0.05)   # the run ends within its own time limit
            return
        raise _TimeUp()

    def error(self) -> TranslationTimeLimit:
        return TranslationTimeLimit(
            f"translation stopped after {self.elapsed():.1f} s (--time-limit {self.seconds:g} s): "
            f"in {self.stage}; nothing written")


def _waiting_for_kernel(frame) -> bool:
    """True when ``frame`` is inside ``xpiler.run`` forking or waiting for a kernel's child
    process (interrupting there would leave the child running)."""
    run_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py")
    while frame is not None:
        code = frame.f_code
        if code.co_name in ("_execute", "_wait") and os.path.abspath(code.co_filename) == run_file:
            return True
        frame = frame.f_back
    return False


def translate(src: str, to: str, out: str, *, arg_specs: dict | None = None, config: str | None = None,
              seed: int = 0, entry: str | None = None, allow_unverified: bool = False,
              strict: bool = True, timeout: float = 60, progress=None, infer: bool = True,
              time_limit: float | None = None, infer_budget: float | None = None,
              second_size: bool = True) -> TranslationReport:
    """Translate ``src`` to ``to`` (see the module docstring). ``timeout`` bounds each kernel
    run; ``time_limit`` (seconds, None or 0: none) bounds the whole translation (front-end,
    passes, verification): when it is exceeded, ``TranslationTimeLimit`` (exit 1) names the step
    that was running and nothing is written. ``second_size``: re-verify the final program at a
    second input size (``_second_size``)."""
    limit = TimeLimit(time_limit)
    kw = dict(arg_specs=arg_specs, config=config, seed=seed, allow_unverified=allow_unverified,
              strict=strict, timeout=timeout, progress=progress, infer=infer, limit=limit,
              infer_budget=infer_budget, second_size=second_size)
    try:
        with limit:
            _check_paths(src, out, config)
            names = _several_entries(src) if entry is None else []
            if names:
                return _translate_entries(src, to, out, names, **kw)
            return _translate(src, to, out, entry=entry, **kw)
    except _TimeUp:
        raise limit.error() from None


def _check_paths(src: str, out: str, config: str | None) -> None:
    """Before anything slow runs: OUT must not be SRC (or a link to it) nor the inputs' config
    file, and must be writable (UsageError otherwise)."""
    src_path, out_path = Path(src), Path(out)
    if same_file(out_path, src_path):
        raise UsageError(f"refusing to overwrite the source {src}: choose another -o")
    for cfg in config_paths(src_path, config):
        if same_file(out_path, cfg):
            raise UsageError(f"refusing to overwrite the config file {cfg} with -o {out}: choose another -o")
    check_output_path(out_path, "-o")


def _several_entries(src: str) -> list[str]:
    """The entry candidates of a file that has several (a kernel-only file with several
    kernels, several ``extern "C"`` functions), else []."""
    from .ir.errors import SourceError
    from .parse import parse_file

    try:
        parse_file(Path(src))
    except SourceError as exc:
        return list(getattr(exc, "entry_candidates", None) or [])
    return []


def _translate_entries(src: str, to: str, out: str, names: list[str], **kw) -> TranslationReport:
    """Every entry of a file with several, one after the other (each verified on its own),
    their outputs merged into one file (``xpiler.merge``), and the merged file verified again
    for each entry: written only when all of them hold (else nothing is written; the report
    names the entry that failed)."""
    from .merge import merge_outputs

    target = platforms.canonical(to)
    out_path = Path(out)
    report = TranslationReport(str(src), target, str(out_path))
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="xpiler-entries-") as tmp:
        suffix = out_path.suffix or platforms.FILE_SUFFIX[target]
        outputs, reports = [], []

        def fail(name: str, r: TranslationReport) -> TranslationReport:
            report.status = "failed" if r.status != "unverified" else "unverified"
            report.message = f"entry {name}: {r.message}"
            report.causes = r.causes
            report.steps = [s for x in reports for s in x.steps]
            report.entries = [x.to_json() for x in reports]
            report.seconds = time.perf_counter() - t0
            return report

        for k, name in enumerate(names):
            r = _translate(src, to, str(Path(tmp) / f"entry{k}{suffix}"), entry=name,
                           **{**kw, "allow_unverified": False})
            reports.append(r)
            if r.status != "verified":
                return fail(name, r)
            outputs.append(((Path(tmp) / f"entry{k}{suffix}").read_text(), r.output_entry))
        merged = merge_outputs(outputs, target, str(out_path))
        checked = []
        for k, name in enumerate(names):
            r = _translate(src, to, str(Path(tmp) / f"merged{suffix}"), entry=name,
                           given=(merged, outputs[k][1]), **{**kw, "allow_unverified": False})
            checked.append(r)
            if r.status != "verified":
                reports.append(r)
                return fail(name, r)
        text = (Path(tmp) / f"merged{suffix}").read_text()
    write_atomically(out_path, text)
    report.status, report.written = "verified", True
    report.pipeline = "; ".join(f"{n}: {r.pipeline}" for n, r in zip(names, reports))
    report.applied = "; ".join(f"{n}: {r.applied}" for n, r in zip(names, reports))
    report.inputs = "; ".join(f"{n}: {r.inputs}" for n, r in zip(names, reports))
    report.steps = [s for x in reports + checked for s in x.steps]
    report.entries = [x.to_json() for x in reports]
    report.structure = [note for x in reports for note in x.structure]
    report.second_size = {"status": "; ".join(f"{n}: {(r.second_size or {}).get('status', '')}"
                                              for n, r in zip(names, reports)),
                          "inputs": "", "message": ""}
    report.seconds = time.perf_counter() - t0
    report.message = f"{len(names)} entries ({', '.join(names)}), each verified, merged into one file"
    return report


def _translate(src: str, to: str, out: str, *, arg_specs, config, seed, entry, allow_unverified, strict,
               timeout, progress, infer, limit: TimeLimit, infer_budget=None,
               second_size: bool = True, given: tuple[str, str] | None = None) -> TranslationReport:
    """One entry of ``src`` (see ``translate``). ``given``: (text, entry) of an output already
    made (the merge of several entries' outputs): it is verified for this entry instead of
    running the plans (step ``merge``)."""
    from passes.base import PassRefused, apply_pass, format_pipeline
    from platforms.common.std_headers import include_lines

    from .parse import parse_file, parse_source
    from .run import broken_rules, run_kernel
    from .verify import compare_arrays, undefined_elements

    t0 = time.perf_counter()
    load_passes()
    target = platforms.canonical(to)
    src_path, out_path = Path(src), Path(out)
    _check_paths(src, out, config)
    limit.check("the front-end (parsing the source)")
    program = parse_file(src_path, entry=entry)
    report = TranslationReport(str(src_path), target, str(out_path))
    candidates = [_with_extents(steps, _declared_extents(program, src_path, config, arg_specs or {}))
                  for steps in plans(program.platform, target)] if given is None else [[(MERGE_STEP, {})]]
    report.pipeline = format_pipeline(candidates[0])
    limit.check("choosing the verification inputs")
    args, how, launch = _inputs(program, src_path, arg_specs or {}, config, seed, infer, timeout, report,
                                infer_budget)
    report.inputs = how
    reference, relax = None, []
    if args is not None:
        limit.check("the run of the source")
        reference = _copy(args)
        source_run = run_kernel(src_path, args=reference, program=program, timeout=timeout,
                                launch=launch if program.entry.kind == "kernel" else None)
        # a strict rule the source itself breaks (barrier divergence) is not held against the output
        relax = broken_rules(source_run.warnings)
    undefined_masks: list = []          # computed once, on the first mismatch

    def undefined():
        """Per argument, the elements of the source's result that depend on uninitialised memory
        (a device buffer copied back whole, a tile never written): the source run again with
        fresh memory holding another byte, elements that differ. None if that run fails."""
        if not undefined_masks:
            undefined_masks.append(undefined_elements(program, src_path, args, reference, timeout,
                                                      launch if program.entry.kind == "kernel" else None))
        return undefined_masks[0]
    if launch is not None and program.entry is not None and program.entry.kind == "kernel":
        # kernel-only source: a pass that replaces the launch model (loop_recovery) uses this launch
        program.facts["launch"] = dict(launch)

    def emitted(prog) -> str:
        text = platforms.module(prog.platform, "backend").emit(prog)
        # an output builds on its own: the standard headers it uses names of (XP1152)
        return include_lines(text, prog.platform)[0]

    try:        # the source as the back-end prints it: a first step that prints the same changed nothing
        source_text = emitted(program)
    except Exception:  # a source the back-end cannot print: every step is then verified
        if debug_enabled():
            raise
        source_text = None

    def run_given():
        """The given output read back for this entry and verified like a pass's result."""
        text, out_entry = given
        s0 = time.perf_counter()
        try:
            candidate = parse_source(text, target, str(out_path), entry=out_entry)
            candidate_text = emitted(candidate)
        except XpilerError as exc:
            report.steps.append(StepRecord(MERGE_STEP, {}, "error", time.perf_counter() - s0, exc.render()))
            return program, None, []
        if reference is None:
            report.steps.append(StepRecord(MERGE_STEP, {}, "unverified", time.perf_counter() - s0, how))
            return candidate, candidate_text, [(MERGE_STEP, {})]
        ok, outputs, message = _verify(candidate_text, candidate, out_path, program, args, reference, strict,
                                       timeout, run_kernel, parse_source, compare_arrays,
                                       _same_launch(program, candidate, launch), relax, undefined)
        report.steps.append(StepRecord(MERGE_STEP, {}, "verified" if ok else "failed-verification",
                                       time.perf_counter() - s0, message, outputs))
        return (candidate, candidate_text, [(MERGE_STEP, {})]) if ok else (program, None, [])

    def run_pipeline(steps):
        """Run one alternative: (the last verified program, its text, the steps that changed it)."""
        if given is not None:
            return run_given()
        current, current_text, current_emitted = program, None, source_text
        applied = []
        for name, options in steps:
            limit.check(f"pass {name}")
            s0 = time.perf_counter()
            if progress:
                progress(name)
            try:
                outcome = apply_pass(name, current, **options)
                candidate = outcome.program
                text = emitted(candidate) if outcome.changed else None
            except PassRefused as exc:
                first = exc.diagnostics[0] if exc.diagnostics else None
                report.steps.append(StepRecord(name, options, "refused", time.perf_counter() - s0, exc.render(),
                                               code=first.code if first else "",
                                               reason=_reason(first) if first else exc.message))
                continue
            except XpilerError as exc:
                report.steps.append(StepRecord(name, options, "error", time.perf_counter() - s0, exc.render()))
                continue
            except Exception as exc:  # a bug in a pass must not take the whole translation down
                if debug_enabled():
                    raise
                report.steps.append(StepRecord(name, options, "error", time.perf_counter() - s0,
                                               f"internal error in pass {name}: {type(exc).__name__}: {exc}"))
                continue
            if not outcome.changed:         # nothing to do: nothing applied, nothing to verify
                why = outcome.reason
                report.steps.append(StepRecord(name, options, "unchanged", time.perf_counter() - s0,
                                               _reason(why) if why else "the pass returned its input",
                                               code=why.code if why else "",
                                               reason=_reason(why) if why else "the pass returned its input"))
                continue
            if text == current_emitted and candidate.platform == current.platform:
                # the same text as the program it came from: what was run for that text holds
                # (same inputs, same strictness); no verification run. The candidate is kept for
                # the facts the pass recorded.
                same = "the output text is the input's"
                report.steps.append(StepRecord(name, options, "unchanged", time.perf_counter() - s0, same,
                                               reason=same))
                current = candidate
                continue
            if reference is None:
                report.steps.append(StepRecord(name, options, "unverified", time.perf_counter() - s0, how))
                current, current_text, current_emitted = candidate, text, text
                applied.append((name, options))
                continue
            limit.check(f"the verification of pass {name}")
            ok, outputs, message = _verify(text, candidate, out_path, program, args, reference, strict and
                                           candidate.platform == target, timeout, run_kernel, parse_source,
                                           compare_arrays, _same_launch(program, candidate, launch), relax,
                                           undefined)
            status = "verified" if ok else "failed-verification"
            report.steps.append(StepRecord(name, options, status, time.perf_counter() - s0, message, outputs))
            if ok:
                current, current_text, current_emitted = candidate, text, text
                applied.append((name, options))
        return current, current_text, applied

    second = {}                   # the second-size inputs, found once for every alternative

    def at_second_size(candidate, text) -> StepRecord | None:
        """Re-verify a final program at a second input size (``_second_size``); the failed step
        when it differs there, else None (also when there is no second size)."""
        s0 = time.perf_counter()
        limit.check("the verification at a second size")
        if "inputs" not in second:
            second["inputs"] = _second_size(program, src_path, args, launch, seed, timeout, report)
        found = second["inputs"]
        if found is None:
            return None
        args2, reference2, relax2, how2, undefined2 = found
        ok, outputs, message = _verify(text, candidate, out_path, program, args2, reference2,
                                       strict and candidate.platform == target, timeout, run_kernel,
                                       parse_source, compare_arrays, _same_launch(program, candidate, launch),
                                       relax2, undefined2)
        if not ok and message.startswith((NOTHING_DEFINED, MOSTLY_UNDEFINED)):   # nothing to verify there
            report.second_size.update(status="skipped", message=message)
            return None
        report.second_size.update(status="verified" if ok else "failed", message=message)
        if ok:
            return None
        return StepRecord(SECOND_SIZE_STEP, {}, "failed-verification", time.perf_counter() - s0,
                          f"at a second size ({how2}): {message}", outputs)

    # alternatives in order; the first that reaches the target dialect (and holds at the second
    # size) is kept
    tried = []                    # the step records of each alternative run
    for steps in candidates:
        first = len(report.steps)
        current, current_text, applied = run_pipeline(steps)
        report.applied = format_pipeline(applied)
        if current.platform == target and current_text is not None and reference is not None and second_size:
            failed_there = at_second_size(current, current_text)
            if failed_there is not None:
                report.steps.append(failed_there)
                current_text = None           # not a result: the next alternative is tried
        tried.append(report.steps[first:])
        if current.platform == target and current_text is not None:
            report.pipeline = format_pipeline(steps)
            break
    limit.disarm()        # the work is done: writing OUT and the report is not cut short
    report.seconds = time.perf_counter() - t0
    done = current.platform == target and current_text is not None
    if not done:
        report.status = "failed"
        report.causes = [c for c in (deciding_step(records) for records in tried) if c is not None]
        report.message = "no verified program in the target dialect" + "".join(
            f"{'; ' if k else ': '}{'' if len(tried) == 1 else f'alternative {k + 1}: '}"
            f"{c.name} {c.status}: {c.message or c.reason}" for k, c in enumerate(report.causes))
    elif reference is None:
        report.status = "unverified"
        report.message = how
    else:
        report.status = "verified"
    if report.status == "verified" or (report.status == "unverified" and allow_unverified):
        write_atomically(out_path, f"{GENERATED_BANNER} from {src_path.name} ({report.pipeline}); "
                                    f"{report.status}.\n{contraction_note(target)}{current_text}")
        report.written = True
        report.output_entry = _entry_of(current)
        try:
            output_program = parse_source(current_text, target, str(out_path), entry=_entry_of(current))
            report.summary = output_program.summary()
        except XpilerError:
            output_program, report.summary = None, {}
        report.resources = _resources(program, output_program, args, launch)
        from .resources import structure_notes

        report.structure = structure_notes(report.resources.get("source"), report.resources.get("output"))
    else:
        report.resources = _resources(program, None, args, launch)
    return report


SECOND_SIZE_STEP = "second_size"     # the step record of the re-verification at a second size
MERGE_STEP = "merge"                 # the step record of a merged output verified for one entry
NOTHING_DEFINED = ("every output element of the source depends on uninitialised memory or on the order "
                   "of its blocks, threads or tasks (a data race) at these inputs: nothing to compare")
MOSTLY_UNDEFINED = ("most output elements of the source depend on uninitialised memory or on the order of its "
                    "blocks, threads or tasks (a data race) at these inputs: too few to verify on")


def _second_size(program, src_path, args, launch, seed, timeout, report):
    """Inputs at a second size for the final program (``xpiler.infer.second_size_inputs``) and
    the source's results on them: (args, reference, relaxed rules, description, undefined) or
    None when the entry has no second size (fixed sizes) or none keeps the source in bounds;
    ``report.second_size`` says which."""
    from .infer import second_size_inputs
    from .verify import undefined_elements
    from .run import broken_rules, run_kernel

    scalars = {p.name: a for p, a in zip(program.params, args) if p.kind == "scalar"}
    kernel_launch = launch if program.entry.kind == "kernel" else None
    if program.entry.kind == "kernel" and program.platform in ("cuda", "hip"):
        # the grid and block are inputs too, fixed for the first size: other scalars under the
        # same launch cover another problem only partly (threads guarded off, or too few)
        report.second_size = {"status": "skipped", "inputs": "", "message": (
            "a kernel entry runs under a fixed grid and block (its sizes are tied to that launch)")}
        return None
    inferred = bool(report.inference and report.inference.get("ok"))
    inf = second_size_inputs(program, src_path, scalars, seed=seed, timeout=timeout, launch=kernel_launch,
                             larger_first=inferred)
    if not inf.ok:
        report.second_size = {"status": "skipped", "inputs": "", "message": inf.reason}
        return None
    how = inf.describe()
    reference = _copy(inf.args)
    try:
        run = run_kernel(src_path, args=reference, program=program, timeout=timeout, launch=kernel_launch)
    except XpilerError as exc:
        report.second_size = {"status": "skipped", "inputs": how, "message": f"the source does not run: {exc.message}"}
        return None
    report.second_size = {"status": "", "inputs": how, "message": ""}
    masks = []

    def undefined():
        if not masks:
            masks.append(undefined_elements(program, src_path, inf.args, reference, timeout, kernel_launch))
        return masks[0]
    return inf.args, reference, broken_rules(run.warnings), how, undefined


def deciding_step(records: list[StepRecord]) -> StepRecord | None:
    """The step that decided a failed alternative: the first pass of the lift or lower stages
    (``passes/lift``, ``passes/lower``: what moves the program out of the source's idioms and
    into the target's dialect) that did not apply, else the first refusal, failed verification
    or error. The steps after it fail because of it (a lowering refused on a program still in
    the source dialect says only that)."""
    from passes.base import REGISTRY
    from passes.plans import stage_of

    failed = ("refused", "failed-verification", "error")
    for r in records:                   # the final program differed at the second size
        if r.name == SECOND_SIZE_STEP and r.status in failed:
            return r
    for r in records:
        entry = REGISTRY.get(r.name)
        moves = entry is not None and (entry.info.lowers or stage_of(r.name) in ("lift", "lower"))
        if moves and (r.status in failed or (r.status == "unchanged" and entry.info.lowers)):
            return r
    return next((r for r in records if r.status in failed), None)


def _resources(source, output, args, launch) -> dict:
    """Parallel units, on-chip buffers and special instructions of the source and the output
    (``xpiler.resources``), evaluated at the verification scalars."""
    from .resources import resources

    scalars = {p.name: a for p, a in zip(source.params, args or ()) if p.kind == "scalar"}
    out = {}
    for key, prog in (("source", source), ("output", output)):
        if prog is None:
            continue
        try:
            out[key] = resources(prog, scalars, launch if prog.entry is not None and
                                 prog.entry.kind == "kernel" else None)
        except Exception as exc:  # facts are informative; never fail a translation over them
            if debug_enabled():
                raise
            out[key] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def _entry_of(candidate) -> str | None:
    """The entry a candidate's text is read back with: the candidate's own (a pass carries the
    entry, ``--entry`` or the one detected in the source), so a text with several entry
    candidates (the source's other extern "C" functions) verifies the entry that was chosen."""
    return candidate.entry.name if candidate.entry is not None else None


def _same_launch(source, candidate, launch):
    """The source's launch applies to a candidate whose entry is still a device kernel of the
    same execution model (grid/block for CUDA and HIP, clusters/cores for BANG)."""
    if launch is None or source.entry is None or source.entry.kind != "kernel":
        return None
    gpu = {"cuda", "hip"}
    same_model = (source.platform in gpu and candidate.platform in gpu) or source.platform == candidate.platform
    return launch if same_model else None


def _verify(text, candidate, out_path, source_program, args, reference, strict, timeout, run_kernel,
            parse_source, compare_arrays, launch=None, relax=(), undefined=None):
    try:
        reparsed = parse_source(text, candidate.platform, str(out_path), entry=_entry_of(candidate))
        got = _copy(args)
        run_kernel(out_path, args=got, source=text, program=reparsed, timeout=timeout, strict=strict,
                   launch=launch if reparsed.entry is not None and reparsed.entry.kind == "kernel" else None,
                   relax=relax)
    except XpilerError as exc:
        return False, [], exc.render()
    except Exception as exc:  # the candidate is untrusted; never let it crash the driver
        if debug_enabled():
            raise
        return False, [], f"internal error while verifying: {type(exc).__name__}: {exc}"
    approximate, why = approximation(source_program, reparsed)

    def compare(masks):
        return [compare_arrays(p.name, have, want, p.dtype, p.role, tol=_widened(p.dtype, approximate),
                               undefined=masks[k] if masks else None).to_json()
                for k, (p, want, have) in enumerate(zip(source_program.params, reference, got))
                if p.kind == "pointer"]

    outputs = compare(None)
    ok = all(o["ok"] for o in outputs)
    masks = undefined() if not ok and undefined is not None else None
    if masks and any(m is not None and m.any() for m in masks):
        outputs = compare(masks)
        ok = all(o["ok"] for o in outputs)
        skipped = sum(o["undefined"] for o in outputs)
        # the outputs the source writes at these inputs: it changed them, or some of their
        # elements are undefined (a buffer it only reads is no output, whatever its role)
        pointers = [k for k, p in enumerate(source_program.params) if p.kind == "pointer"]
        written = [o for k, o in zip(pointers, outputs) if o["undefined"] or _changed(args[k], reference[k])] \
            or [o for o in outputs if o["role"] != "input"] or outputs
        if all(o["undefined"] == o["size"] for o in written):
            return False, outputs, NOTHING_DEFINED
        # an output the source leaves wholly undefined is one it does not compute at these inputs
        # (a mode that writes only some outputs: roi_align's argmax in average pooling), not a
        # race among its elements: the share is taken over the outputs it computes in part or whole
        partly = [o for o in written if o["undefined"] < o["size"]]
        undefined_count, size = sum(o["undefined"] for o in partly), sum(o["size"] for o in partly)
        if 2 * undefined_count > size:     # a comparison of the few left would not verify the result
            return False, outputs, f"{MOSTLY_UNDEFINED} ({undefined_count} of {size} elements)"
        note = (f"{skipped} element(s) the source leaves undefined (they depend on uninitialised memory "
                "or on the order of its blocks, threads or tasks) were not compared")
        return ok, outputs, note if ok else f"outputs differ from the source's beyond tolerance; {note}"
    return ok, outputs, why if ok else "outputs differ from the source's beyond tolerance" + (f" ({why})" if why else "")


def approximation(*programs) -> tuple[float, str]:
    """The largest relative error within which an instruction the programs call is specified
    (its description's ``tolerance``: AVX-512 ``rcp14``/``rsqrt14``, 2^-14, from tables that
    differ between CPUs), and a note naming it; (0.0, "") when every instruction is exact. The
    source runs natively and the other side emulates the exact value, so their results may
    differ by that much and both be right."""
    import importlib

    from passes import canon

    worst, names = 0.0, []
    for program in programs:
        try:
            table = importlib.import_module(f"platforms.{program.platform}.intrinsics").load().intrinsics
        except (ImportError, AttributeError):
            continue
        for node in canon.walk(getattr(program, "ast", None)):
            name = canon.call_name(node)
            described = table.get(name) if name else None
            if described is not None and getattr(described, "tolerance", None):
                worst = max(worst, described.tolerance)
                names.append(name)
    if not worst:
        return 0.0, ""
    return worst, (f"compared within a relative error of {worst:.3g}: {', '.join(sorted(set(names)))} "
                   f"is specified only that closely")


def _widened(dtype: str, relative: float) -> tuple[float, float] | None:
    """The comparison tolerance of a floating-point output widened to ``relative`` (None: the
    dtype's own)."""
    from .verify import tolerance

    rtol, atol = tolerance(dtype)
    if not relative or not (rtol or atol):          # integers compare exactly
        return None
    return max(rtol, relative), atol


def _changed(before, after) -> bool:
    """Whether a run changed an argument (NaN equal to NaN)."""
    import numpy as np

    if not isinstance(before, np.ndarray) or not isinstance(after, np.ndarray):
        return before != after
    try:
        return not np.array_equal(before, after, equal_nan=True)
    except TypeError:        # integer arrays have no NaN
        return not np.array_equal(before, after)


GENERATED_BANNER = "// Generated by xpiler translate"

# The virtual device builds CUDA/HIP code with g++ for baseline x86-64 (no FMA instructions), so
# ``a * b + c`` is rounded twice there; nvcc (-fmad=true) and hipcc (-ffp-contract=fast-honor-
# pragmas) contract it into one fused operation by default. Explicit fmaf() stays fused on both.
NO_CONTRACTION_FLAGS = {"cuda": "nvcc -fmad=false", "hip": "hipcc -ffp-contract=off"}


def contraction_note(target: str) -> str:
    """The banner line of a GPU output saying how to build it with the numerics it was verified
    with (empty for other targets)."""
    flag = NO_CONTRACTION_FLAGS.get(target)
    if flag is None:
        return ""
    return (f"// Verified on the virtual device without floating-point contraction (a * b + c rounded "
            f"twice; explicit fmaf stays fused): build with `{flag}` for the verified numerics.\n")


def is_generated(path: Path) -> bool:
    """True for files xpiler wrote (their first line is the banner); only those are ever removed."""
    try:
        with open(path, errors="replace") as fh:
            return fh.readline().startswith(GENERATED_BANNER)
    except OSError:
        return False


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True when A and B name one file: the same resolved path (symbolic links followed) or the
    same inode (hard links). False when either does not exist (and the paths differ)."""
    try:
        if Path(a).resolve() == Path(b).resolve():
            return True
    except (OSError, RuntimeError):
        pass
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def config_paths(src: Path, config: str | None) -> list[Path]:
    """The files the verification inputs are read from: --config, else SRC's ``<stem>.json``."""
    path = Path(config) if config else src.with_suffix(".json")
    return [path] if os.path.lexists(path) else []


def check_output_path(path: Path, what: str) -> None:
    """Pre-flight check of a file about to be written (``what`` names the option): it must not
    be a directory or another non-regular file, and its nearest existing ancestor must be a
    writable directory (missing directories are created when the file is written). Raises
    ``UsageError`` naming the path; the write itself is guarded as well (``write_atomically``)."""
    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as exc:  # a name too long, a symbolic link loop, no permission to look
        raise UsageError(f"cannot write {what} {path}: {exc.strerror or exc}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise UsageError(f"cannot write {what} {path}: it is a directory")
    if mode is not None and not stat.S_ISREG(mode):
        raise UsageError(f"cannot write {what} {path}: it exists and is not a regular file")
    ancestor = Path(os.path.abspath(path)).parent
    while not os.path.exists(ancestor):
        if os.path.lexists(ancestor):
            raise UsageError(f"cannot write {what} {path}: {ancestor} is a dangling symbolic link")
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UsageError(f"cannot write {what} {path}: {ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {what} {path}: directory {ancestor} is not writable")


def _umask() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomically(path: Path, text: str | bytes) -> None:
    """Write TEXT to PATH through a temporary file in its directory and a rename; the file gets
    the mode of a newly created one (0666 less the umask). Text gets a final newline; bytes
    are written unchanged (a copied file). An OSError becomes a UsageError naming PATH
    (exit 2)."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # the temporary name stays short: PATH's own name may be close to NAME_MAX
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:48]}.", dir=path.parent)
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~_umask())
            if isinstance(text, bytes):
                fh.write(text)
            else:
                fh.write(text if text.endswith("\n") else text + "\n")
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None and os.path.lexists(tmp):
            os.unlink(tmp)
