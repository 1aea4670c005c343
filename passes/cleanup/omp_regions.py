"""omp_regions: an OpenMP parallel region -> loops the binders read.

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

    Or they give each thread scratch and share the loop's iterations out (work sharing)::

        #pragma omp parallel
        {
          float *p = (float *) malloc(sizeof(float) * S);   // each thread's own
          #pragma omp for schedule(static)
          for (int i = 0; i < L; ++i) { ... p[j] ... if (c) continue; ... }
          free(p);
        }

    A region whose statement is declarations (the threads' own variables), then one or more
    ``#pragma omp for`` loops, then only ``free`` / ``_mm_free`` of those variables becomes
    one ``#pragma omp parallel for`` per loop (the clauses of both pragmas, ``nowait``
    dropped) whose body declares the variables, runs the loop's body and frees them (also
    before each ``continue`` of the loop): every iteration gets its own copy, which the
    binders privatise (a thread's registers or its slice of device scratch; NRAM or GDRAM per
    task).
Requires
    1. At least one function definition (XP-OMP-REGIONS-001).
    2. At least one such region (XP-OMP-REGIONS-002). A partitioned region holds no other
       OpenMP pragma (``for``, ``barrier``, ``single``, ``critical``, ``atomic``, ... need the
       team's concurrency), no ``return``/``goto``/label, and calls no other ``omp_*`` function
       than the two above and ``omp_get_wtime``. A work-sharing region's declarations call no
       function but ``malloc``/``calloc``/``aligned_alloc``/``_mm_malloc`` and pure math,
       assign nothing else, and its loops' bodies hold no OpenMP pragma but ``simd`` and call
       no ``omp_*`` function.
Guarantees
    Same outputs on the virtual device for a program whose result does not depend on the
    team's size and whose threads do not communicate (a data race otherwise): the threads'
    statement instances run one after another, each once, with the thread number and team
    size it reads; a work-sharing loop's iterations read no value of a thread's variable that
    an earlier iteration left (the result would depend on the schedule). Verification runs
    the source with the OpenMP runtime's own team (the machine's cores) against the output:
    a result that depends on the team size or the schedule does not verify.
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
_ALLOCATORS = {"malloc", "calloc", "aligned_alloc", "_mm_malloc"}
_FREES = {"free", "_mm_free"}
_LOOPS = (c_ast.For, c_ast.While, c_ast.DoWhile)


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


def _words(p) -> list[str]:
    return p.string.replace("(", " ( ").replace(")", " ) ").split()


def _clauses(p, skip: int) -> str:
    """The clauses of pragma ``p`` after its first ``skip`` words, ``nowait`` dropped (the
    parallel loop that replaces a work-sharing loop ends with its team)."""
    text = p.string.split(None, skip)[skip] if len(p.string.split()) > skip else ""
    return " ".join(w for w in text.split() if w != "nowait")


def _omp_for(p) -> bool:
    return isinstance(p, c_ast.Pragma) and _words(p)[:2] == ["omp", "for"]


def _freed(stmt, names: set) -> bool:
    """``free(x)`` / ``_mm_free(x)`` of one of ``names``."""
    if not (isinstance(stmt, c_ast.FuncCall) and canon.call_name(stmt) in _FREES and
            stmt.args and len(stmt.args.exprs) == 1):
        return False
    a = stmt.args.exprs[0]
    while isinstance(a, c_ast.Cast):
        a = a.expr
    return isinstance(a, c_ast.ID) and a.name in names


def _private_decl(d) -> bool:
    """A thread's own variable: declared with no effect but allocating its memory."""
    if not isinstance(d, c_ast.Decl) or not d.name or isinstance(d.type, c_ast.FuncDecl) or \
            "typedef" in (d.storage or []) or "static" in (d.storage or []):
        return False
    for n in canon.walk(d.init) if d.init is not None else ():
        if isinstance(n, c_ast.FuncCall) and canon.call_name(n) not in _ALLOCATORS | canon.PURE_CALLS:
            return False
        if isinstance(n, c_ast.Assignment) or \
                isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
            return False
    return True


