"""matrix_core_map: CUDA wmma -> HIP MFMA keeping the kernel's structure (one wavefront per warp).

Summary
    The structure-preserving plan for CUDA kernels that use tensor cores: every
    ``nvcuda::wmma`` m16n16k16 operation (half inputs, float accumulator) becomes per-lane code
    around ``__builtin_amdgcn_mfma_f32_16x16x16f16`` on a 64-lane wavefront, and the rest of the
    program is renamed by ``api_map`` (runtime API, shuffles with width 32, votes).

    Thread structure: each CUDA warp becomes one wavefront. A block of (32m, Y, Z) threads is
    launched as (64m, Y, Z); HIP lane l of wavefront w *replays* CUDA thread 32w + (l % 32):
    ``threadIdx.x`` in the kernel becomes ``__xp_tx = threadIdx.x / 64 * 32 + threadIdx.x % 32``
    and ``blockDim.x`` becomes ``blockDim.x / 2``, so every warp-index expression, loop bound and
    branch of the CUDA code evaluates in both halves of the wavefront exactly as in the CUDA
    thread. Lanes 32..63 (the shadows) must not repeat the memory effects: every statement that
    writes memory (a store through a parameter, a ``__shared__`` array, a pointer, an atomic
    call) runs under ``if (__xp_lead)`` (lanes 0..31). The matrix operations run in all 64
    lanes with the MFMA operand layout of PLATFORMS.md §4 (16x16x16f16: A[L%16][4(L/16)+r],
    B[4(L/16)+r][L%16], C/D[4(L/16)+r][L%16]):

    * a fragment becomes a ``halfx4`` (matrix_a / matrix_b) or ``floatx4`` (accumulator) vector;
    * ``load_matrix_sync`` / ``store_matrix_sync`` become four per-lane element loads / stores
      (row- or column-major per the fragment layout or the ``layout_t`` argument, ``ldm`` in
      elements);
    * ``fill_fragment(f, v)`` sets the lane's four elements;
    * ``mma_sync(d, a, b, c)`` becomes ``d = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0)``;
    * ``f.num_elements`` becomes 4 and ``f.x[i]`` the vector element ``f[i]`` (element-wise code
      is the only portable use of ``x[]``, CUDA-PG "Warp Matrix Functions").
Requires
    1. The program is CUDA and the target HIP (XP-MCMAP-001); it uses wmma (XP-MCMAP-002).
       (HIP -> CUDA: see below.)
    2. Every fragment is m16n16k16 with ``half`` matrix_a / matrix_b and a ``float`` accumulator;
       ``mma_sync`` without ``satf``; fragments are used only as wmma arguments, in
       ``f.num_elements`` and as ``f.x[i]`` (XP-MCMAP-003).
    3. Every launch of a wmma kernel has a constant block whose x extent is a multiple of 32,
       with at most 512 threads (the doubled block fits 1024); ``threadIdx`` / ``blockDim`` are
       used only through ``.x/.y/.z``; a constant ``__launch_bounds__`` (XP-MCMAP-004).
    4. Memory is written only by whole expression statements (``p[i] = e;``, ``p[i] += e;``,
       ``atomicAdd(p, v);`` whose result is unused) without a shuffle or vote inside; the kernel
       calls no function of the file and no unknown function (XP-MCMAP-005).
    5. The values the shadows need are the CUDA thread's: the wmma arguments, the element-wise
       fragment code and the conditions of the control flow around a wmma call, barrier,
       shuffle, vote or jump read no memory that the kernel writes, directly or through a local
       computed from it (XP-MCMAP-006).
    6. The rest passes ``api_map``'s checks (XP-APIMAP-002).
Guarantees
    Same outputs on the virtual device: the MFMA computes D = A*B + C with the same products and
    f32 accumulation as ``mma_sync``; every CUDA thread's memory effects happen once, in lane
    l < 32 of its wavefront, in program order; barriers and warp collectives are reached by all
    64 lanes (shuffles keep width 32, so the shadows exchange only among themselves).
HIP -> CUDA (passes/map/matrix_core_map/to_wmma.py)
    ``d = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0)`` becomes one wmma m16n16k16
    ``mma_sync`` (half inputs, float accumulator: the same exact products and float sums). The
    block keeps its threads (a wavefront becomes two warps); since a fragment's element -> lane
    map is unspecified, the operands pass through a per-wavefront 16x16 tile in shared memory
    (lane L writes its MFMA operand elements at their matrix positions, the wavefront's first
    warp loads, multiplies and stores D, every lane reads its four D elements back), with
    ``__syncthreads()`` between the steps. Requires: only the 16x16x16f16 form (the float32
    MFMA has no exact wmma form: tf32 / half fragments would round the inputs; 32x32x8f16 is not
    mapped) (XP-MCMAP-007); MFMA calls as ``d = mfma(a, b, c, 0, 0, 0);`` on plain 4-element
    vector locals used otherwise only as ``v[i]``, no 64-lane collectives or ``warpSize``
    (XP-MCMAP-008); MFMA calls and jumps in block-uniform control flow (XP-MCMAP-009); one
    constant launch block per kernel, a whole number of wavefronts (XP-MCMAP-004).
Options
    to: target platform, ``hip`` (wmma -> MFMA) or ``cuda`` (MFMA -> wmma).
Example
    ``wmma::mma_sync(acc, a, b, acc);`` ->
    ``acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, acc, 0, 0, 0);``
"""
from __future__ import annotations

import copy
import re
from dataclasses import replace

from pycparser import c_ast

from xpiler.ir.errors import Diagnostic

import passes.canon as canon
from passes.base import Option, PassInfo, register

