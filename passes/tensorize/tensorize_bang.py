"""tensorize_bang: replace element-wise loops and sum reductions over NRAM by __bang_* calls.

Summary
    In every ``__mlu_global__`` / ``__mlu_func__`` function, a counted loop
    ``for (v = LO; v < HI; ++v)`` whose body is (after loop-local integer temporaries affine in
    ``v``) one assignment ``d[v + c0] = F(...)`` is matched against the reference bodies of the
    eligible element-wise descriptions in ``platforms/bang/intrinsics`` (``bang_lower_match``:
    vec_binary / vec_scalar / vec_unary shapes, float, exact semantics). Operands must be
    NRAM references (``__nram__`` arrays, or pointers initialised from them and never
    reassigned) with unit stride in ``v``; ``value`` a loop-invariant float/int expression.
    The loop becomes ``if (HI > LO) __bang_X(d + c0 + LO, ..., HI - LO);``.
    A right-hand side no single description matches is split into a chain of at most
    ``MAX_CHAIN`` instructions: one operand of an instruction may be a sub-expression that the
    earlier instructions computed into the destination slice, in place (``d = x * s + b``
    -> ``__bang_mul_scalar(d, x, s, n); __bang_add_scalar(d, d, b, n);``). Float temporaries
    of the body (``float t = e;``) are substituted first. An operand read after the first
    instruction must not overlap the destination: a different array or a pool region
    task_bind proved disjoint needs nothing; otherwise the chain runs under the run-time test
    ``(L + n <= D || D + n <= L)`` with the original loop as the else branch.
    A loop ``acc += p[v + c]`` (``acc`` a float scalar, ``p`` NRAM float, constant trip count
    ``K`` with ``K * 4`` a multiple of 128 as ``__bang_reduce_sum`` requires) becomes
    ``__bang_reduce_sum(scratch, p + c + LO, K)`` (one sum per 128-byte chunk, in the chunk's
    first slot) followed by a scalar loop adding the ``K / 32`` chunk sums to ``acc``
    (re-association of a float sum: verified against the source on the virtual device).
Requires
    1. A BANG program with at least one kernel  [XP-TENSORIZE-BANG-002].
    2. At least one loop matches a description (otherwise nothing to do)
       [XP-TENSORIZE-BANG-001].
    3. The scratch buffers of the reductions fit the 64 KiB task_bind leaves free
       [XP-TENSORIZE-BANG-003].
Guarantees
    Same outputs on the virtual device in strict mode; element types unchanged (float loops
    only; no conversions introduced); a description whose rules for the profile's arch group
    go beyond ``elem_count > 0`` (alignment, 128-byte multiples, input domains) is not used
    for element-wise loops, so no rule can be violated.
Options
    profile: BANG device profile whose arch group selects the rules ("" = default).
Example
    ``for (long long t = b; t < b + c; ++t) { int i = (int) t; o[i - w] = x[i - w] + y[i - w]; }``
    -> ``if (b + c > b) __bang_add(o + (b - w), x + (b - w), y + (b - w), (unsigned int) (b + c - b));``
    ``for (i = 0; i < n; ++i) { float v = x[i] * s; o[i] = v + b; }`` (``o``, ``x`` distinct
    NRAM arrays) -> ``if (n > 0) { __bang_mul_scalar(o, x, s, n); __bang_add_scalar(o, o, b, n); }``
"""
from __future__ import annotations

import copy
from dataclasses import replace

from pycparser import c_ast
from pycparser.c_generator import CGenerator
from pycparser.c_parser import CParser

from xpiler.ir.errors import Coord, Diagnostic

import passes.analysis.affine as affine
import passes.canon as canon
from passes.tensorize.bang_match import match, patterns
from passes.base import Option, PassInfo, register

NAME = "tensorize_bang"
SCRATCH_LIMIT = 64 * 1024
MAX_CHAIN = 8            # instructions for one loop's expression tree
SHAPE_OPERANDS = {"vec_binary": ("src0", "src1"), "vec_scalar": ("src",), "vec_unary": ("src",)}
RED_NAME = "__xp_red"
_INT_TYPES = {"int", "long", "short", "char", "unsigned", "signed", "size_t", "int32_t",
              "int64_t", "uint32_t", "uint64_t"}
