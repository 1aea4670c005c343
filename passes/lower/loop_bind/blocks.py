"""loop_bind_blocks: the two-level schedule of ``loop_bind{levels=2}`` (blocks x threads).

Summary
    Helper of ``loop_bind`` (not a pass of its own). A kernel region's outermost parallel loop
    (the BANG task loop of ``task_recovery{form=flat}``, or any outer loop without a
    loop-carried dependence) becomes a block-strided loop over ``blockIdx.x``; its body is
    scheduled for the threads of one block:

    - local arrays declared at phase level of the body (the former NRAM buffers) become
      ``__shared__`` arrays of the block while they fit the profile's ``shared_mem_bytes``
      (declaration order); the next ones views into dynamic shared memory while static and
      dynamic together fit what a kernel may opt in to (``shared_mem_optin_bytes``: the host
      raises ``MaxDynamicSharedMemorySize`` and passes the bytes in the launch); the others
      become this block's slice of a global scratch buffer
      (``__xp_scratch``, grid x slice bytes, allocated by the host around the launch); an
      initialised table that is only read stays a per-thread copy;
    - loops of the body without a loop-carried dependence (``affine.parallel``, Z3) become
      thread-strided loops (``for (i = start + threadIdx.x * s; i < n; i += blockDim.x * s)``);
      a rectangular perfect nest of such loops is collapsed into one strided index;
    - statements that write no memory (scalars, pointer locals, reductions into scalars) run
      redundantly in every thread (each computes the same block-uniform values);
    - other statements (stores, ``memcpy``, sequential loops writing memory) run in thread 0
      (``if (threadIdx.x == 0)``);
    - ``if`` statements and sequential loops that contain parallel loops are kept as control
      flow around the phases (their conditions and bounds are block-uniform by construction:
      every scalar is computed redundantly by all threads);
    - ``__syncthreads()`` separates phases: before a phase that writes memory when anything
      was read or written since the last barrier, before a statement that reads memory when
      anything was written since, at the end of a loop body with phases (and before that
      loop), and at the end of every block iteration.

    ``schedule`` is the legality (an analysis that returns the schedule or the reason it does
    not apply); ``build`` is the rewrite (kernel body statements from the schedule).
Requires
    1. The bound loop is canonical, with no extent-1 loops around it and no privatised arrays.
    2. Arrays to share have constant dimensions, no ``static``/``extern``, a name declared
       once in the kernel that shadows no parameter or file-scope name; an initialised one
       is only read; one that goes to global scratch is not an operand of ``sizeof``/``&``.
       No variable other than an array has its address taken.
    3. No ``return``/``goto``/label in the body; ``break``/``continue`` only inside a statement
       that is scheduled as a whole (never across a barrier).
    4. A statement run by thread 0 assigns no scalar declared outside it (other threads would
       not see the value); a thread-strided loop assigns none either; a composite loop's
       header reads no memory.
    5. At least one loop of the body is thread-strided, and not all of them are shorter than
       a warp (else the one-level binding is kept).
Guarantees
    Barriers only in block-uniform control flow; no two threads of a block write the same
    element between two barriers, and no thread reads an element another thread writes
    between the same two barriers (iterations of a strided loop are independent by proof;
    statements of thread 0 and redundant reads are fenced by barriers).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from pycparser import c_ast

import passes.analysis.affine as affine
import passes.canon as canon
from passes.canon import strip_coords
from passes.lower.loop_bind.kernel_ast import (count_ast, fill, ir_names, loop_var_decls, mentions_loop,
                                               only_loop, param_decls, parse_snippet, strip_quals,
                                               typedefs)

MIN_BLOCK = 64
WARP = 32
SCRATCH_ALIGN = 256          # bytes; per-block global scratch slices and arrays in them
SCRATCH_BUDGET = 1 << 28     # bytes of per-block scratch over the whole grid (caps the grid)
DYNAMIC_ALIGN = 128          # bytes; arrays in dynamic shared memory
DYNAMIC_NAME = "__xp_dyn_shared"
HALF_TYPES = {"_Float16": 2, "half": 2, "__half": 2, "__fp16": 2, "__bf16": 2,
              "bfloat16_t": 2, "__nv_bfloat16": 2, "hip_bfloat16": 2}
PREFER_THREADS = 64          # bind a parallel loop with inner parallel loops when >= this count


class NotTwoLevel(Exception):
    """The region keeps the one-level binding (reason in the message)."""


@dataclass
class Schedule:
    items: list                         # tagged tree (see _Scheduler)
    shared: list                        # (Decl, bytes, dims) hoisted to __shared__
    thread_loops: list                  # bands of LoopInfo bound to threadIdx.x
    block: int = 256
    shared_bytes: int = 0
    scratch: list = field(default_factory=list)    # (Decl, bytes, dims, offset) per block
    scratch_bytes: int = 0              # per-block global scratch (arrays over the limit)
    dynamic: list = field(default_factory=list)    # (Decl, bytes, dims, offset) dynamic shared
    dynamic_bytes: int = 0              # dynamic shared memory per block (launch parameter)
    notes: list = field(default_factory=list)


class _State:
    def __init__(self, reads=False, writes=False):
        self.reads, self.writes = reads, writes

    def copy(self):
        return _State(self.reads, self.writes)

    def clear(self):
        self.reads = self.writes = False

    @property
    def pending(self):
        return self.reads or self.writes


def schedule(loop: affine.LoopInfo, info: affine.NestInfo, max_block: int,
             shared_limit: int, constants: dict | None = None,
             reserved: frozenset = frozenset(), dynamic_limit: int = 0) -> Schedule:
    """The two-level schedule of the body of ``loop`` (raises NotTwoLevel); ``constants``:
    the program's named integer constants (macros), for array bounds; ``reserved``: names
    of the kernel's parameters and file-scope declarations (a hoisted array must not take
    the place of one of them); ``dynamic_limit``: shared memory per block, static and
    dynamic together, a kernel may opt in to (0: static only)."""
    s = _Scheduler(info, shared_limit, constants or {})
    s.body = loop.node.stmt
    body = loop.node.stmt
    stmts = body.block_items or [] if isinstance(body, c_ast.Compound) else [body]
    _check_names(loop.node.stmt)
    arrays = {n.name for n in _walk(loop.node) if isinstance(n, c_ast.Decl) and
              isinstance(n.type, c_ast.ArrayDecl)}
    st = _State()
    declared: dict = {}
    for n in _walk(loop.node):
        if isinstance(n, c_ast.Decl) and n.name:
            declared[n.name] = declared.get(n.name, 0) + 1
    items = s.seq(stmts, st)
    # a variable declared in the body of a thread loop belongs to one iteration, run by one
    # thread: its address may be taken (memcpy(&bits, &h, 2), a bit cast); elsewhere a
    # pointer would let thread 0 write a value the other threads never see
    private = {n.name for band in s.thread_loops for lp in band for n in _walk(lp.node.stmt)
               if isinstance(n, c_ast.Decl) and n.name and declared.get(n.name) == 1}
    taken = _address_taken_scalar(loop.node.stmt, arrays | private)
    if taken:
        raise NotTwoLevel(f"the address of '{taken}' is taken (a thread's own variable)")
    if st.pending:
        items.append(("sync",))          # the next block iteration reuses the shared arrays
    for d, _, _ in s.shared:
        if declared.get(d.name, 0) != 1 or d.name in reserved or d.name.startswith("__xp_"):
            raise NotTwoLevel(f"array '{d.name}' is declared more than once in the kernel or "
                              "shadows a parameter or file-scope name")
    shared, scratch, used, off = [], [], 0, 0
    dynamic, dyn = [], 0
    for d, n, dims in s.shared:         # on chip while they fit, in declaration order
        if used + n <= shared_limit:
            shared.append((d, n, dims))
            used += n
            continue
        why = whole_array_use(loop.node, d.name)
        if why:
            raise NotTwoLevel(f"array '{d.name}' does not fit in shared memory and {why}")
        slot = (n + DYNAMIC_ALIGN - 1) // DYNAMIC_ALIGN * DYNAMIC_ALIGN
        if used + dyn + slot <= dynamic_limit:     # over the static limit: dynamic, opted in
            dynamic.append((d, n, dims, dyn))
            dyn += slot
            continue
        scratch.append((d, n, dims, off))
        off += (n + SCRATCH_ALIGN - 1) // SCRATCH_ALIGN * SCRATCH_ALIGN
    if not s.thread_loops:
        raise NotTwoLevel("no loop of the body is parallel")
    counts = []
    for band in s.thread_loops:
        c = 1
        for lp in band:
            k = _trip_const(lp)
            c = None if c is None or k is None else c * k
        counts.append(c)
    if all(c is not None for c in counts) and max(counts) < WARP:
        raise NotTwoLevel(f"the parallel loops of the body have fewer iterations ({max(counts)}) "
                          f"than a warp ({WARP}): one thread per outer iteration is better")
    if all(c is not None for c in counts):
        want = max(counts)
        block = max(MIN_BLOCK, min(max_block, (want + 31) // 32 * 32))
    else:
        block = max_block
    block = min(block, max_block)
    return Schedule(items, shared, s.thread_loops, block, used, scratch, off, dynamic, dyn)


def _read_only(body, name: str) -> bool:
    """Is every use of array ``name`` in ``body`` an element read ``name[i]...`` (never
    assigned, incremented, address-taken or decayed to a pointer)?"""
    parents = {}
    for n in _walk(body):
        for _, c in n.children():
            parents[id(c)] = n
    for n in _walk(body):
        if not (isinstance(n, c_ast.ID) and n.name == name):
            continue
        top, cur = None, n
        while True:
            p = parents.get(id(cur))
            if isinstance(p, c_ast.ArrayRef) and p.name is cur:
                top, cur = p, p
                continue
            break
        if top is None:
            return False                 # decays to a pointer (or is passed whole)
        p = parents.get(id(top))
        if isinstance(p, c_ast.Assignment) and p.lvalue is top:
            return False
        if isinstance(p, c_ast.UnaryOp) and p.op in ("++", "--", "p++", "p--", "&"):
            return False
    return True


def whole_array_use(node, name: str) -> str | None:
    """Why array ``name`` cannot become a pointer into scratch (``sizeof`` or ``&`` of it)."""
    for n in _walk(node):
        if isinstance(n, c_ast.UnaryOp) and n.op in ("sizeof", "&") and \
                isinstance(n.expr, c_ast.ID) and n.expr.name == name:
            return f"the code applies '{n.op}' to it"
    return None


def _trip_const(lp):
    lo, hi = affine.to_poly(lp.lo), affine.to_poly(lp.hi)
    if lo is None or hi is None or not (hi - lo).is_const():
        return None
    return max(0, ((hi - lo).value() + abs(lp.step) - 1) // abs(lp.step))


def _walk(n):
    yield n
    for _, c in n.children():
        yield from _walk(c)


def _check_names(body) -> None:
    for n in _walk(body):
        if isinstance(n, (c_ast.Return, c_ast.Goto, c_ast.Label)):
            raise NotTwoLevel(f"'{type(n).__name__.lower()}' in the loop body")


def _escapes(stmt) -> bool:
    """Does ``stmt`` hold a break/continue that leaves it?"""
    def walk(n, in_loop, in_switch):
        if isinstance(n, c_ast.Continue) and not in_loop:
            return True
        if isinstance(n, c_ast.Break) and not (in_loop or in_switch):
            return True
        loop = isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile))
        sw = isinstance(n, c_ast.Switch)
        for name, c in n.children():
            inner = loop and name == "stmt"
            if walk(c, in_loop or inner, in_switch or (sw and name == "stmt")):
                return True
        return False
    return walk(stmt, False, False)


_PURE = affine.PURE_FUNCTIONS


def _effects(node) -> tuple[bool, bool, set, set]:
    """(reads memory, writes memory, scalars assigned, names declared) of a statement,
    syntactically and conservatively (a call other than a pure math function reads and writes
    memory)."""
    reads = writes = False
    assigned, declared = set(), set()
    for n in _walk(node):
        if isinstance(n, c_ast.Decl) and n.name:
            declared.add(n.name)
        elif isinstance(n, c_ast.ArrayRef):
            reads = True
        elif isinstance(n, c_ast.UnaryOp) and n.op == "*":
            reads = True
        elif isinstance(n, c_ast.StructRef) and n.type == "->":
            reads = True
        elif isinstance(n, c_ast.FuncCall):
            name = n.name.name if isinstance(n.name, c_ast.ID) else None
            if name not in _PURE:
                reads = writes = True
        if isinstance(n, c_ast.Assignment):
            root, memory = _lvalue(n.lvalue)
            if root is not None:
                assigned.add(root)
            writes |= memory
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
            root, memory = _lvalue(n.expr)
            if root is not None:
                assigned.add(root)
            writes |= memory
    return reads, writes, assigned, declared


def _lvalue(lv) -> tuple[str | None, bool]:
    """(variable, memory) an lvalue may assign: ``x`` -> (x, False); ``x[i]`` / ``*p`` /
    ``p->f`` -> (None, True); ``s.f`` -> (s, False); ``s.a[i]`` / ``a[i].f`` -> (s / a, True)
    (a member of a thread's own struct, or an element of an array: both, conservatively)."""
    memory = member = False
    while True:
        if isinstance(lv, c_ast.ID):
            return (lv.name if member or not memory else None), memory
        if isinstance(lv, c_ast.StructRef) and lv.type == ".":
            member, lv = True, lv.name
        elif isinstance(lv, c_ast.ArrayRef):
            memory, lv = True, lv.name
        elif isinstance(lv, c_ast.Cast):
            lv = lv.expr
        else:
            return None, True


def _address_taken_scalar(body, arrays: set) -> str | None:
    """A variable other than an array whose address the body takes (``&x``): a pointer to
    a thread's own variable would let thread 0 write a value the other threads never see.
    The source operand of ``memcpy`` / ``memmove`` (``memcpy(dst + 4, &idx, sizeof idx)``: the
    lift of ``__bang_max``'s index) is only read: every thread holds the same value there."""
    read_only = set()
    for n in _walk(body):
        if isinstance(n, c_ast.FuncCall) and canon.call_name(n) in ("memcpy", "memmove") and \
                n.args is not None and len(n.args.exprs) == 3:
            src = n.args.exprs[1]
            while isinstance(src, c_ast.Cast):
                src = src.expr
            read_only.add(id(src))
    for n in _walk(body):
        if isinstance(n, c_ast.UnaryOp) and n.op == "&" and id(n) not in read_only:
            e = n.expr
            while isinstance(e, c_ast.StructRef) and e.type == ".":
                e = e.name
            if isinstance(e, c_ast.ID) and e.name not in arrays:
                return e.name
    return None


class _Scheduler:
    """Items: ("stmt", node) redundant | ("single", [nodes]) thread 0 | ("par", For, LoopInfo)
    | ("sync",) | ("if", If, then_items, else_items) | ("loop", For, items) | ("block", items)."""

    def __init__(self, info, shared_limit, constants):
        self.info, self.shared_limit, self.constants = info, shared_limit, constants
        self.shared: list = []
        self.thread_loops: list = []
        self.verdicts: dict = {}
        self.arrays = {id(v.decl): v for v in info.locals.values()
                       if v.kind == "array" and v.decl is not None}

    # -- barriers ------------------------------------------------------------------------
    @staticmethod
    def _fence(items, st, reads, writes):
        if (writes and st.pending) or (reads and st.writes):
            items.append(("sync",))
            st.clear()
        st.reads |= reads
        st.writes |= writes

    # -- statement lists ------------------------------------------------------------------
    def seq(self, stmts, st) -> list:
        items: list = []
        for s in stmts:
            self.stmt(s, items, st)
        return items

    def stmt(self, s, items, st) -> None:
        if isinstance(s, (c_ast.Pragma, c_ast.EmptyStatement)):
            return
        if isinstance(s, c_ast.Decl):
            return self.decl(s, items, st)
        if isinstance(s, c_ast.Compound):
            sub = self.seq(s.block_items or [], st)
            items.append(("block", sub))
            return
        if isinstance(s, c_ast.For) and id(s) in self.info.loop_of:
            lp = self.info.loop_of[id(s)]
            strided = self._parallel(s, lp)
            if strided:
                count = _trip_const(lp)
                band = self._band(s, lp)
                if len(band) == 1 and self._has_parallel(s.stmt) and \
                        (count is None or count < PREFER_THREADS):
                    attempt = self._try(lambda st2: self._loop(s, st2), st)
                    if attempt is not None:
                        items.extend(attempt[0])
                        st.reads, st.writes = attempt[1].reads, attempt[1].writes
                        return
                self._fence(items, st, True, True)
                items.append(("par", s, band))
                self.thread_loops.append(band)
                return
        if isinstance(s, c_ast.For) and self._has_parallel(s.stmt):
            attempt = self._try(lambda st2: self._loop(s, st2), st)
            if attempt is not None:
                items.extend(attempt[0])
                st.reads, st.writes = attempt[1].reads, attempt[1].writes
                return
        if isinstance(s, c_ast.If) and (self._has_parallel(s.iftrue) or
                                        (s.iffalse is not None and self._has_parallel(s.iffalse))):
            attempt = self._try(lambda st2: self._if(s, st2), st)
            if attempt is not None:
                items.extend(attempt[0])
                st.reads, st.writes = attempt[1].reads, attempt[1].writes
                return
        self.whole(s, items, st)

    def _try(self, fn, st):
        """Run a composite scheduling attempt on a copy of the state; None if it fails (the
        scheduler's shared/thread lists are restored)."""
        saved = (list(self.shared), list(self.thread_loops))
        st2 = st.copy()
        try:
            out = fn(st2)
        except NotTwoLevel:
            self.shared, self.thread_loops = saved
            return None
        return out, st2

    def whole(self, s, items, st) -> None:
        if _escapes(s):
            raise NotTwoLevel("break/continue leaves a statement of the block schedule")
        reads, writes, assigned, declared = _effects(s)
        if not writes:
            self._fence(items, st, reads, False)
            items.append(("stmt", s))
            return
        outer = assigned - declared
        if outer:
            raise NotTwoLevel(f"'{sorted(outer)[0]}' is assigned in a statement that writes "
                              "memory (thread 0 would hold the value alone)")
        if items and items[-1][0] == "single":
            items[-1][1].append(s)        # thread 0 runs both in order: no barrier between
            return
        self._fence(items, st, True, True)
        items.append(("single", [s]))

    def decl(self, d, items, st) -> None:
        if isinstance(d.type, c_ast.ArrayDecl):
            dims = self._dims(d.type)
            if dims is None:
                raise NotTwoLevel(f"array '{d.name}' has no constant dimensions")
            if set(d.storage or []) & {"static", "extern"}:
                raise NotTwoLevel(f"array '{d.name}' is static")
            if d.init is not None:
                # a table only read (int dims[3] = {...}): each thread keeps its own copy
                if not _read_only(self.body, d.name):
                    raise NotTwoLevel(f"array '{d.name}' is initialised and not only read")
                items.append(("stmt", d))
                return
            words = affine.type_names(_base_type(d.type))
            elem = affine.bytes_of_words(words) or \
                next((HALF_TYPES[w] for w in words if w in HALF_TYPES), None)
            if not elem:
                raise NotTwoLevel(f"array '{d.name}': unknown element size")
            n = elem
            for x in dims:
                n *= x
            self.shared.append((d, n, dims))
            return
        if set(d.storage or []) & {"static", "extern"}:
            raise NotTwoLevel(f"'{d.name}' is static")
        reads, writes, _, _ = _effects(d)
        if writes:
            raise NotTwoLevel(f"the initialiser of '{d.name}' writes memory")
        self._fence(items, st, reads, False)
        items.append(("stmt", d))

    def _dims(self, t) -> tuple | None:
        dims = []
        while isinstance(t, c_ast.ArrayDecl):
            v = const_int(t.dim, self.constants) if t.dim is not None else None
            if v is None or v <= 0:
                return None
            dims.append(v)
            t = t.type
        return tuple(dims)

    # -- composites -----------------------------------------------------------------------
    def _loop(self, s: c_ast.For, st) -> list:
        if _escapes(s.stmt) or any(isinstance(n, (c_ast.Break, c_ast.Continue))
                                   for n in _walk(s.stmt)):
            raise NotTwoLevel("break/continue in a loop with phases")
        for part in (s.init, s.cond, s.next):
            if part is None:
                continue
            reads, writes, _, _ = _effects(part)
            if reads or writes:
                raise NotTwoLevel("a loop header with phases reads memory")
        items: list = []
        if st.pending:
            items.append(("sync",))
            st.clear()
        body = s.stmt.block_items or [] if isinstance(s.stmt, c_ast.Compound) else [s.stmt]
        inner = _State()
        sub = self.seq(body, inner)
        if inner.pending:
            sub.append(("sync",))
        items.append(("loop", s, sub))
        st.clear()
        return items

    def _if(self, s: c_ast.If, st) -> list:
        reads, writes, assigned, _ = _effects(s.cond)
        if writes or assigned:
            raise NotTwoLevel("a condition with side effects")
        items: list = []
        self._fence(items, st, reads, False)
        a, b = st.copy(), st.copy()
        then = self.seq(_branch(s.iftrue), a)
        other = self.seq(_branch(s.iffalse), b) if s.iffalse is not None else []
        items.append(("if", s, then, other))
        st.reads, st.writes = a.reads or b.reads, a.writes or b.writes
        return items

    def _band(self, s: c_ast.For, lp) -> list:
        """``[lp, ...]``: ``lp`` and the loops perfectly nested in it that are parallel too,
        with bounds that do not depend on the band's variables (a rectangular band, run as
        one collapsed thread-strided index; distinct points of the band are independent as
        each loop carries no dependence at its level)."""
        band = [lp]
        node = s
        while True:
            inner = only_loop(node.stmt)
            if inner is None or id(inner) not in self.info.loop_of:
                return band
            ilp = self.info.loop_of[id(inner)]
            if not self._parallel(inner, ilp):
                return band
            irs = (ilp.lo, ilp.hi, ilp.start)
            if any(ir_names(ir, self.info) is None for ir in irs) or \
                    any(mentions_loop(ir, o.uid) for ir in irs for o in band):
                return band
            band.append(ilp)
            node = inner

    def _has_parallel(self, node) -> bool:
        for n in _walk(node):
            if isinstance(n, c_ast.For) and id(n) in self.info.loop_of:
                lp = self.info.loop_of[id(n)]
                if self._parallel(n, lp):
                    return True
        return False

    def _parallel(self, node, lp) -> bool:
        if id(lp) not in self.verdicts:
            self.verdicts[id(lp)] = self._strideable(node, lp) and \
                affine.parallel(self.info, lp).parallel
        return self.verdicts[id(lp)]

    @staticmethod
    def _strideable(s: c_ast.For, lp) -> bool:
        """``for (T i = a; i < b; i += s)`` (or ``<=``; ``++i``) with a positive step, and
        a body that assigns no scalar declared outside the loop."""
        if not lp.canonical or lp.escapes or lp.unknown_calls or lp.step <= 0:
            return False
        if not (isinstance(s.init, c_ast.DeclList) and len(s.init.decls) == 1 and
                s.init.decls[0].name == lp.var and s.init.decls[0].init is not None):
            return False
        c = s.cond
        if not (isinstance(c, c_ast.BinaryOp) and c.op in ("<", "<=") and
                isinstance(c.left, c_ast.ID) and c.left.name == lp.var):
            return False
        if _escapes(s.stmt):
            return False
        _, _, assigned, declared = _effects(s.stmt)
        if (assigned - declared) - {lp.var}:
            return False
        if lp.var in assigned:
            return False
        return True


def const_int(e, constants: dict) -> int | None:
    """Value of an integer constant expression over literals and named constants."""
    if isinstance(e, c_ast.Constant):
        text = e.value.rstrip("uUlL")
        try:
            return int(text, 0)
        except ValueError:
            return None
    if isinstance(e, c_ast.ID):
        v = constants.get(e.name)
        return v if isinstance(v, int) else None
    if isinstance(e, c_ast.Cast):
        return const_int(e.expr, constants)
    if isinstance(e, c_ast.UnaryOp) and e.op == "sizeof" and isinstance(e.expr, c_ast.Typename) \
            and isinstance(e.expr.type, c_ast.TypeDecl) \
            and isinstance(e.expr.type.type, c_ast.IdentifierType):
        return canon.TYPE_BYTES.get(" ".join(e.expr.type.type.names))
    if isinstance(e, c_ast.UnaryOp) and e.op == "-":
        v = const_int(e.expr, constants)
        return None if v is None else -v
    if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-", "*", "/", "%"):
        a, b = const_int(e.left, constants), const_int(e.right, constants)
        if a is None or b is None or (e.op in ("/", "%") and b == 0):
            return None
        if e.op == "/":
            return int(a / b)
        if e.op == "%":
            return a - int(a / b) * b
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


def _branch(stmt) -> list:
    """Statements of an if branch (a block's items: the branch is its own scope anyway)."""
    return (stmt.block_items or []) if isinstance(stmt, c_ast.Compound) else [stmt]


def _base_type(t):
    while isinstance(t, c_ast.ArrayDecl):
        t = t.type
    return t


# ------------------------------------------------------------------------------ rewrite
def build(sched: Schedule, clean, info) -> tuple[list, list]:
    """(shared declarations, body statements) of the schedule; ``clean`` deep-copies a source
    statement (dropping OpenMP pragmas)."""
    hoisted = {id(d) for d, _, _ in sched.shared}
    shared = []
    for d, _, dims in sched.shared:
        nd = clean(d)
        nd.storage = ["__shared__"] + [x for x in (nd.storage or []) if x != "__shared__"]
        t = nd.type
        for x in dims:                    # constant bounds (a bound may name a body local)
            t.dim = c_ast.Constant("int", str(x))
            t = t.type
        shared.append(nd)
    if sched.dynamic:
        (dyn,) = parse_snippet(f"extern double {DYNAMIC_NAME}[];")
        dyn.storage = ["extern", "__shared__"]
        shared.append(dyn)
    for d, _, dims, off in sched.dynamic:
        shared.append(_view(d, dims, f"(char *) {DYNAMIC_NAME} + {off}"))
    for d, _, dims, off in sched.scratch:
        shared.append(_scratch_view(d, dims, off, sched.scratch_bytes))
    return shared, _items(sched.items, clean, hoisted, info)


def _sync():
    return c_ast.FuncCall(c_ast.ID("__syncthreads"), None)


def _tid(name: str):
    return c_ast.StructRef(c_ast.ID(name), ".", c_ast.ID("x"))


def _items(items, clean, hoisted, info) -> list:
    out = []
    for it in items:
        tag = it[0]
        if tag == "sync":
            out.append(_sync())
        elif tag == "stmt":
            out.append(clean(it[1]))
        elif tag == "single":
            body = c_ast.Compound([clean(s) for s in it[1]])
            cond = c_ast.BinaryOp("==", _tid("threadIdx"), c_ast.Constant("int", "0"))
            out.append(c_ast.If(cond, body, None))
        elif tag == "par":
            band = it[2]
            if len(band) == 1:
                out.append(_strided(clean(it[1]), band[0]))
            else:
                out.append(_collapsed(clean(_innermost(it[1], len(band)).stmt), band, info))
        elif tag == "block":
            out.append(c_ast.Compound(_items(it[1], clean, hoisted, info)))
        elif tag == "if":
            src = it[1]
            then = c_ast.Compound(_items(it[2], clean, hoisted, info))
            other = c_ast.Compound(_items(it[3], clean, hoisted, info)) if src.iffalse is not None else None
            out.append(c_ast.If(copy.deepcopy(src.cond), then, other))
        elif tag == "loop":
            src = it[1]
            loop = c_ast.For(copy.deepcopy(src.init), copy.deepcopy(src.cond),
                             copy.deepcopy(src.next),
                             c_ast.Compound(_items(it[2], clean, hoisted, info)))
            out.append(loop)
    return out


def _strided(loop: c_ast.For, lp) -> c_ast.For:
    """``for (T i = a; i < b; i += s)`` -> ``for (T i = a + (T) threadIdx.x * s; i < b;
    i += (T) blockDim.x * s)``."""
    d = loop.init.decls[0]
    tnames = affine.type_names(d.type)

    def typed(e):
        return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
            None, [], None, c_ast.IdentifierType(list(tnames)))), e)

    def scaled(e):
        return e if lp.step == 1 else c_ast.BinaryOp("*", e, c_ast.Constant("int", str(lp.step)))

    d.init = c_ast.BinaryOp("+", c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
        None, [], None, c_ast.IdentifierType(list(tnames)))), d.init),
        scaled(typed(_tid("threadIdx"))))
    loop.next = c_ast.Assignment("+=", c_ast.ID(lp.var), scaled(typed(_tid("blockDim"))))
    return loop


