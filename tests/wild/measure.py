#!/usr/bin/env python3
"""Measure xpiler's front-end, virtual device and translations on the wild set (tests/wild).

For every kernel (``tests/wild/<platform>/<name>.<ext>`` with its case file):
  1. ``xpiler parse --json``: accepted, or the diagnostic code and message;
  2. a run on the virtual device (natively for vnni) with the inputs ``xpiler translate`` would
     infer (``xpiler.infer.infer_inputs``, default launch), and a run with the case file's
     inputs and launch; each compared with ``references.py``;
  3. with ``--translate``: ``xpiler translate --to P --config CFG`` to every other platform with
     the case file's inputs (CFG: ``{"args": {NAME: @file.npy | value}, "launch": ...}``), and
     (``--inputs both``, the default) the kernel alone with inferred inputs, recorded as
     verified / failed / unverified / bad input / error, and whether a verified output was
     also verified at a second size.

Prints a table, writes ``tests/wild/RESULTS.md`` (measured numbers only) and
``tests/wild/status.json`` (per kernel: what passed and the first diagnostic), which
``tests/corpus/test_wild.py`` uses for its expected failures.

    python tests/wild/measure.py [-j 2] [--translate [--inputs case|inferred|both] [--build]] [--only SUBSTRING[,SUBSTRING...] [--merge]]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

PLATFORMS = ("cuda", "hip", "bang", "vnni")
SUFFIX = {"cuda": ".cu", "hip": ".hip", "bang": ".mlu", "vnni": ".cpp"}
XPILER = [sys.executable, "-m", "xpiler"]
DIAG = re.compile(r"(?:error|warning) (XP[\w-]+): (.*)")


def kernels() -> list[Path]:
    out = []
    for p in PLATFORMS:
        out += sorted(q for q in (HERE / p).glob(f"*{SUFFIX[p]}") if q.with_suffix(".json").exists())
    return out


def _first_diag(text: str) -> tuple[str, str]:
    for line in text.splitlines():
        m = DIAG.search(line)
        if m and " error " in f" {line} ":
            return m.group(1), m.group(2).strip()
    for line in text.splitlines():
        if line.strip():
            return "crash", line.strip()[:300]
    return "crash", "no output"


def _short(exc: BaseException) -> tuple[str, str]:
    text = str(exc)
    m = DIAG.search(text)
    if m:
        return m.group(1), m.group(2).strip()[:300]
    return type(exc).__name__, text.strip().splitlines()[0][:300] if text.strip() else type(exc).__name__


def parse_step(path: Path) -> dict:
    r = subprocess.run(XPILER + ["parse", "--json", str(path)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    if r.returncode == 0:
        d = json.loads(r.stdout)
        errs = [x for x in d.get("diagnostics", []) if x.get("severity") == "error"]
        if not errs:
            return {"ok": True, "entry": d["entry"]["name"] if d.get("entry") else None}
        return {"ok": False, "code": errs[0]["code"], "message": errs[0]["message"][:300]}
    code, msg = _first_diag(r.stderr + r.stdout)
    return {"ok": False, "code": code, "message": msg, "exit": r.returncode}


def _run_and_check(path, case, args, names, launch, timeout):
    import numpy as np

    import references
    from xpiler.run import run_kernel

    before = {n: (np.array(a, copy=True) if isinstance(a, np.ndarray) else a) for n, a in zip(names, args)}
    t0 = time.time()
    try:
        run_kernel(path, args=args, launch=launch, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - every failure is a measured outcome
        code, msg = _short(exc)
        return {"run": False, "code": code, "message": msg, "seconds": round(time.time() - t0, 1)}
    after = dict(zip(names, args))
    try:
        ok, msg = references.check(case, before, after)
    except Exception as exc:  # noqa: BLE001
        ok, msg = False, f"reference error: {type(exc).__name__}: {exc}"[:300]
    return {"run": True, "match": ok, "message": msg, "seconds": round(time.time() - t0, 1)}


def run_case_step(path: Path, case: dict, timeout: float) -> dict:
    from cases import make_inputs

    args = make_inputs(case, seed=0)
    return _run_and_check(path, case, args, [p["name"] for p in case["params"]], case.get("launch"), timeout)


def run_inferred_step(path: Path, case: dict, timeout: float) -> dict:
    from xpiler.infer import infer_inputs
    from xpiler.parse import parse_file

    try:
        program = parse_file(path)
        inf = infer_inputs(program, path, seed=0, timeout=timeout)
    except Exception as exc:  # noqa: BLE001
        code, msg = _short(exc)
        return {"run": False, "inferred": False, "code": code, "message": msg}
    if not inf.ok:
        return {"run": False, "inferred": False, "code": "no-inputs", "message": inf.reason[:300]}
    names = [p.name for p in program.params]
    res = _run_and_check(path, case, list(inf.args), names, None, timeout)
    res["inferred"] = True
    res["scalars"] = inf.scalars
    return res


def translate_step(path: Path, case: dict, to: str, timeout: float, inferred: bool = False,
                   build: bool = False) -> dict:
    """One translation, with the case file's inputs (``--config``) or, ``inferred``, as a new
    user runs it: the kernel alone in a folder (no case file), inputs inferred by xpiler.
    ``build``: a verified CUDA, HIP or VNNI output is also compiled with the real toolchain
    (nvcc, hipcc for gfx90a, g++) where it is installed (``xpiler.bench.compile_check``)."""
    from cases import config_args, make_inputs

    with tempfile.TemporaryDirectory(prefix="xpwild-") as tmp:
        if inferred:
            src = Path(tmp) / "alone" / path.name
            src.parent.mkdir()
            src.write_bytes(path.read_bytes())
            given = []
        else:
            src = path
            cfg = Path(tmp) / "config.json"
            cfg.write_text(json.dumps(config_args(case, make_inputs(case, seed=0), Path(tmp))))
            given = ["--config", str(cfg)]
        out = Path(tmp) / (path.stem + SUFFIX[to])
        rep = Path(tmp) / "report.json"
        t0 = time.time()
        try:
            r = subprocess.run(XPILER + ["translate", str(src), "--to", to, "-o", str(out), *given,
                                         "--report", str(rep)], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "seconds": timeout}
        status = {0: "verified", 1: "failed", 2: "bad input", 3: "unverified"}.get(r.returncode, "error")
        res = {"status": status, "seconds": round(time.time() - t0, 1)}
        try:
            data = json.loads(rep.read_text()) if rep.exists() else {}
        except ValueError:
            data = {}
        second = data.get("second_size")
        if status == "verified" and data.get("structure"):
            res["degenerate"] = [n[:160] for n in data["structure"]]
        if build and status == "verified" and to != "bang":       # BANG has no real toolchain here
            from xpiler.bench import compile_check

            built = compile_check(out, to, status)
            if built is not None:
                res["build"] = {"tool": built["tool"], "ok": built["ok"], "message": built["message"][:300]}
        if second:
            res["second_size"] = second.get("status", "")
            if second.get("status") != "verified":
                res["second_size_note"] = (second.get("message") or "")[:200]
        if status != "verified":
            detail = ""
            if rep.exists():
                try:
                    d = json.loads(rep.read_text())
                    passes = [s for s in d.get("passes", []) if isinstance(s, dict)]
                    # the deciding step, as the driver reports it (issue 16), else the first failure
                    causes = d.get("causes") or []
                    # an alternative that did not apply at all ("unchanged") says less than one
                    # that was refused or failed
                    bad = [c for c in causes if c.get("status") != "unchanged"] or causes or \
                        [s for s in passes if s.get("status") not in ("verified", "unchanged", None)]
                    detail = bad[0].get("message", "") if bad else d.get("message", "")
                except ValueError:
                    pass
            if detail:
                m = re.search(r"error (XP[\w-]+)", detail)
                code, msg = (m.group(1) if m else "verification"), detail.replace(str(ROOT) + "/", "")
            else:
                code, msg = _first_diag(r.stderr + r.stdout)
            res.update(code=code, message=(msg or "")[:300])
        return res


def measure_one(item) -> dict:
    path, opts = item
    path = Path(path)
    case = json.loads(path.with_suffix(".json").read_text())
    rec = {"file": f"{path.parent.name}/{path.name}", "platform": path.parent.name}
    rec["parse"] = parse_step(path)
    if rec["parse"]["ok"]:
        rec["inferred"] = run_inferred_step(path, case, opts["timeout"])
        rec["case"] = run_case_step(path, case, opts["timeout"])
    else:
        rec["inferred"] = rec["case"] = {"run": False, "code": "parse", "message": "not parsed"}
    for key, inferred in (("translate", False), ("translate_inferred", True)):
        if not opts["translate"] or opts["inputs"] not in ("both", "inferred" if inferred else "case"):
            continue
        rec[key] = {}
        for to in PLATFORMS:
            if to == rec["platform"]:
                continue
            if not rec["parse"]["ok"]:
                rec[key][to] = {"status": "not parsed"}
                continue
            rec[key][to] = translate_step(path, case, to, opts["translate_timeout"], inferred,
                                          opts.get("build", False))
    return rec


def _cell(ok: int, total: int) -> str:
    return f"{ok}/{total}"


def merge_records(old: dict, new: list[dict]) -> list[dict]:
    """``status.json`` records with the kernels of a partial run (``--only ... --merge``)
    replaced: a run's results replace the old ones; translations are replaced per direction
    and input kind, so a run of one kind keeps the other kind's figures (each translation
    records the commit it was measured at)."""
    out = dict(old)
    for rec in new:
        prev = out.get(rec["file"], {})
        merged = {**prev, **{k: v for k, v in rec.items() if k not in ("translate", "translate_inferred")}}
        for key in ("translate", "translate_inferred"):
            if key in rec:
                merged[key] = {**prev.get(key, {}), **rec[key]}
        out[rec["file"]] = merged
    return [out[k] for k in sorted(out)]


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=ROOT, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def summarise(records: list[dict], translate: bool, elapsed: float, note: str = "") -> str:
    commits = sorted({t.get("commit", "") for r in records for key in ("translate", "translate_inferred")
                      for t in r.get(key, {}).values()} - {""})
    lines = [f"# Wild set: measured results", "",
             f"`python tests/wild/measure.py{' --translate' if translate else ''}`, "
             f"{datetime.date.today().isoformat()}, {len(records)} kernels, {elapsed / 60:.1f} min "
             f"(this machine: 2 cores shared). Measured numbers only; per-kernel detail in `status.json`"
             + (f"; translations measured at {', '.join(commits)}" if commits else "") + "."
             + (f" {note}" if note else ""), "",
             "| platform | kernels | parse ok | inferred inputs found | runs (inferred) | matches reference (inferred) "
             "| runs (case inputs) | matches reference (case inputs) |",
             "|---|---|---|---|---|---|---|---|"]
    tot = [0] * 7
    for p in PLATFORMS + ("all",):
        rs = [r for r in records if p == "all" or r["platform"] == p]
        if not rs:
            continue
        row = [len(rs), sum(r["parse"]["ok"] for r in rs), sum(bool(r["inferred"].get("inferred")) for r in rs),
               sum(bool(r["inferred"].get("run")) for r in rs), sum(bool(r["inferred"].get("match")) for r in rs),
               sum(bool(r["case"].get("run")) for r in rs), sum(bool(r["case"].get("match")) for r in rs)]
        name = f"**{p}**" if p == "all" else p
        lines.append(f"| {name} | " + " | ".join(str(v) for v in row) + " |")
    lines += ["", "## Rejections by the front-end (`xpiler parse`)", "", "| code | kernels | example |", "|---|---|---|"]
    by = {}
    for r in records:
        if not r["parse"]["ok"]:
            by.setdefault(r["parse"]["code"], []).append(r)
    for code, rs in sorted(by.items(), key=lambda kv: -len(kv[1])):
        ex = rs[0]
        msg = ex["parse"]["message"].replace("|", "\\|")
        lines.append(f"| {code} | {len(rs)} | `{ex['file']}`: {msg} |")
    lines += ["", "## Runs that failed or did not match", "", "| kernel | inputs | outcome |", "|---|---|---|"]
    for r in records:
        for kind in ("inferred", "case"):
            s = r[kind]
            if s.get("code") == "parse":
                continue
            if not s.get("match"):
                what = (f"{s.get('code', 'mismatch')}: " if not s.get("run") else "mismatch: ") + s.get("message", "")
                lines.append(f"| `{r['file']}` | {kind} | {what.replace('|', chr(92) + '|')[:240]} |")
    for key, title in (("translate", "case-file inputs, `--config`"),
                       ("translate_inferred", "inferred inputs: the kernel alone, as a new user runs it")):
        if not translate or not any(key in r for r in records):
            continue
        lines += ["", f"## Translation ({title})", "",
                  "Second size: verified translations re-verified at a second input size (`translate "
                  "--second-size`, the default) / verified; skipped where the entry's sizes are fixed.", "",
                  "Degenerate: verified outputs that lost structure the source has (single-thread "
                  "kernels, on-chip memory or special instructions dropped; the report's `structure`).", "",
                  "| direction | parsed sources | verified | second size | degenerate | failed | unverified | other |",
                  "|---|---|---|---|---|---|---|---|"]
        for src in PLATFORMS:
            for dst in PLATFORMS:
                if src == dst:
                    continue
                rs = [r for r in records if r["platform"] == src and r["parse"]["ok"] and key in r]
                if not [r for r in records if r["platform"] == src]:
                    continue
                ts = [r[key][dst] for r in rs]
                st = [t["status"] for t in ts]
                again = sum(1 for t in ts if t["status"] == "verified" and t.get("second_size") == "verified")
                degenerate = sum(1 for t in ts if t["status"] == "verified" and t.get("degenerate"))
                lines.append(f"| {src} -> {dst} | {len(rs)} | {st.count('verified')} | {again}/{st.count('verified')} | "
                             f"{degenerate} | {st.count('failed')} | {st.count('unverified')} | "
                             f"{len(st) - st.count('verified') - st.count('failed') - st.count('unverified')} |")
        built = [(r["file"], to, t["build"]) for r in records for to, t in r.get(key, {}).items() if "build" in t]
        if built:
            lines += ["", "Verified outputs compiled with the real toolchain (`--build`: nvcc, hipcc for gfx90a, "
                      "g++; BANG has none here):", "", "| target | compiled | build ok |", "|---|---|---|"]
            for to in ("cuda", "hip", "vnni"):
                mine = [b for _f, t, b in built if t == to]
                if mine:
                    lines.append(f"| {to} | {len(mine)} | {sum(b['ok'] for b in mine)} |")
            failures = [f"- `{f}` -> {to} ({b['tool']}): {b['message'][:200]}" for f, to, b in built if not b["ok"]]
            lines += ["", "Build failures:", "", *failures] if failures else []
        lines += ["", "### Translation misses (deciding pass)", "", "| kernel | to | status | cause |", "|---|---|---|---|"]
        for r in records:
            for to, t in r.get(key, {}).items():
                if t["status"] not in ("verified", "not parsed"):
                    cause = (t.get("code", "") + ": " + t.get("message", "")).replace("|", chr(92) + "|").replace("\n", " ")
                    lines.append(f"| `{r['file']}` | {to} | {t['status']} | {cause[:200]} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", type=int, default=1)
    ap.add_argument("--translate", action="store_true")
    ap.add_argument("--only", default="", help="kernels whose file name contains one of these comma-separated substrings")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--translate-timeout", type=float, default=900)
    ap.add_argument("--inputs", choices=("case", "inferred", "both"), default="both",
                    help="translation inputs: the case file's, inferred ones (the kernel alone), or both")
    ap.add_argument("--build", action="store_true",
                    help="compile verified outputs with nvcc / hipcc / g++ where installed")
    ap.add_argument("--no-write", action="store_true", help="print only; keep RESULTS.md and status.json")
    ap.add_argument("--merge", action="store_true",
                    help="with --only: replace those kernels' records in status.json (per direction and "
                         "input kind) and rewrite RESULTS.md from all records (a whole run with one "
                         "--inputs kind always merges)")
    a = ap.parse_args(argv)
    opts = {"timeout": a.timeout, "translate": a.translate, "translate_timeout": a.translate_timeout,
            "inputs": a.inputs, "build": a.build}
    wanted = [w for w in a.only.split(",") if w] or [""]
    items = [(str(p), opts) for p in kernels() if any(w in p.name for w in wanted)]
    t0 = time.time()
    records = []
    with ProcessPoolExecutor(max_workers=max(1, a.j)) as ex:
        for rec in ex.map(measure_one, items):
            records.append(rec)
            p = rec["parse"]
            line = f"{rec['file']:42s} parse {'ok' if p['ok'] else p['code']:10s}"
            for kind in ("inferred", "case"):
                s = rec[kind]
                line += f" {kind}: " + ("match" if s.get("match") else ("run-mismatch" if s.get("run") else s.get("code", "-")))
            for key in ("translate", "translate_inferred"):
                if key in rec:
                    line += f" | {'case' if key == 'translate' else 'inferred'} " + " ".join(
                        f"{k}:{v['status']}{'+2nd' if v.get('second_size') == 'verified' else ''}"
                        for k, v in rec[key].items())
            print(line, flush=True)
    elapsed = time.time() - t0
    commit = _commit()
    for rec in records:
        for key in ("translate", "translate_inferred"):
            for t in rec.get(key, {}).values():
                t["commit"] = commit
    note = ""
    # a partial run (--only --merge) or a run of one input kind keeps the other records
    if a.merge and a.only or not a.only and a.translate and a.inputs != "both":
        old = json.loads((HERE / "status.json").read_text()) if (HERE / "status.json").exists() else {}
        records = merge_records(old, records)
        note = f"Merged: the last run covered {', '.join(wanted) if a.only else 'every kernel'} " \
               f"({a.inputs} inputs)."
    text = summarise(records, a.translate, elapsed, note)
    print(text)
    if not a.no_write and (not a.only or a.merge):
        (HERE / "RESULTS.md").write_text(text)
        (HERE / "status.json").write_text(json.dumps({r["file"]: r for r in records}, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