NAME = "matrix_core_map"
HALFX4, FLOATX4 = "__xp_halfx4", "__xp_floatx4"
MFMA_F16 = "__builtin_amdgcn_mfma_f32_16x16x16f16"
TYPEDEFS = [f"typedef _Float16 {HALFX4} __attribute__((ext_vector_type(4)));",
            f"typedef float {FLOATX4} __attribute__((ext_vector_type(4)));"]
_TMPL_TYPES = f"typedef int _Float16; typedef int {HALFX4}; typedef int {FLOATX4}; typedef int half;"
_WMMA_PREAMBLE = re.compile(r"^\s*(?:#\s*include\s*[<\"]mma\.h[>\"]|using\s+namespace\s+nvcuda\b|"
                            r"namespace\s+wmma\s*=\s*nvcuda)")
_WMMA = re.compile(r"^(?:nvcuda::)?wmma::(\w+)$")
_FRAG = re.compile(r"^(?:nvcuda::)?wmma::fragment<")
_SYNC = {"__syncthreads", "__syncwarp", "__threadfence_block", "__threadfence"}
_COLLECTIVE = re.compile(r"^(?:__shfl\w*|__ballot\w*|__any\w*|__all\w*|__activemask|__match\w*|__reduce\w*)$")
_ATOMIC = re.compile(r"^atomic\w+$")
_PURE = canon.PURE_CALLS | frozenset("""
__expf __logf __log2f __log10f __powf __sinf __cosf __tanf __fdividef __saturatef __frcp_rn __fsqrt_rn
__fmaf_rn __fadd_rn __fmul_rn fmaf fma rsqrtf rsqrt exp10f log1p expm1 hypotf __float2half __half2float
__float2half_rn __int2float_rn __float2int_rn __float_as_int __int_as_float __float_as_uint __uint_as_float
__hadd __hsub __hmul __hdiv __hfma __hneg __hmax __hmin __habs __low2half __high2half __floats2half2_rn
__half22float2 __float22half2_rn __ldg __clz __popc __ffs __brev __mul24 __umul24 __mulhi __umulhi
make_float2 make_float4 make_int2 make_int4 sizeof
""".split())


def _frag_kind(program, type_name: str):
    """(use, layout, elem) of a wmma fragment type name, or None when unsupported."""
    info = program.facts.get("cxx_types", {}).get(type_name)
    if not info:
        return None
    args = [a.strip() for a in info["args"]]
    consts = program.facts.get("constants", {}) or {}

    def val(a):
        a = consts.get(a, a) if isinstance(consts.get(a, a), str) else str(consts.get(a))
        try:
            return int(str(a), 0)
        except ValueError:
            return None
    if len(args) < 5:
        return None
    use = args[0].split("::")[-1]
    shape = [val(a) for a in args[1:4]]
    elem = args[4]
    layout = args[5].split("::")[-1] if len(args) > 5 else None
    return use, layout, elem, shape


def _refuse(program, code, msg, node=None):
    return [canon.diag(program, NAME, code, msg, node)]


def _wmma_name(n):
    name = canon.call_name(n)
    m = _WMMA.match(name or "")
    return m.group(1) if m else None


def _frag_decls(program, fdef):
    """name -> (use, layout, elem, shape, decl) for fragment-typed locals of a kernel."""
    out = {}
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Decl) and n.name:
            words = canon.type_words(n.type)
            if any(_FRAG.match(w) for w in words):
                t = next(w for w in words if _FRAG.match(w))
                k = _frag_kind(program, t)
                out[n.name] = (k, n)
    return out


def _frag_root(e):
    """Name of a fragment expression ``f`` / ``f[c]``."""
    if isinstance(e, c_ast.ID):
        return e.name
    if isinstance(e, c_ast.ArrayRef) and isinstance(e.name, c_ast.ID):
        return e.name.name
    return None


def _kernels_with_wmma(ast):
    out = []
    for e in ast.ext:
        if isinstance(e, c_ast.FuncDef) and "__global__" in (e.decl.funcspec or []) and \
                any(_wmma_name(n) for n in canon.walk(e.body)):
            out.append(e)
    return out


def _const_int(s):
    try:
        return int(str(s).strip().rstrip("uUlL"), 0)
    except (ValueError, TypeError):
        return None