_VALUE_TYPES = {"float", "int", "short", "char", "unsigned", "signed"}


def _diag(program, code, message) -> Diagnostic:
    return Diagnostic(code, message, Coord(program.path, 0, 0), pass_name=NAME)


def _group(profile: str) -> int:
    import platforms

    return int(str(platforms.profile("bang", profile or None)["arch_group"])[0])


def _names(t) -> list:
    while t is not None and not isinstance(t, c_ast.IdentifierType):
        t = getattr(t, "type", None)
    return list(t.names) if t is not None else []


def _is_ptr(t) -> bool:
    return isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl))


class _Func:
    """Facts about one device function: NRAM pointers, declared types, assigned names."""

    def __init__(self, fdef: c_ast.FuncDef, nram_arrays: dict, regions: frozenset = frozenset()):
        self.types: dict[str, c_ast.Node] = {}
        self.assigned: dict[str, int] = {}
        self.nram: dict[str, list] = dict(nram_arrays)        # name -> element type names
        self.arrays = set(nram_arrays)                         # declared NRAM arrays
        self.root: dict[str, str] = {}                         # NRAM pointer -> its array
        fdef_self = self

        class V(c_ast.NodeVisitor):
            def visit_Decl(self, n):
                if n.name:
                    fdef_self.types[n.name] = n.type
                self.generic_visit(n)

            def visit_Assignment(self, n):
                if isinstance(n.lvalue, c_ast.ID):
                    fdef_self.assigned[n.lvalue.name] = fdef_self.assigned.get(n.lvalue.name, 0) + 1
                self.generic_visit(n)

            def visit_UnaryOp(self, n):
                if n.op in ("++", "--", "p++", "p--", "&") and isinstance(n.expr, c_ast.ID):
                    fdef_self.assigned[n.expr.name] = fdef_self.assigned.get(n.expr.name, 0) + 1
                self.generic_visit(n)

        V().visit(fdef)
        decls = []

        class D(c_ast.NodeVisitor):
            def visit_Decl(self, n):
                decls.append(n)
                self.generic_visit(n)

        D().visit(fdef.body)
        for d in decls:           # pointers initialised from NRAM, never reassigned
            if isinstance(d.type, c_ast.PtrDecl) and d.init is not None and \
                    not self.assigned.get(d.name) and _root(d.init) in self.nram:
                self.nram[d.name] = _names(d.type)
                base = _root(d.init)
                self.root[d.name] = self.root.get(base, base)
        for name in regions & set(self.nram):
            # a region of task_bind's pool no other of its buffers overlaps: its own array
            self.root[name] = name
            self.arrays.add(name)

    def disjoint(self, a: str, b: str) -> bool:
        """NRAM pointers ``a`` and ``b`` point into two different declared arrays."""
        ra, rb = self.root.get(a, a), self.root.get(b, b)
        return ra != rb and ra in self.arrays and rb in self.arrays


def _subst(node, values: dict):
    return canon.rebuild(node, lambda n: copy.deepcopy(values[n.name])
                         if isinstance(n, c_ast.ID) and n.name in values else None)


def _root(e) -> str | None:
    while True:
        if isinstance(e, c_ast.Cast):
            e = e.expr
        elif isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            e = e.left
        elif isinstance(e, c_ast.ID):
            return e.name
        else:
            return None


def _lin(e, env: dict):
    """Affine Poly of an integer expression over names (keys ``s:name``); None otherwise."""
    if isinstance(e, c_ast.Constant) and e.type == "int":
        try:
            return affine.Poly.const(int(e.value.rstrip("uUlL"), 0))
        except ValueError:
            return None
    if isinstance(e, c_ast.ID):
        return env[e.name] if e.name in env else affine.Poly.sym("s:" + e.name)
    if isinstance(e, c_ast.Cast) and set(_names(e.to_type)) <= _INT_TYPES and \
            not _is_ptr(e.to_type.type):
        return _lin(e.expr, env)
    if isinstance(e, c_ast.UnaryOp) and e.op == "-":
        a = _lin(e.expr, env)
        return None if a is None else -a
    if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-", "*"):
        a, b = _lin(e.left, env), _lin(e.right, env)
        if a is None or b is None:
            return None
        if e.op == "*" and not (a.is_const() or b.is_const()):
            return a * b if not (a.keys() & {"s:__xp_v"}) and not (b.keys() & {"s:__xp_v"}) \
                else None
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    return None


