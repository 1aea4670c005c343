#!/usr/bin/env python3
"""Translate every probe kernel (tests/probe/<platform>/) to the three other platforms with
inferred inputs, as a new user would (`xpiler translate SRC --to P -o OUT`, no case file), and
write RESULTS.md: per kernel and direction the exit status and the first line xpiler printed
(verified, the degenerate-structure warning, or the refusal that decided a failure).

    python tests/probe/run.py [-j 2] [--only SUBSTR,...] [--no-write]

The probe kernels were written to try constructs the corpus and the real-world set lack
(functors and lambdas handed to template kernels, event timing, managed memory, std::vector
scratch, pointer walks, masked tails, OpenMP reductions, fixed-tile kernel-only files, ...);
there is no reference beyond the source itself: a translation counts when xpiler verified it
against the source on the same inputs.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PLATFORMS = ("cuda", "hip", "bang", "vnni")
SUFFIX = {"cuda": ".cu", "hip": ".hip", "bang": ".mlu", "vnni": ".cpp"}
TIME_LIMIT = 300


def sources(only: list[str]) -> list[tuple[str, Path]]:
    out = []
    for platform in PLATFORMS:
        for path in sorted((HERE / platform).glob(f"*{SUFFIX[platform]}")):
            if not only or any(s in path.name for s in only):
                out.append((platform, path))
    return out


def translate(platform: str, path: Path, to: str, out_dir: Path) -> dict:
    out = out_dir / f"{path.stem}.{to}{SUFFIX[to]}"
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "xpiler", "translate", str(path), "--to", to,
                           "-o", str(out)], capture_output=True, text=True, cwd=ROOT,
                          timeout=TIME_LIMIT + 60)
    text = (proc.stderr or proc.stdout).strip().splitlines()
    first = next((line for line in text if "warning: degenerate" in line), text[0] if text else "")
    return {"kernel": f"{platform}/{path.name}", "to": to, "rc": proc.returncode,
            "seconds": round(time.monotonic() - start, 1),
            "line": first.replace(str(out_dir) + "/", "").replace(str(HERE) + "/", "")[:220]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-j", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    only = [s for s in args.only.split(",") if s]
    jobs = [(p, path, to) for p, path in sources(only) for to in PLATFORMS if to != p]
    with tempfile.TemporaryDirectory() as tmp, cf.ProcessPoolExecutor(args.j) as pool:
        futures = [pool.submit(translate, p, path, to, Path(tmp)) for p, path, to in jobs]
        records = []
        for f in cf.as_completed(futures):
            r = f.result()
            records.append(r)
            print(f"{r['kernel']:45s} -> {r['to']:5s} rc={r['rc']} {r['seconds']:6.1f}s {r['line'][:90]}",
                  flush=True)
    records.sort(key=lambda r: (r["kernel"], r["to"]))
    ok = sum(r["rc"] == 0 for r in records)
    degenerate = sum(r["rc"] == 0 and "degenerate" in r["line"] for r in records)
    lines = ["# Probe kernels: translations with inferred inputs", "",
             f"{ok}/{len(records)} verified ({degenerate} of them with a degenerate-structure "
             "warning). Written by `python tests/probe/run.py`.", "",
             "| kernel | to | exit | seconds | first line |", "|---|---|---|---|---|"]
    for r in records:
        lines.append(f"| {r['kernel']} | {r['to']} | {r['rc']} | {r['seconds']} | "
                     f"{r['line'].replace('|', '/')} |")
    print(f"{ok}/{len(records)} verified, {degenerate} degenerate")
    if not args.no_write and not only:
        (HERE / "RESULTS.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