class _Analysis:
    """Legality facts of one wmma kernel."""

    def __init__(self, program, fdef, file_funcs):
        self.program, self.fdef, self.file_funcs = program, fdef, file_funcs
        self.frags = _frag_decls(program, fdef)
        self.params = {p.name for p in (fdef.decl.type.args.params if fdef.decl.type.args else [])
                       if isinstance(p, c_ast.Decl)}
        self.locals: dict[str, c_ast.Decl] = {}
        for n in canon.walk(fdef.body):
            if isinstance(n, c_ast.Decl) and n.name and not isinstance(n.type, c_ast.FuncDecl):
                self.locals[n.name] = n
        self.shared = {n for n, d in self.locals.items() if "__shared__" in (d.storage or []) + (d.quals or [])
                       or "__shared__" in canon.type_words(d.type)}
        self.error = None

    # -- helpers ----------------------------------------------------------------------
    def is_private(self, name):
        """A per-thread local (scalar, vector, array) whose element writes stay in the lane."""
        d = self.locals.get(name)
        if name in self.frags:
            return True
        if d is None or name in self.shared:
            return False
        return not isinstance(d.type, c_ast.PtrDecl)

    def mem_root(self, lv):
        """Root name of a memory lvalue (None: not memory, i.e. a private local)."""
        base = lv
        while True:
            if isinstance(base, c_ast.ID):
                return None if self.is_private(base.name) else base.name
            if isinstance(base, c_ast.ArrayRef):
                base = base.name
            elif isinstance(base, c_ast.StructRef):
                if base.type == "->":
                    return "*"
                base = base.name
            elif isinstance(base, c_ast.UnaryOp) and base.op == "*":
                return "*"
            else:
                return "*"

    def _decays(self, ref) -> bool:
        """``a[i]`` of a local array with more dimensions than subscripts: an address, no read."""
        depth, base = 0, ref
        while isinstance(base, c_ast.ArrayRef):
            depth, base = depth + 1, base.name
        if not isinstance(base, c_ast.ID) or base.name not in self.locals:
            return False
        dims, t = 0, self.locals[base.name].type
        while isinstance(t, c_ast.ArrayDecl):
            dims, t = dims + 1, t.type
        return dims > depth

    # -- checks -----------------------------------------------------------------------
    def check(self):
        p = self.program
        for name, (kind, decl) in self.frags.items():
            if kind is None:
                return _refuse(p, "XP-MCMAP-003", f"fragment '{name}': unknown wmma fragment type", decl)
            use, layout, elem, shape = kind
            if shape != [16, 16, 16]:
                return _refuse(p, "XP-MCMAP-003", f"fragment '{name}': shape {shape} (only m16n16k16 maps to "
                               "the 16x16x16 MFMA)", decl)
            if use in ("matrix_a", "matrix_b") and (elem not in ("half", "__half") or
                                                     layout not in ("row_major", "col_major")):
                return _refuse(p, "XP-MCMAP-003", f"fragment '{name}': {use} of {elem} (only half inputs "
                               "have an exact MFMA form)", decl)
            if use == "accumulator" and elem != "float":
                return _refuse(p, "XP-MCMAP-003", f"fragment '{name}': {elem} accumulator (MFMA accumulates "
                               "in float)", decl)
            if use not in ("matrix_a", "matrix_b", "accumulator"):
                return _refuse(p, "XP-MCMAP-003", f"fragment '{name}': unknown use '{use}'", decl)
        for n in canon.walk(self.fdef.body):
            if isinstance(n, c_ast.ID) and n.name in ("threadIdx", "blockDim"):
                pass
            if isinstance(n, c_ast.FuncCall):
                name = canon.call_name(n)
                if name in self.file_funcs:
                    return _refuse(p, "XP-MCMAP-005", f"the kernel calls '{name}' defined in the file "
                                   "(inline it first)", n)
                if name is None:
                    return _refuse(p, "XP-MCMAP-005", "call through an expression", n)
                if not (_wmma_name(n) or name in _PURE or name in _SYNC or _COLLECTIVE.match(name) or
                        _ATOMIC.match(name) or name in ("dim3",)):
                    return _refuse(p, "XP-MCMAP-005", f"call to '{name}' whose effects are unknown", n)
        for n, parent in _walk_parents(self.fdef.body):
            if isinstance(n, c_ast.UnaryOp) and n.op == "&" and self.is_private(canon.lvalue_root(n.expr) or "") \
                    and canon.lvalue_root(n.expr) not in self.frags:
                return _refuse(p, "XP-MCMAP-005", "the address of a per-thread local is taken (stores through "
                               "it could not be told from memory stores)", n)
            if isinstance(n, c_ast.ID) and self.is_private(n.name) and n.name not in self.frags and \
                    isinstance(self.locals[n.name].type, c_ast.ArrayDecl) and not (
                        isinstance(parent, c_ast.ArrayRef) and parent.name is n) and \
                    not isinstance(parent, c_ast.Decl):
                return _refuse(p, "XP-MCMAP-005", f"per-thread array '{n.name}' used as a pointer", n)
        err = self._check_uses() or self._check_thread_ids() or self._check_stores()
        if err:
            return err
        return self._check_shadow_values()

    def _check_uses(self):
        """Fragments only as wmma arguments, ``f.num_elements`` and ``f.x[i]``."""
        p = self.program
        ok_ids = set()
        for n in canon.walk(self.fdef.body):
            w = _wmma_name(n) if isinstance(n, c_ast.FuncCall) else None
            if w:
                if w not in ("load_matrix_sync", "store_matrix_sync", "fill_fragment", "mma_sync"):
                    return _refuse(p, "XP-MCMAP-003", f"wmma::{w} has no MFMA mapping here", n)
                args = n.args.exprs if n.args else []
                if w == "mma_sync" and len(args) != 4:
                    return _refuse(p, "XP-MCMAP-003", "mma_sync with satf has no MFMA form", n)
                fargs = {"load_matrix_sync": [0], "store_matrix_sync": [1], "fill_fragment": [0],
                         "mma_sync": [0, 1, 2, 3]}[w]
                for i, a in enumerate(args):
                    if i in fargs:
                        r = _frag_root(a)
                        if r not in self.frags:
                            return _refuse(p, "XP-MCMAP-003", f"wmma::{w}: argument {i + 1} is not a "
                                           "fragment variable", a)
                        for m in canon.walk(a):
                            if isinstance(m, c_ast.ID):
                                ok_ids.add(id(m))
                    elif canon.has_side_effects(a, _PURE):
                        return _refuse(p, "XP-MCMAP-003", f"wmma::{w}: argument {i + 1} has side effects", a)
                if w == "mma_sync":
                    kinds = [self.frags[_frag_root(a)][0][0] for a in args]
                    if kinds != ["accumulator", "matrix_a", "matrix_b", "accumulator"]:
                        return _refuse(p, "XP-MCMAP-003", f"mma_sync with fragments {kinds}", n)
                if w in ("store_matrix_sync",) or (w == "load_matrix_sync" and
                                                   self.frags[_frag_root(args[0])][0][0] == "accumulator"):
                    if len(args) != 4 or not (isinstance(args[3], c_ast.ID) and
                                              args[3].name.split("::")[-1] in ("mem_row_major", "mem_col_major")):
                        return _refuse(p, "XP-MCMAP-003", f"wmma::{w}: the layout must be a constant "
                                       "mem_row_major / mem_col_major", n)
                if w == "store_matrix_sync" and self.frags[_frag_root(args[1])][0][0] != "accumulator":
                    return _refuse(p, "XP-MCMAP-003", "store_matrix_sync of a non-accumulator fragment", n)
            if isinstance(n, c_ast.StructRef) and n.type == "." and _frag_root(n.name) in self.frags:
                if n.field.name not in ("x", "num_elements"):
                    return _refuse(p, "XP-MCMAP-003", f"fragment member '{n.field.name}'", n)
        # f.x[i] only inside `for (int i = 0; i < g.num_elements; ++i)` with that i
        for loop in canon.walk(self.fdef.body):
            if not isinstance(loop, c_ast.For):
                continue
            var = _elem_loop_var(loop, self.frags)
            if var is None:
                continue
            for m in canon.walk(loop.cond.right):
                if isinstance(m, c_ast.ID):
                    ok_ids.add(id(m))
            subscripts = set()
            for m in canon.walk(loop.stmt):
                if isinstance(m, c_ast.ArrayRef) and isinstance(m.name, c_ast.StructRef) and \
                        m.name.type == "." and m.name.field.name == "x" and _frag_root(m.name.name) in self.frags:
                    subscripts.add(id(m.subscript))
                    continue
                if isinstance(m, c_ast.ArrayRef) and _frag_root(m) in self.frags:
                    continue
                if isinstance(m, (c_ast.ArrayRef, c_ast.FuncCall)) and not (
                        isinstance(m, c_ast.FuncCall) and (canon.call_name(m) or "") in _PURE) or \
                        isinstance(m, c_ast.StructRef) and m.type == "->" or \
                        isinstance(m, c_ast.UnaryOp) and m.op in ("*", "&"):
                    return _refuse(p, "XP-MCMAP-003", "element-wise fragment code that accesses memory, calls "
                                   "a function with effects or takes an address (its element -> lane map "
                                   "differs between wmma and MFMA)", m)
                if isinstance(m, c_ast.ID) and m.name == var and id(m) not in subscripts:
                    return _refuse(p, "XP-MCMAP-003", f"the element index '{var}' used outside f.x[{var}] (the "
                                   "element -> position map differs between wmma and MFMA)", m)
            for m in canon.walk(loop.stmt):
                if isinstance(m, c_ast.ArrayRef) and isinstance(m.name, c_ast.StructRef) and \
                        m.name.type == "." and m.name.field.name == "x" and _frag_root(m.name.name) in self.frags:
                    if not (isinstance(m.subscript, c_ast.ID) and m.subscript.name == var):
                        return _refuse(p, "XP-MCMAP-003", "fragment element indexed by something else than "
                                       "the element loop's variable (the element -> lane map differs)", m)
                    for k in canon.walk(m):
                        if isinstance(k, c_ast.ID):
                            ok_ids.add(id(k))
        for n in canon.walk(self.fdef.body):
            if isinstance(n, c_ast.ID) and n.name in self.frags and id(n) not in ok_ids:
                return _refuse(p, "XP-MCMAP-003", f"fragment '{n.name}' used outside the wmma calls and "
                               "element-wise loops", n)
        return None

    def _check_thread_ids(self):
        p = self.program
        for n, parent in _walk_parents(self.fdef.body):
            if isinstance(n, c_ast.ID) and n.name in ("threadIdx", "blockDim"):
                if not (isinstance(parent, c_ast.StructRef) and parent.name is n and parent.type == "."
                        and parent.field.name in ("x", "y", "z")):
                    return _refuse(p, "XP-MCMAP-004", f"'{n.name}' used as a whole (only .x/.y/.z can be "
                                   "remapped)", n)
            if isinstance(n, c_ast.ID) and n.name in ("__lane_id", "laneid"):
                return _refuse(p, "XP-MCMAP-004", f"'{n.name}' cannot be remapped", n)
        return None

    def _check_stores(self):
        p = self.program
        self.store_stmts = set()
        stmts = set()
        for n in canon.walk(self.fdef.body):
            for _, c in n.children():
                if _is_stmt_position(n, c):
                    stmts.add(id(c))
        for n in canon.walk(self.fdef.body):
            lv = None
            if isinstance(n, c_ast.Assignment):
                lv = n.lvalue
            elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
                lv = n.expr
            elif isinstance(n, c_ast.FuncCall) and _ATOMIC.match(canon.call_name(n) or ""):
                lv = "atomic"
            if lv is None:
                continue
            memory = lv == "atomic" or self.mem_root(lv) is not None
            if not memory:
                continue
            if id(n) not in stmts:
                return _refuse(p, "XP-MCMAP-005", "a memory write inside an expression (only whole "
                               "statements can be given to the leading half-wavefront)", n)
            for m in canon.walk(n):
                if isinstance(m, c_ast.FuncCall) and (_COLLECTIVE.match(canon.call_name(m) or "") or
                                                      _wmma_name(m)):
                    return _refuse(p, "XP-MCMAP-005", "a warp collective inside a store statement", m)
            self.store_stmts.add(id(n))
        return None

    def _check_shadow_values(self):
        """Values the shadows must compute exactly: read no memory the kernel writes."""
        p = self.program
        # pointer locals set once by their declaration: reads / writes through them reach their base
        assigned = canon.written_names(self.fdef.body)
        alias = {}
        for name, d in self.locals.items():
            if isinstance(d.type, c_ast.PtrDecl) and d.init is not None and name not in assigned:
                alias[name] = _base_root(d.init)

        def root_of(e):
            r = _base_root(e)
            seen = set()
            while r in alias and r not in seen:
                seen.add(r)
                r = alias[r]
            return r

        written, anywhere = set(), False
        for n in canon.walk(self.fdef.body):
            target = None
            if id(n) in self.store_stmts:
                target = n.lvalue if isinstance(n, c_ast.Assignment) else n.expr if isinstance(n, c_ast.UnaryOp) \
                    else (n.args.exprs[0] if n.args and n.args.exprs else None)
            elif isinstance(n, c_ast.FuncCall) and _wmma_name(n) == "store_matrix_sync":
                target = n.args.exprs[0]
            else:
                continue
            r = root_of(target) if target is not None else None
            if r is None or (r not in self.params and r not in self.shared):
                anywhere = True
            else:
                written.add(r)

        def reads_written(e, tainted):
            for m, parent in _walk_parents(e):
                if isinstance(m, c_ast.ID) and m.name in tainted:
                    return m
                if isinstance(m, (c_ast.ArrayRef, c_ast.StructRef)) or \
                        (isinstance(m, c_ast.UnaryOp) and m.op == "*"):
                    if isinstance(parent, c_ast.UnaryOp) and parent.op == "&":
                        continue
                    if isinstance(m, c_ast.StructRef) and m.type == ".":
                        continue
                    if isinstance(m, c_ast.ArrayRef) and self._decays(m):
                        continue
                    r = root_of(m)
                    if r is not None and (r in self.frags or self.is_private(r)):
                        continue
                    if r is None or anywhere or r in written or (r not in self.params and r not in self.shared):
                        return m
            return None

        tainted: set[str] = set()
        changed = True
        while changed:
            changed = False
            for n in canon.walk(self.fdef.body):
                pairs = []
                if isinstance(n, c_ast.Decl) and n.init is not None and n.name in self.locals:
                    pairs.append((n.name, n.init))
                elif isinstance(n, c_ast.Assignment):
                    r = canon.lvalue_root(n.lvalue)
                    if r and self.is_private(r):
                        pairs.append((r, n.rvalue))
                        if n.op != "=":
                            pairs.append((r, n.lvalue))
                for name, e in pairs:
                    if name not in tainted and reads_written(e, tainted) is not None:
                        tainted.add(name)
                        changed = True
        # the values the shadows need
        for n in canon.walk(self.fdef.body):
            if isinstance(n, c_ast.FuncCall) and _wmma_name(n):
                for a in n.args.exprs:
                    bad = reads_written(a, tainted)
                    if bad is not None:
                        return _refuse(p, "XP-MCMAP-006", "a wmma argument depends on memory the kernel "
                                       "writes (the replaying half-wavefront could see another value)", bad)
            if isinstance(n, c_ast.For) and _elem_loop_var(n, self.frags):
                bad = reads_written(n.stmt, tainted)
                if bad is not None:
                    return _refuse(p, "XP-MCMAP-006", "element-wise fragment code reads memory the kernel "
                                   "writes", bad)
            conds = []
            if isinstance(n, (c_ast.If, c_ast.While, c_ast.DoWhile, c_ast.Switch)):
                conds = [n.cond]
            elif isinstance(n, c_ast.For):
                conds = [n.init, n.cond, n.next]
            elif isinstance(n, (c_ast.TernaryOp,)) or (isinstance(n, c_ast.BinaryOp) and n.op in ("&&", "||")):
                if any(_sync_relevant(m) for m in canon.walk(n)):
                    return _refuse(p, "XP-MCMAP-006", "a warp collective under a conditional expression", n)
                continue
            if conds and any(_sync_relevant(m) for m in canon.walk(n)):
                for c in conds:
                    if c is None:
                        continue
                    bad = reads_written(c, tainted)
                    if bad is not None:
                        return _refuse(p, "XP-MCMAP-006", "control flow around a wmma call, barrier, "
                                       "collective or jump depends on memory the kernel writes", bad)
        return None