class _Loop:
    """A counted loop ``for (v = LO; v < HI; ++v)`` with its body items."""

    def __init__(self, n: c_ast.For):
        self.ok = False
        init, cond, nxt = n.init, n.cond, n.next
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
            self.var, self.lo = init.decls[0].name, init.decls[0].init
        elif isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
            self.var, self.lo = init.lvalue.name, init.rvalue
        else:
            return
        if not (isinstance(cond, c_ast.BinaryOp) and cond.op == "<" and
                isinstance(cond.left, c_ast.ID) and cond.left.name == self.var):
            return
        self.hi = cond.right
        inc = isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++") and \
            isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == self.var
        inc |= isinstance(nxt, c_ast.Assignment) and nxt.op == "+=" and \
            isinstance(nxt.lvalue, c_ast.ID) and nxt.lvalue.name == self.var and \
            isinstance(nxt.rvalue, c_ast.Constant) and nxt.rvalue.value == "1"
        if not inc:
            return
        items = n.stmt.block_items or [] if isinstance(n.stmt, c_ast.Compound) else [n.stmt]
        # the GPU lift's loop body after its index declaration: a plain block last
        items = canon.open_last_block(list(items))
        self.env = {self.var: affine.Poly.sym("s:__xp_v")}
        self.locals = {self.var}
        k = 0
        values: dict = {}           # float temporaries: their (cast) initialisers
        while k < len(items) and isinstance(items[k], c_ast.Decl):
            d = items[k]
            if d.init is not None and _names(d.type) == ["float"] and not _is_ptr(d.type) and \
                    not isinstance(d.init, c_ast.InitList):
                values[d.name] = _subst(c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
                    None, [], None, c_ast.IdentifierType(["float"]))), d.init), values)
                self.locals.add(d.name)
                k += 1
                continue
            if d.init is None or not set(_names(d.type)) <= _INT_TYPES or _is_ptr(d.type):
                return
            p = _lin(d.init, self.env)
            if p is None:
                return
            self.env[d.name] = p
            self.locals.add(d.name)
            k += 1
        if len(items) != k + 1 or not isinstance(items[k], c_ast.Assignment):
            return
        self.stmt = items[k]
        if values:
            # a temporary is its value: the statement reads it only (the body is the
            # declarations and this one assignment)
            if canon.ids_in(self.stmt.lvalue) & set(values) or \
                    (isinstance(self.stmt.lvalue, c_ast.ID) and self.stmt.lvalue.name in values):
                return
            self.stmt = c_ast.Assignment(self.stmt.op, self.stmt.lvalue,
                                         _subst(self.stmt.rvalue, values))
        self.ok = True


