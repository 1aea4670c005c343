"""Benchmark of ``xpiler retarget`` (issue 18, closing note): retarget a subset of one
platform's corpus to other platforms with the local pool at --jobs 1 and --jobs 2 and through a
Dask LocalCluster of 2 workers; print wall time, files per minute, speed-up over --jobs 1 and
verified/total per direction.

    python tools/bench_retarget.py [--source cuda] [--to hip,bang,vnni]
        [--include 'add_*' --include 'gelu_*' ...] [--timeout 300] [--no-warm]

A first run per direction (not counted) fills the build cache, so every measured run starts
warm; without it the first configuration would also pay for the compiles.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_INCLUDE = ["add_*.cu", "gelu_*.cu", "relu_*.cu", "sigmoid_*.cu"]
CONFIGS = [("local --jobs 1", "local", 1), ("local --jobs 2", "local", 2), ("dask LocalCluster x2", "dask", 2)]


def main(argv=None) -> int:
    from xpiler.retarget import retarget

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default="cuda")
    ap.add_argument("--to", default="hip")
    ap.add_argument("--include", action="append")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--no-warm", action="store_true")
    args = ap.parse_args(argv)
    src = ROOT / "xpiler" / "corpus" / args.source
    include = args.include or DEFAULT_INCLUDE
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-retarget-") as tmp:
        for target in args.to.split(","):
            if not args.no_warm:
                retarget(src, target, Path(tmp) / f"warm-{target}", jobs=2, include=include, timeout=args.timeout,
                         copy=False)
            base = None
            for label, executor, jobs in CONFIGS:
                out = Path(tmp) / f"{target}-{executor}-{jobs}"
                t0 = time.perf_counter()
                doc = retarget(src, target, out, jobs=jobs, include=include, executor=executor,
                               timeout=args.timeout, copy=False)
                wall = time.perf_counter() - t0
                shutil.rmtree(out, ignore_errors=True)
                c = doc["counts"]
                kernels = c["verified"] + c["unverified"] + c["failed"]
                base = base or wall
                rows.append((f"{args.source} -> {target}", label, wall, 60 * kernels / wall if wall else 0,
                             base / wall, f"{c['verified']}/{kernels}"))
                print(f"{rows[-1][0]:<14} {label:<22} {wall:7.1f} s {rows[-1][3]:7.1f} files/min "
                      f"x{rows[-1][4]:.2f}  verified {rows[-1][5]}", flush=True)
    print()
    print("| direction | executor | wall s | files/min | speed-up | verified/total |")
    print("|---|---|---|---|---|---|")
    for d, label, wall, fpm, speed, ver in rows:
        print(f"| {d} | {label} | {wall:.1f} | {fpm:.1f} | x{speed:.2f} | {ver} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