def _innermost(loop: c_ast.For, depth: int) -> c_ast.For:
    for _ in range(depth - 1):
        loop = only_loop(loop.stmt)
    return loop


def _collapsed(body, band, info) -> c_ast.Compound:
    """A rectangular parallel band as one thread-strided index over the product of its trip
    counts: ``{ const long long c1 = n1; ...; for (long long j = threadIdx.x; j < c0 * c1 ...;
    j += blockDim.x) { T0 v0 = (T0) (s0 + j / (c1 * c2) * d0); ...; body } }``."""
    decls, counts = [], []
    for k, lp in enumerate(band):
        (d,) = parse_snippet(f"const long long __xp_c{k} = 0;")
        n = count_ast(lp, info)
        (clamp,) = parse_snippet("__xp_r = (__xp_x) > 0 ? (__xp_x) : 0;")
        d.init = fill(clamp, {"__xp_x": n}).rvalue
        decls.append(d)
        counts.append(c_ast.ID(f"__xp_c{k}"))
    total = counts[0]
    for c in counts[1:]:
        total = c_ast.BinaryOp("*", total, c)
    idx = {}
    for k in range(len(band)):
        e = c_ast.ID("__xp_j")
        inner = counts[k + 1:]
        if inner:
            div = inner[0]
            for c in inner[1:]:
                div = c_ast.BinaryOp("*", div, c)
            e = c_ast.BinaryOp("/", e, div)
        if k > 0:
            e = c_ast.BinaryOp("%", e, counts[k])
        idx[f"__xp_k{k}"] = e
    (loop,) = parse_snippet("for (long long __xp_j = threadIdx.x; __xp_j < __xp_m; "
                            "__xp_j += blockDim.x) { }")
    loop.cond.right = total
    items = body.block_items or [] if isinstance(body, c_ast.Compound) else [body]
    loop.stmt = c_ast.Compound(loop_var_decls(band, info, idx) + list(items))
    return c_ast.Compound(decls + [loop])


