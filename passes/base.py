"""What every pass declares, and the registry the pipeline, CLI, docs and prompts read.

A pass is a pure function ``Program -> Program`` with a separate legality check:

    @register(PassInfo(name="split", summary="...", requires=(...), guarantees=(...),
                       options={"factor": Option(int, 4, "inner extent")}))
    def split(program, *, factor=4): ...

    @split.legality
    def _split_legal(program, *, factor=4) -> list[Diagnostic]: ...

``run_pass(name, program, **options)`` checks legality first (refusal = ``PassRefused`` with
diagnostics), then applies the rewrite on a copy; passes never mutate their input.

Pipelines are strings that round-trip: ``detensorize,split{factor=4},bind``
(``parse_pipeline`` / ``format_pipeline``), so reports, reproducers and the tuner share one
spelling.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
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
    """The legality check failed: the pass does not apply to this program."""

    exit_code = 1


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


def run_pass(name: str, program, **options):
    """Check legality, then apply. Returns the new Program; raises PassRefused."""
    entry = REGISTRY.get(name)
    if entry is None:
        raise PassRefused(f"unknown pass {name!r} (known: {', '.join(sorted(REGISTRY))})")
    opts = _coerce_options(entry.info, options)
    if entry.check is not None:
        problems: list[Diagnostic] = list(entry.check(program, **opts) or [])
        errors = [d for d in problems if d.severity == "error"]
        if errors:
            raise PassRefused(f"{name} does not apply: {errors[0].message}", diagnostics=errors)
    return entry.apply(program, **opts)


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
