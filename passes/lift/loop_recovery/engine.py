"""Engine of ``loop_recovery`` (private): lift one CUDA/HIP program to plain C++ loops.

Terms used below
    block level   code run once per thread block (inside the block loop, outside thread loops)
    region        a maximal barrier-free run of statements, run by every thread in a thread loop
                  (``thread`` region) or once per warp with lane 0's coordinates (``warp`` region,
                  for warp-collective matrix operations)
    uniform       an expression whose value is the same for every thread of a block (built from
                  constants, parameters, blockIdx/blockDim/gridDim and block-level variables)
    expanded      a thread-private variable live in more than one region becomes an array indexed
                  by the linear thread id (``xp_tid``); arrays of the padded thread count
                  ``xp_np`` (a whole number of warps)

Failures are ``Refuse(code, message, node)``; ``loop_recovery`` turns them into diagnostics.
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast

from platforms.common.generator import launch_parts

import passes.lift.loop_recovery.support as S

BARRIERS = frozenset({"__syncthreads", "__syncwarp"})
BUILTIN_VARS = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim"})
WMMA_OPS = frozenset({"load_matrix_sync", "store_matrix_sync", "mma_sync", "fill_fragment"})
UNSUPPORTED_CALLS = re.compile(r"^(__ballot\w*|__any\w*|__all\w*|__match_\w+|__reduce_\w+_sync|"
                               r"__builtin_amdgcn_(?!mfma_)\w+|__syncthreads_\w+|__threadfence\w*|"
                               r"__nanosleep|clock\w*|__shfl\w*|cooperative_groups::\w+|printf)$")
FLOAT_FUNCS = frozenset("""expf exp2f logf log2f log10f sinf cosf tanf sqrtf rsqrtf fabsf fmaxf fminf powf
tanhf erff floorf ceilf roundf truncf fmodf __expf __logf __sinf __cosf __powf __fdividef atanf asinf acosf
sinhf coshf expm1f log1pf cbrtf hypotf atan2f fmaf copysignf __frcp_rn __fsqrt_rn""".split())
DOUBLE_FUNCS = frozenset("exp log sin cos tan fabs fmax fmin pow tanh erf floor ceil sqrt fma".split())
INT_RANK = ["bool", "char", "signed char", "unsigned char", "short", "unsigned short", "int", "unsigned int",
            "long", "unsigned long", "long long", "unsigned long long"]


class Refuse(Exception):
    def __init__(self, code: str, message: str, node=None, construct: str | None = None):
        super().__init__(message)
        self.code, self.message, self.node, self.construct = code, message, node, construct


# ----------------------------------------------------------------------------- AST helpers
def call_name(n) -> str | None:
    if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID):
        return n.name.name
    return None


def short(name: str | None) -> str | None:
    return name.rsplit("::", 1)[-1] if name else name


def walk(node):
    """Pre-order walk that skips struct member names (``StructRef.field``)."""
    if node is None:
        return
    yield node
    for name, child in node.children():
        if isinstance(node, c_ast.StructRef) and name == "field":
            continue
        yield from walk(child)


def transform(node, fn):
    """Post-order rebuild: each child is replaced by ``fn(child)`` (in place on our own copy)."""
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__") or (isinstance(node, c_ast.StructRef) and attr == "field"):
            continue
        v = getattr(node, attr)
        if isinstance(v, c_ast.Node):
            setattr(node, attr, transform(v, fn))
        elif isinstance(v, list):
            setattr(node, attr, [transform(x, fn) if isinstance(x, c_ast.Node) else x for x in v])
    return fn(node)


def ID(name):
    return c_ast.ID(name)


def const(v: int, t: str = "int"):
    return c_ast.Constant(t, str(v))


def typename(names: list[str]) -> c_ast.Typename:
    return c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(names)))


def mkdecl(name: str, names: list[str], init=None, dims=(), quals=(), ptr=False) -> c_ast.Decl:
    t = c_ast.TypeDecl(name, list(quals), None, c_ast.IdentifierType(list(names)))
    if ptr:
        t = c_ast.PtrDecl([], t)
    for d in reversed(dims):
        t = c_ast.ArrayDecl(t, d, [])
    return c_ast.Decl(name, list(quals), [], [], [], t, init, None)


def set_declname(t, name):
    while not isinstance(t, c_ast.TypeDecl):
        t = t.type
    t.declname = name


def base_names(t) -> list[str] | None:
    while not isinstance(t, c_ast.TypeDecl):
        if not hasattr(t, "type"):
            return None
        t = t.type
    return t.type.names if isinstance(t.type, c_ast.IdentifierType) else None


def strip_quals(t):
    """Copy of a declarator type without const/volatile on the variable itself."""
    t = copy.deepcopy(t)
    node = t
    while True:
        if isinstance(node, c_ast.TypeDecl):
            node.quals = [q for q in node.quals if q not in ("const", "volatile", "constexpr")]
            return t
        if isinstance(node, c_ast.PtrDecl):
            node.quals = [q for q in node.quals if q not in ("const", "volatile", "__restrict__", "__restrict")]
            return t
        node = node.type


def block(items) -> c_ast.Compound:
    return c_ast.Compound(list(items))


def for_loop(var: str, bound, body, unsigned=True) -> c_ast.For:
    init = c_ast.DeclList([mkdecl(var, ["unsigned", "int"] if unsigned else ["int"], const(0))])
    cond = c_ast.BinaryOp("<", ID(var), bound)
    return c_ast.For(init, cond, c_ast.UnaryOp("++", ID(var)), body)


def lvalue_base(e) -> str | None:
    while True:
        if isinstance(e, c_ast.ID):
            return e.name
        if isinstance(e, (c_ast.ArrayRef,)):
            e = e.name
        elif isinstance(e, c_ast.StructRef):
            e = e.name
        elif isinstance(e, c_ast.Cast):
            e = e.expr
        else:
            return None


def is_builtin_ref(n, names=BUILTIN_VARS) -> str | None:
    if isinstance(n, c_ast.StructRef) and isinstance(n.name, c_ast.ID) and n.name.name in names:
        return n.name.name
    return None


class _RegionStmt(c_ast.Compound):
    """Placeholder for a region inside a block-level statement list."""

    def __init__(self, region):
        super().__init__([])
        self.region = region


class Region:
    def __init__(self, kind: str, stmts: list, rid: int):
        self.kind, self.stmts, self.id = kind, stmts, rid


# ----------------------------------------------------------------------------- program level
class ProgramInfo:
    """Kernels, device functions (inlined or kept), type names of one GPU program."""

    def __init__(self, program):
        self.program = program
        self.platform = program.platform
        self.warp = S.WARP[self.platform]
        self.funcs: dict[str, c_ast.FuncDef] = {}
        self.kernels: list[str] = []
        self.device: list[str] = []
        for ext in program.ast.ext:
            if isinstance(ext, c_ast.FuncDef):
                spec = set(ext.decl.funcspec or [])
                self.funcs[ext.decl.name] = ext
                if "__global__" in spec:
                    self.kernels.append(ext.decl.name)
                elif "__device__" in spec and "__host__" not in spec:
                    self.device.append(ext.decl.name)
        self.inline = self._collective_functions()

    def _collective_functions(self) -> set[str]:
        """Device functions that touch thread identity or synchronise: inlined into kernels."""
        direct, calls = set(), {}
        for name in self.device:
            fd = self.funcs[name]
            callees = set()
            for n in walk(fd.body):
                cn = call_name(n)
                if cn:
                    callees.add(cn)
                    if (cn in BARRIERS or cn in S.collectives(self.platform) or short(cn) in WMMA_OPS
                            or cn in ("__lane_id", "__activemask")
                            or cn.startswith("__builtin_amdgcn_mfma")):
                        direct.add(name)
                if isinstance(n, c_ast.ID) and n.name in BUILTIN_VARS | {"warpSize"}:
                    direct.add(name)
                if isinstance(n, c_ast.Decl) and "__shared__" in (n.storage or []):
                    direct.add(name)
            calls[name] = callees
        changed = True
        while changed:
            changed = False
            for name, callees in calls.items():
                if name not in direct and callees & direct:
                    direct.add(name)
                    changed = True
        return direct


# ----------------------------------------------------------------------------- kernel lift
class KernelLift:
    def __init__(self, info: ProgramInfo, fd: c_ast.FuncDef, omp: bool):
        self.info, self.omp = info, omp
        self.platform, self.W = info.platform, info.warp
        self.fd = copy.deepcopy(fd)
        self.name = fd.decl.name
        self.counter = 0
        self.regions: list[Region] = []
        self.block_decls: list = []        # declarations at the top of the block body
        self.block_vars: set[str] = set()
        self.types: dict[str, c_ast.Node] = {}   # variable -> declarator type
        self.fragments: dict[str, dict] = {}
        self.helpers: dict[str, str] = {}  # generated helper name -> C text
        self.dyn_shared: list[c_ast.Decl] = []
        self.float_atomics = False
        self.pred: str | None = None
        self.uses_atomics = False
        self.early_return_ifs: dict[int, str] = {}   # id(if) -> device function (early return)
        self.return_copies = 0                        # statements copied into both paths of an if

    # -- entry ---------------------------------------------------------------------
    def run(self) -> c_ast.FuncDef:
        body = self.fd.body.block_items or []
        body = self._inline_block(body, 0)
        self.fd.body.block_items = body
        self._check_constructs()
        self._privatize_modified_params()
        self.params = self._param_names()
        self._alpha_rename()
        self._collect_decls()
        self.has_return = any(isinstance(n, c_ast.Return) for n in walk(self.fd.body))
        lifted = self._lift_seq(self.fd.body.block_items or [])
        self._expand()
        return self._assemble(lifted)

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"xp_{stem}{self.counter}"

    # -- checks ----------------------------------------------------------------------
    def _check_constructs(self):
        for n in walk(self.fd.body):
            cn = call_name(n)
            if cn and UNSUPPORTED_CALLS.match(cn) and cn not in S.collectives(self.platform):
                raise Refuse("XP-RECOVER-002", f"'{cn}' has no lifted equivalent yet", n, cn)
            if cn and cn.startswith("__builtin_amdgcn_mfma") and S.mfma_info(cn) is None:
                raise Refuse("XP-RECOVER-002", f"'{cn}' is not described in platforms/hip/intrinsics/mfma.toml",
                             n, cn)
            if cn in S.ATOMICS:
                self.uses_atomics = True
            if isinstance(n, (c_ast.Goto, c_ast.Label, c_ast.Switch)) and self._contains_sync(n):
                raise Refuse("XP-RECOVER-002", f"{type(n).__name__.lower()} around a barrier is not supported", n)
            if isinstance(n, c_ast.Goto):
                raise Refuse("XP-RECOVER-002", "goto in a kernel is not supported", n, "goto")
            if isinstance(n, c_ast.PtrDecl) and "__xp_ref" in (n.quals or []):
                raise Refuse("XP-RECOVER-002", "C++ references in kernels are not supported", n, "&")

    def _privatize_modified_params(self) -> None:
        """A parameter the kernel assigns (``A += blockIdx.y * BK * K;``) is each thread's own
        copy on the device; the lifted threads share the function's parameters, so such a
        parameter becomes a local initialised from a renamed parameter (and is then a
        per-thread variable like any other local)."""
        written = set()
        for n in walk(self.fd.body):
            if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
                written.add(n.lvalue.name)
            elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&") and \
                    isinstance(n.expr, c_ast.ID):
                written.add(n.expr.name)
        args = self.fd.decl.type.args
        copies = []
        for p in (args.params if args else []):
            if not (isinstance(p, c_ast.Decl) and p.name in written) or isinstance(p.type, c_ast.ArrayDecl):
                continue
            local = copy.deepcopy(p)
            renamed = self.fresh(f"param_{p.name}_")
            p.name = renamed
            set_declname(p.type, renamed)
            local.init = ID(renamed)
            copies.append(local)
        if copies:
            self.fd.body.block_items = copies + list(self.fd.body.block_items or [])

    def _param_names(self) -> list[str]:
        out = []
        args = self.fd.decl.type.args
        for p in (args.params if args else []):
            if isinstance(p, c_ast.Decl) and p.name:
                out.append(p.name)
                self.types[p.name] = p.type
        return out

    # -- inlining of collective device functions ------------------------------------
    def _inline_block(self, items, depth):
        out = []
        for s in items:
            s = self._inline_nested(s, depth)
            pre: list = []
            s = self._hoist_calls(s, pre, depth)
            out.extend(pre)
            if s is not None:
                out.append(s)
        return out

    def _inline_nested(self, s, depth):
        if isinstance(s, c_ast.Compound):
            s.block_items = self._inline_block(s.block_items or [], depth)
        elif isinstance(s, c_ast.If):
            s.iftrue = self._as_block(s.iftrue, depth)
            if s.iffalse is not None:
                s.iffalse = self._as_block(s.iffalse, depth)
        elif isinstance(s, (c_ast.For, c_ast.While, c_ast.DoWhile)):
            s.stmt = self._as_block(s.stmt, depth)
            for part in ("init", "cond", "next"):
                e = getattr(s, part, None)
                if e is not None and self._inline_calls_in(e):
                    raise Refuse("XP-RECOVER-002", "a call of a synchronising device function in a loop "
                                 "header cannot be inlined", e)
        return s

    def _as_block(self, s, depth):
        if s is None:
            return None
        if isinstance(s, c_ast.Compound):
            s.block_items = self._inline_block(s.block_items or [], depth)
            return s
        items = self._inline_block([s], depth)
        return items[0] if len(items) == 1 else block(items)

    def _inline_calls_in(self, e) -> list:
        return [n for n in walk(e) if call_name(n) in self.info.inline]

    def _hoist_calls(self, s, pre, depth):
        if isinstance(s, c_ast.If):
            target = s.cond
        elif isinstance(s, (c_ast.Compound, c_ast.For, c_ast.While, c_ast.DoWhile)):
            return s
        else:
            target = s
        if not self._inline_calls_in(target):
            return s
        if depth > 16:
            raise Refuse("XP-RECOVER-002", "device functions nest too deeply to inline", s)
        for n in walk(target):
            if isinstance(n, c_ast.TernaryOp) or (isinstance(n, c_ast.BinaryOp) and n.op in ("&&", "||")):
                if any(call_name(m) in self.info.inline for m in walk(n)):
                    raise Refuse("XP-RECOVER-002", "a synchronising device function is called under a "
                                 "conditional operator", n)

        def fn(node):
            name = call_name(node)
            if name not in self.info.inline:
                return node
            return self._inline_one(node, pre, depth)

        new = transform(target, fn)
        if isinstance(s, c_ast.If):
            s.cond = new
            return s
        if isinstance(s, c_ast.Return) and s.expr is None:
            return s
        if isinstance(new, c_ast.ID) and new.name.startswith("xp_ret") and not isinstance(s, c_ast.Decl):
            return None                          # value of a call statement is unused
        return new

    def _inline_one(self, call, pre, depth):
        fd = self.info.funcs[call.name.name]
        body = copy.deepcopy(fd.body.block_items or [])
        ret_type = fd.decl.type.type
        void = base_names(ret_type) == ["void"] and not isinstance(ret_type, c_ast.PtrDecl)
        ret = self.fresh("ret")
        params = fd.decl.type.args.params if fd.decl.type.args else []
        args = call.args.exprs if call.args else []
        if len([p for p in params if isinstance(p, c_ast.Decl)]) != len(args):
            raise Refuse("XP-RECOVER-002", f"call of {call.name.name} with default arguments", call)
        items = []
        for p, a in zip(params, args):
            d = copy.deepcopy(p)
            if any(isinstance(n, c_ast.PtrDecl) and "__xp_ref" in (n.quals or []) for n in walk(d.type)):
                body = _bind_reference(d.name, a, body, call)
                continue
            if isinstance(d.type, c_ast.ArrayDecl):
                d.type = c_ast.PtrDecl([], d.type.type)
            d.init = a
            items.append(d)
        body = self._returns_at_tail(body, call.name.name)
        body = self._assign_returns(body, ret, void)
        items.extend(body)
        if not void:
            t = strip_quals(ret_type)
            set_declname(t, ret)
            pre.append(c_ast.Decl(ret, [], [], [], [], t, None, None))
        pre.append(block(self._inline_block(items, depth + 1)))
        return ID(ret)

    def _returns_at_tail(self, items, fname):
        """``items`` with every ``return`` in a tail position: ``if (c) { A; return x; } B;``
        becomes ``if (c) { A; return x; } else { B; }`` (statements after an ``if`` that returns
        on one path move into the other path; copied into both when neither path always
        returns). The ``if`` keeps its condition, so the lift later decides whether the split
        is legal: a block-uniform condition (``blockDim.x == WARP_SIZE``) splits the barrier
        phases, a thread-dependent one before a barrier is refused (the ids of these ``if``s
        are kept for that message)."""
        items = list(items)
        for i, s in enumerate(items):
            if not any(isinstance(n, c_ast.Return) for n in walk(s)):
                continue
            if isinstance(s, c_ast.Return):
                return items[:i + 1]                 # what follows is dead
            if isinstance(s, c_ast.Compound) and i == len(items) - 1:
                s.block_items = self._returns_at_tail(s.block_items or [], fname)
                return items
            if not isinstance(s, c_ast.If):
                raise Refuse("XP-RECOVER-002", f"{fname}: early return inside a {type(s).__name__.lower()} "
                             "of a synchronising device function", s)
            rest = items[i + 1:]
            t = self._returns_at_tail(_items(s.iftrue), fname)
            f = self._returns_at_tail(_items(s.iffalse), fname)
            if rest:
                t_ends, f_ends = _always_returns(t), _always_returns(f)
                if not t_ends:
                    if not f_ends:
                        self.return_copies += 1
                        if self.return_copies > 8:
                            raise Refuse("XP-RECOVER-002", f"{fname}: too many early returns in a "
                                         "synchronising device function", s)
                    t = self._returns_at_tail(t + (copy.deepcopy(rest) if not f_ends else rest), fname)
                if not f_ends:
                    f = self._returns_at_tail(f + rest, fname)
            new = c_ast.If(s.cond, block(t), block(f) if f else None, s.coord)
            if rest:
                self.early_return_ifs[id(new)] = fname
            return items[:i] + [new]
        return items

    @staticmethod
    def _assign_returns(items, ret, void):
        """Tail ``return e;`` statements (see ``_returns_at_tail``) -> ``ret = e;``."""
        items = list(items)
        if not items:
            return items
        last = items[-1]
        if isinstance(last, c_ast.Return):
            items.pop()
            if last.expr is not None:
                if void:
                    raise Refuse("XP-RECOVER-002", "return value in a void function", last)
                items.append(c_ast.Assignment("=", ID(ret), last.expr))
        elif isinstance(last, c_ast.Compound):
            last.block_items = KernelLift._assign_returns(last.block_items or [], ret, void)
        elif isinstance(last, c_ast.If) and any(isinstance(n, c_ast.Return) for n in walk(last)):
            last.iftrue = block(KernelLift._assign_returns(_items(last.iftrue), ret, void))
            if last.iffalse is not None:
                last.iffalse = block(KernelLift._assign_returns(_items(last.iffalse), ret, void))
        return items

    # -- renaming: every local gets a unique name ---------------------------------------
    def _alpha_rename(self):
        used = set(self.params) | {self.name}
        scopes = [{p: p for p in self.params}]

        def lookup(name):
            for sc in reversed(scopes):
                if name in sc:
                    return sc[name]
            return None

        def declare(d):
            name = d.name
            new = name
            k = 0
            while new in used:
                k += 1
                new = f"{name}_{k}"
            used.add(new)
            scopes[-1][name] = new
            if new != name:
                d.name = new
                set_declname(d.type, new)

        def visit(n):
            if n is None:
                return
            if isinstance(n, c_ast.Compound):
                scopes.append({})
                for it in n.block_items or []:
                    visit(it)
                scopes.pop()
                return
            if isinstance(n, c_ast.For):
                scopes.append({})
                for part in (n.init, n.cond, n.next, n.stmt):
                    visit(part)
                scopes.pop()
                return
            if isinstance(n, c_ast.Decl):
                visit(n.type)
                if n.init is not None:
                    visit(n.init)
                if n.name and not isinstance(n.type, c_ast.FuncDecl):
                    declare(n)
                return
            if isinstance(n, c_ast.ID):
                new = lookup(n.name)
                if new:
                    n.name = new
                return
            for name, child in n.children():
                if isinstance(n, c_ast.StructRef) and name == "field":
                    continue
                visit(child)

        visit(self.fd.body)

    # -- declarations ---------------------------------------------------------------------
    def _collect_decls(self):
        self.locals: set[str] = set()
        self.modified: set[str] = set()
        kill = []
        self.const_locals: dict[str, c_ast.Node] = {}
        for n in walk(self.fd.body):
            if isinstance(n, c_ast.Decl) and n.name and not isinstance(n.type, c_ast.FuncDecl):
                self.types[n.name] = n.type
                storage = n.storage or []
                names = base_names(n.type) or []
                if isinstance(n.type, c_ast.TypeDecl) and n.init is not None and \
                        ("constexpr" in storage or "const" in (n.type.quals or [])) and \
                        not isinstance(n.init, c_ast.InitList):
                    self.const_locals[n.name] = n.init
                if "__shared__" in storage:
                    self._hoisted_dims(n)
                    self._shared_decl(n)
                    kill.append(n)
                elif names and names[0].startswith(("nvcuda::wmma::fragment", "wmma::fragment", "fragment<")):
                    self._fragment_decl(n, names[0])
                    kill.append(n)
                else:
                    self.locals.add(n.name)
            if isinstance(n, c_ast.Assignment):
                b = lvalue_base(n.lvalue)
                if b and isinstance(n.lvalue, c_ast.ID):
                    self.modified.add(b)
            if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
                if isinstance(n.expr, c_ast.ID):
                    self.modified.add(n.expr.name)
            if isinstance(n, c_ast.FuncCall):
                # a local bound to a reference parameter (``merge(m, d, v)`` with ``float &m``)
                # is written by the call
                self.modified.update(a.name for a in self._reference_arguments(n)
                                     if isinstance(a, c_ast.ID))
        if kill:
            ids = {id(k) for k in kill}
            self._drop(self.fd.body, ids)

    def _reference_arguments(self, call) -> list:
        """The arguments of ``call`` (a function of this file) bound to reference parameters."""
        fd = self.info.funcs.get(call.name.name) if isinstance(call.name, c_ast.ID) else None
        if fd is None or call.args is None or fd.decl.type.args is None:
            return []
        return [a for p, a in zip(fd.decl.type.args.params, call.args.exprs)
                if isinstance(p, c_ast.Decl) and
                any(isinstance(t, c_ast.PtrDecl) and "__xp_ref" in (t.quals or []) for t in walk(p.type))]

    def _drop(self, node, ids):
        for n in walk(node):
            if isinstance(n, c_ast.Compound) and n.block_items:
                n.block_items = [x for x in n.block_items if id(x) not in ids]

    def _hoisted_dims(self, d):
        """Array bounds of a declaration moved to the top of the block body (``__shared__``) may
        name constant locals of the scope it leaves (``constexpr int max_warps = 1024 / 32;
        __shared__ float s[max_warps];``): the bound takes their initialisers instead."""
        t = d.type
        while isinstance(t, (c_ast.ArrayDecl, c_ast.PtrDecl)):
            if isinstance(t, c_ast.ArrayDecl) and t.dim is not None:
                t.dim = self._const_subst(t.dim, 0)
            t = t.type

    def _const_subst(self, e, depth):
        if depth > 16:
            return e

        def fn(node):
            if isinstance(node, c_ast.ID) and node.name in self.const_locals:
                init = self._const_subst(copy.deepcopy(self.const_locals[node.name]), depth + 1)
                if any(isinstance(m, c_ast.ID) and m.name in self.locals for m in walk(init)) or \
                        not self.is_uniform(init, pure=True):
                    raise Refuse("XP-RECOVER-002", f"the size of a __shared__ array depends on "
                                 f"'{node.name}', which is not a constant", node, node.name)
                return init
            return node

        return transform(e, fn)

    def _shared_decl(self, d):
        self.block_vars.add(d.name)
        if "extern" in (d.storage or []) or (isinstance(d.type, c_ast.ArrayDecl) and d.type.dim is None):
            elem = strip_quals(d.type.type if isinstance(d.type, c_ast.ArrayDecl) else d.type)
            set_declname(elem, d.name)
            ptr = c_ast.PtrDecl([], elem)
            cast = c_ast.Cast(c_ast.Typename(None, [], None, c_ast.PtrDecl([], _anon(elem))), ID("xp_dyn"))
            self.dyn_shared.append(c_ast.Decl(d.name, [], [], [], [], ptr, cast, None))
            return
        if d.init is not None:
            raise Refuse("XP-RECOVER-002", "initialised __shared__ variable", d)
        new = c_ast.Decl(d.name, [], d.align, [], [], strip_quals(d.type), None, None,
                         attributes=[])
        self.block_decls.append(new)

    def _fragment_decl(self, d, spelling):
        facts = self.info.program.facts.get("cxx_types", {}).get(spelling)
        if not facts:
            raise Refuse("XP-RECOVER-002", f"unknown fragment type {spelling}", d)
        a = facts["args"]
        use = short(a[0])
        consts = self.info.program.facts.get("constants", {})
        try:
            m, n, k = (int(consts.get(x, x)) for x in a[1:4])
        except ValueError:
            raise Refuse("XP-RECOVER-002", f"fragment shape {a[1:4]} is not a compile-time constant", d) from None
        t = a[4]
        layout = short(a[5]) if len(a) > 5 else None
        if t not in ("half", "__half", "float"):
            raise Refuse("XP-RECOVER-002", f"wmma fragment element type {t} is not supported", d, t)
        t = "half" if t == "__half" else t
        try:
            rows, cols, ne = S.wmma_shape(m, n, k, use)
        except KeyError:
            raise Refuse("XP-RECOVER-002", f"wmma shape m{m}n{n}k{k} ({use}) is not in wmma.toml", d) from None
        dims = []
        t_decl = d.type
        while isinstance(t_decl, c_ast.ArrayDecl):
            dims.append(t_decl.dim)
            t_decl = t_decl.type
        self.fragments[d.name] = dict(use=use, m=m, n=n, k=k, t=t, layout=layout, rows=rows, cols=cols,
                                      ne=ne, depth=len(dims))
        self.block_vars.add(d.name)
        self.block_decls.append(mkdecl(d.name, [t], None, [ID("xp_nw")] + dims + [const(rows), const(cols)]))

    # -- uniformity ---------------------------------------------------------------------
    def thread_var(self, name) -> bool:
        return name in self.locals and name not in self.block_vars

    def is_uniform(self, e, pure=False) -> bool:
        for n in walk(e):
            if is_builtin_ref(n, {"threadIdx"}):
                return False
            if isinstance(n, c_ast.ID) and (n.name == "threadIdx" or self.thread_var(n.name)):
                return False
            cn = call_name(n)
            if cn and (cn in S.ATOMICS or cn in S.collectives(self.platform) or cn.startswith("__builtin_amdgcn")
                       or cn in ("__lane_id", "__activemask")
                       or cn in BARRIERS or short(cn) in WMMA_OPS or cn == "rand"):
                return False
            if isinstance(n, c_ast.Assignment) or (isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--")):
                return False
            if pure and (isinstance(n, c_ast.ArrayRef) or (isinstance(n, c_ast.UnaryOp) and n.op == "*")):
                return False
        return True

    def _uniform_decl(self, s) -> bool:
        if not isinstance(s, c_ast.Decl) or s.name is None or s.init is None:
            return False
        if not isinstance(s.type, (c_ast.TypeDecl, c_ast.PtrDecl)) or isinstance(s.init, c_ast.InitList):
            return False
        if s.name in self.modified or s.storage:
            return False
        if not self.is_uniform(s.init, pure=True):
            return False
        self.block_vars.add(s.name)
        return True

    # -- sync points ---------------------------------------------------------------------
    def _is_collective_call(self, n) -> bool:
        cn = call_name(n)
        return bool(cn) and (cn in S.collectives(self.platform) or short(cn) in WMMA_OPS
                             or cn.startswith("__builtin_amdgcn_mfma"))

    def _contains_sync(self, s) -> bool:
        return any(call_name(n) in BARRIERS or self._is_collective_call(n) for n in walk(s))

    # -- the lift proper ----------------------------------------------------------------
    def _lift_seq(self, items, pred: str | None = None) -> list:
        """Block-level statements for ``items``; ``pred`` names the per-thread predicate array
        of an enclosing thread-dependent ``if`` (only warp collectives may sit under one)."""
        out, run = [], []
        self.pred = pred

        def flush():
            if run:
                stmts = list(run)
                if pred:
                    stmts = [c_ast.If(c_ast.ArrayRef(ID(pred), ID("xp_tid")), block(stmts), None)]
                out.append(self._region("thread", stmts))
                run.clear()

        for s in items:
            if isinstance(s, c_ast.Pragma) and "unroll" in (s.string or ""):
                continue
            if call_name(s) in BARRIERS:
                if pred and call_name(s) == "__syncthreads":
                    raise Refuse("XP-RECOVER-001", "__syncthreads under a thread-dependent condition", s,
                                 "__syncthreads")
                flush()
                continue
            if pred is None and self._uniform_decl(s):
                out.append(s)
                continue
            if short(call_name(s)) in WMMA_OPS:
                flush()
                out.append(self._region("warp", self._guard([self._wmma(s)], pred)))
                continue
            if self._contains_sync(s) and isinstance(s, (c_ast.Compound, c_ast.For, c_ast.While,
                                                          c_ast.DoWhile, c_ast.If)):
                flush()
                out.extend(self._lift_construct(s, pred, run))
                self.pred = pred
                continue
            if self._contains_sync(s):
                if any(call_name(n) in BARRIERS or short(call_name(n)) in WMMA_OPS for n in walk(s)):
                    raise Refuse("XP-RECOVER-002", "a barrier or wmma call inside an expression", s)
                consumer, deposits, ops = self._exchange(s)
                run.extend(deposits)
                flush()
                for op in ops:
                    out.append(self._region("warp", self._guard([op], pred)))
                run.append(consumer)
                continue
            run.append(s)
        flush()
        return out

    @staticmethod
    def _guard(stmts, pred):
        """A warp operation under a (warp-uniform) predicate runs when lane 0's predicate holds."""
        if not pred:
            return stmts
        return [c_ast.If(c_ast.ArrayRef(ID(pred), ID("xp_tid")), block(stmts), None)]

    def _region(self, kind, stmts):
        r = Region(kind, stmts, len(self.regions))
        self.regions.append(r)
        return _RegionStmt(r)

    def _lift_construct(self, s, pred, run) -> list:
        if isinstance(s, c_ast.Compound):
            return [block(self._lift_seq(s.block_items or [], pred))]
        if isinstance(s, c_ast.If):
            if not self.is_uniform(s.cond) or pred:
                return self._predicated_if(s, pred)
            t = block(self._lift_seq(_items(s.iftrue), pred))
            f = block(self._lift_seq(_items(s.iffalse), pred)) if s.iffalse is not None else None
            return [c_ast.If(s.cond, t, f)]
        if isinstance(s, c_ast.For):
            loop_vars = []
            inits = []
            if isinstance(s.init, c_ast.DeclList):
                for d in s.init.decls:
                    loop_vars.append(d.name)
                    if d.init is not None:
                        inits.append(d.init)
            elif s.init is not None:
                inits.append(s.init)
                b = lvalue_base(s.init.lvalue) if isinstance(s.init, c_ast.Assignment) else None
                if b:
                    loop_vars.append(b)
            uniform = all(self.is_uniform(e) for e in inits) and not pred
            added = [v for v in loop_vars if v not in self.block_vars]
            self.block_vars.update(added)
            uniform = uniform and all(self._header_uniform(part, loop_vars) for part in (s.cond, s.next)
                                      if part is not None)
            for n in walk(s.stmt):
                if isinstance(n, c_ast.Assignment) and lvalue_base(n.lvalue) in loop_vars and \
                        isinstance(n.lvalue, c_ast.ID):
                    uniform = False
                if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and \
                        isinstance(n.expr, c_ast.ID) and n.expr.name in loop_vars:
                    uniform = False
            if not uniform:
                self.block_vars.difference_update(added)
                return self._predicated_loop(s, pred)
            body = block(self._lift_seq(_items(s.stmt), pred))
            return [c_ast.For(s.init, s.cond, s.next, body)]
        if isinstance(s, c_ast.While):
            if pred or not self.is_uniform(s.cond):
                return self._predicated_loop(s, pred)
            return [c_ast.While(s.cond, block(self._lift_seq(_items(s.stmt), pred)))]
        if isinstance(s, c_ast.DoWhile):
            self._need_uniform(s.cond, s, "do-while")
            return [c_ast.DoWhile(s.cond, block(self._lift_seq(_items(s.stmt), pred)))]
        raise Refuse("XP-RECOVER-002", f"barrier inside {type(s).__name__}", s)

    def _header_uniform(self, e, loop_vars) -> bool:
        for n in walk(e):
            if is_builtin_ref(n, {"threadIdx"}) or (isinstance(n, c_ast.ID) and self.thread_var(n.name)):
                return False
            cn = call_name(n)
            if cn and (cn in S.ATOMICS or self._is_collective_call(n)):
                return False
            if isinstance(n, c_ast.Assignment) and not (isinstance(n.lvalue, c_ast.ID) and n.lvalue.name in loop_vars):
                return False
            if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and \
                    not (isinstance(n.expr, c_ast.ID) and n.expr.name in loop_vars):
                return False
        return True

    def _predicated_loop(self, s, pred) -> list:
        """A thread-dependent loop around warp collectives (e.g. ``for (m = warp; m < M; m += 8)``
        with shuffles or ``__syncwarp`` inside): every thread keeps its own counter and its own
        predicate; the block repeats the body while any thread is still active. Threads whose
        predicate is false do not take part in the collectives of that trip."""
        if any(call_name(n) == "__syncthreads" for n in walk(s)):
            raise Refuse("XP-RECOVER-001", "__syncthreads in a loop with a thread-dependent condition", s,
                         type(s).__name__.lower())
        if _escapes(s.stmt):
            raise Refuse("XP-RECOVER-002", "break/continue in a loop with warp collectives and a "
                         "thread-dependent condition", s)
        out = []
        init = []
        if isinstance(s, c_ast.For) and s.init is not None:
            init = list(s.init.decls) if isinstance(s.init, c_ast.DeclList) else [s.init]
        if init:
            stmts = init
            if pred:
                stmts = [c_ast.If(c_ast.ArrayRef(ID(pred), ID("xp_tid")), block(init), None)] \
                    if not any(isinstance(x, c_ast.Decl) for x in init) else init
            out.append(self._region("thread", stmts))
        p = self.fresh("p")
        anyv = self.fresh("any")
        self.block_decls.append(mkdecl(p, ["unsigned", "char"], None, [ID("xp_np")]))
        self.block_decls.append(mkdecl(anyv, ["int"], const(0)))
        self.block_vars.update({p, anyv})
        cond = s.cond if s.cond is not None else const(1)
        c = c_ast.BinaryOp("!=", cond, const(0))
        if pred:
            c = c_ast.BinaryOp("&&", c_ast.ArrayRef(ID(pred), ID("xp_tid")), c)
        test = self._region("thread", [
            c_ast.Assignment("=", c_ast.ArrayRef(ID(p), ID("xp_tid")), c),
            c_ast.If(c_ast.ArrayRef(ID(p), ID("xp_tid")), c_ast.Assignment("=", ID(anyv), const(1)), None)])
        body = [c_ast.Assignment("=", ID(anyv), const(0)), test,
                c_ast.If(c_ast.UnaryOp("!", ID(anyv)), c_ast.Break(), None)]
        body += self._lift_seq(_items(s.stmt), p)
        self.pred = pred
        if isinstance(s, c_ast.For) and s.next is not None:
            body.append(self._region("thread", [
                c_ast.If(c_ast.ArrayRef(ID(p), ID("xp_tid")), s.next, None)]))
        out.append(c_ast.While(const(1), block(body)))
        return out

    def _predicated_if(self, s, pred) -> list:
        """A thread-dependent ``if`` around warp collectives (e.g. ``if (threadIdx.x < 32)`` before
        a shuffle reduction): the condition is stored per thread, both branches are lifted with it
        as predicate; threads outside it do not take part in the shuffles (own-value rule)."""
        # __syncwarp under a thread-dependent (warp-uniform) condition splits the predicated
        # regions like a collective does (``_lift_seq``); a block barrier there is refused
        if any(call_name(n) == "__syncthreads" for n in walk(s)) or \
                (id(s) in self.early_return_ifs and any(call_name(n) in BARRIERS for n in walk(s))):
            if id(s) in self.early_return_ifs:
                raise Refuse("XP-RECOVER-001", f"{self.early_return_ifs[id(s)]}: early return under a "
                             "thread-dependent condition before a barrier (threads of one block would "
                             "not all reach it)", s, "return")
            raise Refuse("XP-RECOVER-001", "barrier under a thread-dependent if condition", s, "if")
        out = []
        branches = [(s.iftrue, False)] + ([(s.iffalse, True)] if s.iffalse is not None else [])
        conds = {}
        for _, neg in branches:
            p = self.fresh("p")
            self.block_decls.append(mkdecl(p, ["unsigned", "char"], None, [ID("xp_np")]))
            self.block_vars.add(p)
            conds[neg] = p
        # evaluate the condition once per thread (under the enclosing predicate)
        cond = copy.deepcopy(s.cond)
        setp = []
        for neg, p in conds.items():
            c = c_ast.UnaryOp("!", c_ast.BinaryOp("!=", cond, const(0))) if neg else \
                c_ast.BinaryOp("!=", cond, const(0))
            if pred:
                c = c_ast.BinaryOp("&&", c_ast.ArrayRef(ID(pred), ID("xp_tid")), c)
            setp.append(c_ast.Assignment("=", c_ast.ArrayRef(ID(p), ID("xp_tid")), c))
        if len(setp) == 2:      # both from one evaluation of the condition
            setp[1] = c_ast.Assignment("=", c_ast.ArrayRef(ID(conds[True]), ID("xp_tid")), c_ast.BinaryOp(
                "&&", c_ast.ArrayRef(ID(pred), ID("xp_tid")) if pred else const(1),
                c_ast.UnaryOp("!", c_ast.ArrayRef(ID(conds[False]), ID("xp_tid")))))
        out.append(self._region("thread", setp))
        for branch, neg in branches:
            out.extend(self._lift_seq(_items(branch), conds[neg]))
        self.pred = pred
        return out

    def _need_uniform(self, e, s, what):
        if not self.is_uniform(e):
            raise Refuse("XP-RECOVER-001", f"barrier or warp collective under a thread-dependent {what} "
                         "condition", s, what)

    def _need_uniform_header(self, e, s, loop_vars):
        for n in walk(e):
            if isinstance(n, c_ast.Assignment) and lvalue_base(n.lvalue) in loop_vars:
                if not self.is_uniform(n.rvalue):
                    raise Refuse("XP-RECOVER-001", "loop with a barrier has a thread-dependent step", s)
                continue
        probe = copy.deepcopy(e)
        ok = True
        for n in walk(probe):
            if is_builtin_ref(n, {"threadIdx"}) or (isinstance(n, c_ast.ID) and self.thread_var(n.name)):
                ok = False
            cn = call_name(n)
            if cn and (cn in S.ATOMICS or self._is_collective_call(n)):
                ok = False
        if not ok:
            raise Refuse("XP-RECOVER-001", "barrier or warp collective under a thread-dependent loop condition",
                         s, "for")

    # -- shuffles and MFMA: exchange through per-thread arrays ---------------------------
    def _exchange(self, s):
        if not isinstance(s, (c_ast.Assignment, c_ast.FuncCall, c_ast.Decl, c_ast.UnaryOp, c_ast.BinaryOp,
                              c_ast.Cast)):
            raise Refuse("XP-RECOVER-002", f"warp collective inside a {type(s).__name__} statement", s)
        for n in walk(s):
            if isinstance(n, c_ast.TernaryOp) or (isinstance(n, c_ast.BinaryOp) and n.op in ("&&", "||")):
                if any(self._is_collective_call(m) for m in walk(n)):
                    raise Refuse("XP-RECOVER-002", "warp collective under a conditional operator", n)
        deposits, ops = [], []
        replaced = {}
        for n in walk(s):
            if not self._is_collective_call(n):
                continue
            args = n.args.exprs if n.args else []
            if any(self._is_collective_call(m) for a in args for m in walk(a)):
                raise Refuse("XP-RECOVER-002", "nested warp collectives", n)
            cn = call_name(n)
            if cn in S.SHUFFLES[self.platform]:
                replaced[id(n)] = self._shuffle(n, cn, args, deposits)
            elif cn in S.VOTES[self.platform]:
                replaced[id(n)] = self._vote(n, cn, args, deposits)
            elif cn in S.REDUCES[self.platform]:
                replaced[id(n)] = self._warp_reduce(n, cn, args, deposits)
            else:
                replaced[id(n)] = self._mfma(n, cn, args, deposits, ops)

        def fn(node):
            return replaced.get(id(node), node)

        consumer = transform(s, fn)
        return consumer, deposits, ops

    def _shuffle(self, n, cn, args, deposits):
        kind = S.SHUFFLES[self.platform][cn]
        rest = args[1:] if S.with_mask(cn) else args
        if len(rest) < 2:
            raise Refuse("XP-RECOVER-002", f"{cn} with too few arguments", n)
        value, arg = rest[0], rest[1]
        width = rest[2] if len(rest) > 2 else const(self.W)
        t = self.infer(value)
        if t is None:
            raise Refuse("XP-RECOVER-002", f"cannot infer the type of the value shuffled by {cn}", n, cn)
        buf = self.fresh("shv")
        self.block_decls.append(mkdecl(buf, t.split(), None, [ID("xp_np")]))
        self.block_vars.add(buf)
        deposits.append(c_ast.Assignment("=", c_ast.ArrayRef(ID(buf), ID("xp_tid")), value))
        pick = c_ast.FuncCall(ID(f"xp_shfl_{kind}"), c_ast.ExprList(
            [ID("xp_tid"), ID("xp_nt"), c_ast.Cast(typename(["long", "long"]), arg),
             c_ast.Cast(typename(["long", "long"]), width), ID("xp_doneptr"),
             ID(self.pred) if self.pred else _null_uchar()]))
        self.helpers[f"xp_shfl_src_{kind}"] = S.shuffle_source_fn(self.platform, kind)
        self.helpers[f"xp_shfl_{kind}"] = S.shuffle_pick_fn(self.platform, kind)
        return c_ast.ArrayRef(ID(buf), pick)

    def _vote(self, n, cn, args, deposits):
        """Warp vote: each thread deposits its predicate; the reader builds the ballot of the
        lanes of its warp that take part (existing, not exited, inside the thread-dependent
        condition around the vote), as on the virtual device."""
        kind = S.VOTES[self.platform][cn]
        block_wide = kind in ("bcount", "band", "bor")
        rest = args[1:] if S.with_mask(cn) and not block_wide else args
        if len(rest) != 1:
            raise Refuse("XP-RECOVER-002", f"{cn} with unexpected arguments", n, cn)
        buf = self.fresh("vote")
        self.block_decls.append(mkdecl(buf, ["unsigned", "char"], None, [ID("xp_np")]))
        self.block_vars.add(buf)
        deposits.append(c_ast.Assignment("=", c_ast.ArrayRef(ID(buf), ID("xp_tid")),
                                         c_ast.BinaryOp("!=", rest[0], const(0))))
        if block_wide:                        # __syncthreads_count / _and / _or
            self.helpers["xp_block_vote"] = S.block_vote_fn()

            def count(live_only):
                return c_ast.FuncCall(ID("xp_block_vote"), c_ast.ExprList(
                    [ID(buf), ID("xp_nt"), ID("xp_doneptr"), ID(self.pred) if self.pred else _null_uchar(),
                     const(live_only)]))

            if kind == "bcount":
                return count(0)
            if kind == "bor":
                return c_ast.BinaryOp("!=", count(0), const(0))
            return c_ast.BinaryOp("==", count(0), count(1))
        self.helpers["xp_vote_mask"] = S.vote_mask_fn(self.platform)

        def mask(live_only):
            return c_ast.FuncCall(ID("xp_vote_mask"), c_ast.ExprList(
                [ID(buf), ID("xp_tid"), ID("xp_nt"), ID("xp_doneptr"),
                 ID(self.pred) if self.pred else _null_uchar(), const(live_only)]))

        if kind == "ballot":
            return mask(0)
        if kind == "any":
            return c_ast.BinaryOp("!=", mask(0), const(0))
        return c_ast.BinaryOp("==", mask(0), mask(1))

    def _warp_reduce(self, n, cn, args, deposits):
        """``__reduce_<op>_sync(mask, v)``: each thread deposits its value (converted to the
        overload's type); the reader folds the lanes of its warp that take part (in the mask,
        not exited, inside the thread-dependent condition around the call), as on the virtual
        device."""
        if len(args) != 2:
            raise Refuse("XP-RECOVER-002", f"{cn} expects a mask and a value", n, cn)
        op = S.REDUCES[self.platform][cn]
        t = S.reduce_type(op, self.infer(args[1]))
        ct = ["unsigned", "int"] if t == "unsigned" else ["int"]
        buf = self.fresh("red")
        self.block_decls.append(mkdecl(buf, ct, None, [ID("xp_np")]))
        self.block_vars.add(buf)
        deposits.append(c_ast.Assignment("=", c_ast.ArrayRef(ID(buf), ID("xp_tid")),
                                         c_ast.Cast(typename(ct), args[1])))
        fn = f"xp_wreduce_{op}_{t}"
        self.helpers[fn] = S.reduce_fn(self.platform, op, t)
        return c_ast.FuncCall(ID(fn), c_ast.ExprList(
            [ID(buf), ID("xp_tid"), ID("xp_nt"), ID("xp_doneptr"), ID(self.pred) if self.pred else _null_uchar(),
             c_ast.Cast(typename(["unsigned", "long", "long"]), args[0])]))

    def _mfma(self, n, cn, args, deposits, ops):
        it = S.mfma_info(cn)
        if len(args) != 6:
            raise Refuse("XP-RECOVER-002", f"{cn} expects 6 arguments", n)
        for a in args[3:]:
            if not (isinstance(a, c_ast.Constant) and a.value.rstrip("uUlL") in ("0", "0x0")):
                raise Refuse("XP-RECOVER-002", f"{cn}: only cbsz = abid = blgp = 0 is supported", a)
        ae, ce = it["a_elems"], it["c_elems"]
        t = "_Float16" if it["in_elem"] == "_Float16" else "float"
        bufs = {}
        for role, cnt, ty in (("a", ae, t), ("b", ae, t), ("c", ce, "float"), ("d", ce, "float")):
            bufs[role] = self.fresh("mf" + role)
            self.block_decls.append(mkdecl(bufs[role], ty.split(), None, [ID("xp_np"), const(cnt)]))
            self.block_vars.add(bufs[role])
        for role, expr, cnt, ty in (("a", args[0], ae, t), ("b", args[1], ae, t), ("c", args[2], ce, "float")):
            dst = c_ast.ArrayRef(ID(bufs[role]), ID("xp_tid"))
            if cnt == 1:
                deposits.append(c_ast.Assignment("=", c_ast.ArrayRef(dst, const(0)), expr))
            else:
                vt = {("float", 4): "xp_f32x4", ("float", 16): "xp_f32x16", ("_Float16", 4): "xp_f16x4"}[(ty, cnt)]
                tmp = self.fresh("v")
                deposits.append(block([
                    mkdecl(tmp, [vt], expr),
                    c_ast.FuncCall(ID("memcpy"), c_ast.ExprList([dst, c_ast.UnaryOp("&", ID(tmp)),
                                                                 c_ast.UnaryOp("sizeof", ID(tmp))]))]))
        fn = "xp_" + cn.removeprefix("__builtin_amdgcn_")
        self.helpers[fn] = S.mfma_fn(cn)
        ops.append(c_ast.FuncCall(ID(fn), c_ast.ExprList([
            c_ast.ArrayRef(ID(bufs[r]), ID("xp_tid")) for r in ("a", "b", "c", "d")])))
        loader = {4: "xp_ld_f32x4", 16: "xp_ld_f32x16"}[ce]
        return c_ast.FuncCall(ID(loader), c_ast.ExprList([c_ast.ArrayRef(ID(bufs["d"]), ID("xp_tid"))]))

    # -- wmma ---------------------------------------------------------------------------
    def _frag(self, e):
        b = lvalue_base(e)
        if b not in self.fragments:
            raise Refuse("XP-RECOVER-002", "wmma operand is not a fragment variable", e)
        return self.fragments[b]

    def _wmma(self, s):
        op = short(call_name(s))
        a = s.args.exprs if s.args else []
        if op == "fill_fragment":
            f = self._frag(a[0])
            fn = f"xp_wmma_fill_{f['t']}_{f['rows']}x{f['cols']}"
            self.helpers[fn] = S.wmma_fill_fn(f["t"], f["rows"], f["cols"])
            return c_ast.FuncCall(ID(fn), c_ast.ExprList([a[0], a[1]]))
        if op == "load_matrix_sync":
            f = self._frag(a[0])
            if f["use"] == "accumulator":
                if len(a) < 4:
                    raise Refuse("XP-RECOVER-002", "accumulator load without a layout", s)
                col = self._mem_layout(a[3])
            else:
                col = 1 if f["layout"] == "col_major" else 0
            fn = f"xp_wmma_load_{f['t']}_{f['rows']}x{f['cols']}"
            self.helpers[fn] = S.wmma_load_fn(f["t"], f["rows"], f["cols"])
            return c_ast.FuncCall(ID(fn), c_ast.ExprList([a[0], a[1], a[2], const(col)]))
        if op == "store_matrix_sync":
            f = self._frag(a[1])
            layout = self._mem_layout(a[3]) if len(a) > 3 else 0
            fn = f"xp_wmma_store_{f['t']}_{f['m']}x{f['n']}"
            self.helpers[fn] = S.wmma_store_fn(f["t"], f["m"], f["n"])
            return c_ast.FuncCall(ID(fn), c_ast.ExprList([a[0], a[1], a[2], const(layout)]))
        d, fa, fb, fc = (self._frag(x) for x in a[:4])
        satf = a[4] if len(a) > 4 else const(0)
        fn = f"xp_wmma_mma_{d['t']}_{fa['t']}_{fb['t']}_{fc['t']}_{d['m']}x{d['n']}x{d['k']}"
        self.helpers["saturate"] = S.wmma_saturate(d["t"])
        self.helpers[fn] = S.wmma_mma_fn(d["t"], fa["t"], fb["t"], fc["t"], d["m"], d["n"], d["k"])
        return c_ast.FuncCall(ID(fn), c_ast.ExprList([a[0], a[1], a[2], a[3], satf]))

    @staticmethod
    def _mem_layout(e) -> int:
        name = short(e.name) if isinstance(e, c_ast.ID) else None
        if name == "mem_row_major":
            return 0
        if name == "mem_col_major":
            return 1
        raise Refuse("XP-RECOVER-002", "wmma layout must be mem_row_major or mem_col_major", e)

    # -- type inference (for exchange buffers) ---------------------------------------------
    def infer(self, e) -> str | None:
        if isinstance(e, c_ast.Constant):
            return {"float": "float", "double": "double", "int": "int", "char": "int",
                    "unsigned int": "unsigned int", "long int": "long", "unsigned long int": "unsigned long",
                    "long long int": "long long", "unsigned long long int": "unsigned long long"}.get(e.type, "int")
        if isinstance(e, c_ast.ID):
            t = self.types.get(e.name)
            return _type_text(t) if t is not None else None
        if isinstance(e, c_ast.ArrayRef):
            base = self.infer(e.name)
            return _deref(base)
        if isinstance(e, c_ast.UnaryOp):
            if e.op == "*":
                return _deref(self.infer(e.expr))
            if e.op in ("!",):
                return "int"
            if e.op == "sizeof":
                return "unsigned long"
            if e.op == "&":
                t = self.infer(e.expr)
                return t + " *" if t else None
            return _promote(self.infer(e.expr))
        if isinstance(e, c_ast.Cast):
            return _type_text(e.to_type.type)
        if isinstance(e, c_ast.BinaryOp):
            if e.op in ("<", ">", "<=", ">=", "==", "!=", "&&", "||"):
                return "int"
            a, b = self.infer(e.left), self.infer(e.right)
            if e.op in ("<<", ">>"):
                return _promote(a)
            return _arith(a, b)
        if isinstance(e, c_ast.TernaryOp):
            return _arith(self.infer(e.iftrue), self.infer(e.iffalse))
        if isinstance(e, c_ast.StructRef) and is_builtin_ref(e):
            return "unsigned int"
        if isinstance(e, c_ast.StructRef) and isinstance(e.field, c_ast.ID) and e.field.name in ("x", "y", "z", "w"):
            base = self.infer(e.name)           # a component of a CUDA vector (float2 a; a.x)
            if e.type == "->":
                base = _deref(base)
            base = (base or "").replace("const ", "").replace("volatile ", "").strip()
            if base in S.VECTOR_TYPES and "xyzw".index(e.field.name) < S.VECTOR_TYPES[base][1]:
                return S.VECTOR_TYPES[base][0]
        cn = call_name(e)
        if cn:
            if cn in FLOAT_FUNCS:
                return "float"
            if cn in DOUBLE_FUNCS:
                args = e.args.exprs if e.args else []
                return self.infer(args[0]) if args else None
            if cn in ("min", "max"):
                args = e.args.exprs
                return _arith(self.infer(args[0]), self.infer(args[1]))
            fd = self.info.funcs.get(cn)
            if fd is not None:
                return _type_text(fd.decl.type.type)
        return None

    # -- expansion of thread-private values live across regions ----------------------------
    def _expand(self):
        where: dict[str, set] = {}
        for r in self.regions:
            for st in r.stmts:
                for n in walk(st):
                    name = n.name if isinstance(n, (c_ast.ID, c_ast.Decl)) else None
                    if name and self.thread_var(name):
                        where.setdefault(name, set()).add(r.id)
        self.expanded = {v for v, rs in where.items() if len(rs) > 1}
        for v in sorted(self.expanded):
            t = strip_quals(self.types[v])
            if isinstance(t, c_ast.FuncDecl):
                continue
            set_declname(t, v)
            self.block_decls.append(c_ast.Decl(v, [], [], [], [], c_ast.ArrayDecl(t, ID("xp_np"), []), None, None))
        for r in self.regions:
            r.stmts = [self._expand_stmt(st) for st in r.stmts]

    def _expand_stmt(self, st):
        ex = self.expanded

        def fn(node):
            if isinstance(node, c_ast.ID) and node.name in ex:
                return c_ast.ArrayRef(ID(node.name), ID("xp_tid"))
            if isinstance(node, c_ast.Compound) and node.block_items:
                node.block_items = [self._decl_to_assign(x) for x in node.block_items]
            if isinstance(node, c_ast.DeclList):
                if any(d.name in ex for d in node.decls):
                    raise Refuse("XP-RECOVER-002", "loop variable live across a barrier", node)
            return node

        st = transform(st, fn)
        return self._decl_to_assign(st)

    def _decl_to_assign(self, x):
        if isinstance(x, c_ast.Decl) and x.name in self.expanded:
            if x.init is None:
                return c_ast.EmptyStatement()
            if isinstance(x.init, c_ast.InitList):
                return self._init_list(x)
            return c_ast.Assignment("=", c_ast.ArrayRef(ID(x.name), ID("xp_tid")), x.init)
        return x

    def _init_list(self, x):
        """``T v = {...}`` for a variable that became ``v[xp_tid]``: arrays element by element
        (rest zero), scalars and vectors through a compound literal."""
        dst = c_ast.ArrayRef(ID(x.name), ID("xp_tid"))
        if isinstance(x.type, c_ast.ArrayDecl):
            if any(isinstance(e, (c_ast.InitList, c_ast.NamedInitializer)) for e in x.init.exprs):
                raise Refuse("XP-RECOVER-002", f"nested initialiser of '{x.name}', which lives across a barrier", x)
            items = [c_ast.FuncCall(ID("memset"), c_ast.ExprList([dst, const(0), c_ast.UnaryOp("sizeof", dst)]))]
            items += [c_ast.Assignment("=", c_ast.ArrayRef(dst, const(i)), e) for i, e in enumerate(x.init.exprs)]
            return block(items)
        t = strip_quals(x.type)
        set_declname(t, None)
        return c_ast.Assignment("=", dst, c_ast.CompoundLiteral(c_ast.Typename(None, [], None, t), x.init, []))

    # -- assembly ----------------------------------------------------------------------------
    def _wrap_region(self, r: Region):
        stmts = list(r.stmts)
        label = f"xp_skip{r.id}"
        has_ret = False

        def fn(node):
            nonlocal has_ret
            if isinstance(node, c_ast.Return):
                has_ret = True
                items = []
                if self.has_return:
                    items.append(c_ast.Assignment("=", c_ast.ArrayRef(ID("xp_done"), ID("xp_tid")), const(1)))
                items.append(c_ast.Goto(label))
                return block(items)
            return node

        stmts = [transform(s, fn) for s in stmts]
        stmts = [self._builtins(s) for s in stmts]
        uses = {n.name for s in stmts for n in walk(s) if isinstance(n, c_ast.ID)}
        if r.kind == "warp":
            head = [mkdecl("xp_tid", ["unsigned", "int"], c_ast.BinaryOp("*", ID("xp_w"), const(self.W)),
                           quals=["const"]),
                    mkdecl("xp_wid", ["unsigned", "int"], ID("xp_w"), quals=["const"])]
            bx, by = _dim("xp_block", "x"), _dim("xp_block", "y")
            if "xp_tx" in uses:
                head.append(mkdecl("xp_tx", ["unsigned", "int"], c_ast.BinaryOp("%", ID("xp_tid"), bx), quals=["const"]))
            if "xp_ty" in uses:
                head.append(mkdecl("xp_ty", ["unsigned", "int"], c_ast.BinaryOp(
                    "%", c_ast.BinaryOp("/", ID("xp_tid"), bx), by), quals=["const"]))
            if "xp_tz" in uses:
                head.append(mkdecl("xp_tz", ["unsigned", "int"], c_ast.BinaryOp(
                    "/", ID("xp_tid"), c_ast.BinaryOp("*", bx, by)), quals=["const"]))
            return for_loop("xp_w", ID("xp_nw"), block(head + stmts))
        head = [mkdecl("xp_tid", ["unsigned", "int"], c_ast.BinaryOp("+", ID("xp_tx"), c_ast.BinaryOp(
            "*", _dim("xp_block", "x"), c_ast.BinaryOp("+", ID("xp_ty"), c_ast.BinaryOp(
                "*", _dim("xp_block", "y"), ID("xp_tz"))))), quals=["const"])]
        if self.has_return and r.id not in getattr(self, "_done_free", set()):
            head.append(c_ast.If(c_ast.ArrayRef(ID("xp_done"), ID("xp_tid")), c_ast.Continue(), None))
        if "xp_wid" in uses:
            head.append(mkdecl("xp_wid", ["unsigned", "int"], c_ast.BinaryOp("/", ID("xp_tid"), const(self.W)),
                               quals=["const"]))
        if "xp_lane" in uses:
            head.append(mkdecl("xp_lane", ["unsigned", "int"], c_ast.BinaryOp("%", ID("xp_tid"), const(self.W)),
                               quals=["const"]))
        if has_ret:       # the label follows the region's scope: the goto skips no initialisation
            stmts = [block(stmts), c_ast.Label(label, c_ast.EmptyStatement())]
        inner = for_loop("xp_tx", _dim("xp_block", "x"), block(head + stmts))
        body_x = [inner]
        if self.omp and self._simd_ok(stmts, has_ret):
            body_x = [c_ast.Pragma("omp simd"), inner]
        loop_y = for_loop("xp_ty", _dim("xp_block", "y"), block(body_x))
        return for_loop("xp_tz", _dim("xp_block", "z"), block([loop_y]))

    def _simd_ok(self, stmts, has_ret) -> bool:
        if has_ret or self.has_return:
            return False
        for s in stmts:
            for n in walk(s):
                if isinstance(n, (c_ast.Goto, c_ast.Label, c_ast.Break, c_ast.Return, c_ast.Pragma)):
                    if isinstance(n, c_ast.Break):
                        return False
                    return False
                cn = call_name(n)
                if cn and (cn in S.ATOMICS or cn.startswith("xp_") and not cn.startswith("xp_shfl")
                           or cn in ("printf", "malloc", "free", "memcpy")):
                    return False
                if isinstance(n, c_ast.Assignment):
                    b = lvalue_base(n.lvalue)
                    if isinstance(n.lvalue, c_ast.ID) and b in self.block_vars:
                        return False
                if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--") and \
                        isinstance(n.expr, c_ast.ID) and n.expr.name in self.block_vars:
                    return False
        return True

    def _builtins(self, st):
        W = self.W
        frags = self.fragments

        def fn(node):
            name = is_builtin_ref(node)
            if name == "threadIdx":
                return ID("xp_t" + node.field.name)
            if name == "blockIdx":
                return ID("xp_b" + node.field.name)
            if name in ("blockDim", "gridDim"):
                return _dim("xp_block" if name == "blockDim" else "xp_grid", node.field.name)
            if isinstance(node, c_ast.ID):
                if node.name == "warpSize":
                    return const(W)
                if node.name in frags:
                    return c_ast.ArrayRef(ID(node.name), ID("xp_wid"))
            if call_name(node) == "__activemask":
                self.helpers["xp_activemask"] = S.activemask_fn(self.platform)
                return c_ast.FuncCall(ID("xp_activemask"), c_ast.ExprList(
                    [ID("xp_tid"), ID("xp_nt"), ID("xp_doneptr")]))
            if call_name(node) == "__ldg":
                return c_ast.UnaryOp("*", node.args.exprs[0])
            if call_name(node) == "__lane_id":
                return c_ast.Cast(typename(["unsigned", "int"]), c_ast.BinaryOp("%", ID("xp_tid"), const(W)))
            # fragment element access: f.x[i] -> element lane*E + i of the warp's matrix
            if isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.StructRef) and \
                    node.name.field.name == "x" and lvalue_base(node.name.name) in frags:
                f = frags[lvalue_base(node.name.name)]
                flat = c_ast.UnaryOp("&", c_ast.ArrayRef(c_ast.ArrayRef(node.name.name, const(0)), const(0)))
                idx = c_ast.BinaryOp("+", c_ast.BinaryOp("*", ID("xp_lane"), const(f["ne"])), node.subscript)
                return c_ast.ArrayRef(flat, idx)
            if isinstance(node, c_ast.StructRef) and node.field.name == "num_elements" and \
                    lvalue_base(node.name) in frags:
                return const(frags[lvalue_base(node.name)]["ne"])
            return node

        return transform(st, fn)

    def _regions_before_any_return(self, lifted) -> set:
        """Ids of the regions that run before any thread can have returned: no region with a
        ``return`` precedes them in program order and no loop around them holds one. The
        ``xp_done`` flags are all zero there (memset before the first region), so their
        ``if (xp_done[xp_tid]) continue;`` test is dropped."""
        def regions(items):
            for s in items:
                for n in walk(s) if not isinstance(s, _RegionStmt) else [s]:
                    if isinstance(n, _RegionStmt):
                        yield n.region

        def returns(r) -> bool:
            return any(isinstance(n, c_ast.Return) for st in r.stmts for n in walk(st))

        free: set = set()
        seen_return = False

        def go(items, in_loop_with_return: bool):
            nonlocal seen_return
            for s in items:
                if isinstance(s, _RegionStmt):
                    if not seen_return and not in_loop_with_return:
                        free.add(s.region.id)
                    if returns(s.region):
                        seen_return = True
                    continue
                if isinstance(s, (c_ast.For, c_ast.While, c_ast.DoWhile)):
                    loop_ret = in_loop_with_return or any(returns(r) for r in regions([s.stmt]))
                    go(_items(s.stmt), loop_ret)
                elif isinstance(s, c_ast.Compound):
                    go(s.block_items or [], in_loop_with_return)
                elif isinstance(s, c_ast.If):
                    go(_items(s.iftrue), in_loop_with_return)
                    if s.iffalse is not None:
                        go(_items(s.iffalse), in_loop_with_return)
                elif any(isinstance(n, _RegionStmt) for n in walk(s)):
                    seen_return = True      # a construct not modelled here: keep every test
                    return
        go(lifted, False)
        return free

    def _assemble(self, lifted) -> c_ast.FuncDef:
        def place(items):
            out = []
            for s in items:
                if isinstance(s, _RegionStmt):
                    out.append(self._wrap_region(s.region))
                elif isinstance(s, c_ast.Compound):
                    out.append(block(place(s.block_items or [])))
                elif isinstance(s, c_ast.If):
                    out.append(c_ast.If(self._builtins(s.cond), block(place(_items(s.iftrue))),
                                        block(place(_items(s.iffalse))) if s.iffalse else None))
                elif isinstance(s, c_ast.For):
                    out.append(c_ast.For(self._builtins(s.init) if s.init else None,
                                         self._builtins(s.cond) if s.cond else None,
                                         self._builtins(s.next) if s.next else None,
                                         block(place(_items(s.stmt)))))
                elif isinstance(s, c_ast.While):
                    out.append(c_ast.While(self._builtins(s.cond), block(place(_items(s.stmt)))))
                elif isinstance(s, c_ast.DoWhile):
                    out.append(c_ast.DoWhile(self._builtins(s.cond), block(place(_items(s.stmt)))))
                else:
                    out.append(self._builtins(s))
            return out

        self._done_free = self._regions_before_any_return(lifted)
        body = place(lifted)
        pre = [self._builtins(d) for d in self.block_decls]
        if self.dyn_shared:
            pre.insert(0, mkdecl("xp_dyn", ["unsigned", "char"], c_ast.Cast(
                c_ast.Typename(None, [], None, c_ast.PtrDecl([], c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(
                    ["unsigned", "char"])))),
                c_ast.FuncCall(ID("calloc"), c_ast.ExprList([c_ast.BinaryOp("+", ID("xp_shmem"), const(64)),
                                                            const(1)]))), ptr=True))
            pre[1:1] = self.dyn_shared
        if self.has_return:
            pre.append(mkdecl("xp_done", ["unsigned", "char"], None, [ID("xp_np")]))
            pre.append(c_ast.FuncCall(ID("memset"), c_ast.ExprList([ID("xp_done"), const(0), ID("xp_np")])))
            pre.append(mkdecl("xp_doneptr", ["unsigned", "char"], ID("xp_done"), quals=["const"], ptr=True))
        else:
            pre.append(mkdecl("xp_doneptr", ["unsigned", "char"], c_ast.Cast(
                c_ast.Typename(None, [], None, c_ast.PtrDecl([], c_ast.TypeDecl(None, ["const"], None,
                                                                               c_ast.IdentifierType(["unsigned", "char"])))),
                const(0)), quals=["const"], ptr=True))
        post = [c_ast.FuncCall(ID("free"), c_ast.ExprList([ID("xp_dyn")]))] if self.dyn_shared else []
        block_body = block(pre + body + post)
        lz = for_loop("xp_bz", _dim("xp_grid", "z"), block([
            for_loop("xp_by", _dim("xp_grid", "y"), block([
                for_loop("xp_bx", _dim("xp_grid", "x"), block_body)]))]))
        items = [
            mkdecl("xp_nt", ["unsigned", "int"], c_ast.BinaryOp("*", c_ast.BinaryOp(
                "*", _dim("xp_block", "x"), _dim("xp_block", "y")), _dim("xp_block", "z")), quals=["const"]),
            mkdecl("xp_nw", ["unsigned", "int"], c_ast.BinaryOp("/", c_ast.BinaryOp(
                "+", ID("xp_nt"), const(self.W - 1)), const(self.W)), quals=["const"]),
            mkdecl("xp_np", ["unsigned", "int"], c_ast.BinaryOp("*", ID("xp_nw"), const(self.W)), quals=["const"]),
        ]
        self.parallel = self.omp and not self.float_atomics_in_body()
        if self.parallel:
            items.append(c_ast.Pragma("omp parallel for collapse(3) schedule(static)"))
        items.append(lz)
        decl = self.fd.decl
        params = list(decl.type.args.params) if decl.type.args else []
        params = [p for p in params if not (isinstance(p, c_ast.Typename) and base_names(p.type) == ["void"])]
        params += [mkdecl("xp_grid", ["dim3"]), mkdecl("xp_block", ["dim3"]),
                   mkdecl("xp_shmem", ["unsigned", "long"])]
        ftype = c_ast.FuncDecl(c_ast.ParamList(params), decl.type.type)
        new_decl = c_ast.Decl(decl.name, [], [], ["static"], [], ftype, None, None)
        return c_ast.FuncDef(new_decl, None, block(items))

    def float_atomics_in_body(self) -> bool:
        """Blocks run in parallel unless floating-point atomics make the result order-dependent
        (then blocks run in order, as on the virtual device, for bit-identical sums)."""
        for n in walk(self.fd.body):
            cn = call_name(n)
            if cn in S.ATOMICS and n.args:
                t = self.infer(n.args.exprs[0])
                if t is None or t.rstrip(" *") in ("float", "double", "half"):
                    return True
        for r in self.regions:
            for st in r.stmts:
                for n in walk(st):
                    cn = call_name(n)
                    if cn in S.ATOMICS:
                        t = self.infer(n.args.exprs[0]) if n.args else None
                        if t is None or "float" in t or "double" in t or "half" in t:
                            return True
        return False