def _sync_relevant(n) -> bool:
    if isinstance(n, (c_ast.Return, c_ast.Break, c_ast.Continue, c_ast.Goto)):
        return True
    if isinstance(n, c_ast.FuncCall):
        name = canon.call_name(n) or ""
        return bool(_wmma_name(n) or name in _SYNC or _COLLECTIVE.match(name))
    return False


def _base_root(e):
    while True:
        if isinstance(e, c_ast.ID):
            return e.name
        if isinstance(e, c_ast.ArrayRef):
            e = e.name
        elif isinstance(e, c_ast.StructRef):
            e = e.name
        elif isinstance(e, c_ast.UnaryOp) and e.op in ("*", "&"):
            e = e.expr
        elif isinstance(e, c_ast.Cast):
            e = e.expr
        elif isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            e = e.left
        else:
            return None


def _elem_loop_var(loop, frags):
    """``i`` of ``for (int i = 0; i < f.num_elements; ++i)`` over a fragment, else None."""
    c = loop.cond
    if not (isinstance(c, c_ast.BinaryOp) and c.op == "<" and isinstance(c.left, c_ast.ID) and
            isinstance(c.right, c_ast.StructRef) and c.right.field.name == "num_elements" and
            _frag_root(c.right.name) in frags):
        return None
    var = c.left.name
    init = loop.init
    ok_init = isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].name == var and \
        isinstance(init.decls[0].init, c_ast.Constant) and _const_int(init.decls[0].init.value) == 0
    ok_next = isinstance(loop.next, c_ast.UnaryOp) and loop.next.op in ("++", "p++") and \
        isinstance(loop.next.expr, c_ast.ID) and loop.next.expr.name == var
    if not (ok_init and ok_next) or var in canon.written_names(loop.stmt):
        return None
    return var


