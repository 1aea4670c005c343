"""HIP MFMA -> CUDA wmma half of ``matrix_core_map`` (the pass and its docstring live in
passes/map/matrix_core_map/__init__.py; this module holds the hip -> cuda legality and rewrite).

Only ``__builtin_amdgcn_mfma_f32_16x16x16f16`` maps: wmma m16n16k16 with half inputs and a float
accumulator computes the same D = A*B + C (products exact in float, float accumulation). The
float32 MFMA (16x16x4f32) has no exact wmma form (tf32 / half fragments round the inputs) and is
refused; 32x32x8f16 is not mapped.

The block keeps its threads, so each 64-lane wavefront becomes two 32-lane warps. An MFMA call
``d = mfma(a, b, c, 0, 0, 0)`` hands the wavefront's operands from lane to matrix position; a
wmma fragment's element -> lane map is unspecified, so the exchange goes through a per-wavefront
16x16 tile in shared memory (exact copies):

    every lane L writes a[r] to A[L%16][4(L/16)+r], b[r] to B[4(L/16)+r][L%16] and c[r] to
    C[4(L/16)+r][L%16] (PLATFORMS.md §4); __syncthreads(); the wavefront's first warp loads the
    three tiles into fragments, runs mma_sync and stores D over C; __syncthreads(); every lane
    reads d[r] = D[4(L/16)+r][L%16]; __syncthreads() (the tile is reused by the next call).

The barriers need every MFMA call (and every jump) in block-uniform control flow: its conditions
may not depend on thread indices, memory, or locals computed from them.
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast

import passes.canon as canon

MFMA_F16 = "__builtin_amdgcn_mfma_f32_16x16x16f16"
_MFMA = re.compile(r"^__builtin_amdgcn_mfma_(\w+)$")
_LANE_NAMES = {"warpSize", "__lane_id", "__ballot", "__any", "__all", "__activemask", "__shfl", "__shfl_up",
               "__shfl_down", "__shfl_xor", "__syncwarp", "__builtin_amdgcn_wave_barrier"}
_WMMA_NS = "nvcuda::wmma::"
_FRAG_A = f"{_WMMA_NS}fragment<{_WMMA_NS}matrix_a, 16, 16, 16, half, {_WMMA_NS}row_major>"
_FRAG_B = f"{_WMMA_NS}fragment<{_WMMA_NS}matrix_b, 16, 16, 16, half, {_WMMA_NS}row_major>"
_FRAG_C = f"{_WMMA_NS}fragment<{_WMMA_NS}accumulator, 16, 16, 16, float>"
TILE = ("__xp_mA", "__xp_mB", "__xp_mC")


def vector_typedefs(ast) -> dict[str, tuple[str, int]]:
    """name -> (element type, lanes) of the file's ``ext_vector_type`` / ``vector_size`` typedefs."""
    out = {}
    for e in ast.ext:
        if not isinstance(e, c_ast.Typedef) or not isinstance(e.type, c_ast.TypeDecl):
            continue
        words = canon.type_words(e.type)
        for spec in getattr(e.type, "attributes", None) or []:
            for a in getattr(spec, "attributes", []) or []:
                try:
                    n = int(str(a.arguments).strip(), 0)
                except (TypeError, ValueError):
                    continue
                if a.name == "ext_vector_type":
                    out[e.name] = (" ".join(words), n)
                elif a.name == "vector_size":
                    size = {"float": 4, "_Float16": 2, "__fp16": 2, "half": 2}.get(" ".join(words))
                    if size:
                        out[e.name] = (" ".join(words), n // size)
    return out


def mfma_kernels(ast):
    return [e for e in ast.ext if isinstance(e, c_ast.FuncDef) and "__global__" in (e.decl.funcspec or []) and
            any(_MFMA.match(canon.call_name(n) or "") for n in canon.walk(e.body) if isinstance(n, c_ast.FuncCall))]


def _walk_parents(node, parent=None):
    stack = [(node, parent)]
    while stack:
        n, par = stack.pop()
        yield n, par
        stack.extend((c, n) for _, c in n.children())


def _decl_vector(d, vecs):
    if isinstance(d.type, c_ast.TypeDecl):
        words = canon.type_words(d.type)
        if len(words) == 1 and words[0] in vecs:
            return words[0]
    return None


def check(program, diag):
    """The first refusal (a Diagnostic list) of the hip -> cuda mapping, or []."""
    ast = program.ast
    found = None
    for n in canon.walk(ast):
        m = _MFMA.match(canon.call_name(n) or "") if isinstance(n, c_ast.FuncCall) else None
        if m:
            found = found or n
            if canon.call_name(n) != MFMA_F16:
                if m.group(1).endswith("f32"):
                    return diag("XP-MCMAP-007", f"'{canon.call_name(n)}' multiplies float32 inputs: wmma has no "
                                "float32 form (tf32 or half fragments would round the inputs)", n)
                return diag("XP-MCMAP-007", f"'{canon.call_name(n)}' has no wmma shape mapped (only "
                            "16x16x16f16 = m16n16k16)", n)
    if found is None:
        return diag("XP-MCMAP-002", "no MFMA builtin (api_map applies)", None)
    vecs = vector_typedefs(ast)
    kernels = mfma_kernels(ast)
    knames = {k.decl.name for k in kernels}
    funcs = set(canon.func_defs(ast))
    # vector types: only in the MFMA kernels' locals
    for e in ast.ext:
        if isinstance(e, c_ast.FuncDef) and e.decl.name not in knames:
            for n in canon.walk(e):
                if isinstance(n, c_ast.IdentifierType) and set(n.names) & set(vecs):
                    return diag("XP-MCMAP-008", "a vector type of the MFMA operands is used outside the MFMA "
                                "kernels", n)
            for n in canon.walk(e.body):
                if isinstance(n, c_ast.FuncCall) and _MFMA.match(canon.call_name(n) or ""):
                    return diag("XP-MCMAP-008", "MFMA outside a kernel", n)
    for k in kernels:
        err = _check_kernel(program, k, vecs, funcs - {k.decl.name}, diag)
        if err:
            return err
    return []


def _check_kernel(program, k, vecs, funcs, diag):
    body = k.body
    locals_ = {n.name: n for n in canon.walk(body) if isinstance(n, c_ast.Decl) and n.name}
    params = k.decl.type.args.params if k.decl.type.args else []
    for p in params:
        if isinstance(p, c_ast.Decl) and any(w in vecs for w in canon.type_words(p.type)):
            return diag("XP-MCMAP-008", f"vector parameter '{p.name}'", p)
    vlocals = {}
    for name, d in locals_.items():
        words = canon.type_words(d.type)
        if any(w in vecs for w in words):
            v = _decl_vector(d, vecs)
            if v is None:
                return diag("XP-MCMAP-008", f"'{name}': only plain vector locals are mapped (no arrays of or "
                            "pointers to vectors)", d)
            if d.init is not None and not (isinstance(d.init, c_ast.InitList) and len(d.init.exprs) <= vecs[v][1]):
                return diag("XP-MCMAP-008", f"'{name}': a vector initialised by something else than a brace "
                            "list", d)
            if vecs[v][1] != 4 or vecs[v][0] not in ("float", "_Float16", "__fp16", "half"):
                return diag("XP-MCMAP-008", f"'{name}': vector of {vecs[v][1]} {vecs[v][0]}", d)
            vlocals[name] = vecs[v][0]
    mfma_ids = set()
    for n, parent in _walk_parents(body):
        if isinstance(n, c_ast.FuncCall):
            name = canon.call_name(n) or ""
            if name == MFMA_F16:
                args = n.args.exprs if n.args else []
                ok = (isinstance(parent, c_ast.Assignment) and parent.op == "=" and parent.rvalue is n and
                      isinstance(parent.lvalue, c_ast.ID) and len(args) == 6 and
                      all(isinstance(a, c_ast.ID) for a in args[:3]) and
                      all(isinstance(a, c_ast.Constant) and a.value == "0" for a in args[3:]))
                if not ok:
                    return diag("XP-MCMAP-008", "an MFMA call that is not 'd = mfma(a, b, c, 0, 0, 0);' on vector "
                                "locals", n)
                a, b, c = (x.name for x in args[:3])
                d = parent.lvalue.name
                if not (vlocals.get(a) in ("_Float16", "__fp16", "half") and vlocals.get(b) == vlocals.get(a)
                        and vlocals.get(c) == "float" and vlocals.get(d) == "float"):
                    return diag("XP-MCMAP-008", "MFMA operands must be half x4 (a, b) and float x4 (c, d) locals", n)
                for x in (parent.lvalue, *args[:3]):
                    mfma_ids.add(id(x))
                continue
            if name in funcs:
                return diag("XP-MCMAP-005", f"the kernel calls '{name}' defined in the file (inline it first)", n)
        if isinstance(n, c_ast.ID) and n.name in _LANE_NAMES:
            return diag("XP-MCMAP-008", f"'{n.name}' works on 64-lane wavefronts, which become two 32-lane "
                        "warps", n)
        if isinstance(n, c_ast.ID) and n.name.startswith("__xp_"):
            return diag("XP-MCMAP-005", f"the kernel already uses the name '{n.name}'", n)
        if isinstance(n, c_ast.ID) and n.name in vlocals and id(n) not in mfma_ids:
            if not (isinstance(parent, c_ast.ArrayRef) and parent.name is n):
                return diag("XP-MCMAP-008", f"vector '{n.name}' used other than as v[i] or an MFMA operand", n)
    for n in canon.walk(body):
        if isinstance(n, c_ast.Assignment) and isinstance(n.rvalue, c_ast.FuncCall) and \
                canon.call_name(n.rvalue) == MFMA_F16 and not _stmt_level(body, n):
            return diag("XP-MCMAP-008", "an MFMA assignment inside an expression", n)
    # block-uniform control flow around the MFMA calls and every jump (the mapping adds barriers)
    tainted = _non_uniform_locals(body, locals_)
    for n in canon.walk(body):
        conds = []
        if isinstance(n, (c_ast.If, c_ast.While, c_ast.DoWhile, c_ast.Switch)):
            conds = [n.cond]
        elif isinstance(n, c_ast.For):
            conds = [n.init, n.cond, n.next]
        elif isinstance(n, c_ast.TernaryOp) or (isinstance(n, c_ast.BinaryOp) and n.op in ("&&", "||")):
            if any(_relevant(m) for m in canon.walk(n)):
                return diag("XP-MCMAP-009", "an MFMA call under a conditional expression", n)
            continue
        if conds and any(_relevant(m) for m in canon.walk(n)):
            for c in conds:
                if c is not None and _non_uniform(c, tainted, locals_):
                    return diag("XP-MCMAP-009", "control flow around an MFMA call or a jump depends on the "
                                "thread or on memory (the mapping synchronises the block at each MFMA)", c)
    return None


def _stmt_level(body, node) -> bool:
    for n in canon.walk(body):
        if isinstance(n, c_ast.Compound) and node in (n.block_items or []):
            return True
        if isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile)) and n.stmt is node:
            return True
        if isinstance(n, c_ast.If) and node in (n.iftrue, n.iffalse):
            return True
    return False


