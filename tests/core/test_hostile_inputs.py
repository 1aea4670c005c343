"""Hostile inputs (issue 13, items 5 and 7): the front-end and the emulators' prepare() stay
linear on huge identifiers, long files and deep nests; nesting beyond the front-end's limits is
a coded diagnostic (exit 2), never a traceback; ``translate --time-limit`` bounds a whole
translation (exit 1, nothing written); calls of unknown intrinsics and integer literals no C
type can hold are reported with their position.

Each timing test uses a size at which the quadratic code it guards took tens of seconds or more
(measured: a 200k-character identifier before a launch, about 10 minutes in CUDA prepare()) and
the linear code well under a second; the bounds leave room for a loaded machine.
``tools/hostile_inputs.py`` measures the scaling of every case on every platform.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import platforms
from xpiler.ir.errors import SourceError, TranslationTimeLimit
from xpiler.parse import parse_source

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "xpiler" / "corpus"
BIG = "a" * 200_000


def _prepare(platform: str, text: str, path: str) -> str:
    emu = platforms.module(platform, "emulate")
    return emu.prepare(text, path, strict=False, profile=emu.load_profile())


def _timed(fn, *args):
    t0 = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - t0


# ------------------------------------------------------------------------------ linear scans
@pytest.mark.parametrize("platform", ["cuda", "hip"])
def test_huge_identifier_before_a_launch_is_linear_in_prepare(platform):
    """_launch_rewrites searched the whole prefix for the callee with a regex that restarts at
    every character of an identifier: quadratic in its length (200k characters: minutes)."""
    text = (f"__global__ void k(float* x) {{ float {BIG} = 1; x[0] = {BIG}; }}\n"
            f'extern "C" void h(float* x) {{ k<<<1, 1>>>(x); {BIG}<<<1, 1>>>(x); }}\n')
    unit, seconds = _timed(_prepare, platform, text, f"/tmp/big.{platform}")
    assert seconds < 5, f"{seconds:.1f} s"
    assert "launch_from_host(\"k\"" in unit and f'launch_from_host("{BIG}"' in unit


def test_huge_identifier_parses_quickly():
    text = f"__global__ void {BIG}(float* x) {{ x[0] = 1; }}\n"
    program, seconds = _timed(parse_source, text, "cuda", "big.cu")
    assert seconds < 5 and program.entry.name == BIG


def test_many_kernels_and_launches_are_linear_in_prepare():
    """scan_functions re-ran a regex over the whole prefix for each kernel's namespaces and
    template test; each launch sliced the whole prefix (4000 kernels: over a minute)."""
    n = 4000
    text = "".join(f"__global__ void k{i}(float* x) {{ x[0] = {i}; }}\n" for i in range(n))
    text += 'extern "C" void h(float* x) {\n' + "".join(f"  k{i}<<<1, 1>>>(x);\n" for i in range(n)) + "}\n"
    unit, seconds = _timed(_prepare, "cuda", text, "/tmp/many.cu")
    assert seconds < 10, f"{seconds:.1f} s"
    assert unit.count("::xp::gpu::kernel_enter(") == n and unit.count("launch_from_host(") == n


def test_line_of_unclosed_launches_is_linear_in_prepare():
    """Each '<<<' searched the rest of the file for a '>>>' (100k of them: quadratic)."""
    text = "__global__ void k(float* x) { x[0] = 1 " + "<<< " * 100_000 + "; }\n"
    _, seconds = _timed(_prepare, "cuda", text, "/tmp/lt.cu")
    assert seconds < 5, f"{seconds:.1f} s"


def test_template_calls_in_a_long_function_are_linear():
    """Each deduced template call copied every token before it and scanned back over all of
    them for the argument's declaration (3000 calls: about a minute)."""
    body = "\n".join(f"  x[{i % 7}] = sq(x[2]) + sc<c>(x[1]);" for i in range(3000))
    text = ("template <typename T> __device__ T sq(T v) { return v * v; }\n"
            "template <int N> __device__ float sc(float v) { return v * N; }\n"
            f"__global__ void k(float* x) {{\n  const int c = 3;\n{body}\n}}\n")
    program, seconds = _timed(parse_source, text, "cuda", "calls.cu")
    assert seconds < 15, f"{seconds:.1f} s"
    assert program.entry.name == "k"