def _scratch_view(d: c_ast.Decl, dims: tuple, off: int, per_block: int) -> c_ast.Decl:
    """``T (*name)[d1]... = (T (*)[d1]...) (__xp_scratch + (long long) blockIdx.x * per_block
    + off);``: an array over the shared limit as this block's slice of global scratch."""
    return _view(d, dims, f"__xp_scratch + (long long) blockIdx.x * {per_block} + {off}")


def _view(d: c_ast.Decl, dims: tuple, address: str) -> c_ast.Decl:
    """``T (*name)[d1]... = (T (*)[d1]...) (address);``: array ``d`` placed at ``address``
    (a ``char *`` expression)."""
    from pycparser.c_parser import CParser

    from platforms.common.generator import type_text

    elem = copy.deepcopy(_base_type(d.type))
    strip_quals(elem)
    t = elem
    for x in reversed(dims[1:]):
        t = c_ast.ArrayDecl(t, c_ast.Constant("int", str(x)), [])
    ptype = type_text(c_ast.PtrDecl([], t))
    code = (f"void __xp_tmpl(char *__xp_scratch) {{ {param_decls([(d.name, ptype)])} = "
            f"({ptype}) ({address}); }}")
    ast = CParser().parse(typedefs([("", ptype)]) + code)
    decl = ast.ext[-1].body.block_items[0]
    strip_coords(decl)
    return decl