class _Rewriter:
    def __init__(self, program, group: int):
        self.program, self.group = program, group
        self.patterns = patterns(group)
        self.gen = CGenerator()
        self.count: dict[str, int] = {}
        self.scratch = 0
        self.scratch_over = False
        import platforms

        self.reduce_ok = self._reduce_rules(platforms.intrinsics("bang"))

    def _reduce_rules(self, entries) -> bool:
        """__bang_reduce_sum usable: its rules for this arch group are only the 128-byte
        multiple (which the pass proves) and elem_count > 0."""
        e = next((x for x in entries if x["name"] == "__bang_reduce_sum"), None)
        if e is None or "float" not in e["types"].get("T", []):
            return False
        from passes.tensorize.bang_match import applies

        for r in e["rules"]:
            if "call" in r:
                return False
            chk = r["check"].replace(" ", "")
            if applies(r.get("arch", "all"), self.group) and chk not in (
                    "elem_count>0&&elem_count*sizeof(T)%128==0",):
                return False
        return True

    # -- traversal -----------------------------------------------------------------------
    def function(self, fdef, nram_arrays):
        regions = frozenset(self.program.facts.get("task_bind", {}).get("nram_buffers", ()))
        facts = _Func(fdef, nram_arrays, regions)
        self._walk(fdef.body, facts)

    def _walk(self, node, facts):
        """Post-order: inner loops are matched before the loops around them."""
        def visit(x):
            self._walk(x, facts)
            new = self._try(x, facts) if isinstance(x, c_ast.For) else None
            return x if new is None else new
        canon.map_children(node, visit)

    # -- matching ------------------------------------------------------------------------
    def _try(self, n: c_ast.For, facts: _Func):
        lp = _Loop(n)
        if not lp.ok:
            return None
        st = lp.stmt
        if any(facts.assigned.get(x) and x not in lp.locals and x in self._ids(n.cond.right)
               for x in self._ids(n.cond.right)):
            pass
        written = self._ids_assigned(st)
        if st.op == "=" and isinstance(st.lvalue, c_ast.ArrayRef):
            return self._elementwise(n, lp, st, facts)
        if st.op == "+=" and isinstance(st.lvalue, c_ast.ID) and self.reduce_ok:
            return self._reduction(n, lp, st, facts, written)
        return None

    def _ids(self, e) -> set:
        out = set()

        class V(c_ast.NodeVisitor):
            def visit_ID(self, x):
                out.add(x.name)

        V().visit(e)
        return out

    def _ids_assigned(self, st) -> set:
        return {st.lvalue.name} if isinstance(st.lvalue, c_ast.ID) else set()

    def _ref(self, node, lp, facts):
        """(pointer, offset Poly) of an NRAM float reference with unit stride in the loop."""
        if not (isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.ID)):
            return None
        p = node.name.name
        if facts.nram.get(p) != ["float"]:
            return None
        idx = _lin(node.subscript, lp.env)
        if idx is None:
            return None
        sp = idx.split("s:__xp_v")
        if sp is None:
            return None
        coef, off = sp
        if coef.t != {(): 1} or any(k[2:] in lp.locals for k in off.keys()):
            return None
        if any(facts.assigned.get(k[2:]) and self._assigned_in(k[2:], lp) for k in off.keys()):
            return None
        return p, off

    def _assigned_in(self, name, lp) -> bool:
        return name == lp.var

    def _invariant(self, node, lp, facts) -> bool:
        ok = True
        me = self

        class V(c_ast.NodeVisitor):
            def visit_ID(self, x):
                nonlocal ok
                t = facts.types.get(x.name)
                if x.name in lp.locals or t is None or _is_ptr(t) or \
                        not set(_names(t)) <= _VALUE_TYPES:
                    ok = False

            def visit_ArrayRef(self, x):
                nonlocal ok
                ok = False

            def visit_FuncCall(self, x):
                nonlocal ok
                ok = False

            def visit_Constant(self, x):
                nonlocal ok
                if x.type == "double" or (x.type == "float" and not x.value.endswith(("f", "F"))):
                    ok = False

            def visit_Assignment(self, x):
                nonlocal ok
                ok = False

            def visit_UnaryOp(self, x):
                nonlocal ok
                if x.op in ("++", "--", "p++", "p--", "&", "*"):
                    ok = False
                self.generic_visit(x)

        V().visit(node)
        return ok and me is not None

    def _elementwise(self, n, lp, st, facts):
        """One instruction for ``d[v] = F(..)``, or a chain of them for an expression tree
        whose every node is one description with at most one operand computed by the nodes
        below it: the chain runs innermost first, each result written to the destination
        slice and read back in place by the next instruction (element-wise operands may
        overlap). The rounding is the source's: each instruction rounds to float where the
        source's float operation does (``#pragma fp-contract=off`` sources round each one).
        An operand read after the first instruction must not be the destination: another NRAM
        array, or a pointer tested at run time not to overlap it (else the original loop)."""
        dst = self._ref(st.lvalue, lp, facts)
        if dst is None:
            return None
        steps = self._steps(st.rvalue, lp, facts, 0)
        if steps is None:
            return None
        dkey = (dst[0], dst[1].c_text())
        lo, hi = self.gen.visit(lp.lo), self.gen.visit(lp.hi)
        count = f"(unsigned int) (({hi}) - ({lo}))"
        dptr = self._ptr(dst, lp)
        calls, overlaps = [], []
        for k, (pat, binds, refs) in enumerate(steps):
            leaves = [binds[x] for x in SHAPE_OPERANDS[pat.shape] if binds[x][0] != ""]
            for key in leaves:
                if key[0] == dst[0] and (k > 0 or key != dkey):
                    return None     # the destination read shifted, or after it was rewritten
                if k > 0 and not facts.disjoint(key[0], dst[0]):
                    test = (f"(({self._ptr(refs[key], lp)}) + ({count}) <= ({dptr}) || "
                            f"({dptr}) + ({count}) <= ({self._ptr(refs[key], lp)}))")
                    if test not in overlaps:
                        overlaps.append(test)
            args = [dptr] + [dptr if binds[x][0] == "" else self._ptr(refs[binds[x]], lp)
                             for x in SHAPE_OPERANDS[pat.shape]]
            if pat.shape == "vec_scalar":
                args.append(f"(float) ({self.gen.visit(binds['value'])})")
            calls.append(f"{pat.name}({', '.join(args)}, {count});")
        body = " ".join(calls)
        if overlaps:
            new = _parse_stmt(f"if (({hi}) > ({lo})) {{ if ({' && '.join(overlaps)}) {{ {body} }} "
                              f"else ; }}")
            if new is not None:
                new.iftrue.block_items[0].iffalse = copy.deepcopy(n)
        else:
            new = _parse_stmt(f"if (({hi}) > ({lo})) {{ {body} }}" if len(calls) > 1 else
                              f"if (({hi}) > ({lo})) {body}")
        if new is not None:
            for pat, _, _ in steps:
                self.count[pat.name] = self.count.get(pat.name, 0) + 1
        return new

    def _steps(self, expr, lp, facts, depth: int):
        """The instructions computing ``expr`` element-wise, innermost first: a list of
        (pattern, bindings, references), or None. One instruction over references is
        preferred; otherwise an operand may be a sub-expression (not loop-invariant) computed
        by the steps before."""
        if depth >= MAX_CHAIN:
            return None
        for nested in (False, True):
            for pat in self.patterns:
                binds: dict = {}
                refs: dict = {}
                inner: dict = {}

                def operand(name, node, refs=refs, inner=inner, nested=nested):
                    while isinstance(node, c_ast.Cast) and _names(node.to_type) == ["float"] \
                            and not _is_ptr(node.to_type.type):
                        node = node.expr          # identity cast in a float loop
                    r = self._ref(node, lp, facts)
                    if r is not None:
                        key = (r[0], r[1].c_text())
                        refs[key] = r
                        return key
                    if not nested or self._invariant(node, lp, facts):
                        return None
                    key = ("", self.gen.visit(node))
                    inner[key] = node
                    return key

                if not match(pat.rhs, expr, binds, operand,
                             lambda x: self._invariant(x, lp, facts)):
                    continue
                if any(x not in binds for x in SHAPE_OPERANDS[pat.shape]):
                    continue
                computed = {binds[x] for x in SHAPE_OPERANDS[pat.shape] if binds[x][0] == ""}
                if not computed:
                    return [(pat, binds, refs)]
                if len(computed) > 1:
                    continue
                below = self._steps(inner[computed.pop()], lp, facts, depth + 1)
                if below is not None:
                    return below + [(pat, binds, refs)]
        return None

    def _ptr(self, ref, lp) -> str:
        p, off = ref
        lo = self.gen.visit(lp.lo)
        o = off.c_text()
        return f"{p} + ({o}) + ({lo})" if o != "0" else f"{p} + ({lo})"

    def _reduction(self, n, lp, st, facts, written):
        acc = st.lvalue.name
        if _names(facts.types.get(acc)) != ["float"] or _is_ptr(facts.types.get(acc)) or \
                acc in lp.locals:
            return None
        ref = self._ref(st.rvalue, lp, facts)
        if ref is None:
            return None
        lo, hi = _lin(lp.lo, {}), _lin(lp.hi, {})
        if lo is None or hi is None or not (hi - lo).is_const():
            return None
        k = (hi - lo).value()
        elems = 128 // 4                            # one chunk = 128 bytes of float
        if k <= 0 or k * 4 % 128 != 0:
            return None
        if k * 4 > SCRATCH_LIMIT:
            self.scratch_over = True
            return None
        self.scratch = max(self.scratch, k)
        text = (f"{{ __bang_reduce_sum({RED_NAME}, {self._ptr(ref, lp)}, {k}); "
                f"for (int __xp_k = 0; __xp_k < {k}; __xp_k += {elems}) "
                f"{acc} += {RED_NAME}[__xp_k]; }}")
        new = _parse_stmt(text)
        if new is not None:
            self.count["__bang_reduce_sum"] = self.count.get("__bang_reduce_sum", 0) + 1
        return new