def test_deep_if_nest_and_unclosed_directive_comments_are_linear():
    """The preprocessor recomputed the activity of every enclosing #if at each chunk of code,
    and a '/*' left open in a directive was searched for its end once per line."""
    text = "#if 1\n" * 20_000 + "__global__ void k(float* x) { x[0] = 1; }\n" + "#endif\n" * 20_000
    _, seconds = _timed(parse_source, text, "cuda", "ifs.cu")
    assert seconds < 5, f"{seconds:.1f} s"
    text = "".join(f"#define C{i} 1 /*\n" for i in range(10_000)) + "__global__ void k(float* x) { x[0] = 1; }\n"
    _, seconds = _timed(parse_source, text, "cuda", "open.cu")
    assert seconds < 5, f"{seconds:.1f} s"


def test_macro_doubling_in_if_is_evaluated_once_per_macro():
    """#if re-evaluated a macro's body at every use, recursively: A8 is 511 evaluations (1500
    uses: 8 s)."""
    defs = "#define A0 1\n" + "".join(f"#define A{i} (A{i - 1} + A{i - 1})\n" for i in range(1, 9))
    text = defs + "#if " + " && ".join(["A8 > 0"] * 1500) + "\n#define OK 1\n#endif\n" \
        "__global__ void k(float* x) { x[0] = OK; }\n"
    program, seconds = _timed(parse_source, text, "cuda", "pp.cu")
    assert seconds < 3, f"{seconds:.1f} s"
    assert program.facts["defines"]["OK"]["body"] == "1"


