"""Seeded fuzzing of the front-ends and the translator with mutated corpus files (issue 13).

Each case takes a corpus kernel, applies a few seeded mutations (deleted, duplicated or swapped
spans, hostile tokens: unbalanced brackets, launch chevrons, templates, huge literals, a long
identifier, non-UTF-8 bytes, NUL, truncation) and runs it through the CLI:

* ``xpiler parse FILE --json`` in-process: it must return a documented exit status (0 or 2)
  without raising, within a time bound;
* ``xpiler translate`` in a subprocess (a fresh TMPDIR, a private output directory): a
  documented exit status, no traceback on stderr, and nothing left behind: no temporary files
  beside OUT or in TMPDIR, OUT present only for exit 0 (or 3 with --allow-unverified).

The default run is small (a few seconds of parsing, three translations); the ``slow`` variants
run many more seeds. A failure prints the seed and the mutated text's path so it can be replayed.
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from xpiler.cli import main

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "xpiler" / "corpus"
SUFFIXES = {".cu", ".hip", ".mlu", ".cpp"}
DOCUMENTED_EXIT = set(range(0, 11))          # README "Exit codes"
PARSE_EXIT = {0, 2}
HOSTILE = ["{", "}", "(", ")", "[", "]", ";", "<<<", ">>>", "<<<1,1>>>", "template <class T>", "::",
           "#define X(", "#if 0\n", "#endif\n", "#include \"nope.h\"\n", "99999999999999999999999999",
           "0x", "1e999999", "'", "\"", "/*", "*/", "\\\n", "__syncthreads();", "__global__",
           "__mlu_entry__", "extern \"C\"", "return", "goto L;", "x" * 5000, "\0", "\udcff",
           "int a[1<<40];", "__shared__ float s[];", "operator", "and", "__memcpy(", "_mm512_"]


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*/*") if p.suffix in SUFFIXES)


def mutate(text: str, rng: random.Random, max_ops: int = 4) -> str:
    for _ in range(rng.randint(1, max_ops)):
        n = len(text)
        op = rng.randrange(6)
        i = rng.randrange(n + 1)
        j = min(n, i + rng.randint(1, 80))
        if op == 0:
            text = text[:i] + text[j:]                       # delete a span
        elif op == 1:
            text = text[:i] + text[i:j] + text[i:]           # duplicate a span
        elif op == 2:
            text = text[:i] + rng.choice(HOSTILE) + text[i:]  # insert a hostile token
        elif op == 3:
            lines = text.split("\n")
            a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
            lines[a], lines[b] = lines[b], lines[a]          # swap two lines
            text = "\n".join(lines)
        elif op == 4:
            text = text[:i]                                  # truncate
        else:
            k = rng.randrange(n) if n else 0                 # replace one character
            text = text[:k] + rng.choice("{}()<>;,*&#\"'\\0x") + text[k + 1:]
    return text


def write_case(tmp_path: Path, seed: int, max_ops: int = 4) -> Path:
    rng = random.Random(seed)
    src = rng.choice(corpus_files())
    text = mutate(src.read_text(), rng, max_ops)
    case = tmp_path / f"seed{seed}{src.suffix}"
    case.write_bytes(text.encode("utf-8", errors="surrogateescape"))
    config = src.with_suffix(".json")
    if config.exists():  # the case file travels with it: translations are verified on its inputs
        case.with_suffix(".json").write_text(config.read_text())
    return case


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _parse_once(tmp_path, seed, capsys, seconds=20):
    case = write_case(tmp_path, seed)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        rc = main(["parse", str(case), "--json"])
    except _Timeout:
        pytest.fail(f"seed {seed}: parse of {case} ran past {seconds} s")
    except BaseException as exc:  # a traceback: what the CLI must never show
        pytest.fail(f"seed {seed}: parse of {case} raised {type(exc).__name__}: {exc}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    capsys.readouterr()
    assert rc in PARSE_EXIT, f"seed {seed}: parse of {case} exited {rc}"


def _translate_once(tmp_path, seed, target):
    case = write_case(tmp_path, seed, max_ops=1)  # one mutation: more cases get past the front-end
    if {".cu": "cuda", ".hip": "hip", ".mlu": "bang", ".cpp": "vnni"}[case.suffix] == target:
        target = "vnni" if target != "vnni" else "cuda"
    outdir = tmp_path / f"out{seed}"
    outdir.mkdir()
    tmpdir = tmp_path / f"tmp{seed}"
    tmpdir.mkdir()
    out = outdir / f"out.{ {'hip': 'hip', 'cuda': 'cu', 'vnni': 'cpp', 'bang': 'mlu'}[target] }"
    env = {**os.environ, "TMPDIR": str(tmpdir)}
    env.pop("XPILER_DEBUG", None)
    proc = subprocess.run([sys.executable, "-m", "xpiler", "translate", str(case), "--to", target, "-o", str(out),
                           "--timeout", "10", "--no-infer"],
                          capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    where = f"seed {seed}: translate {case} --to {target}"
    assert "Traceback" not in proc.stderr, f"{where}:\n{proc.stderr[-3000:]}"
    assert proc.returncode in DOCUMENTED_EXIT, f"{where}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
    left = sorted(p.name for p in outdir.iterdir())
    assert proc.returncode != 0 or "verified translation" in proc.stderr, f"{where}: exit 0 without verification"
    assert left == ([out.name] if proc.returncode == 0 else []), f"{where}: exit {proc.returncode}, left {left}"
    assert not list(tmpdir.iterdir()), f"{where}: left {list(tmpdir.iterdir())} in TMPDIR"
    assert case.exists(), f"{where}: the source is gone"


@pytest.mark.parametrize("first", [0])
def test_fuzz_parse(tmp_path, capsys, first):
    for seed in range(first, first + 24):   # a refused file costs a clang parse (~0.7 s)
        _parse_once(tmp_path, seed, capsys)


@pytest.mark.parametrize("seed, target", [(1, "hip"), (2, "vnni"), (3, "cuda")])
def test_fuzz_translate(tmp_path, seed, target):
    _translate_once(tmp_path, seed, target)


@pytest.mark.slow
@pytest.mark.parametrize("first", range(1000, 2000, 125))
def test_fuzz_parse_many(tmp_path, capsys, first):
    for seed in range(first, first + 125):
        _parse_once(tmp_path, seed, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 140))
def test_fuzz_translate_many(tmp_path, seed):
    _translate_once(tmp_path, seed, ["hip", "cuda", "vnni", "bang"][seed % 4])
