"""Translation benchmark: the corpus through the 12 directions, one table.

``xpiler bench`` and ``tools/bench_translate.py`` (a thin wrapper) run this module.

For each direction SRC -> DST and each corpus kernel of SRC that has a case file, run
``xpiler.translate.translate`` (verification on the virtual device) and record one JSON object
per kernel (``Record``): status, seconds (the translation only), the optional compile check of
the output, and the counts the translation report gives (parallel units used vs available,
on-chip buffer bytes, special instructions of the source and of the output).

Table columns per direction
    verified/total; compile checks ``ok/checked`` (``--compile-check``: CUDA with ``nvcc -c``,
    HIP with ``hipcc -c --offload-arch=gfx90a`` (``HIP_PLATFORM=amd``), VNNI with ``g++ -c``,
    each only when the tool is installed, "-" otherwise; BANG outputs count as checked by the
    strict-mode verification that accepted them); median and max seconds per kernel (without
    the compile checks); ``parallel``: verified outputs that use more than one parallel unit
    (GPU threads, BANG cores, VNNI OpenMP/SIMD loops); ``on-chip``: verified outputs with
    on-chip buffers / sources with them; ``special``: verified outputs with special
    instructions / sources with them.

Directions without a plan are reported as such (0 verified), never skipped silently.
``--jobs N`` runs kernels in N processes (the table and the records keep corpus order);
``--jsonl F`` writes one record per kernel; ``--resume`` keeps the records already in F and runs
only the missing kernels, so long runs can be split and combined. ``--infer-inputs`` hides the
case files, so verification runs on inputs the driver infers (measures ``xpiler.infer``).
``--corpus DIR`` measures another kernel set laid out like ``xpiler/corpus``: ``DIR/<platform>/``
holding kernels (``.cu``, ``.hip``, ``.mlu``, ``.cpp``) with their case files (``tests/realworld``,
or a held-out set); a platform without a folder there contributes no kernels.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLATFORMS = ("cuda", "hip", "bang", "vnni")
SUFFIX = {"cuda": ".cu", "hip": ".hip", "bang": ".mlu", "vnni": ".cpp"}
COMPILE_TIMEOUT = 300
_CODE = re.compile(r"\bXP-?[A-Z0-9]+(?:-[A-Z0-9]+)*\b")


@dataclass
class Record:
    direction: str
    kernel: str
    status: str                          # verified | unverified | failed | error
    seconds: float
    message: str = ""
    compile: dict | None = None          # {"tool", "ok", "message"} or None (not checked)
    units_used: object = None
    units_available: object = None
    parallel: bool = False
    on_chip_bytes: dict = field(default_factory=dict)
    source_on_chip: bool = False
    special: list = field(default_factory=list)
    source_special: bool = False
    codes: list = field(default_factory=list)    # diagnostic codes of the refused / failed steps
    inferred: dict | None = None                 # scalars inferred (--infer-inputs runs)
    cause: str = ""                              # the miss's deciding step: "pass: status [CODE]"
    second_size: str = ""                        # verified | failed | skipped | "" (not run)

    def to_json(self) -> dict:
        return asdict(self)


def sources(platform: str, corpus: str | Path | None = None) -> list[Path]:
    """The kernels of ``platform`` that have a case file, in name order: from the bundled corpus,
    or from ``corpus/<platform>/`` when a corpus directory is given."""
    d = (Path(corpus) if corpus else ROOT / "xpiler" / "corpus") / platform
    if not d.is_dir():
        return []
    return sorted(p for p in d.glob(f"*{SUFFIX[platform]}") if p.with_suffix(".json").exists())


def directions(only: str | None = None) -> list[tuple[str, str]]:
    from .ir.errors import UsageError

    out = [(a, b) for a in PLATFORMS for b in PLATFORMS if a != b]
    if only:
        want = set()
        for item in only.split(","):
            pair = tuple(x.strip() for x in item.split(":"))
            if len(pair) != 2 or pair not in out:
                raise UsageError(f"--only: '{item}' is not a direction SRC:DST over {', '.join(PLATFORMS)}")
            want.add(pair)
        out = [d for d in out if d in want]
    return out


def compile_check(path: Path, platform: str, status: str) -> dict | None:
    """Compile the emitted file with the target's real toolchain when it is installed."""
    if platform == "bang":
        return {"tool": "strict", "ok": status == "verified", "message": "virtual device strict mode"}
    if platform == "cuda":
        tool, cmd, env = "nvcc", ["nvcc", "-c", "-std=c++17"], None
    elif platform == "hip":
        tool, cmd = "hipcc", ["hipcc", "-c", "-std=c++17", "--offload-arch=gfx90a"]
        env = dict(os.environ, HIP_PLATFORM="amd")
    else:
        tool, cmd, env = "g++", ["g++", "-c", "-std=c++17", "-O2", "-march=native", "-fopenmp"], None
    if shutil.which(cmd[0]) is None:
        return None
    obj = path.with_suffix(path.suffix + ".o")
    try:
        proc = subprocess.run([*cmd, "-o", str(obj), str(path)], capture_output=True, text=True,
                              timeout=COMPILE_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return {"tool": tool, "ok": False, "message": f"timed out after {COMPILE_TIMEOUT} s"}
    msg = "" if proc.returncode == 0 else compiler_message(proc.stderr or proc.stdout)
    return {"tool": tool, "ok": proc.returncode == 0, "message": msg}


_ERROR_LINE = re.compile(r"\berror\b|internal compiler|catastrophic|segmentation fault|core dumped|"
                         r"assertion .*failed|\bICE\b|stack dump", re.I)


def compiler_message(output: str, keep: int = 3) -> str:
    """The first error lines of a failed compile (warnings such as nvcc's unknown-pragma ones
    come first in the output and say nothing about the failure); the first lines when no line
    looks like an error (e.g. a crash with no diagnostic)."""
    lines = [l.strip() for l in (output or "").strip().splitlines() if l.strip()]
    errors = [l for l in lines if _ERROR_LINE.search(l)]
    return " | ".join((errors or lines)[:keep])


def _uses_parallel(res: dict) -> bool:
    par = res.get("parallel") or {}
    if par.get("kind") == "cpu":
        return bool(par.get("omp_parallel_loops") or par.get("simd_loops") or par.get("avx512_calls"))
    used = par.get("units_used")
    return isinstance(used, int) and used > 1


def run_one(src: str, src_p: str, dst_p: str, do_compile: bool, tmp: str, timeout: float = 60,
            infer_inputs: bool = False) -> dict:
    """Translate one corpus kernel; a Record as a dict (top level: picklable for the pool).
    With ``infer_inputs`` the kernel is copied without its case file, so the driver infers the
    verification inputs (xpiler.infer) instead of reading them."""
    from .ir.errors import XpilerError
    from .translate import translate

    path = Path(src)
    out = Path(tmp) / f"{path.stem}.{src_p}{SUFFIX[dst_p]}"
    rec = Record(f"{src_p}->{dst_p}", path.name, "error", 0.0)
    if infer_inputs:
        alone = Path(tmp) / f"{path.stem}.{src_p}-{dst_p}.alone"
        alone.mkdir(exist_ok=True)
        shutil.copy(path, alone / path.name)
        path = alone / path.name
    t0 = time.perf_counter()
    try:
        rep = translate(str(path), dst_p, str(out), timeout=timeout)
        rec.status, rec.message = rep.status, rep.message
    except XpilerError as exc:
        rep, rec.status, rec.message = None, "failed", exc.message
        rec.codes = sorted(set(_CODE.findall(exc.render())))
    except Exception as exc:  # a crash is a failure of this kernel, not of the benchmark
        rep, rec.message = None, f"internal error: {type(exc).__name__}: {exc}"
    rec.seconds = time.perf_counter() - t0
    if rep is not None:
        src_res = rep.resources.get("source") or {}
        out_res = rep.resources.get("output") or {}
        par = out_res.get("parallel") or {}
        rec.units_used, rec.units_available = par.get("units_used"), par.get("units_available")
        rec.parallel = _uses_parallel(out_res)
        rec.on_chip_bytes = out_res.get("on_chip_bytes") or {}
        rec.source_on_chip = bool(src_res.get("on_chip_bytes"))
        rec.special = out_res.get("special_instructions") or []
        rec.source_special = bool(src_res.get("special_instructions"))
        if rec.status != "verified":
            # an unchanged step (the pass had nothing to do) is no miss, unless nothing else is
            bad = [s for s in rep.steps if s.status not in ("verified", "unchanged")]
            rec.codes = sorted(set(c for s in bad for c in _CODE.findall(s.message)))
            rec.cause = _cause(bad) or _cause([s for s in rep.steps if s.status == "unchanged"])
            detail = "; ".join(f"{s.name}: {s.status}" for s in bad[-3:])
            rec.message = f"{rec.message} ({detail})" if detail and rec.message else (rec.message or detail)
    if do_compile and rec.status == "verified" and out.exists():
        rec.compile = compile_check(out, dst_p, rec.status)
    if rep is not None and rep.inference:
        rec.inferred = rep.inference.get("scalars") if rep.inference.get("ok") else None
    if rep is not None and rep.second_size:
        rec.second_size = rep.second_size.get("status", "")
    if out.exists():
        out.unlink()
    return rec.to_json()


def _load(jsonl: Path | None) -> dict:
    done = {}
    if jsonl is None or not jsonl.exists():
        return done
    for line in jsonl.read_text().splitlines():
        try:
            r = json.loads(line)
            done[(r["direction"], r["kernel"])] = r
        except (ValueError, KeyError, TypeError):
            continue
    return done


def run(only: str | None = None, limit: int = 0, jobs: int = 1, do_compile: bool = False,
        jsonl: str | None = None, resume: bool = False, timeout: float = 60, progress=None,
        infer_inputs: bool = False, corpus: str | None = None) -> dict:
    """Run the benchmark; returns {"directions": {dir: summary}, "records": [Record dicts]} in
    corpus order (independent of --jobs). ``corpus``: a directory laid out like xpiler/corpus."""
    from concurrent.futures import ProcessPoolExecutor

    from .ir.errors import UsageError
    from passes.plans import PLANS

    if jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if resume and not jsonl:
        raise UsageError("--resume needs --jsonl F (the records to continue)")
    dirs = directions(only)
    if corpus and not Path(corpus).is_dir():
        raise UsageError(f"--corpus: '{corpus}' is not a directory")
    jpath = Path(jsonl) if jsonl else None
    done = _load(jpath) if resume else {}
    if jpath is not None and not resume:
        jpath.parent.mkdir(parents=True, exist_ok=True)
        jpath.write_text("")
    work = [(str(f), a, b) for a, b in dirs for f in sources(a, corpus)[: limit or None]]
    results: dict[int, dict] = {}
    todo = []
    for i, (f, a, b) in enumerate(work):
        key = (f"{a}->{b}", Path(f).name)
        if key in done:
            results[i] = done[key]
        else:
            todo.append(i)
    with tempfile.TemporaryDirectory(prefix="xpiler-bench-") as tmp:
        def finished(i, rec):
            results[i] = rec
            if jpath is not None:
                with open(jpath, "a") as fh:
                    fh.write(json.dumps(rec) + "\n")
            if progress:
                progress(rec)

        if jobs == 1:
            for i in todo:
                f, a, b = work[i]
                finished(i, run_one(f, a, b, do_compile, tmp, timeout, infer_inputs))
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = {pool.submit(run_one, *work[i], do_compile, tmp, timeout, infer_inputs): i
                           for i in todo}
                from concurrent.futures import as_completed

                for fut in as_completed(futures):
                    i = futures[fut]
                    try:
                        rec = fut.result()
                    except Exception as exc:  # a worker died (memory, signal)
                        f, a, b = work[i]
                        rec = Record(f"{a}->{b}", Path(f).name, "error", 0.0,
                                     f"worker failed: {type(exc).__name__}: {exc}").to_json()
                    finished(i, rec)
    records = [results[i] for i in sorted(results)]
    summary = {}
    for a, b in dirs:
        d = f"{a}->{b}"
        rs = [r for r in records if r["direction"] == d]
        ver = [r for r in rs if r["status"] == "verified"]
        times = [r["seconds"] for r in rs]
        checked = [r for r in rs if r.get("compile")]
        summary[d] = {
            "planned": (a, b) in PLANS,
            "verified": len(ver), "total": len(rs),
            "compile_ok": sum(1 for r in checked if r["compile"]["ok"]), "compile_checked": len(checked),
            "compile_tool": checked[0]["compile"]["tool"] if checked else None,
            "median_s": statistics.median(times) if times else 0.0, "max_s": max(times) if times else 0.0,
            "second_size": sum(1 for r in ver if r.get("second_size") == "verified"),
            "second_size_failed": sum(1 for r in rs if r.get("second_size") == "failed"),
            "parallel": sum(1 for r in ver if r["parallel"]),
            "on_chip": sum(1 for r in ver if r["on_chip_bytes"]),
            "source_on_chip": sum(1 for r in ver if r["source_on_chip"]),
            "special": sum(1 for r in ver if r["special"]),
            "source_special": sum(1 for r in ver if r["source_special"]),
            "failures": [f"{r['kernel']}: {r['status']}: {r['message'][:160]}" for r in rs if r["status"] != "verified"],
            "codes": _count_codes(r for r in rs if r["status"] != "verified"),
            "causes": _count_causes(r for r in rs if r["status"] != "verified"),
        }
    return {"directions": summary, "records": records, "corpus": str(corpus) if corpus else None}


def _cause(bad_steps) -> str:
    """The step that decided a miss: the last one that failed verification or crashed, else the
    last refusal of a lowering pass (``PassInfo.lowers``: the step that should have changed the
    dialect; later refusals, such as tensorize_bang on a program still in C, follow from it),
    else the last refusal. The caller passes the ``unchanged`` steps only when there is no
    other: then a lowering pass that found nothing to lower decides."""
    from passes.base import REGISTRY

    if not bad_steps:
        return ""
    hard = [s for s in bad_steps if s.status in ("failed-verification", "error")]
    lowering = [s for s in bad_steps if s.name in REGISTRY and REGISTRY[s.name].info.lowers]
    s = (hard or lowering or bad_steps)[-1]
    codes = _CODE.findall(s.message)
    return f"{s.name}: {s.status}" + (f" {codes[0]}" if codes else "")


def _count_codes(records) -> dict:
    """Diagnostic code -> number of missed kernels whose refused/failed steps carry it."""
    out: dict[str, int] = {}
    for r in records:
        for c in r.get("codes") or ():
            out[c] = out.get(c, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def _count_causes(records) -> dict:
    out: dict[str, int] = {}
    for r in records:
        c = r.get("cause") or r.get("message", "")[:80] or r.get("status", "")
        out[c] = out.get(c, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def table(result: dict, compile_checked: bool):
    from rich.table import Table

    t = Table(title=f"xpiler translate on {result.get('corpus') or 'the project corpus'} (verified on the virtual device)")
    cols = ["direction", "verified/total", "2nd size"] + (["compile ok/checked"] if compile_checked else []) + \
           ["median s", "max s", "parallel", "on-chip out/src", "special out/src"]
    for c in cols:
        t.add_column(c)
    for d, s in result["directions"].items():
        row = [d.replace("->", " -> ") + ("" if s["planned"] else " (no plan)"), f"{s['verified']}/{s['total']}",
               f"{s['second_size']}/{s['verified']}"]
        if compile_checked:
            row.append(f"{s['compile_ok']}/{s['compile_checked']} {s['compile_tool'] or ''}".strip()
                       if s["compile_checked"] else "-")
        row += [f"{s['median_s']:.2f}", f"{s['max_s']:.2f}", f"{s['parallel']}/{s['verified']}",
                f"{s['on_chip']}/{s['source_on_chip']}", f"{s['special']}/{s['source_special']}"]
        t.add_row(*row)
    return t


def main_cli(only=None, limit=0, jobs=1, do_compile=False, json_path=None, jsonl=None, resume=False,
             timeout=60.0, infer_inputs=False, corpus=None) -> dict:
    """What ``xpiler bench`` and ``tools/bench_translate.py`` do: run, print the table, write JSON."""
    from rich.console import Console
    from rich.progress import Progress

    dirs = directions(only)
    total = sum(len(sources(a, corpus)[: limit or None]) for a, _ in dirs)
    with Progress(transient=True, console=Console(stderr=True)) as prog:
        task = prog.add_task("translating", total=total)
        result = run(only, limit, jobs, do_compile, jsonl, resume, timeout,
                     progress=lambda rec: prog.advance(task), infer_inputs=infer_inputs, corpus=corpus)
    con = Console(highlight=False)
    if not con.is_terminal:
        con = Console(highlight=False, width=140)
    con.print(table(result, do_compile))
    for d, s in result["directions"].items():
        if s["causes"]:
            causes = "; ".join(f"{c} x{n}" for c, n in list(s["causes"].items())[:5])
            con.print(f"{d.replace('->', ' -> ')} misses ({s['total'] - s['verified']}): {causes}", markup=False)
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(json.dumps(result["directions"], indent=2) + "\n")
    return result


def main(argv=None) -> int:
    import argparse

    from .ir.errors import XpilerError

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated SRC:DST directions (default: all 12)")
    ap.add_argument("--limit", type=int, default=0, help="at most N kernels per direction")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="kernels translated in parallel (processes)")
    ap.add_argument("--compile-check", action="store_true",
                    help="compile outputs with nvcc / hipcc / g++ where installed (BANG: strict mode)")
    ap.add_argument("--json", help="write the per-direction figures here")
    ap.add_argument("--jsonl", help="write one JSON record per kernel here")
    ap.add_argument("--resume", action="store_true", help="keep the records already in --jsonl, run the rest")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per kernel run")
    ap.add_argument("--infer-inputs", action="store_true",
                    help="ignore the case files: verification inputs are inferred (xpiler.infer)")
    ap.add_argument("--corpus", help="measure DIR/<platform>/ kernels with case files instead of xpiler/corpus")
    o = ap.parse_args(argv)
    try:
        main_cli(o.only, o.limit, o.jobs, o.compile_check, o.json, o.jsonl, o.resume, o.timeout,
                 o.infer_inputs, o.corpus)
    except XpilerError as exc:
        print(exc.render())
        return exc.exit_code
    return 0