def _walk_parents(node, parent=None):
    stack = [(node, parent)]
    while stack:
        n, par = stack.pop()
        yield n, par
        stack.extend((c, n) for _, c in n.children())


def _is_stmt_position(parent, child) -> bool:
    if isinstance(parent, c_ast.Compound):
        return True
    if isinstance(parent, (c_ast.If,)):
        return child is parent.iftrue or child is parent.iffalse
    if isinstance(parent, (c_ast.For, c_ast.While, c_ast.DoWhile)):
        return child is parent.stmt
    if isinstance(parent, (c_ast.Case, c_ast.Default, c_ast.Label)):
        return True
    return False


# ------------------------------------------------------------------------------ launches
def _launch_blocks(program, kernel_names):
    """kernel -> list of (x, y, z) constant blocks of its launches (None entries: not constant)."""
    out: dict[str, list] = {k: [] for k in kernel_names}
    for l in program.launches:
        if l.kernel in out:
            out[l.kernel].append(tuple(_const_int(_const_value(program, b)) for b in (l.block or ("1", "1", "1"))))
    return out


def _const_value(program, s):
    consts = program.facts.get("constants", {}) or {}
    defines = program.facts.get("defines", {}) or {}
    s = str(s).strip()
    for table in (consts, defines):
        if s in table:
            v = table[s]
            return v if not isinstance(v, dict) else v.get("value", s)
    return s