# ------------------------------------------------------------------------------ nesting limits
def test_deep_parentheses_exit_2_with_a_diagnostic_at_the_bracket(tmp_path):
    src = tmp_path / "deep.cu"
    src.write_text("__global__ void k(float* x) {\n  x[0] = " + "(" * 100_000 + "1" + ")" * 100_000 + ";\n}\n")
    proc = subprocess.run([sys.executable, "-m", "xpiler", "parse", str(src)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "XP1104" in proc.stderr, proc.stderr
    # the bracket that goes past the limit: 256 deep counting the function's '{', on line 2
    col = len("  x[0] = ") + 256
    assert f"{src}:2:{col}: error XP1104: brackets nested more than 256 deep" in proc.stderr


@pytest.mark.parametrize("chain", [" + ", " < "])
def test_long_operator_chain_is_a_limit_not_an_internal_error(chain):
    """A left-deep AST (a + a + ... with thousands of terms) exhausts the analysis' recursion:
    XP1104 (a documented limit), not XP1199 ("internal error, please report")."""
    text = "__global__ void k(float* x) { x[0] = " + chain.join(["x[1]"] * 5000) + "; }\n"
    with pytest.raises(SourceError) as err:
        parse_source(text, "cuda", "chain.cu")
    assert err.value.diagnostics[0].code == "XP1104", err.value.render()


# ------------------------------------------------------------------------------ --time-limit
def test_time_limit_stops_a_translation_and_writes_nothing(tmp_path):
    """A cuda -> bang translation takes seconds (compiles, passes, verification); 0.5 s of
    --time-limit stops it: exit 1, the step named, OUT (a stale one included) gone."""
    out = tmp_path / "out.mlu"
    out.write_text("// Generated by xpiler translate from an earlier run\n")
    src = CORPUS / "cuda" / "add_4_256.cu"
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "xpiler", "translate", str(src), "--to", "bang", "-o", str(out),
                           "--time-limit", "0.5"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    seconds = time.perf_counter() - t0
    assert proc.returncode == 1, proc.stderr
    assert "translation stopped after" in proc.stderr and "(--time-limit 0.5 s): in " in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()
    assert seconds < 30


def test_time_limit_rejects_negative_seconds(tmp_path):
    from xpiler.cli import main

    src = CORPUS / "cuda" / "add_4_256.cu"
    assert main(["translate", str(src), "--to", "bang", "-o", str(tmp_path / "o.mlu"), "--time-limit", "-1"]) == 2


def test_time_limit_off_the_main_thread_is_checked_between_steps(tmp_path):
    """No SIGALRM outside the main thread: the bound is checked between steps."""
    from xpiler.translate import translate

    caught = []

    def work():
        try:
            translate(str(CORPUS / "cuda" / "add_4_256.cu"), "bang", str(tmp_path / "o.mlu"), time_limit=1e-9)
        except TranslationTimeLimit as exc:
            caught.append(exc)

    t = threading.Thread(target=work)
    t.start()
    t.join(60)
    assert caught and caught[0].exit_code == 1 and "in the front-end" in caught[0].message
    assert not (tmp_path / "o.mlu").exists()


def test_time_limit_waits_for_a_running_kernel(tmp_path):
    """The alarm never interrupts the wait for a kernel's child process (the child would be
    left running): it fires as soon as the run is over, and the child is gone."""
    import numpy as np

    from xpiler.run import run_kernel
    from xpiler.translate import TimeLimit, _TimeUp

    src = tmp_path / "spin.cu"
    src.write_text("#include <ctime>\n__global__ void k(float* x) {\n"
                   "  struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);\n"
                   "  do { clock_gettime(CLOCK_MONOTONIC, &b); } while ((b.tv_sec - a.tv_sec) * 1000000000L"
                   " + (b.tv_nsec - a.tv_nsec) < 1500000000L);\n  x[0] = 1;\n}\n")
    x = np.zeros(4, np.float32)
    run_kernel(src, args=[x], launch={"grid": (1, 1, 1), "block": (1, 1, 1)}, timeout=60)   # build
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("SIGALRM needs the main thread")
    x[:] = 0
    before = _children()
    t0 = time.perf_counter()
    with pytest.raises(_TimeUp):
        with TimeLimit(0.3):
            run_kernel(src, args=[x], launch={"grid": (1, 1, 1), "block": (1, 1, 1)}, timeout=60)
            time.sleep(5)
    assert time.perf_counter() - t0 >= 1.4
    assert x[0] == 1                      # the run completed: the alarm did not fire in the child
    assert _children() <= before          # no child left behind


def _children() -> set[int]:
    """Process ids whose parent is this process (from /proc)."""
    me, out = os.getpid(), set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                out.add(int(entry))
    return out


# ------------------------------------------------------------------------------ item 7
@pytest.mark.parametrize("platform, text, name, col", [
    ("cuda", "__global__ void k(float* x) {\n  x[0] = __foo_intrinsic(x[1]) + __expf(x[2]);\n}\n",
     "__foo_intrinsic", 10),
    ("hip", "#include <hip/hip_runtime.h>\n__global__ void k(float* x) {\n  x[0] = __hip_made_up(x[1]);\n}\n",
     "__hip_made_up", 10),
    ("bang", "__mlu_global__ void k(float* x) {\n  __nram__ float b[64];\n"
             "  __bang_not_a_builtin(b, b, 64);\n  __bang_add(b, b, b, 64);\n}\n", "__bang_not_a_builtin", 3),
    ("vnni", "#include <immintrin.h>\nvoid f(float* x) {\n  __m512 a = _mm512_loadu_ps(x);\n"
             "  _mm512_storeu_ps(x, _mm512_made_up_ps(a));\n}\n", "_mm512_made_up_ps", 23),
])
def test_unknown_intrinsic_is_a_warning_at_the_call(platform, text, name, col):
    if platform == "vnni":
        from platforms.common.known_names import known_names

        if known_names("vnni") is None:
            pytest.skip("the host compiler's intrinsic headers are not found")
    program = parse_source(text, platform, f"u.{platform}")
    found = [d for d in program.diagnostics if d.code == "XP1151"]
    assert len(found) == 1, [d.render() for d in program.diagnostics]
    d = found[0]
    line = next(i for i, l in enumerate(text.splitlines(), 1) if name in l)
    assert (d.severity, d.coord.line, d.coord.col, d.construct) == ("warning", line, col, name)
    assert name not in program.intrinsics


def test_declared_or_defined_names_are_not_unknown_intrinsics():
    text = ("__device__ float __my_helper(float v);\n#define __my_macro(v) (v)\n"
            "__device__ float __my_helper(float v) { return v; }\n"
            "__global__ void k(float* x) { x[0] = __my_helper(__my_macro(x[1])) + __shfl_sync(0xffffffff, x[2], 0)"
            " + __builtin_expf(x[3]); __syncthreads(); }\n")
    program = parse_source(text, "cuda", "d.cu")
    assert not [d for d in program.diagnostics if d.code == "XP1151"]


@pytest.mark.parametrize("literal", ["99999999999999999999999", "0x1FFFFFFFFFFFFFFFF", "18446744073709551616"])
def test_integer_literal_no_type_can_hold_is_an_error_at_its_position(literal):
    text = f"__global__ void k(unsigned long long* x) {{\n  x[0] = 1;\n  x[1] =   {literal}ULL;\n}}\n"
    with pytest.raises(SourceError) as err:
        parse_source(text, "cuda", "lit.cu")
    d = err.value.diagnostics[0]
    assert (d.code, d.coord.line, d.coord.col) == ("XP1105", 3, len("  x[1] =   ") + 1), d.render()
    assert err.value.exit_code == 2


def test_largest_integer_literals_still_parse():
    text = ("__global__ void k(unsigned long long* x) {\n  x[0] = 18446744073709551615ULL;\n"
            "  x[1] = 0xFFFFFFFFFFFFFFFF;\n  x[2] = 01777777777777777777777;\n}\n")
    assert parse_source(text, "cuda", "max.cu").entry.name == "k"


def test_token_buffer_reads_and_edits_like_a_list():
    """The rewriting loop's gap buffer (edits at the loop's position cost the edit, not the rest
    of the file: a file with a rewrite per line was quadratic) behaves as the list it replaces."""
    import random

    from pycparser.c_lexer import Token

    from platforms.common.lexer import TokenBuffer

    rng = random.Random(13)
    toks = [Token("ID", f"t{i}", 1, i + 1, "f") for i in range(60)]
    ref, buf = list(toks), TokenBuffer(list(toks))
    for step in range(3000):
        n = len(ref)
        a = rng.randrange(n + 1)
        b = rng.randrange(a, min(n, a + 5) + 1)
        op = rng.randrange(5)
        if op == 0:
            new = [Token("ID", f"n{step}_{k}", 1, 1, "f") for k in range(rng.randrange(4))]
            ref[a:b] = new
            buf[a:b] = new
        elif op == 1 and n:
            k = rng.randrange(-n, n)
            del ref[k]
            del buf[k]
        elif op == 2 and n:
            k = rng.randrange(n)
            ref[k] = buf[k] = Token("ID", f"s{step}", 1, 1, "f")
        elif op == 3:
            assert buf[a:b] == ref[a:b] and buf[a:] == ref[a:] and buf[:b] == ref[:b]
        else:
            assert len(buf) == len(ref) and all(buf[k] is ref[k] for k in range(-len(ref), len(ref)))
        if len(ref) < 10:
            ref += toks[:20]
            buf[len(buf):] = toks[:20]
    assert list(buf) == ref and buf.to_list() == ref
    with pytest.raises(IndexError):
        buf[len(ref)]
