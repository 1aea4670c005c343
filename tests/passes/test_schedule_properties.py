"""Property tests of the loop schedule passes: seeded random loop nests -> pass -> equivalent.

A generator (``random.Random(seed)``, no other source of randomness) writes programs of
several independent loop nests (each nest has its own arrays and loop variable names, so one
pass application per nest can be checked in the same build): 2-3 loops per nest, perfect
nests, sibling loop pairs of identical headers (optionally with a producer/consumer local
array), bounds from small constants and the scalar parameters ``n`` / ``m`` (sometimes
triangular or ``<=``), random affine subscripts over the nest's arrays with reads and writes,
``+=`` reductions into arrays and scalars, local scalars, guarded statements. Data are ``int``
so every result compares exactly.

For every generated nest, every applicable pass and parameter (splits of every loop by 2 and
3, interchanges of nested pairs and a 3-permutation, fusion / contraction of sibling pairs,
distribution at every point) is tried: an accepted application must give the same outputs as
the source on the virtual device (same random inputs); a refusal must carry a code of that
pass documented in passes/diagnostics.toml. A counterexample is a bug in the legality check.
"""
from __future__ import annotations

import copy
import random
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import platforms
from passes.schedule import loop_contraction
from passes.schedule import loop_expansion
from passes.schedule import loop_fuse
from passes.schedule import loop_reorder
from passes.schedule import loop_split  # noqa: F401
from passes.base import PassRefused, run_pass
from xpiler.parse import parse_source
from xpiler.run import run_kernel

CODES = tomllib.loads((Path(__file__).resolve().parents[2] / "passes" /
                       "diagnostics.toml").read_text())
PREFIX = {"loop_split": "XP-SPLIT-", "loop_reorder": "XP-REORDER-", "loop_fuse": "XP-FUSE-",
          "loop_expansion": "XP-EXPAND-", "loop_contraction": "XP-CONTRACT-"}
SIZE = 64            # every array: subscripts stay in [0, SIZE) for n, m <= 5
BASE = 20
N, M = 5, 4


@dataclass
class Nest:
    k: int
    lines: list = field(default_factory=list)
    apps: list = field(default_factory=list)       # (pass, options)
    arrays: tuple = ()


class _Gen:
    def __init__(self, rng: random.Random, k: int):
        self.rng, self.k = rng, k
        self.P, self.Q, self.R = f"P{k}", f"Q{k}", f"R{k}"
        self.coef = {a: None for a in (self.P, self.Q, self.R)}

    # -- pieces ---------------------------------------------------------------------------
    def bound(self, outer_vars):
        r = self.rng.random()
        if outer_vars and r < 0.12:
            return "<", f"{self.rng.choice(outer_vars)} + 1"          # triangular
        if r < 0.2:
            return "<=", self.rng.choice(["m", "3"])
        return "<", self.rng.choice(["3", "4", "5", "n", "m", "n", "4"])

    def header(self, var, outer_vars, lo=None, bound=None, steps=False):
        lo = lo if lo is not None else self.rng.choice(["0", "0", "1"])
        op, hi = bound or self.bound(outer_vars)
        inc = f"{var} += 2" if steps and self.rng.random() < 0.12 else f"++{var}"
        return f"for (int {var} = {lo}; {var} {op} {hi}; {inc})", (lo, op, hi)

    def sub(self, arr, vars_):
        if self.coef[arr] is None or self.rng.random() < 0.3:
            c = {v: self.rng.choice([0, 1, 1, 2, -1]) for v in vars_}
            if self.coef[arr] is None:
                self.coef[arr] = c
        else:
            c = {v: self.coef[arr].get(v, self.rng.choice([0, 1])) for v in vars_}
        d = BASE + self.rng.choice([-2, -1, 0, 0, 1, 2])
        parts = [str(d)]
        for v, cv in c.items():
            if cv == 1:
                parts.append(f"+ {v}")
            elif cv == -1:
                parts.append(f"- {v}")
            elif cv:
                parts.append(f"+ {cv} * {v}")
        return " ".join(parts)

    def term(self, vars_, scalars=()):
        r = self.rng.random()
        if r < 0.55:
            a = self.rng.choice([self.P, self.Q, self.R, self.R])
            return f"{a}[{self.sub(a, vars_)}]"
        if r < 0.7 and scalars:
            return self.rng.choice(scalars)
        if r < 0.85:
            return self.rng.choice(vars_)
        return str(self.rng.randint(1, 3))

    def expr(self, vars_, scalars=()):
        e = self.term(vars_, scalars)
        for _ in range(self.rng.randint(0, 2)):
            e += f" {self.rng.choice(['+', '-', '+', '*'])} {self.term(vars_, scalars)}"
        return e

    def stmt(self, vars_, scalars=()):
        w = self.rng.choice([self.P, self.Q])
        op = "+=" if self.rng.random() < 0.25 else "="
        s = f"{w}[{self.sub(w, vars_)}] {op} {self.expr(vars_, scalars)};"
        r = self.rng.random()
        if r < 0.08:
            s = f"if ({self.R}[{self.sub(self.R, vars_)}] > 0) {s}"
        elif r < 0.14 and len(vars_) > 1:
            a, b = self.rng.sample(list(vars_), 2)
            s = f"if ({a} > {b}) {s}"
        return s

    def body(self, vars_, allow_local=True, nstmts=None):
        """Statement list; sometimes a local scalar first and a reduction scalar."""
        out, scalars = [], []
        if allow_local and self.rng.random() < 0.4:
            t = f"t{self.k}"
            out.append(f"int {t} = {self.expr(vars_)};")
            scalars.append(t)
        for _ in range(nstmts or self.rng.randint(1, 3)):
            out.append(self.stmt(vars_, scalars))
        if self.rng.random() < 0.06:
            out.insert(self.rng.randint(0, len(out)),
                       f"if ({self.R}[{self.sub(self.R, vars_)}] > 1) continue;")
        return out


