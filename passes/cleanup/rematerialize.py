"""rematerialize: per-thread arrays of lifted GPU code back to recomputed values.

Summary
    The GPU lift keeps a thread's private value that lives across a barrier in an array
    indexed by the thread id: ``int x[NT];`` declared in the block body, written in one phase
    (a loop nest over the lifted threads whose body starts with ``const unsigned tid = ...;``)
    as ``x[tid] = e;`` and read back as ``x[tid]`` later. The dependence analysis of
    ``task_bind`` cannot use such a read as a subscript (``out[x[tid] * n + j]``). When ``e``
    is an expression the thread can recompute (its names are the thread loop variables,
    ``tid``, names never written in the block body, or - for a read in the same phase -
    declarations of that phase made before the write and never written in it), every read is
    replaced by ``(T) (e)`` for the write that reaches it: the last earlier top-level write of
    the same phase, else (a value from an earlier phase) the one expression all writes of the
    array share, with the writing phase's own earlier constant declarations substituted
    (``const int row = bx * 4 + tx / 64; xr[tid] = x + row * n;`` gives ``(const float *)
    (x + (int) (bx * 4 + tx / 64) * n)``). Arrays of scalars and of pointers qualify. The
    writes, now dead, and the declaration are removed. A read in a nest of another shape
    (the lift's warp loops ``for (w ...) { const unsigned tid = w * 32; ... }``) takes the
    shared expression with the writing nest's thread variables recomputed from the reading
    ``tid`` (``tx = tid % 128u``, ``ty = tid / 128u``) when the writing nest's ``tid`` is
    the mixed-radix number of its loop variables and every reading ``tid`` is below the
    thread count (both checked over the constant-extent domains, at most 4096 points).
    Nests are matched by position, not by name: after inlining each nest declares its own
    loop variables and ``tid`` (``tx__i5``, ``tx__i5_2``), and a value from another nest of
    the same signature is renamed into the reading nest's names. Where the clean-up folded
    ``tid`` into its uses (``A[(unsigned int) (tx + 256u * 0u)]``), the one subscript of the
    nest's local arrays that depends only on its loop variables (and names never written) is
    named again for the analysis and folded back afterwards.
Requires
    1. The program has an entry function definition  [XP-REMAT-001].
    2. A local one-dimensional array of scalars or pointers, declared in a block, every access of which
       is ``A[tid]`` inside thread-loop nests of that block with one signature (same loop
       variables and extents, same ``tid`` declaration) - or, for reads only, nests whose
       ``tid`` maps back to the writing nest's variables as above - written only by top-level
       statements ``A[tid] = e;`` with ``e`` recomputable as above and free of calls with
       effects, array reads and ``A`` itself; each read reached by such a write of its phase
       or, when there is none, all writes of the array having the same ``e``
       [XP-REMAT-002: no per-thread array (every access A[tid] in thread loops), nothing to
       do; XP-REMAT-003: per-thread arrays, none of whose reads can be recomputed].
Guarantees
    Same outputs on the virtual device: each read yields the value the reaching write stored
    (the names of ``e`` hold the same values at the read: they are never written, or they
    are the thread's own loop variables and id). The array disappears; the phases then carry
    no per-thread array that a subscript depends on.
Example
    ``x[tid] = bx * 32u + tx; ... out[(y0 + j) * n + x[tid]] = ...`` ->
    ``out[(y0 + j) * n + ((int) (bx * 32u + tx))] = ...``
"""
from __future__ import annotations

import copy

from pycparser import c_ast, c_generator

import passes.canon as canon
from passes.base import PassInfo, register
from passes.cleanup.unit_loops import const_int

NAME = "rematerialize"
_GEN = c_generator.CGenerator()


def _text(n) -> str:
    return _GEN.visit(n)


def _thread_loop(s):
    """(var, extent text) of ``for (T v = 0; v < E; ++v)``, else None."""
    if not isinstance(s, c_ast.For) or not isinstance(s.init, c_ast.DeclList) or \
            len(s.init.decls) != 1:
        return None
    d = s.init.decls[0]
    if d.init is None or const_int(d.init) != 0:
        return None
    c, nxt = s.cond, s.next
    if not (isinstance(c, c_ast.BinaryOp) and c.op == "<" and isinstance(c.left, c_ast.ID) and
            c.left.name == d.name and isinstance(nxt, c_ast.UnaryOp) and
            nxt.op in ("++", "p++") and isinstance(nxt.expr, c_ast.ID) and
            nxt.expr.name == d.name):
        return None
    return d.name, _text(c.right)


