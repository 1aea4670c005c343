#!/usr/bin/env python3
"""Translation benchmark: the corpus through all 12 directions, one table.

For each direction SRC -> DST and each corpus kernel of SRC (with its case file), run
``xpiler.translate.translate`` and count verified results; also the median and max seconds
per kernel. Directions without a plan are reported as such (0 verified), never skipped
silently. Usage: python tools/bench_translate.py [--only cuda:hip,hip:cuda] [--limit N] [--json F]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PLATFORMS = ("cuda", "hip", "bang", "vnni")
SUFFIX = {"cuda": ".cu", "hip": ".hip", "bang": ".mlu", "vnni": ".cpp"}


def sources(platform: str) -> list[Path]:
    d = ROOT / "xpiler" / "corpus" / platform
    return sorted(p for p in d.glob(f"*{SUFFIX[platform]}") if p.with_suffix(".json").exists())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated SRC:DST directions")
    ap.add_argument("--limit", type=int, default=0, help="at most N kernels per direction")
    ap.add_argument("--json", help="write the figures here")
    opts = ap.parse_args(argv)
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from xpiler.errors import XpilerError
    from xpiler.translate import translate

    directions = [(a, b) for a in PLATFORMS for b in PLATFORMS if a != b]
    if opts.only:
        want = {tuple(x.split(":")) for x in opts.only.split(",")}
        directions = [d for d in directions if d in want]
    rows, out = [], {}
    with tempfile.TemporaryDirectory() as tmp, Progress(transient=True) as progress:
        for src_p, dst_p in directions:
            files = sources(src_p)[: opts.limit or None]
            task = progress.add_task(f"{src_p} -> {dst_p}", total=len(files))
            verified, times, failures = 0, [], []
            for f in files:
                t0 = time.perf_counter()
                try:
                    rep = translate(str(f), dst_p, str(Path(tmp) / (f.stem + SUFFIX[dst_p])))
                    ok = rep.status == "verified"
                    why = rep.message
                except XpilerError as exc:
                    ok, why = False, exc.message
                times.append(time.perf_counter() - t0)
                verified += ok
                if not ok:
                    failures.append(f"{f.name}: {why[:80]}")
                progress.advance(task)
            med = statistics.median(times) if times else 0.0
            mx = max(times) if times else 0.0
            rows.append((f"{src_p} -> {dst_p}", f"{verified}/{len(files)}", f"{med:.2f}", f"{mx:.2f}"))
            out[f"{src_p}->{dst_p}"] = {"verified": verified, "total": len(files), "median_s": med,
                                        "max_s": mx, "failures": failures}
    t = Table(title="xpiler translate on the project corpus (verified on the virtual device)")
    for col in ("direction", "verified/total", "median s", "max s"):
        t.add_column(col)
    for r in rows:
        t.add_row(*r)
    Console().print(t)
    if opts.json:
        Path(opts.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