def _shared_loop_ok(loop, names: set) -> bool:
    """The iterations of ``loop`` may run in any order, each with its own ``names``: no
    OpenMP construct but ``simd`` inside, no omp call, no jump out, and its header reads none
    of the thread's variables."""
    for n in canon.walk(loop.stmt):
        if isinstance(n, c_ast.Pragma) and _words(n)[:1] == ["omp"] and _words(n)[1:2] != ["simd"]:
            return False
        if isinstance(n, c_ast.FuncCall) and (canon.call_name(n) or "").startswith("omp_"):
            return False
        if isinstance(n, (c_ast.Return, c_ast.Goto, c_ast.Label)):
            return False
    header = [x for x in (loop.init, loop.cond, loop.next) if x is not None]
    return not any(names & canon.ids_in(x) for x in header)


def _work_sharing(pragma, stmt) -> list | None:
    """The statements replacing region ``pragma`` + ``stmt`` when its statement is the
    threads' declarations, ``#pragma omp for`` loops and frees of those variables; else None."""
    if not isinstance(stmt, c_ast.Compound) or not stmt.block_items:
        return None
    items, k = list(stmt.block_items), 0
    while k < len(items) and isinstance(items[k], c_ast.Decl):
        k += 1
    pre, loops = items[:k], []
    while k + 1 < len(items) and _omp_for(items[k]) and isinstance(items[k + 1], c_ast.For):
        loops.append((items[k], items[k + 1]))
        k += 2
    post = items[k:]
    names = {d.name for d in pre if isinstance(d, c_ast.Decl)}
    if not loops or not all(_private_decl(d) for d in pre) or \
            not all(_freed(s, names) for s in post) or \
            not all(_shared_loop_ok(loop, names) for _, loop in loops):
        return None
    out = []
    outer = _clauses(pragma, 2)
    for for_pragma, loop in loops:
        clauses = " ".join(c for c in (outer, _clauses(for_pragma, 2)) if c)
        body = _with_frees_before_continue(copy.deepcopy(loop.stmt), post)
        new_body = c_ast.Compound(copy.deepcopy(pre) + [body] + copy.deepcopy(post))
        out.append(c_ast.Pragma(f"omp parallel for {clauses}".rstrip(), for_pragma.coord))
        out.append(c_ast.For(loop.init, loop.cond, loop.next, new_body, loop.coord))
    return out


def _with_frees_before_continue(body, post: list) -> c_ast.Compound:
    """``body`` (as a block) with each ``continue`` of its own loop (not of a nested one)
    preceded by the statements ``post`` (the thread's frees)."""
    body = body if isinstance(body, c_ast.Compound) else c_ast.Compound([body])
    if post:
        canon.replace_nodes(body, lambda n: c_ast.Compound(copy.deepcopy(post) + [n])
                            if isinstance(n, c_ast.Continue) else n if isinstance(n, _LOOPS)
                            else None)
    return body


def find_work_sharing(fdef) -> list[tuple[c_ast.Compound, int, list]]:
    """(block, index of the pragma, replacement statements) of every work-sharing region."""
    out = []
    for block in (n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Compound)):
        items = block.block_items or []
        for i, p in enumerate(items[:-1]):
            if _parallel_region(p) and not _region_ok(items[i + 1]):
                new = _work_sharing(p, items[i + 1])
                if new is not None:
                    out.append((block, i, new))
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
    """``regions``: (block, pragma index, replacement or None for a thread loop)."""
    for block, i, new in sorted(regions, key=lambda r: (id(r[0]), -r[1])):
        items = list(block.block_items)
        new = new if new is not None else [_thread_loop(items[i + 1], threads)]
        block.block_items = items[:i] + new + items[i + 2:]


@register(PassInfo(
    name=NAME,
    summary="#pragma omp parallel { ... omp_get_thread_num() ... } -> a loop over the team's "
            "threads; { thread scratch; omp for loops; frees } -> parallel loops with scratch per "
            "iteration",
    requires=("a function definition (XP-OMP-REGIONS-001)",
              "an omp parallel region (no work-sharing construct) whose statement reads "
              "omp_get_thread_num() and holds no other omp pragma, omp call, return or goto, "
              "or whose statement is declarations, omp for loops and frees "
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
    fdefs = [e for e in ast.ext if isinstance(e, c_ast.FuncDef)]
    regions = [(b, i, None) for e in fdefs for b, i in find_regions(e)] + \
        [r for e in fdefs for r in find_work_sharing(e)]
    if not regions:
        return [canon.diag(program, NAME, "XP-OMP-REGIONS-002", "no omp parallel region partitioned by "
                           "omp_get_thread_num() (without other omp pragmas or calls), nor one "
                           "of thread scratch, omp for loops and frees")]
    _rewrite(regions, threads)
    return canon.Rewritten(ast)
