"""Time the front-ends and the emulators' ``prepare()`` on hostile inputs (scaling check).

Every case is a source generator ``gen(platform, n)``; each (platform, case, stage) runs at
size n and 4n in a child process with a time limit, and the ratio of the two times is printed
(linear: ~4x; a ratio above 8x, or a time-out, is flagged ``SUPERLINEAR``). A parse may end in
a ``SourceError`` (diagnostic): that is fine, only the time and the absence of a traceback
matter (any other exception is flagged ``CRASH``).

    python tools/hostile_inputs.py [--only CASE,...] [--platforms cuda,bang] [--stage parse|prepare]
                                   [--scale 0.25] [--timeout 60]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLATFORMS = ("cuda", "hip", "bang", "vnni")
EXT = {"cuda": ".cu", "hip": ".hip", "bang": ".mlu", "vnni": ".cpp"}
QUAL = {"cuda": "__global__", "hip": "__global__", "bang": "__mlu_global__", "vnni": ""}


def _launch(p: str, name: str, args: str = "x") -> str:
    if p == "bang":
        return f"{name}<<<dim, CNRT_FUNC_TYPE_BLOCK, q>>>({args});"
    if p == "vnni":
        return f"{name}({args});"
    return f"{name}<<<1, 1>>>({args});"


def _file(p: str, kernel_body: str = "x[0] = 1;", host_body: str = "", kname: str = "k",
          top: str = "") -> str:
    head = {"cuda": "#include <cuda_runtime.h>\n", "hip": "#include <hip/hip_runtime.h>\n",
            "bang": "#include <bang.h>\n", "vnni": "#include <immintrin.h>\n"}[p]
    host_pre = "cnrtDim3_t dim = {1, 1, 1}; cnrtQueue_t q;\n  " if p == "bang" else ""
    return (f"{head}{top}{QUAL[p]} void {kname}(float* x) {{\n  {kernel_body}\n}}\n"
            f'extern "C" void host(float* x) {{\n  {host_pre}{host_body or _launch(p, kname)}\n}}\n')


def _ident(n: int) -> str:
    return "a" * n


CASES = {
    # (generator, base size n; the run uses n and 4n)
    "kernel_name": (lambda p, n: _file(p, kname=_ident(n)), 50_000),
    "launch_callee": (lambda p, n: _file(p, host_body=_launch(p, _ident(n)) + " " + _launch(p, "k")), 50_000),
    "variable": (lambda p, n: _file(p, kernel_body=f"float {_ident(n)} = 1; x[0] = {_ident(n)};"), 50_000),
    "macro": (lambda p, n: _file(p, top=f"#define {_ident(n)} 2\n", kernel_body=f"x[0] = {_ident(n)};"), 50_000),
    "parens": (lambda p, n: _file(p, kernel_body="x[0] = " + "(" * n + "1" + ")" * n + ";"), 25_000),
    "braces": (lambda p, n: _file(p, kernel_body="{" * n + "x[0] = 1;" + "}" * n), 25_000),
    "brackets": (lambda p, n: _file(p, kernel_body="x[0] = x" + "[0" * n + "]" * n + ";"), 25_000),
    "lines": (lambda p, n: _file(p, kernel_body="\n  ".join(f"x[{i % 7}] += {i}.0f;" for i in range(n))), 12_500),
    "functions": (lambda p, n: "".join(f"{QUAL[p]} void k{i}(float* x) {{ x[0] = {i}; }}\n" for i in range(n))
                  + _file(p), 5_000),
    "launches": (lambda p, n: _file(p, host_body="\n  ".join(_launch(p, "k") for _ in range(n))), 5_000),
    "string": (lambda p, n: _file(p, top=f'const char* s = "{"a" * n}";\n'), 250_000),
    "comment": (lambda p, n: _file(p, top=f"/* {'a' * n} */\n"), 250_000),
    "lt3": (lambda p, n: _file(p, kernel_body="x[0] = 1 " + "<<< " * n + ";"), 25_000),
    "gt3": (lambda p, n: _file(p, kernel_body="x[0] = 1 " + ">>> " * n + ";"), 25_000),
    "lt3_gt3": (lambda p, n: _file(p, host_body="k " + "<<< " * n + ">>> " * n + "(x);"), 25_000),
    "colons": (lambda p, n: _file(p, kernel_body="x[0] = " + "a::" * n + "b;"), 25_000),
    "angles": (lambda p, n: _file(p, kernel_body="x[0] = " + "a < " * n + "b;"), 25_000),
    "template_lt": (lambda p, n: _file(p, kernel_body="std::vector" + "<std::vector" * n + ";"), 10_000),
    "shared": (lambda p, n: _file(p, kernel_body="\n  ".join(
        f"{ {'bang': '__nram__', 'vnni': 'static'}.get(p, '__shared__') } float s{i}[4];" for i in range(n))), 5_000),
    "casts": (lambda p, n: _file(p, kernel_body="\n  ".join(f"x[{i % 7}] = float({i}) + static_cast<float>(x[1]);"
                                                           for i in range(n))), 12_500),
    "nested_casts": (lambda p, n: _file(p, kernel_body="x[0] = " + "float(" * n + "1" + ")" * n + ";"), 5_000),
    "qualified": (lambda p, n: _file(p, kernel_body="\n  ".join(f"x[{i % 7}] = std::max(x[1], {i}.0f);"
                                                               for i in range(n))), 12_500),
    "nested_calls": (lambda p, n: _file(p, kernel_body="x[0] = " + "f(" * n + "1" + ")" * n + ";"), 5_000),
    "template_calls": (lambda p, n: _file(p, top=f"template <typename T> {QUAL[p].replace('global', 'device') if p != 'bang' else '__mlu_func__'} "
                                                 "T sq(T v) { return v * v; }\n",
                                             kernel_body="const int c = 3;\n  " + "\n  ".join(
                                                 f"x[{i % 7}] = sq<float>(x[1]) + sq(x[2]);" for i in range(n))), 5_000),
    "template_consts": (lambda p, n: _file(p, top=f"template <int N> {QUAL[p].replace('global', 'device') if p != 'bang' else '__mlu_func__'} "
                                                  "float sc(float v) { return v * N; }\n",
                                              kernel_body="const int c = 3;\n  " + "\n  ".join(
                                                  f"x[{i % 7}] = sc<c>(x[1]);" + (" { x[2] = sc<c>(x[3]); }" if i % 3 == 0 else "")
                                                  for i in range(n))), 5_000),
    "copies": (lambda p, n: _file(p, host_body="float* d; " + {"cuda": "cudaMalloc(&d, 64);", "hip": "hipMalloc(&d, 64);",
                                                                "bang": "cnrtMalloc((void**)&d, 64);", "vnni": ""}[p] + "\n  "
                                  + "\n  ".join({"cuda": "cudaMemcpy(d, x, 64, cudaMemcpyHostToDevice); ",
                                                  "hip": "hipMemcpy(d, x, 64, hipMemcpyHostToDevice); ",
                                                  "bang": "cnrtMemcpy(d, x, 64, CNRT_MEM_TRANS_DIR_HOST2DEV); ",
                                                  "vnni": ""}[p] + _launch(p, "k", "d") for _ in range(n))), 5_000),
    "defines": (lambda p, n: _file(p, top="".join(f"#define M{i} (M{i - 1} + 1)\n" if i else "#define M0 1\n"
                                                  for i in range(n)), kernel_body=f"x[0] = M{n - 1};"), 12_500),
    "if_nest": (lambda p, n: _file(p, top="#if 1\n" * n + "#define Q 1\n" + "#endif\n" * n), 12_500),
    "pp_expr": (lambda p, n: _file(p, top="#define A0 1\n" + "".join(f"#define A{i} (A{i - 1} + A{i - 1})\n"
                                                                      for i in range(1, 9))
                                   + "#if " + " + ".join(["A8"] * n) + " > 0\n#define Q 1\n#endif\n"), 500),
    "pp_open_comment": (lambda p, n: _file(p, top="".join(f"#define C{i} 1 /*\n" for i in range(n))), 12_500),
    "ident_then_lt3": (lambda p, n: _file(p, host_body=_ident(n) + " <<<1, 1>>>" * 50 + ";"), 20_000),
    "colons_lt3": (lambda p, n: _file(p, host_body="a::" * n + "k<<<1,1>>>(x);"), 10_000),
}

CHILD = r"""
import json, sys, time, traceback
sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
sys.path.insert(0, {root!r})
from tools.hostile_inputs import CASES, EXT
import platforms
from xpiler.ir.errors import XpilerError
p, case, stage, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = CASES[case][0](p, n)
path = "/tmp/hostile" + EXT[p]
t0 = time.perf_counter()
outcome = "ok"
try:
    if stage == "parse":
        from xpiler.parse import parse_source
        parse_source(text, p, path)
    else:
        emu = platforms.module(p, "emulate")
        emu.prepare(text, path, strict=False, profile=emu.load_profile())
