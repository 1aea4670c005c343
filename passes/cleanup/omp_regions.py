"""omp_regions: an OpenMP parallel region partitioned by thread number -> a loop over the threads.

Summary
    CPU kernels split work by hand inside a parallel region::

        #pragma omp parallel
        {
          int r0, r1;
          split(rows, omp_get_num_threads(), omp_get_thread_num(), r0, r1);
          for (int r = r0; r < r1; ++r) row(r);
        }

    The region runs its statement once per thread of the team, concurrently. In every function,
    a ``#pragma omp parallel`` (no work-sharing ``for``/``sections`` on it) whose statement
    calls ``omp_get_thread_num()`` becomes a loop over a team of ``threads`` threads::

        for (int __xp_omp_t = 0; __xp_omp_t < threads; ++__xp_omp_t) { S }

    with ``omp_get_thread_num()`` -> ``__xp_omp_t`` and ``omp_get_num_threads()`` ->
    ``threads`` in ``S``. The loop analyses and the binders then see the threads as the
    iterations of one loop (parallel when their accesses are proved independent).
Requires
    1. At least one function definition (XP-OMP-REGIONS-001).
    2. At least one such region (XP-OMP-REGIONS-002) whose statement holds no other OpenMP
       pragma (``for``, ``barrier``, ``single``, ``critical``, ``atomic``, ... need the team's
       concurrency), no ``return``/``goto``/label, and calls no other ``omp_*`` function than
       the two above and ``omp_get_wtime``.
Guarantees
    Same outputs on the virtual device for a program whose result does not depend on the
    team's size and whose threads do not communicate (a data race otherwise): the threads'
    statement instances run one after another, each once, with the thread number and team
    size it reads. Verification runs the source with the OpenMP runtime's own team (the
    machine's cores) against the output's ``threads``: a result that depends on the team size
    does not verify.
Options
    threads (int, default 16): the team size the loop runs.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import Option, PassInfo, register

NAME = "omp_regions"
THREAD = "__xp_omp_t"
_ALLOWED_CALLS = {"omp_get_thread_num", "omp_get_num_threads", "omp_get_wtime"}


def _parallel_region(p) -> bool:
    """``#pragma omp parallel`` with clauses, no work-sharing construct combined with it."""
    if not isinstance(p, c_ast.Pragma):
        return False
    words = p.string.replace("(", " ( ").split()
    return len(words) >= 2 and words[0] == "omp" and words[1] == "parallel" and \
        (len(words) == 2 or words[2] not in ("for", "sections", "loop", "master", "masked"))


def _region_ok(stmt) -> bool:
    calls = [canon.call_name(n) for n in canon.walk(stmt) if isinstance(n, c_ast.FuncCall)]
    if "omp_get_thread_num" not in calls:
        return False
    if any(c and c.startswith("omp_") and c not in _ALLOWED_CALLS for c in calls):
        return False
    return not any(isinstance(n, (c_ast.Return, c_ast.Goto, c_ast.Label)) or
                   (isinstance(n, c_ast.Pragma) and n.string.split()[:1] == ["omp"])
                   for n in canon.walk(stmt))


def find_regions(fdef) -> list[tuple[c_ast.Compound, int]]:
    """(block, index of the pragma) of every rewritable region of one function."""
    out = []
    for block in (n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Compound)):
        items = block.block_items or []
        for i, p in enumerate(items[:-1]):
            if _parallel_region(p) and _region_ok(items[i + 1]):
                out.append((block, i))
    return out


def _thread_loop(stmt, threads: int) -> c_ast.For:
    def fn(n):
        name = canon.call_name(n) if isinstance(n, c_ast.FuncCall) else None
        if name == "omp_get_thread_num":
            return c_ast.ID(THREAD)
        if name == "omp_get_num_threads":
            return c_ast.Constant("int", str(threads))
        return None
    body = canon.rebuild(copy.deepcopy(stmt), fn)
    if not isinstance(body, c_ast.Compound):
        body = c_ast.Compound([body])
    decl = c_ast.Decl(THREAD, [], [], [], [], c_ast.TypeDecl(THREAD, [], None, c_ast.IdentifierType(["int"])),
                      c_ast.Constant("int", "0"), None)
    return c_ast.For(c_ast.DeclList([decl]), c_ast.BinaryOp("<", c_ast.ID(THREAD), c_ast.Constant("int", str(threads))),
                     c_ast.UnaryOp("p++", c_ast.ID(THREAD)), body, stmt.coord)


def _rewrite(regions, threads: int) -> None:
    for block, i in sorted(regions, key=lambda r: (id(r[0]), -r[1])):
        items = list(block.block_items)
        block.block_items = items[:i] + [_thread_loop(items[i + 1], threads)] + items[i + 2:]


@register(PassInfo(
    name=NAME,
    summary="#pragma omp parallel { ... omp_get_thread_num() ... } -> a loop over the team's threads",
    requires=("a function definition (XP-OMP-REGIONS-001)",
              "an omp parallel region (no work-sharing construct) whose statement reads "
              "omp_get_thread_num() and holds no other omp pragma, omp call, return or goto "
              "(XP-OMP-REGIONS-002)"),
    guarantees=("same outputs on the virtual device when the result does not depend on the team "
                "size (the verification's run decides)",),
    options={"threads": Option(int, 16, "team size the thread loop runs")},
))
def omp_regions(program, *, threads: int = 16, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program, threads=threads))
    return canon.reparse(program, plan.ast)


@omp_regions.legality
def _legal(program, *, threads: int = 16):
    if program.ast is None or not any(isinstance(e, c_ast.FuncDef) for e in program.ast.ext):
        return [canon.diag(program, NAME, "XP-OMP-REGIONS-001", "no function definition")]
    if threads < 1:
        return [canon.diag(program, NAME, "XP-OMP-REGIONS-002", f"threads={threads}: a team has at least one thread")]
    ast = copy.deepcopy(program.ast)
    regions = [r for e in ast.ext if isinstance(e, c_ast.FuncDef) for r in find_regions(e)]
    if not regions:
        return [canon.diag(program, NAME, "XP-OMP-REGIONS-002", "no omp parallel region partitioned by "
                           "omp_get_thread_num() (without other omp pragmas or calls)")]
    _rewrite(regions, threads)
    return canon.Rewritten(ast)