def gen_nest(rng: random.Random, k: int) -> Nest:
    g = _Gen(rng, k)
    nest = Nest(k, arrays=(g.P, g.Q, g.R))
    i, j, l = f"i{k}", f"j{k}", f"l{k}"
    shape = rng.choice(["perfect2", "perfect3", "perfect2", "pair", "pair", "outerpair"])
    red = rng.random() < 0.15
    s = f"s{k}"
    if red:
        nest.lines.append(f"int {s} = 0;")
    if shape.startswith("perfect"):
        depth = 3 if shape == "perfect3" else 2
        vars_ = [i, j, l][:depth]
        heads = []
        for d, v in enumerate(vars_):
            h, _ = g.header(v, vars_[:d], steps=True)
            heads.append(h)
        body = g.body(vars_)
        if red:
            body.append(f"{s} += {g.expr(vars_)};")
        nest.lines += heads + ["{"] + body + ["}"]
        for v in vars_:
            nest.apps.append(("loop_split", {"loop": v, "factor": rng.choice([2, 3])}))
        for a, b in zip(vars_, vars_[1:]):
            nest.apps.append(("loop_reorder", {"loops": f"{a},{b}"}))
        if depth == 3:
            nest.apps.append(("loop_reorder", {"loops": f"{l},{i},{j}"}))
            nest.apps.append(("loop_reorder", {"loops": f"{i},{l}"}))
        for at in range(1, len(body)):
            nest.apps.append(("loop_expansion", {"loop": vars_[-1], "at": at}))
    else:
        outer = shape == "outerpair"
        ovars = [l] if outer else []
        if outer:
            h, _ = g.header(l, [])
            nest.lines += [h, "{"]
        contract = rng.random() < 0.5
        T = f"T{k}"
        lo = rng.choice(["0", "1"])
        bnd = (rng.choice(["<", "<", "<="]), rng.choice(["4", "5", "n", "m"]))
        if contract:
            nest.lines.append(f"int {T}[16];")
        h1, _ = g.header(i, ovars, lo, bnd)
        h2, _ = g.header(j, ovars, lo, bnd)
        b1 = g.body(ovars + [i], nstmts=rng.randint(1, 2))
        b2 = g.body(ovars + [j], allow_local=False, nstmts=rng.randint(1, 2))
        if contract:
            f = rng.choice(["{v}", "{v}", "2 * {v}", "{v} + 1", "{v} / 2"])
            b1.insert(0, f"{T}[{f.format(v=i)}] = {g.expr(ovars + [i])};")
            b2.insert(rng.randint(0, len(b2)),
                      f"{g.P}[{g.sub(g.P, ovars + [j])}] += {T}[{f.format(v=j)}];")
            if rng.random() < 0.3:
                b1.append(f"{g.Q}[{g.sub(g.Q, ovars + [i])}] = {T}[{f.format(v=i)}] * 2;")
        if red:
            b2.append(f"{s} += {g.expr(ovars + [j])};")
        nest.lines += [h1, "{"] + b1 + ["}", h2, "{"] + b2 + ["}"]
        if contract and rng.random() < 0.25:
            nest.lines.append(f"{g.Q}[0] += {T}[{f.format(v=lo)}];")      # read elsewhere
        if outer:
            nest.lines.append("}")
            nest.apps.append(("loop_reorder", {"loops": f"{l},{i}"}))      # not perfect
        nest.apps.append(("loop_fuse", {"loop": i}))
        nest.apps.append(("loop_contraction", {"loop": i}))
        nest.apps.append(("loop_split", {"loop": i, "factor": 2}))
        nest.apps.append(("loop_split", {"loop": j, "factor": 3}))
        for at in range(1, len(b1)):
            nest.apps.append(("loop_expansion", {"loop": i, "at": at}))
    if red:
        nest.lines.append(f"{g.P}[0] = {s};")
    return nest