except XpilerError as exc:
    outcome = "diag:" + type(exc).__name__
    d = getattr(exc, "diagnostics", None)
    if d:
        outcome += ":" + d[0].code
except BaseException as exc:
    outcome = "CRASH:" + type(exc).__name__ + ":" + str(exc)[:80]
print(json.dumps({{"t": time.perf_counter() - t0, "outcome": outcome, "len": len(text)}}))
"""


def run_one(p: str, case: str, stage: str, n: int, timeout: float) -> dict:
    code = CHILD.format(root=str(ROOT))
    try:
        res = subprocess.run([sys.executable, "-c", code, p, case, stage, str(n)], capture_output=True,
                             text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"t": float("inf"), "outcome": "TIMEOUT"}
    try:
        return json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"t": float("nan"), "outcome": "CRASH:" + (res.stderr.strip().splitlines() or ["?"])[-1][:100]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--platforms", default=",".join(PLATFORMS))
    ap.add_argument("--stage", default="parse,prepare")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--single", action="store_true", help="only size 4n (no ratio)")
    a = ap.parse_args(argv)
    cases = [c for c in (a.only.split(",") if a.only else CASES) if c]
    bad = 0
    for case in cases:
        gen, base = CASES[case]
        n = max(1, int(base * a.scale))
        for p in a.platforms.split(","):
            for stage in a.stage.split(","):
                big = run_one(p, case, stage, 4 * n, a.timeout)
                small = None if a.single else run_one(p, case, stage, n, a.timeout)
                ratio = big["t"] / max(small["t"], 1e-3) if small else float("nan")
                flag = ""
                if big["outcome"].startswith(("TIMEOUT", "CRASH")):
                    flag = big["outcome"].split(":")[0]
                elif small and ratio > 8 and big["t"] > 0.5:
                    flag = "SUPERLINEAR"
                bad += bool(flag)
                t_small = "-" if small is None else f"{small['t']:7.2f}s"
                print(f"{case:15s} {p:5s} {stage:8s} n={n:>8d}: {t_small} 4n: {big['t']:7.2f}s "
                      f"x{ratio:5.1f} {big['outcome'][:60]:40s} {flag}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