class Phase:
    """A thread-loop nest: its loops (outermost first), innermost body items and tid decl."""

    def __init__(self, loops, body, tid):
        self.loops, self.body, self.tid = loops, body, tid
        self.vars = [v for v, _ in (_thread_loop(lp) for lp in loops)]
        # positional: nests that differ only in the names of their loop variables and tid
        # (one name per declaration after inlining) have one signature
        place = {v: c_ast.ID(f"__xp_loop{k}") for k, v in enumerate(self.vars)}
        self.sig = (tuple(x for _, x in (_thread_loop(lp) for lp in loops)),
                    _text(canon.substitute(tid.init, place)))

    def names(self) -> list[str]:
        """The thread names of the nest, in signature order: loop variables, then tid."""
        return self.vars + [self.tid.name]


def _in_terms_of(e, src: Phase, dst: Phase):
    """``e`` written in terms of nest ``src``'s thread names, in those of ``dst`` (same
    signature): positional renaming of the loop variables and tid."""
    mapping = {a: c_ast.ID(b) for a, b in zip(src.names(), dst.names()) if a != b}
    return canon.substitute(e, mapping) if mapping else copy.deepcopy(e)


def _phase(s) -> Phase | None:
    loops = []
    cur = s
    while _thread_loop(cur) is not None:
        loops.append(cur)
        items = canon.as_items(cur.stmt)
        if len(items) == 1 and _thread_loop(items[0]) is not None:
            cur = items[0]
            continue
        if items and isinstance(items[0], c_ast.Decl) and items[0].init is not None and \
                isinstance(items[0].type, c_ast.TypeDecl) and "const" in (items[0].quals or []):
            body = cur.stmt if isinstance(cur.stmt, c_ast.Compound) else None
            if body is None:
                return None
            return Phase(loops, body, items[0])
        return None
    return None


def _phases(block) -> list[Phase]:
    out = []

    def go(n):
        ph = _phase(n) if isinstance(n, c_ast.For) else None
        if ph is not None:
            out.append(ph)
            return
        for _, c in n.children():
            go(c)

    go(block)
    return out


def _array_decls(block) -> list[c_ast.Decl]:
    return [d for d in (block.block_items or [])
            if isinstance(d, c_ast.Decl) and isinstance(d.type, c_ast.ArrayDecl) and
            (isinstance(d.type.type, c_ast.TypeDecl) or
             isinstance(d.type.type, c_ast.PtrDecl) and isinstance(d.type.type.type, c_ast.TypeDecl))
            and d.init is None and d.name and canon.type_words(d.type.type) and
            "static" not in (d.storage or [])]


def _closed(e, ph: "Phase", k: int):
    """``e`` (written at top-level item ``k`` of phase ``ph``) with the phase's own earlier
    top-level declarations substituted (``(T) (init)``) when their initialiser is pure and the
    phase never writes them: the form a later phase can recompute. None if a substituted
    declaration is not of that kind."""
    items = ph.body.block_items or []
    written = canon.written_names(ph.body)
    decls = {}
    for d in items[:k]:
        if isinstance(d, c_ast.Decl) and d.name and d.name != ph.tid.name:
            ok = isinstance(d.type, c_ast.TypeDecl) and d.init is not None and \
                _pure(d.init) and d.name not in written
            decls[d.name] = d if ok else None
    e = copy.deepcopy(e)
    for _ in range(16):
        used = canon.ids_in(e) & set(decls)
        if not used:
            return e
        mapping = {}
        for n in used:
            d = decls[n]
            if d is None:
                return None
            t = copy.deepcopy(d.type)
            t.declname = None
            t.quals = []
            mapping[n] = c_ast.Cast(c_ast.Typename(None, [], None, t), copy.deepcopy(d.init))
        e = canon.substitute(e, mapping)
    return None


def _refs(node, name):
    """Every ``name[...]`` ArrayRef and every other use of ``name`` (bare ID) under node."""
    refs, bare = [], []

    def go(n, under_ref):
        if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and n.name.name == name:
            refs.append(n)
            go(n.subscript, False)
            return
        if isinstance(n, c_ast.ID) and n.name == name and not under_ref:
            bare.append(n)
        for _, c in n.children():
            go(c, False)

    go(node, False)
    return refs, bare


def _pure(e) -> bool:
    for n in canon.walk(e):
        if isinstance(n, (c_ast.ArrayRef, c_ast.StructRef)) or \
                (isinstance(n, c_ast.UnaryOp) and n.op in ("*", "&")):
            return False
    return not canon.has_side_effects(e)


