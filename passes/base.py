"""What every pass declares, and the registry the pipeline, CLI, docs and prompts read.

A pass is a pure function ``Program -> Program`` with a separate legality check:

    @register(PassInfo(name="split", summary="...", requires=(...), guarantees=(...),
                       options={"factor": Option(int, 4, "inner extent")}))
    def split(program, *, factor=4, plan=None): ...

    @split.legality
    def _split_legal(program, *, factor=4): ...   # -> list[Diagnostic] or a plan

Applicability is not legality (issue 15). The check answers one of three things:

- **not applicable**: error diagnostics whose codes are all declared ``applicability = true`` in
  ``passes/diagnostics.toml`` (the pass looked and found nothing to rewrite: no helper to
  inline, no wmma to map, the source is already the target). The program is returned unchanged;
  nothing is applied. This is not an error.
- **refused**: any other error diagnostic: the rewrite would be wrong (or is not supported) here.
  ``PassRefused`` carries those diagnostics and their codes.
- **go**: an empty list (the rewrite does its own analysis), or a **plan**: any object that is
  not a list/tuple (a small dataclass of what the check matched and the facts it proved, or the
  rewritten copy of the AST). The plan is passed to the rewrite as ``plan=`` when its signature
  has a ``plan`` parameter, so the analysis runs once. A rewrite called without a plan (directly)
  computes it itself.

The rewrite returns the new Program and never mutates its input. Returning the input object
itself (``out is program``), or raising ``PassRefused`` whose diagnostics are all
not-applicable codes, also means "unchanged".

``apply_pass(name, program, **options) -> PassOutcome`` (``program``, ``changed``, ``reason``: the
not-applicable diagnostic when unchanged, ``plan``) runs the protocol; ``run_pass`` is the same
returning only the Program (the input itself when the pass did not apply; raises PassRefused).

Pipelines are strings that round-trip: ``detensorize,split{factor=4},bind``
(``parse_pipeline`` / ``format_pipeline``), so reports, reproducers and the tuner share one
spelling.
"""
from __future__ import annotations

import inspect
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from xpiler.ir.errors import Diagnostic, XpilerError


@dataclass(frozen=True)
class Option:
    type: type
    default: Any
    help: str = ""


@dataclass(frozen=True)
class PassInfo:
    """The facts about one pass, declared once (STYLE.md: PassInfo)."""

    name: str
    summary: str
    anchor: str = "program"                 # what it runs on: program | kernel | loop
    options: dict[str, Option] = field(default_factory=dict)
    requires: tuple[str, ...] = ()          # legality conditions, in words
    guarantees: tuple[str, ...] = ()
    introduces: tuple[str, ...] = ()        # constructs / intrinsics it may introduce
    lowers: bool = False                    # its output is in another dialect than its input:
                                            # its refusal is what decides a failed plan


class PassRefused(XpilerError):
    """The legality check failed: the rewrite would be wrong (or is unsupported) here."""

    exit_code = 1

    @classmethod
    def of(cls, name: str, diagnostics) -> "PassRefused":
        """The refusal (or, for not-applicable codes, the "nothing to do") a rewrite called
        without a plan raises when its own analysis finds the check's diagnostics."""
        diagnostics = list(diagnostics)
        return cls(f"{name}: {diagnostics[0].message if diagnostics else 'refused'}",
                   diagnostics=diagnostics)


@lru_cache(maxsize=None)
def not_applicable_codes() -> frozenset[str]:
    """The codes of ``passes/diagnostics.toml`` declared ``applicability = true``: the pass
    found nothing to rewrite (as opposed to a refusal: the rewrite would be wrong)."""
    table = tomllib.loads((Path(__file__).resolve().parent / "diagnostics.toml").read_text())
    return frozenset(code for code, entry in table.items() if entry.get("applicability") is True)


def is_not_applicable(diagnostic: Diagnostic | str) -> bool:
    code = diagnostic if isinstance(diagnostic, str) else diagnostic.code
    return code in not_applicable_codes()


@dataclass
class PassOutcome:
    """What ``apply_pass`` did: ``changed`` False means the pass found nothing to do and
    ``program`` is the input itself (``reason``: the not-applicable diagnostic, None when the
    rewrite returned its input without one); ``plan`` is what the check handed the rewrite."""

    program: Any
    changed: bool
    reason: Diagnostic | None = None
    plan: Any = None