def _parse_stmt(text: str):
    try:
        fn = CParser().parse("void __xp_f(void) {\n" + text + "\n}").ext[-1]
    except Exception:
        return None
    (s,) = fn.body.block_items
    return s


def _nram_arrays(ast) -> dict:
    out = {}
    for e in ast.ext:
        if isinstance(e, c_ast.Decl) and "__nram__" in (e.storage or []) and e.name:
            out[e.name] = _names(e.type)
    return out


def _kernels(ast):
    return [e for e in ast.ext if isinstance(e, c_ast.FuncDef) and
            set(e.decl.funcspec or []) & {"__mlu_global__", "__mlu_entry__", "__mlu_func__"}]


def _rewrite(program, profile: str):
    ast = copy.deepcopy(program.ast)
    rw = _Rewriter(program, _group(profile))
    nram = _nram_arrays(ast)
    for f in _kernels(ast):
        rw.function(f, nram)
    return ast, rw


@register(PassInfo(
    name=NAME,
    summary="BANG: element-wise loops and float sum reductions over NRAM -> __bang_* calls "
            "matched against the intrinsic descriptions' reference bodies",
    options={"profile": Option(str, "", "BANG device profile (arch group of the rules)")},
    requires=("a BANG program with kernels (XP-TENSORIZE-BANG-002)",
              "at least one loop matches an eligible description (XP-TENSORIZE-BANG-001)",
              "reduction scratch within 64 KiB (XP-TENSORIZE-BANG-003)"),
    guarantees=("same outputs on the virtual device (strict mode)",
                "element types unchanged; only descriptions whose rules are provable are used"),
    introduces=("__bang_* element-wise calls", "__bang_reduce_sum", "__nram__ scratch"),
))
def tensorize_bang(program, *, profile: str = "", plan=None):
    import platforms
    from platforms import parse as parse_source

    if plan is None:
        plan = _tensorize_legal(program, profile=profile)
    plan = canon.plan_or_refuse(NAME, plan)
    ast, rw = plan.ast, plan.data
    if rw.scratch:
        decl = CParser().parse(f"float {RED_NAME}[{rw.scratch}];").ext[0]
        decl.storage = ["__nram__"]
        at = next(k for k, e in enumerate(ast.ext) if isinstance(e, c_ast.FuncDef))
        ast.ext.insert(at, decl)
    text = platforms.module("bang", "backend").emit(replace(program, ast=ast))
    out = parse_source(text, "bang", program.path, entry=program.entry.name if program.entry else None)
    facts = dict(out.facts)
    facts["tensorize_bang"] = {"intrinsics": dict(sorted(rw.count.items())),
                               "scratch_bytes": rw.scratch * 4}
    if "task_bind" in program.facts:
        facts["task_bind"] = program.facts["task_bind"]
    return replace(out, facts=facts)


@tensorize_bang.legality
def _tensorize_legal(program, *, profile: str = ""):
    if program.platform != "bang" or not _kernels(program.ast):
        return [_diag(program, "XP-TENSORIZE-BANG-002", "tensorize_bang rewrites BANG kernels; "
                      f"this is a {program.platform} program without __mlu_global__ kernels")]
    ast, rw = _rewrite(program, profile)       # on a copy of the AST: the plan the rewrite emits
    if not rw.count:
        msg = "no loop over NRAM matches an eligible intrinsic description"
        if rw.scratch_over:
            return [_diag(program, "XP-TENSORIZE-BANG-003", "reduction scratch over 64 KiB")]
        return [_diag(program, "XP-TENSORIZE-BANG-001", msg)]
    return canon.Rewritten(ast, rw)