class _Plan:
    """For one array: replacement expression per read node id, statements to delete."""

    def __init__(self, decl):
        self.decl = decl
        self.reads: dict[int, c_ast.Node] = {}
        self.writes: list[tuple[list, c_ast.Node]] = []   # (container items, statement)


def _thread_refs(block, name, phases):
    """(references, id -> phase) when ``name`` is a per-thread array: every reference lies in a
    phase and indexes with that phase's tid; else None (not the pass's pattern)."""
    refs, bare = _refs(block, name)
    if bare or not refs:
        return None
    where: dict[int, Phase] = {}
    for ph in phases:
        r, _ = _refs(ph.loops[0], name)
        for x in r:
            where[id(x)] = ph
    for x in refs:
        ph = where.get(id(x))
        if ph is None or not (isinstance(x.subscript, c_ast.ID) and x.subscript.name == ph.tid.name):
            return None
    return refs, where


def _plan_array(block, decl, phases, block_written) -> _Plan | None:
    name = decl.name
    got = _thread_refs(block, name, phases)
    if got is None:
        return None
    refs, where = got
    plan = _Plan(decl)
    # writes: top-level ``A[tid] = e;`` items of a phase body; no other write forms
    writes: dict[int, tuple[Phase, int, c_ast.Node]] = {}
    for ph in {id(p): p for p in where.values()}.values():
        items = ph.body.block_items or []
        for k, s in enumerate(items):
            if isinstance(s, c_ast.Assignment) and s.op == "=" and \
                    isinstance(s.lvalue, c_ast.ArrayRef) and id(s.lvalue) in where:
                writes[id(s.lvalue)] = (ph, k, s.rvalue)
    # one signature for the writes and the reads, except reads in other nests (the lifted
    # warp loops: tid = w * 32) whose tid the writing nest's thread variables are a
    # mixed-radix decomposition of
    sigs = {where[i].sig for i in writes} or {where[id(refs[0])].sig}
    if len(sigs) != 1:
        return None
    sig = next(iter(sigs))
    wph = next(p for p in where.values() if p.sig == sig)
    foreign = {id(x) for x in refs if where[id(x)].sig != sig}
    if foreign and (any(i in foreign for i in writes) or _radix(wph) is None or
                    any(not _tid_within(where[i], _radix(wph)[1]) for i in foreign)):
        return None
    for x in refs:
        if id(x) in writes:
            continue
        # any other write form (compound assignment, ++, nested or conditional store)
        for n in canon.walk(block):
            if isinstance(n, c_ast.Assignment) and n.lvalue is x:
                return None
            if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&") and \
                    n.expr is x:
                return None
    if not writes:
        return None
    texts = set()
    closed = None
    for ph, k, e in writes.values():
        if not _pure(e) or name in canon.ids_in(e):
            return None
        c = _closed(e, ph, k)
        if c is not None:
            c = _in_terms_of(c, ph, wph)
        texts.add(_text(c) if c is not None else None)
        closed = c
    t = copy.deepcopy(decl.type.type)
    if isinstance(t, c_ast.PtrDecl):
        t.type.declname = None
    else:
        t.declname = None
        t.quals = []
    for x in refs:
        if id(x) in writes:
            continue
        ph = where[id(x)]
        items = ph.body.block_items or []
        j = next((k for k, s in enumerate(items) if any(n is x for n in canon.walk(s))), None)
        if j is None:
            return None
        earlier = [(k, e) for (p, k, e) in writes.values() if p is ph and k < j]
        if earlier:
            k, e = max(earlier, key=lambda t: t[0])
            # no other write of the array between the reaching write and the read
            if any(p is ph and k < kk < j for (p, kk, _) in writes.values()):
                return None
            # same iteration of the phase: the names of e keep their values if the phase body
            # never writes them; declarations of the phase must precede the write at top level
            names = canon.ids_in(e) - set(ph.names())
            top = {d.name for d in items[:k] if isinstance(d, c_ast.Decl) and d.name}
            inner = {n.name for n in canon.walk(ph.body) if isinstance(n, c_ast.Decl) and n.name}
            if names & canon.written_names(ph.body) or (names & inner) - top:
                return None
        else:
            if len(texts) != 1 or closed is None:
                return None
            e = closed
            # a value from another phase (or iteration): the names of e must mean the same
            # there, i.e. never be written in the block and not be declared below its top level
            names = canon.ids_in(e) - set(wph.names())
            nested = {n.name for n in canon.walk(block) if isinstance(n, c_ast.Decl) and n.name} - \
                {d.name for d in (block.block_items or []) if isinstance(d, c_ast.Decl)}
            if names & block_written or names & nested:
                return None
            if id(x) in foreign:
                e = _from_tid(e, wph, ph.tid.name)
            else:
                e = _in_terms_of(e, wph, ph)
        plan.reads[id(x)] = c_ast.Cast(c_ast.Typename(None, [], None, copy.deepcopy(t)),
                                       copy.deepcopy(e))
    for ph, k, e in writes.values():
        plan.writes.append((ph.body.block_items, ph.body.block_items[k]))
    return plan