def gen_program(seed: int, nests: int = 4):
    rng = random.Random(seed)
    ns = [gen_nest(rng, k) for k in range(nests)]
    params = []
    for nest in ns:
        p, q, r = nest.arrays
        params += [f"int *{p}", f"int *{q}", f"const int *{r}"]
    params += ["int n", "int m"]
    body = "\n".join("  {\n" + "\n".join("    " + x for x in nest.lines) + "\n  }" for nest in ns)
    src = f'extern "C" void f({", ".join(params)}) {{\n{body}\n}}\n'
    return src, ns


def _args(ns, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in ns:
        for _ in range(3):
            out.append(rng.integers(-3, 4, SIZE).astype(np.int32))
    return out + [N, M]


def _emit(p):
    return platforms.module(p.platform, "backend").emit(p)


@dataclass
class Stats:
    programs: int = 0
    applications: int = 0
    accepted: int = 0
    refused: int = 0
    builds: int = 0
    by_code: dict = field(default_factory=dict)
    by_pass: dict = field(default_factory=dict)


def check_seed(seed: int, nests: int, stats: Stats, max_rounds: int | None = None):
    src, ns = gen_program(seed, nests)
    prog = parse_source(src, "vnni", f"gen{seed}.cpp")
    args = _args(ns, seed)
    want = copy.deepcopy(args)
    run_kernel(f"gen{seed}.cpp", args=want, source=_emit(prog), program=prog)
    stats.programs += 1
    stats.builds += 1
    rounds = max(len(n.apps) for n in ns)
    if max_rounds is not None:
        rounds = min(rounds, max_rounds)
    for r in range(rounds):
        cur, applied = prog, {}
        for nest in ns:
            if r >= len(nest.apps):
                continue
            name, opts = nest.apps[r]
            stats.applications += 1
            acc, _ref = stats.by_pass.get(name, (0, 0))
            try:
                cur = run_pass(name, cur, **opts)
            except PassRefused as exc:
                code = exc.diagnostics[0].code if exc.diagnostics else None
                assert code in CODES and code.startswith(PREFIX[name]), \
                    f"seed {seed}: {name}{opts} refused without a documented code: {exc}"
                stats.refused += 1
                stats.by_code[code] = stats.by_code.get(code, 0) + 1
                stats.by_pass[name] = (acc, _ref + 1)
                continue
            stats.accepted += 1
            stats.by_pass[name] = (acc + 1, _ref)
            applied[nest.k] = (name, opts)
        if not applied:
            continue
        got = copy.deepcopy(args)
        run_kernel(f"gen{seed}_{r}.cpp", args=got, source=_emit(cur), program=cur)
        stats.builds += 1
        for nest in ns:
            if nest.k not in applied:
                continue
            for a in range(3 * nest.k, 3 * nest.k + 3):
                if not np.array_equal(want[a], got[a]):
                    name, opts = applied[nest.k]
                    pytest.fail(f"seed {seed}, nest {nest.k}: {name}{opts} was accepted but "
                                f"changes the outputs\n--- source:\n{src}\n--- result:\n"
                                f"{_emit(cur)}")


def test_generator_is_deterministic():
    assert gen_program(3)[0] == gen_program(3)[0]
    assert gen_program(3)[0] != gen_program(4)[0]
    src, ns = gen_program(5)
    parse_source(src, "vnni", "g.cpp")
    assert all(n.apps for n in ns)


@pytest.mark.parametrize("seed", [1, 2])
def test_random_nests_small(seed):
    stats = Stats()
    check_seed(seed, 4, stats, max_rounds=3)
    assert stats.applications > 0


@pytest.mark.slow
def test_random_nests_sweep():
    stats = Stats()
    for seed in range(100, 130):
        check_seed(seed, 4, stats)
    print(f"\nschedule property sweep: {stats.programs} programs, {stats.applications} pass "
          f"applications, {stats.accepted} accepted (verified), {stats.refused} refused, "
          f"{stats.builds} builds")
    print("by pass (accepted, refused):", dict(sorted(stats.by_pass.items())))
    print("refusal codes:", dict(sorted(stats.by_code.items())))
    assert stats.accepted > 0 and stats.refused > 0
