#!/usr/bin/env python3
"""Virtual-device benchmark: how long emulation takes, measured side by side in one run.

Prints a table with, for each workload, the build time (g++ of the emulated translation unit,
0 when cached), the kernel time inside the child process, and whether the result matched numpy:

- a 1M-element element-wise CUDA kernel (TVM style, host wrapper),
- a 512x512x512 nvcuda::wmma gemm (half inputs, float accumulate; one warp per 16x16 tile),
- a 512x512x512 BANG __bang_matmul gemm over 16 tasks (4 clusters x 4 cores),
- the whole project corpus (every xpiler/corpus/<platform>/*.json case run and checked).

Usage: python tools/bench_vdev.py [--no-corpus] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
KERNELS = ROOT / "tools" / "bench_kernels"


def _timed(path, args, **kw):
    from xpiler.run import run_kernel

    t0 = time.perf_counter()
    r = run_kernel(path, args=args, **kw)
    return r, time.perf_counter() - t0


def bench_elementwise():
    n = 1 << 20
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    r, wall = _timed(KERNELS / "elementwise_1m.cu", [a, b, c, n])
    ok = np.allclose(c, a * 2 + b, rtol=1e-6, atol=1e-6)
    return "CUDA element-wise, 1M elements", r, wall, ok


def bench_wmma():
    m = n = k = 512
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float32)
    r, wall = _timed(KERNELS / "wmma_gemm_512.cu", [a, b, c, m, n, k])
    ref = a.astype(np.float32) @ b.astype(np.float32)
    ok = np.allclose(c, ref, rtol=1e-3, atol=1e-3)
    return "CUDA wmma gemm 512^3", r, wall, ok


def bench_bang_matmul():
    m = n = k = 512
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    bt = np.ascontiguousarray(b.T)  # column-major K x N = N rows of K
    c = np.zeros((m, n), np.float32)
    r, wall = _timed(KERNELS / "bang_matmul_512.mlu", [a, bt, c], launch={"clusters": 4, "cores": 4})
    ref = a.astype(np.float32) @ b.astype(np.float32)
    ok = np.allclose(c, ref, rtol=1e-3, atol=1e-3)
    return "BANG __bang_matmul gemm 512^3 (16 tasks)", r, wall, ok


def bench_corpus():
    from xpiler import ops
    from xpiler.run import run_kernel

    results = {}
    for plat_dir in sorted((ROOT / "xpiler" / "corpus").iterdir()):
        if not plat_dir.is_dir():
            continue
        cases = sorted(plat_dir.glob("*.json"))
        if not cases:
            continue
        passed, build_s, run_s, t0 = 0, 0.0, 0.0, time.perf_counter()
        failures = []
        for case_path in cases:
            case = json.loads(case_path.read_text())
            src = next((p for p in plat_dir.glob(case_path.stem + ".*") if p.suffix != ".json"), None)
            if src is None:
                continue
            try:
                args = ops.make_inputs(case, seed=0)
                r = run_kernel(src, args=args, launch=case.get("launch"), timeout=120)
                build_s += r.build_s
                run_s += r.time_s
                rep = ops.check(case, args)
                if rep.ok:
                    passed += 1
                else:
                    failures.append(src.name)
            except Exception as exc:  # a benchmark reports, it does not stop
                failures.append(f"{src.name} ({type(exc).__name__})")
        results[plat_dir.name] = {"cases": len(cases), "passed": passed, "wall_s": time.perf_counter() - t0,
                                  "build_s": build_s, "kernel_s": run_s, "failures": failures}
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-corpus", action="store_true")
    ap.add_argument("--json", help="write the figures to this file")
    opts = ap.parse_args(argv)
    from rich.console import Console
    from rich.table import Table

    rows, out = [], {}
    for fn in (bench_elementwise, bench_wmma, bench_bang_matmul):
        try:
            name, r, wall, ok = fn()
            rows.append((name, f"{r.build_s:.2f}", f"{r.time_s:.3f}", f"{wall:.2f}", "yes" if ok else "NO"))
            out[name] = {"build_s": r.build_s, "kernel_s": r.time_s, "wall_s": wall, "correct": bool(ok)}
        except Exception as exc:
            rows.append((fn.__name__, "-", "-", "-", f"error: {type(exc).__name__}: {exc}"[:80]))
    t = Table(title="virtual device: emulation time (one run, first build not cached)")
    for col in ("workload", "build s", "kernel s", "wall s", "matches numpy"):
        t.add_column(col)
    for row in rows:
        t.add_row(*row)
    con = Console()
    con.print(t)
    if not opts.no_corpus:
        corpus = bench_corpus()
        out["corpus"] = corpus
        t = Table(title="corpus on the virtual device (seed 0)")
        for col in ("platform", "passed/cases", "wall s", "build s", "kernel s", "failures"):
            t.add_column(col)
        for plat, c in corpus.items():
            t.add_row(plat, f"{c['passed']}/{c['cases']}", f"{c['wall_s']:.1f}", f"{c['build_s']:.1f}",
                      f"{c['kernel_s']:.2f}", ", ".join(c["failures"][:6]) + (" ..." if len(c["failures"]) > 6 else ""))
        con.print(t)
    if opts.json:
        Path(opts.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