def _launch_bounds(fdef):
    for i, s in enumerate(fdef.decl.funcspec or []):
        if isinstance(s, str) and s.startswith("__launch_bounds__"):
            return i, s
    return None, None


# ------------------------------------------------------------------------------ the pass
@register(PassInfo(
    name=NAME,
    lowers=True,
    summary="CUDA wmma m16n16k16 (half, float acc) <-> HIP 16x16x16f16 MFMA, keeping kernels and launches",
    options={"to": Option(str, "hip", "target platform: hip (wmma -> MFMA) or cuda (f16 MFMA -> wmma)")},
    requires=("cuda source, hip target, wmma kernels (XP-MCMAP-001/002; already the target: "
              "XP-MCMAP-010)",
              "m16n16k16 fragments, half inputs, float accumulator, element-wise x[] use (XP-MCMAP-003)",
              "constant launch blocks with x a multiple of 32, <= 512 threads (XP-MCMAP-004)",
              "memory writes as whole statements, no unknown calls (XP-MCMAP-005)",
              "wmma arguments / control flow independent of memory the kernel writes (XP-MCMAP-006)",
              "hip -> cuda: only the 16x16x16f16 MFMA (XP-MCMAP-007), on vector locals (XP-MCMAP-008), "
              "in block-uniform control flow (XP-MCMAP-009)"),
    guarantees=("same outputs on the virtual device", "one wavefront per former warp, block x doubled",
                "every wmma mma_sync becomes one MFMA"),
    introduces=("__builtin_amdgcn_mfma_f32_16x16x16f16", "__xp_tx / __xp_lead / __xp_lane locals",
                "__xp_halfx4 / __xp_floatx4 vector typedefs"),
))
def matrix_core_map(program, *, to: str = "hip", plan=None):
    from passes.map.api_map import map_api

    if to == "cuda":
        return _to_cuda(program)
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program, to=to))
    ast = plan.ast
    analyses, names, blocks = plan.data
    for an in analyses:
        an._check_stores()
        _rewrite_kernel(an, an.fdef)
    _rewrite_launches(ast, names, blocks)
    typedef_nodes = _typedef_nodes()
    first = next((i for i, e in enumerate(ast.ext) if isinstance(e, c_ast.FuncDef)), len(ast.ext))
    ast.ext[first:first] = typedef_nodes
    facts = copy.deepcopy(program.facts)
    facts["preamble"] = [l for l in facts.get("preamble", []) if not _WMMA_PREAMBLE.match(l)]
    facts["includes"] = [h for h in facts.get("includes", []) if h.strip("<>\"") != "mma.h"]
    facts["namespaces"] = [n for n in facts.get("namespaces", []) if n != "nvcuda"]
    mid = replace(program, ast=ast, source="", facts=facts)
    out = map_api(mid, to)
    return canon.reparse(out, out.ast)


def _typedef_nodes():
    from platforms import parse as parse_source

    p = parse_source("\n".join(TYPEDEFS) + "\n__global__ void __xp_k(void) {}\n", "hip", "<matrix_core_map>")
    return [e for e in p.ast.ext if isinstance(e, c_ast.Typedef)]


def _stmts(code: str):
    return canon.parse_stmts(code, _TMPL_TYPES)


def _rewrite_kernel(an: _Analysis, fdef):
    frags = an.frags
    # 1. memory stores of the CUDA thread: only the leading half-wavefront
    _guard_stores(fdef.body, an.store_stmts)
    # 2. thread ids: the CUDA thread this lane replays
    _replace_thread_ids(fdef.body)
    # 3. fragments -> vectors, wmma calls -> per-lane code
    for name, (kind, decl) in frags.items():
        t = decl.type
        while not isinstance(t, c_ast.TypeDecl):
            t = t.type
        t.type = c_ast.IdentifierType([HALFX4 if kind[0] in ("matrix_a", "matrix_b") else FLOATX4])
    fdef.body = _map_wmma(fdef.body, frags)
    # 4. prologue
    pro = _stmts("const unsigned int __xp_tx = threadIdx.x / 64 * 32 + threadIdx.x % 32;\n"
                 "const int __xp_lane = threadIdx.x % 64;\n"
                 "const int __xp_lead = threadIdx.x % 64 < 32;")
    fdef.body.block_items = pro + list(fdef.body.block_items or [])
    i, lb = _launch_bounds(fdef)
    if lb is not None:
        m = re.match(r"__launch_bounds__\(\s*(\w+)\s*(,.*)?\)$", lb)
        fdef.decl.funcspec[i] = f"__launch_bounds__({min(2 * int(m.group(1), 0), 1024)}{m.group(2) or ''})"