def _radix(ph: Phase):
    """([(loop variable, extent, place value)] innermost first, thread count) when the
    phase's ``tid`` equals the mixed-radix number of its loop variables (checked at every
    point of the constant-extent domain, at most 4096), else None."""
    ext = []
    for lp in ph.loops:
        e = const_int(lp.cond.right)
        if e is None or e <= 0:
            return None
        ext.append(e)
    total = 1
    for e in ext:
        total *= e
    if total > 4096:
        return None
    names = ph.vars
    place, out = 1, []
    for v, e in reversed(list(zip(names, ext))):
        out.append((v, e, place))
        place *= e
    init = ph.tid.init
    for t in range(total):
        vals = {v: c_ast.Constant("int", str(t // pl % e)) for v, e, pl in out}
        if const_int(canon.substitute(copy.deepcopy(init), vals)) != t:
            return None
    return out, total


def _tid_within(ph: Phase, total: int) -> bool:
    """Every value the phase's ``tid`` takes over its constant domain is below ``total``."""
    ext = [const_int(lp.cond.right) for lp in ph.loops]
    if any(e is None or e <= 0 for e in ext):
        return False
    points = 1
    for e in ext:
        points *= e
    if points > 4096:
        return False
    for t in range(points):
        vals, r = {}, t
        for v, e in reversed(list(zip(ph.vars, ext))):
            vals[v] = c_ast.Constant("int", str(r % e))
            r //= e
        got = const_int(canon.substitute(copy.deepcopy(ph.tid.init), vals))
        if got is None or not 0 <= got < total:
            return False
    return True


def _from_tid(e, wph: Phase, tid: str):
    """``e`` of the writing nest with its thread variables recomputed from ``tid`` (the id
    of the reading nest): ``v = tid / place % extent``; its own tid becomes ``tid``."""
    parts, _ = _radix(wph)
    u = c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None,
                                                       c_ast.IdentifierType(["unsigned", "int"])))
    mapping = {wph.tid.name: c_ast.ID(tid)}
    for k, (v, ext, place) in enumerate(parts):
        x = c_ast.Cast(copy.deepcopy(u), c_ast.ID(tid))
        if place != 1:
            x = c_ast.BinaryOp("/", x, c_ast.Constant("unsigned int", f"{place}u"))
        if k != len(parts) - 1:
            x = c_ast.BinaryOp("%", x, c_ast.Constant("unsigned int", f"{ext}u"))
        mapping[v] = x
    return canon.substitute(copy.deepcopy(e), mapping)


def _nests(node):
    """(loops, innermost statement's holder) of every maximal thread-loop nest under node:
    ``for`` loops of the ``_thread_loop`` form, each the only statement of the one outside."""
    out = []

    def go(n):
        if _thread_loop(n) is not None:
            loops, cur = [n], n
            while True:
                items = canon.as_items(cur.stmt)
                if len(items) == 1 and _thread_loop(items[0]) is not None:
                    cur = items[0]
                    loops.append(cur)
                    continue
                break
            out.append(loops)
            go(cur.stmt)
            return
        for _, c in n.children():
            go(c)

    go(node)
    return out


def _name_thread_ids(fdef) -> list[tuple[c_ast.Compound, c_ast.Decl]]:
    """Give the thread id of each thread-loop nest a name again where the clean-up folded
    the lift's ``const unsigned tid = ...;`` into its uses (``A[(unsigned int) (tx + 256u *
    0u)]``): when every subscript of a block-local array in the nest that depends only on
    the nest's loop variables and names the function never writes (the block size) is one
    expression, it becomes ``const unsigned int <fresh> =
    <expression>;`` at the top of the innermost body and the subscripts that name. The
    (body, declaration) pairs inserted; ``_unname_thread_ids`` undoes them."""
    arrays = {d.name for b in _blocks(fdef) for d in _array_decls(b)}
    if not arrays:
        return []
    taken = {n.name for n in canon.walk(fdef) if isinstance(n, (c_ast.ID, c_ast.Decl)) and n.name}
    written = canon.written_names(fdef.body) | arrays
    inserted = []
    for loops in _nests(fdef.body):
        inner = loops[-1]
        variables = {_thread_loop(lp)[0] for lp in loops}
        subs: dict[str, list] = {}
        for n in canon.walk(inner.stmt):
            if isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and \
                    n.name.name in arrays:
                used = canon.ids_in(n.subscript)
                if used & variables and not (used - variables) & written and _pure(n.subscript) and \
                        not any(isinstance(m, c_ast.FuncCall) for m in canon.walk(n.subscript)):
                    subs.setdefault(_text(n.subscript), []).append(n)
        if len(subs) != 1:
            continue
        (refs,) = subs.values()
        k = 0
        while f"__xp_tid{k}" in taken:
            k += 1
        tid = f"__xp_tid{k}"
        taken.add(tid)
        decl = canon.parse_stmts(f"const unsigned int {tid} = 0;")[0]
        decl.init = copy.deepcopy(refs[0].subscript)
        for r in refs:
            r.subscript = c_ast.ID(tid)
        if not isinstance(inner.stmt, c_ast.Compound):
            inner.stmt = c_ast.Compound([inner.stmt])
        inner.stmt.block_items = [decl] + list(inner.stmt.block_items or [])
        inserted.append((inner.stmt, decl))
    return inserted


def _unname_thread_ids(inserted) -> None:
    """Undo ``_name_thread_ids``: each inserted id folded back into its uses."""
    for body, decl in inserted:
        if not any(x is decl for x in body.block_items or []):
            continue
        body.block_items = [x for x in body.block_items if x is not decl]
        mapping = {decl.name: decl.init}
        for k, item in enumerate(body.block_items):
            body.block_items[k] = canon.substitute(item, mapping)


def _replace_reads(node, reads: dict):
    canon.replace_nodes(node, lambda n: reads.get(id(n)))


def _blocks(fdef):
    return [n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Compound)]