# ----------------------------------------------------------------------------- small helpers
def _items(s):
    if s is None:
        return []
    if isinstance(s, c_ast.Compound):
        return s.block_items or []
    return [s]


def _always_returns(items) -> bool:
    """Every path through ``items`` (returns in tail positions) ends in a ``return``."""
    if not items:
        return False
    last = items[-1]
    if isinstance(last, c_ast.Return):
        return True
    if isinstance(last, c_ast.If):
        return _always_returns(_items(last.iftrue)) and _always_returns(_items(last.iffalse))
    if isinstance(last, c_ast.Compound):
        return _always_returns(last.block_items or [])
    return False


def _escapes(stmt) -> bool:
    """True if ``stmt`` has a break/continue that leaves it (not inside a nested loop/switch)."""
    def go(n):
        if isinstance(n, (c_ast.Break, c_ast.Continue)):
            return True
        if isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.Switch)):
            return False
        return any(go(c) for _, c in n.children())
    return go(stmt)


def _null_uchar():
    return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.PtrDecl([], c_ast.TypeDecl(
        None, ["const"], None, c_ast.IdentifierType(["unsigned", "char"])))), const(0))


def _dim(var, field):
    return c_ast.StructRef(ID(var), ".", ID(field))


def _anon(t):
    t = copy.deepcopy(t)
    set_declname(t, None)
    return t