def _guard_stores(node, store_ids):
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        v = getattr(node, attr, None)
        if isinstance(v, c_ast.Node):
            if id(v) in store_ids and _is_stmt_position(node, v):
                setattr(node, attr, _lead(v))
            else:
                _guard_stores(v, store_ids)
        elif isinstance(v, list):
            for j, item in enumerate(v):
                if isinstance(item, c_ast.Node):
                    if id(item) in store_ids and isinstance(node, (c_ast.Compound, c_ast.Case, c_ast.Default)):
                        v[j] = _lead(item)
                    else:
                        _guard_stores(item, store_ids)


def _lead(stmt):
    return c_ast.If(c_ast.ID("__xp_lead"), stmt, None, coord=stmt.coord)


def _replace_thread_ids(node):
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        v = getattr(node, attr, None)
        items = [(attr, None, v)] if isinstance(v, c_ast.Node) else \
            [(attr, j, x) for j, x in enumerate(v)] if isinstance(v, list) else []
        for a, j, x in items:
            if not isinstance(x, c_ast.Node):
                continue
            new = None
            if isinstance(x, c_ast.StructRef) and isinstance(x.name, c_ast.ID) and x.type == "." and \
                    x.field.name == "x":
                if x.name.name == "threadIdx":
                    new = c_ast.ID("__xp_tx", coord=x.coord)
                elif x.name.name == "blockDim":
                    new = canon.parse_expr("blockDim.x / 2")
            if new is not None:
                if j is None:
                    setattr(node, a, new)
                else:
                    v[j] = new
            else:
                _replace_thread_ids(x)


# per-lane element index of the 16x16x16f16 operands (PLATFORMS.md §4), r = element 0..3
_ROWCOL = {"matrix_a": ("__xp_lane % 16", "4 * (__xp_lane / 16) + __xp_r"),
           "matrix_b": ("4 * (__xp_lane / 16) + __xp_r", "__xp_lane % 16"),
           "accumulator": ("4 * (__xp_lane / 16) + __xp_r", "__xp_lane % 16")}


def _index(use, col_major):
    row, col = _ROWCOL[use]
    return f"({col}) * __xp_ldm + ({row})" if col_major else f"({row}) * __xp_ldm + ({col})"


def _map_wmma(body, frags):
    def kind_of(e):
        return frags[_frag_root(e)][0]

    def rewrite(s):
        if not isinstance(s, c_ast.FuncCall):
            return None
        w = _wmma_name(s)
        if not w:
            return None
        a = s.args.exprs
        if w == "mma_sync":
            st = _stmts(f"__xp_D = {MFMA_F16}(__xp_A, __xp_B, __xp_C, 0, 0, 0);")[0]
            return canon.substitute(st, {"__xp_D": a[0], "__xp_A": a[1], "__xp_B": a[2], "__xp_C": a[3]})
        if w == "fill_fragment":
            use = kind_of(a[0])[0]
            cast = "(_Float16)(float)" if use != "accumulator" else "(float)"
            st = _stmts(f"for (int __xp_r = 0; __xp_r < 4; ++__xp_r) __xp_F[__xp_r] = {cast}(__xp_V);")[0]
            return canon.substitute(st, {"__xp_F": a[0], "__xp_V": a[1]})
        if w == "load_matrix_sync":
            use, layout = kind_of(a[0])[:2]
            if use == "accumulator":
                col_major = a[3].name.endswith("mem_col_major")
                cast = ""
            else:
                col_major = layout == "col_major"
                cast = "(_Float16)(float)"
            st = _stmts(f"for (int __xp_r = 0; __xp_r < 4; ++__xp_r) __xp_F[__xp_r] = "
                        f"{cast}((__xp_P)[{_index(use, col_major)}]);")[0]
            return canon.substitute(st, {"__xp_F": a[0], "__xp_P": a[1], "__xp_ldm": a[2]})
        if w == "store_matrix_sync":
            col_major = a[3].name.endswith("mem_col_major")
            st = _stmts(f"for (int __xp_r = 0; __xp_r < 4; ++__xp_r) "
                        f"(__xp_P)[{_index('accumulator', col_major)}] = __xp_F[__xp_r];")[0]
            return canon.substitute(st, {"__xp_F": a[1], "__xp_P": a[0], "__xp_ldm": a[2]})
        return None

    def go(node):
        for attr in node.__slots__:
            if attr in ("coord", "__weakref__"):
                continue
            v = getattr(node, attr, None)
            if isinstance(v, c_ast.Node):
                new = rewrite(v) if _is_stmt_position(node, v) else None
                if new is not None:
                    setattr(node, attr, new)
                else:
                    go(v)
            elif isinstance(v, list):
                for j, item in enumerate(v):
                    if isinstance(item, c_ast.Node):
                        new = rewrite(item) if isinstance(node, (c_ast.Compound, c_ast.Case, c_ast.Default)) \
                            else None
                        if new is not None:
                            v[j] = new
                        else:
                            go(item)
        # f.num_elements -> 4, f.x[i] -> f[i]
        for attr in node.__slots__:
            if attr in ("coord", "__weakref__"):
                continue
            v = getattr(node, attr, None)
            items = [(None, v)] if isinstance(v, c_ast.Node) else list(enumerate(v)) if isinstance(v, list) else []
            for j, x in items:
                new = None
                if isinstance(x, c_ast.StructRef) and x.type == "." and _frag_root(x.name) in frags and \
                        x.field.name == "num_elements":
                    new = c_ast.Constant("int", "4")
                elif isinstance(x, c_ast.ArrayRef) and isinstance(x.name, c_ast.StructRef) and \
                        x.name.type == "." and x.name.field.name == "x" and _frag_root(x.name.name) in frags:
                    new = c_ast.ArrayRef(x.name.name, x.subscript, coord=x.coord)
                if new is not None:
                    if j is None:
                        setattr(node, attr, new)
                    else:
                        v[j] = new
        return node

    return go(body)