def _relevant(n) -> bool:
    if isinstance(n, (c_ast.Return, c_ast.Break, c_ast.Continue, c_ast.Goto)):
        return True
    return isinstance(n, c_ast.FuncCall) and (canon.call_name(n) or "") in (MFMA_F16, "__syncthreads")


def _non_uniform(e, tainted, locals_) -> bool:
    for m, parent in _walk_parents(e):
        if isinstance(m, c_ast.ID) and (m.name in tainted or m.name in ("threadIdx",)):
            return True
        if isinstance(m, c_ast.ArrayRef) or (isinstance(m, c_ast.UnaryOp) and m.op == "*") or \
                (isinstance(m, c_ast.StructRef) and m.type == "->"):
            if not (isinstance(parent, c_ast.UnaryOp) and parent.op == "&"):
                return True
        if isinstance(m, c_ast.FuncCall) and (canon.call_name(m) or "") not in canon.PURE_CALLS:
            return True
    return False


def _non_uniform_locals(body, locals_) -> set[str]:
    """Locals whose value may differ between the threads of a block (thread ids, memory, or an
    assignment under such a condition)."""
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False

        def visit(n, under):
            nonlocal changed
            pairs = []
            if isinstance(n, c_ast.Decl) and n.name in locals_ and n.init is not None:
                pairs.append((n.name, n.init))
            elif isinstance(n, c_ast.Assignment):
                r = canon.lvalue_root(n.lvalue)
                if r in locals_:
                    pairs.append((r, n))
            elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
                r = canon.lvalue_root(n.expr)
                if r in locals_:
                    pairs.append((r, n))
            for name, e in pairs:
                if name not in tainted and (under or _non_uniform(e, tainted, locals_)):
                    tainted.add(name)
                    changed = True
            cond_bad = False
            if isinstance(n, (c_ast.If, c_ast.While, c_ast.DoWhile, c_ast.Switch, c_ast.TernaryOp)):
                cond_bad = _non_uniform(n.cond, tainted, locals_)
            elif isinstance(n, c_ast.For):
                cond_bad = n.cond is not None and _non_uniform(n.cond, tainted, locals_)
            for _, c in n.children():
                inner = under or (cond_bad and c is not getattr(n, "cond", None))
                visit(c, inner)

        visit(body, False)
    return tainted