@dataclass
class RegisteredPass:
    info: PassInfo
    apply: Callable
    check: Callable | None = None

    def legality(self, fn: Callable) -> Callable:
        self.check = fn
        return fn

    def __call__(self, program, **options):
        return self.apply(program, **options)

    @property
    def takes_plan(self) -> bool:
        try:
            return "plan" in inspect.signature(self.apply).parameters
        except (TypeError, ValueError):
            return False


REGISTRY: dict[str, RegisteredPass] = {}


def register(info: PassInfo):
    def wrap(fn: Callable) -> RegisteredPass:
        if info.name in REGISTRY:
            raise ValueError(f"pass {info.name!r} registered twice")
        entry = RegisteredPass(info, fn)
        REGISTRY[info.name] = entry
        return entry

    return wrap


def _coerce_options(info: PassInfo, options: dict) -> dict:
    out = {}
    for key, value in options.items():
        if key not in info.options:
            raise PassRefused(f"pass {info.name} has no option {key!r} "
                              f"(options: {', '.join(info.options) or 'none'})")
        want = info.options[key].type
        try:
            out[key] = want(value) if not isinstance(value, want) else value
        except (TypeError, ValueError):
            raise PassRefused(f"pass {info.name}: option {key}={value!r} is not a {want.__name__}") from None
    return out


def apply_pass(name: str, program, **options) -> PassOutcome:
    """Check, then rewrite (module docstring). Returns the outcome; raises PassRefused."""
    entry = REGISTRY.get(name)
    if entry is None:
        raise PassRefused(f"unknown pass {name!r} (known: {', '.join(sorted(REGISTRY))})")
    opts = _coerce_options(entry.info, options)
    plan = None
    if entry.check is not None:
        got = entry.check(program, **opts)
        if got is None or isinstance(got, (list, tuple)):
            errors = [d for d in (got or ()) if d.severity == "error"]
            refusals = [d for d in errors if not is_not_applicable(d)]
            if refusals:
                raise PassRefused(f"{name} does not apply: {refusals[0].message}", diagnostics=refusals)
            if errors:
                return PassOutcome(program, False, errors[0])
        else:
            plan = got
    kwargs = dict(opts, plan=plan) if plan is not None and entry.takes_plan else opts
    try:
        out = entry.apply(program, **kwargs)
    except PassRefused as exc:
        errors = [d for d in exc.diagnostics if d.severity == "error"]
        if errors and all(is_not_applicable(d) for d in errors):
            return PassOutcome(program, False, errors[0], plan)
        raise
    if out is program:
        return PassOutcome(program, False, None, plan)
    return PassOutcome(out, True, None, plan)


def run_pass(name: str, program, **options):
    """Check legality, then apply. Returns the new Program (the input itself when the pass
    found nothing to do); raises PassRefused."""
    return apply_pass(name, program, **options).program


# ------------------------------------------------------------------------------ pipelines
_STEP = re.compile(r"\s*([A-Za-z_][\w]*)\s*(?:\{([^{}]*)\})?\s*(?:,|$)")


def _parse_value(text: str):
    text = text.strip()
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text in ("true", "false"):
        return text == "true"
    return text


def parse_pipeline(text: str) -> list[tuple[str, dict]]:
    """``"split{factor=4},bind"`` -> ``[("split", {"factor": 4}), ("bind", {})]``."""
    steps, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _STEP.match(text, pos)
        if not m or m.end() == pos:
            raise PassRefused(f"bad pipeline near {text[pos:pos + 20]!r} (expected name{{k=v,...}},...)")
        opts = {}
        if m.group(2):
            for item in m.group(2).split(";" if ";" in m.group(2) else ","):
                if not item.strip():
                    continue
                k, sep, v = item.partition("=")
                if not sep and opts and ";" not in m.group(2):
                    # ``loops=i,j``: a list value spelled with commas (format_pipeline writes
                    # a single option without ';'), the items continue the previous value
                    last = list(opts)[-1]
                    opts[last] = f"{opts[last]},{item.strip()}"
                    continue
                if not sep:
                    raise PassRefused(f"bad option {item!r} in pipeline step {m.group(1)}")
                opts[k.strip()] = _parse_value(v)
        steps.append((m.group(1), opts))
        pos = m.end()
    return steps


def format_pipeline(steps) -> str:
    def fmt(v):
        return ("true" if v else "false") if isinstance(v, bool) else str(v)

    parts = []
    for name, opts in steps:
        if opts:
            parts.append(f"{name}{{{';'.join(f'{k}={fmt(v)}' for k, v in sorted(opts.items()))}}}")
        else:
            parts.append(name)
    return ",".join(parts)