def _rewrite_launches(ast, names, blocks):
    for n in canon.walk(ast):
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.FuncCall) and \
                canon.call_name(n.name) == "__xp_launch" and n.name.args and \
                isinstance(n.name.args.exprs[0], c_ast.ID) and n.name.args.exprs[0].name in names:
            (x, y, z), = set(blocks[n.name.args.exprs[0].name])
            n.name.args.exprs[2] = canon.parse_expr(f"dim3({2 * x}, {y}, {z})")


@matrix_core_map.legality
def _legal(program, *, to: str = "hip"):
    """cuda -> hip: the wmma kernels' analyses, made on a copy of the AST that the rewrite then
    changes (the plan); hip -> cuda: the diagnostics of ``_legal_to_cuda``."""
    if program.platform == to:
        return _refuse(program, "XP-MCMAP-010", f"the program is already {to}: no matrix instruction "
                       "to map")
    if program.platform == "hip" and to == "cuda":
        return _legal_to_cuda(program)
    if program.platform != "cuda" or to != "hip":
        return _refuse(program, "XP-MCMAP-001", f"matrix_core_map maps cuda wmma to hip MFMA, not "
                       f"{program.platform} -> {to}")
    if program.ast is None:
        return _refuse(program, "XP-MCMAP-001", "no program")
    if not _kernels_with_wmma(program.ast):
        return _refuse(program, "XP-MCMAP-002", "no kernel uses wmma (api_map applies)")
    ast = copy.deepcopy(program.ast)
    kernels = _kernels_with_wmma(ast)
    file_funcs = set(canon.func_defs(ast))
    names = {k.decl.name for k in kernels}
    blocks = _launch_blocks(program, names)
    analyses = []
    for k in kernels:
        an = _Analysis(program, k, file_funcs - {k.decl.name})
        err = an.check()
        if err:
            return err
        analyses.append(an)
        bl = blocks[k.decl.name]
        if not bl:
            return _refuse(program, "XP-MCMAP-004", f"kernel '{k.decl.name}' is not launched in the file "
                           "(its block size is unknown)", k)
        if len(set(bl)) != 1:
            return _refuse(program, "XP-MCMAP-004", f"kernel '{k.decl.name}' is launched with different "
                           "blocks", k)
        x, y, z = bl[0]
        if None in (x, y, z) or x % 32 or x * y * z > 512:
            return _refuse(program, "XP-MCMAP-004", f"kernel '{k.decl.name}': block {bl[0]} is not a constant "
                           "block with x a multiple of 32 and at most 512 threads (each warp becomes a "
                           "64-lane wavefront)", k)
        i, lb = _launch_bounds(k)
        if lb is not None and not re.match(r"__launch_bounds__\(\s*(0x[0-9a-fA-F]+|\d+)\s*(,.*)?\)$", lb):
            return _refuse(program, "XP-MCMAP-004", f"non-constant {lb}", k)
        for n in canon.walk(k.body):
            if isinstance(n, c_ast.ID) and n.name.startswith("__xp_"):
                return _refuse(program, "XP-MCMAP-005", f"the kernel already uses the name '{n.name}'", n)
    from passes.map.api_map import api_legality

    return api_legality(program, to, allow_matrix=True) or canon.Rewritten(ast, (analyses, names, blocks))


def _to_cuda(program):
    import passes.map.matrix_core_map.to_wmma as H
    from passes.map.api_map import map_api

    ast = copy.deepcopy(program.ast)
    kernels = H.mfma_kernels(ast)
    blocks = _launch_blocks(program, {k.decl.name for k in kernels})
    waves = {name: bl[0][0] * bl[0][1] * bl[0][2] // 64 for name, bl in blocks.items()}
    H.rewrite(program, ast, waves)
    facts = copy.deepcopy(program.facts)
    mid = replace(program, ast=ast, source="", facts=facts)
    out = map_api(mid, "cuda")
    pre = [l for l in out.facts.get("preamble", []) if "cuda_fp16.h" not in l and "mma.h" not in l]
    at = next((i + 1 for i, l in enumerate(pre) if "cuda_runtime" in l), 0)
    out.facts["preamble"] = pre[:at] + ["#include <cuda_fp16.h>", "#include <mma.h>"] + pre[at:]
    return canon.reparse(out, out.ast)


def _legal_to_cuda(program) -> list[Diagnostic]:
    import passes.map.matrix_core_map.to_wmma as H
    from passes.map.api_map import api_legality

    err = H.check(program, lambda code, msg, node: _refuse(program, code, msg, node))
    if err:
        return err
    kernels = H.mfma_kernels(program.ast)
    blocks = _launch_blocks(program, {k.decl.name for k in kernels})
    for k in kernels:
        bl = blocks[k.decl.name]
        if not bl or len(set(bl)) != 1 or None in bl[0]:
            return _refuse(program, "XP-MCMAP-004", f"kernel '{k.decl.name}' is not launched with one constant "
                           "block (the per-wavefront exchange tiles are sized by it)", k)
        x, y, z = bl[0]
        if (x * y * z) % 64:
            return _refuse(program, "XP-MCMAP-004", f"kernel '{k.decl.name}': block {bl[0]} is not a whole number "
                           "of 64-lane wavefronts", k)
    return api_legality(program, "cuda", allow_matrix=True)


_MFMA = re.compile(r"^__builtin_amdgcn_mfma_(\w+)$")