# ------------------------------------------------------------------------------ rewrite
def _stmts(code: str):
    return canon.parse_stmts(code, "typedef int half;")


def rewrite(program, ast, waves_per_block: dict):
    """Rewrite the MFMA kernels of ``ast`` in place (see the module docstring)."""
    vecs = vector_typedefs(ast)
    for k in mfma_kernels(ast):
        w = waves_per_block[k.decl.name]
        _rewrite_kernel(k, vecs, w)
    ast.ext[:] = [e for e in ast.ext if not (isinstance(e, c_ast.Typedef) and e.name in vecs)]
    for n in canon.walk(ast):
        if isinstance(n, c_ast.IdentifierType):
            n.names = ["half" if x in ("_Float16", "__fp16") else x for x in n.names]


def _rewrite_kernel(k, vecs, waves):
    for n in canon.walk(k.body):
        if isinstance(n, c_ast.Decl) and _decl_vector(n, vecs):
            elem, lanes = vecs[_decl_vector(n, vecs)]
            td = n.type
            td.type = c_ast.IdentifierType(["half" if elem in ("_Float16", "__fp16") else elem])
            n.type = c_ast.ArrayDecl(td, c_ast.Constant("int", str(lanes)), [])
    k.body = _map_calls(k.body)
    pro = _stmts(f"half __xp_mA[{waves * 256}];\n"
                 f"half __xp_mB[{waves * 256}];\n"
                 f"float __xp_mC[{waves * 256}];\n"
                 "const int __xp_t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n"
                 "const int __xp_w = __xp_t / 64 * 256;\n"
                 "const int __xp_lane = __xp_t % 64;")
    for d in pro[:3]:
        d.storage = ["__shared__"]
    k.body.block_items = pro + list(k.body.block_items or [])