def _type_text(t) -> str | None:
    if t is None:
        return None
    stars = 0
    while isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl)):
        stars += 1
        t = t.type
    if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
        return None
    names = [x for x in t.type.names if x not in ("const", "volatile")]
    text = " ".join(names)
    text = {"unsigned": "unsigned int", "long int": "long", "long long int": "long long", "__half": "half",
            "size_t": "unsigned long", "int32_t": "int", "uint32_t": "unsigned int", "int64_t": "long long",
            "uint64_t": "unsigned long long", "signed": "int", "signed int": "int"}.get(text, text)
    return text + " *" * stars if stars else text


def _deref(t):
    if t is None or "*" not in t:
        return None
    return t[: t.rindex("*")].rstrip()


def _promote(t):
    if t in ("bool", "char", "signed char", "unsigned char", "short", "unsigned short"):
        return "int"
    return t


def _arith(a, b):
    if a is None or b is None:
        return None
    if "*" in a or "*" in b:
        return None
    for fl in ("double", "float", "half"):
        if fl in (a, b):
            return fl
    a, b = _promote(a), _promote(b)
    if a in INT_RANK and b in INT_RANK:
        return a if INT_RANK.index(a) >= INT_RANK.index(b) else b
    return None


def _bind_reference(param: str, arg, body: list, call):
    """Inline a reference parameter: uses of ``param`` in ``body`` become the argument lvalue.
    Only for an argument built from names, constants, member and subscript accesses whose names
    the body neither declares nor (other than through the parameter itself) assigns."""
    names = set()
    for n in walk(arg):
        if isinstance(n, c_ast.ID):
            names.add(n.name)
        elif not isinstance(n, (c_ast.ArrayRef, c_ast.StructRef, c_ast.Constant)):
            raise Refuse("XP-RECOVER-002", f"reference parameter {param} of {call.name.name} bound to a "
                         "computed expression", call)
    if isinstance(arg, c_ast.StructRef):
        names.discard(arg.field.name)
    plain = isinstance(arg, c_ast.ID)
    for st in body:
        for n in walk(st):
            if isinstance(n, c_ast.Decl) and n.name in names | {param}:
                raise Refuse("XP-RECOVER-002", f"reference parameter {param} of {call.name.name}: the body "
                             f"declares {n.name}", n)
            target = None
            if isinstance(n, c_ast.Assignment):
                target = n.lvalue
            elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
                target = n.expr
            if target is not None and not plain and any(isinstance(m, c_ast.ID) and m.name in names
                                                        for m in walk(target)):
                raise Refuse("XP-RECOVER-002", f"reference parameter {param} of {call.name.name}: the body "
                             "assigns a name of its argument", n)

    def sub(node):
        for attr in getattr(node, "__slots__", ()):
            if attr in ("coord", "__weakref__"):
                continue
            if isinstance(node, c_ast.StructRef) and attr == "field":
                continue
            v = getattr(node, attr, None)
            if isinstance(v, c_ast.ID) and v.name == param:
                setattr(node, attr, copy.deepcopy(arg))
            elif isinstance(v, c_ast.Node):
                sub(v)
            elif isinstance(v, list):
                for i, item in enumerate(v):
                    if isinstance(item, c_ast.ID) and item.name == param:
                        v[i] = copy.deepcopy(arg)
                    elif isinstance(item, c_ast.Node):
                        sub(item)

    holder = c_ast.Compound(list(body))
    sub(holder)
    return holder.block_items