def _rewrite(program, ast, why: list | None = None) -> int:
    """Recompute the per-thread arrays of the entry of ``ast``; the number removed. A
    per-thread array left (a read cannot recompute its value) appends its declaration to
    ``why``."""
    fdef = canon.entry_def(ast, program.entry.name)
    done = 0
    progress = True
    while progress:
        progress = False
        for block in _blocks(fdef):
            decls = _array_decls(block)
            if not decls:
                continue
            phases = _phases(block)
            if not phases:
                continue
            written = canon.written_names(block)
            for d in decls:
                plan = _plan_array(block, d, phases, written)
                if plan is None:
                    if why is not None and _thread_refs(block, d.name, phases) is not None:
                        why.append(d)
                    continue
                _replace_reads(block, plan.reads)
                for items, s in plan.writes:
                    items[:] = [x for x in items if x is not s]
                block.block_items = [x for x in block.block_items if x is not d]
                done += 1
                progress = True
                break
            if progress:
                break
    return done


@register(PassInfo(
    name=NAME,
    summary="per-thread arrays of lifted GPU code (x[tid] = e across barriers) -> e recomputed "
            "at each read",
    requires=("an entry function definition (XP-REMAT-001)",
              "a local array accessed only as A[tid] in thread-loop nests of one signature "
              "(reads also in nests whose tid maps back to the writing nest's thread "
              "variables, e.g. warp loops), written only by top-level A[tid] = e with e "
              "recomputable where it is read (XP-REMAT-002 no per-thread array, XP-REMAT-003 "
              "none recomputable)"),
    guarantees=("same outputs on the virtual device", "the array and its writes are removed"),
))
def rematerialize(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@rematerialize.legality
def _legal(program):
    """The rewrite, run on a copy of the AST: the plan the rewrite emits."""
    if program.entry is None or program.ast is None or \
            canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-REMAT-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    why: list = []
    named = _name_thread_ids(canon.entry_def(ast, program.entry.name))
    done = _rewrite(program, ast, why)
    _unname_thread_ids(named)
    if not done:
        if why:         # per-thread arrays, none recomputable
            return [canon.diag(program, NAME, "XP-REMAT-003", f"per-thread array '{why[0].name}': a "
                               "read cannot recompute the value written (not a plain top-level "
                               "A[tid] = e of a pure e, or thread mappings not proved)", why[0])]
        return [canon.diag(program, NAME, "XP-REMAT-002",
                           "no per-thread array (A[tid] in thread loops)")]
    return canon.Rewritten(ast)