_A_AT = "__xp_w + (__xp_lane % 16) * 16 + 4 * (__xp_lane / 16) + __xp_r"
_BC_AT = "__xp_w + (4 * (__xp_lane / 16) + __xp_r) * 16 + __xp_lane % 16"


def _mfma_block(d, a, b, c):
    code = (
        "{\n"
        f"  for (int __xp_r = 0; __xp_r < 4; ++__xp_r) {{ __xp_mA[{_A_AT}] = __xp_a[__xp_r]; "
        f"__xp_mB[{_BC_AT}] = __xp_b[__xp_r]; __xp_mC[{_BC_AT}] = __xp_c[__xp_r]; }}\n"
        "  __syncthreads();\n"
        "  if (__xp_lane < 32) {\n"
        f"    __xp_fa __xp_ma; __xp_fb __xp_mb; __xp_fc __xp_mc;\n"
        f"    {_WMMA_NS}load_matrix_sync(__xp_ma, __xp_mA + __xp_w, 16);\n"
        f"    {_WMMA_NS}load_matrix_sync(__xp_mb, __xp_mB + __xp_w, 16);\n"
        f"    {_WMMA_NS}load_matrix_sync(__xp_mc, __xp_mC + __xp_w, 16, {_WMMA_NS}mem_row_major);\n"
        f"    {_WMMA_NS}mma_sync(__xp_mc, __xp_ma, __xp_mb, __xp_mc);\n"
        f"    {_WMMA_NS}store_matrix_sync(__xp_mC + __xp_w, __xp_mc, 16, {_WMMA_NS}mem_row_major);\n"
        "  }\n"
        "  __syncthreads();\n"
        f"  for (int __xp_r = 0; __xp_r < 4; ++__xp_r) __xp_d[__xp_r] = __xp_mC[{_BC_AT}];\n"
        "  __syncthreads();\n"
        "}\n")
    code = code.replace(f"{_WMMA_NS}", "__XPNS_")
    (blk,) = canon.parse_stmts(code, "typedef int half; typedef int __xp_fa; typedef int __xp_fb; "
                                     "typedef int __xp_fc;")
    for n in canon.walk(blk):
        if isinstance(n, c_ast.ID) and n.name.startswith("__XPNS_"):
            n.name = _WMMA_NS + n.name[len("__XPNS_"):]
        if isinstance(n, c_ast.IdentifierType):
            n.names = [{"__xp_fa": _FRAG_A, "__xp_fb": _FRAG_B, "__xp_fc": _FRAG_C}.get(x, x) for x in n.names]
    return canon.substitute(blk, {"__xp_a": a, "__xp_b": b, "__xp_c": c, "__xp_d": d})


def _map_calls(node):
    def rewrite_stmt(s):
        if isinstance(s, c_ast.Assignment) and isinstance(s.rvalue, c_ast.FuncCall) and \
                canon.call_name(s.rvalue) == MFMA_F16:
            a, b, c = s.rvalue.args.exprs[:3]
            return _mfma_block(s.lvalue, a, b, c)
        return None

    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        v = getattr(node, attr, None)
        if isinstance(v, c_ast.Node):
            new = rewrite_stmt(v) if isinstance(node, (c_ast.If, c_ast.For, c_ast.While, c_ast.DoWhile)) and \
                attr in ("iftrue", "iffalse", "stmt") else None
            if new is not None:
                setattr(node, attr, new)
            else:
                _map_calls(v)
        elif isinstance(v, list):
            for j, item in enumerate(v):
                if isinstance(item, c_ast.Node):
                    new = rewrite_stmt(item) if isinstance(node, c_ast.Compound) else None
                    if new is not None:
                        v[j] = new
                    else:
                        _map_calls(item)
    return node


def copy_ast(ast):
    return copy.deepcopy(ast)
