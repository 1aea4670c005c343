"""detensorize (BANG): every ``__bang_*`` / ``__memcpy`` / fill call becomes its scalar C loops.

Summary
    Replaces each call of a BANG special instruction (``__bang_*`` vector / reduction / pooling /
    matrix operations, ``__memcpy`` 1-D, 2-D strided, 3-D and async forms, ``__bang_write_value``,
    ``__bang_write_zero``, ``__memset_nram``, ``__nramset``, ``__gdramset``, conversions) by a
    block holding the scalar code of its description in ``platforms/bang/intrinsics`` -- the
    same entry the virtual device's C++ is generated from, so the semantics cannot drift
    (per-chunk ``__bang_reduce_sum``, HWC pooling with stride_width before stride_height,
    value+index outputs, matmul/conv layouts, int8 ``fix_position`` scaling, half rounding).

    The overload is chosen like the C++ compiler would (arity, pointer-ness) and its template
    parameters deduced from the argument types; the reference body is instantiated with those
    types, the emulator's ``xpb::`` helpers lowered to plain C (``xpd_*`` helpers added to the
    file, compile-time traits such as ``acc_t`` / ``fill_t`` / ``fix_scale`` folded). The block
    declares one variable per parameter, initialised with the argument (so arguments are
    evaluated once, converted as in the call), then the prelude and the element loop / body.
    All names of the block are renamed ``xd<n>_*`` (no capture of user names or macros).
    Element loops (entries with ``loop``) get ``#pragma omp simd`` when the pointer operands
    provably do not partially overlap (same expression, or distinct arrays).

    A call of a value-returning scalar builtin whose reference body is one ``return EXPR;``
    (``__cn_scalar_sin_f32`` ...) becomes ``(R)(EXPR)`` with each parameter ``(P)(arg)``, in
    whatever expression it stands (the argument is evaluated once where the body reads it once).
    A special instruction that returns a value (``__bang_sum``) is expanded when its result is
    stored: ``x = f(...);`` (side-effect-free ``x``) or, in a block, ``T x = f(...);`` (non-const;
    the declaration loses its initializer and the block stores into it).

    The result is still BANG C (it runs on the BANG emulator), without the special instructions.
Requires
    1. Every special-instruction call has a description with a reference body
       (XP-DETENSOR-001) and is used as a statement, or stored as above when it returns a
       value (XP-DETENSOR-002).
    2. Its template parameters can be deduced from the argument types (XP-DETENSOR-003).
    3. Its reference body lowers to plain C (no ``std::vector``, no remote SRAM copy:
       XP-DETENSOR-004).
Guarantees
    Same outputs on the BANG virtual device (lenient mode: strict rules and operand checks are
    not part of a reference body); no ``__bang_*`` / ``__memcpy`` call is left.
Options
    arch_group: architecture group the ``XPB_ARCH_GROUP`` tests of the bodies are folded for
        (0 = the default device profile's, e.g. 3 for mtp_372).
    simd: mark independent element loops ``#pragma omp simd`` (default true).
    typed: a 1-D or 2-D strided ``__memcpy`` between two different arrays / pointers of one
        element type ``T`` whose byte counts (size, strides) are whole elements by their form
        (``n * sizeof(T)``, a multiple-of-``sizeof(T)`` constant) becomes typed element loops
        ``dst[s * DS + i] = src[s * SS + i]`` instead of the byte copies of the reference body,
        so that an affine analysis sees the element accesses (default false).
Example
    ``__bang_add(out_nram, x_nram, y_nram, n);`` ->
    ``{ float *xd1_dst = out_nram; const float *xd1_src0 = x_nram; const float *xd1_src1 = y_nram;``
    ``unsigned int xd1_elem_count = n; #pragma omp simd``
    ``for (unsigned int xd1_i = 0; xd1_i < (unsigned int) xd1_elem_count; ++xd1_i)``
    ``{ xd1_dst[xd1_i] = xd1_src0[xd1_i] + xd1_src1[xd1_i]; } }``
"""
from __future__ import annotations

import copy
import re
from collections import Counter
from dataclasses import replace

from pycparser import c_ast

from xpiler.ir.errors import Coord, Diagnostic

import passes.canon as canon
import passes.lift.bang_lower as bl
from passes.base import Option, PassInfo, register

NAME = "detensorize"
_SPECIAL = re.compile(r"^(__bang_\w+|__memcpy\w*|__memset_nram|__nramset\w*|__gdramset\w*|__ldramset\w*|__sramset\w*)$")


def _coord(program, node) -> Coord:
    c = getattr(node, "coord", None)
    if c is None:
        return Coord(program.path)
    return Coord(getattr(c, "file", None) or program.path, getattr(c, "line", 0) or 0,
                 getattr(c, "column", 0) or 0)


def default_arch_group() -> int:
    import platforms

    prof = platforms.profile("bang")
    return int(str(prof.get("arch_group", f"{int(prof.get('bang_arch', 372)) // 100}xx"))[0])


def is_special(name: str) -> bool:
    return bool(_SPECIAL.match(name))


def global_env(ast) -> bl.TypeEnv:
    env = bl.TypeEnv()
    for ext in ast.ext:
        if isinstance(ext, c_ast.Decl) and ext.name and not isinstance(ext.type, c_ast.FuncDecl):
            env.names[ext.name] = bl.decl_type(ext.type)
    return env


def function_env(genv: bl.TypeEnv, fn: c_ast.FuncDef) -> bl.TypeEnv:
    env = genv.child()
    params = fn.decl.type.args.params if fn.decl.type.args else []
    for p in params:
        if isinstance(p, c_ast.Decl) and p.name:
            env.names[p.name] = bl.decl_type(p.type)
    env.add_decls(fn.body)
    return env


# ------------------------------------------------------------------------------ statement slots
def statement_slots(node):
    """(container, key) pairs of the statement positions directly inside ``node``."""
    if isinstance(node, c_ast.Compound):
        return [(node.block_items, i) for i in range(len(node.block_items or []))]
    if isinstance(node, c_ast.If):
        return [(node, "iftrue"), (node, "iffalse")]
    if isinstance(node, (c_ast.For, c_ast.While, c_ast.DoWhile, c_ast.Label)):
        return [(node, "stmt")]
    if isinstance(node, (c_ast.Case, c_ast.Default)):
        return [(node.stmts, i) for i in range(len(node.stmts or []))]
    return []


def special_call(stmt) -> c_ast.FuncCall | None:
    if isinstance(stmt, c_ast.FuncCall) and isinstance(stmt.name, c_ast.ID) and is_special(stmt.name.name):
        return stmt
    if isinstance(stmt, c_ast.Cast) and isinstance(stmt.expr, c_ast.FuncCall):  # (void)__memcpy(...)
        return special_call(stmt.expr)
    return None


# ------------------------------------------------------------------------------ renaming
class _Renamer(c_ast.NodeVisitor):
    def __init__(self, mapping: dict[str, str]):
        self.m = mapping

    def visit_ID(self, n):
        if n.name in self.m:
            n.name = self.m[n.name]

    def visit_StructRef(self, n):
        self.visit(n.name)          # the field is not a variable

    def visit_Decl(self, n):
        if n.name in self.m:
            n.name = self.m[n.name]
        self.generic_visit(n)

    def visit_Typedef(self, n):
        if n.name in self.m:
            n.name = self.m[n.name]
        self.generic_visit(n)

    def visit_TypeDecl(self, n):
        if n.declname in self.m:
            n.declname = self.m[n.declname]
        self.generic_visit(n)

    def visit_IdentifierType(self, n):
        n.names = [self.m.get(x, x) for x in n.names]


def _declared(node) -> set[str]:
    out = set()
    for n in bl.walk(node):
        if isinstance(n, (c_ast.Decl, c_ast.Typedef)) and n.name:
            out.add(n.name)
    return out


def used_ids(node) -> Counter:
    c = Counter()

    class V(c_ast.NodeVisitor):
        def visit_ID(self, n):
            c[n.name] += 1

        def visit_StructRef(self, n):
            self.visit(n.name)

    V().visit(node)
    return c


def has_side_effects(e) -> bool:
    for n in bl.walk(e):
        if isinstance(n, (c_ast.Assignment, c_ast.FuncCall)):
            return True
        if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
            return True
    return False


def _base(e):
    """(name of the array/pointer an operand points into, whether it is offset)."""
    offset = False
    while True:
        if isinstance(e, c_ast.Cast):
            e = e.expr
        elif isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            offset = True
            e = e.left
        elif isinstance(e, c_ast.UnaryOp) and e.op == "&" and isinstance(e.expr, c_ast.ArrayRef):
            offset = True
            e = e.expr.name
        elif isinstance(e, c_ast.ID):
            return e.name, offset
        else:
            return None, True


def _elements(e, elem: int):
    """``e`` bytes as a count of ``elem``-byte elements when that is exact by the form of ``e``:
    a multiple of ``elem`` constant, ``sizeof(T)`` or ``x * sizeof(T)`` with ``sizeof(T) %
    elem == 0``, anything for 1-byte elements; None otherwise."""
    def sizeof(n):
        if isinstance(n, c_ast.UnaryOp) and n.op == "sizeof" and isinstance(n.expr, c_ast.Typename):
            t = bl.decl_type(n.expr.type)
            if t.ptr == 0 and t.known():
                return bl.size_of(t.scalar)
        return None

    if isinstance(e, c_ast.Constant) and e.type == "int":
        try:
            v = int(e.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
        return c_ast.Constant("int", str(v // elem)) if v % elem == 0 else None
    k = sizeof(e)
    if k is not None:
        return c_ast.Constant("int", str(k // elem)) if k % elem == 0 else None
    if isinstance(e, c_ast.BinaryOp) and e.op == "*":
        for x, y in ((e.left, e.right), (e.right, e.left)):
            k = sizeof(y)
            if k is not None and k % elem == 0:
                return x if k == elem else c_ast.BinaryOp("*", x, c_ast.Constant("int", str(k // elem)))
        inner = _elements(e.left, elem)
        if inner is not None and not isinstance(e.left, c_ast.Constant):
            return c_ast.BinaryOp("*", inner, e.right)
    return e if elem == 1 else None


# ------------------------------------------------------------------------------ the rewriter
class Detensorizer:
    """Expands the special instructions of one AST in place, collecting refusals."""

    def __init__(self, program, arch_group: int, simd: bool = True, typed: bool = False):
        self.program = program
        self.arch_group = arch_group
        self.simd = simd
        self.typed = typed
        self.diagnostics: list[Diagnostic] = []
        self.helpers: set[str] = set()
        self.counter = 0
        self.stats: Counter = Counter()
        self.arrays: set[str] = set()
        self.gen = None

    def diag(self, code, message, node, construct=None):
        self.diagnostics.append(Diagnostic(code, message, _coord(self.program, node),
                                           construct=construct, pass_name=NAME))

    def run(self, ast) -> None:
        genv = global_env(ast)
        self.arrays = {e.name for e in ast.ext if isinstance(e, c_ast.Decl) and isinstance(e.type, c_ast.ArrayDecl)}
        for ext in ast.ext:
            if isinstance(ext, c_ast.FuncDef):
                env = function_env(genv, ext)
                local_arrays = {n.name for n in bl.walk(ext.body)
                                if isinstance(n, c_ast.Decl) and isinstance(n.type, c_ast.ArrayDecl)}
                saved = self.arrays
                self.arrays = self.arrays | local_arrays
                self._value_calls(ext.body, env)
                self._stmt_tree(ext.body, env)
                self.arrays = saved

    # calls of value-returning scalar builtins (``__cn_scalar_*``) wherever they stand
    def _value_calls(self, body, env) -> None:
        """Each call of a described builtin that is not a special instruction and whose
        reference body is one ``return EXPR;`` (the scalar ``__cn_scalar_*`` functions) becomes
        ``(R)(EXPR)`` with every parameter ``p`` replaced by ``(P)(arg)`` -- in any position,
        since such a call is an expression. A parameter read twice takes an argument without
        side effects only (XP-DETENSOR-002 otherwise)."""
        det = self

        class Sub(c_ast.NodeVisitor):
            def generic_visit(v, node):
                for cname, child in node.children():
                    v.visit(child)
                    if isinstance(child, c_ast.FuncCall):
                        new = det._value_call(child, env)
                        if new is not None:
                            canon.replace_child(node, cname, new)

        Sub().visit(body)

    def _value_call(self, call: c_ast.FuncCall, env):
        if not isinstance(call.name, c_ast.ID):
            return None
        name = call.name.name
        if is_special(name) or name not in bl.names():
            return None
        args = list(call.args.exprs) if call.args else []
        form = bl.select_form(name, [bl.type_of(a, env) for a in args])
        if form is None or form.get("loop") or form.get("prelude") or form["tparams"] \
                or form["ret"] in ("", "void"):
            return None
        m = re.fullmatch(r"\s*return\s+(.*?);\s*", form["body"], re.S)
        used: set = set()
        try:
            if m is None:
                raise bl.InstantiationError("XP-DETENSOR-004", "its reference body is not one return expression")
            text = bl.lower_text(m.group(1), self.arch_group, used)
        except bl.InstantiationError as exc:
            # e.g. __is_dram (asks the virtual device for the pointer's memory space)
            self.diag("XP-DETENSOR-004", f"'{name}' returns a value that the translation cannot "
                      f"compute: {exc}", call, name)
            return None
        expr = bl.parse_block(f"__xpd_r = ({form['ret']})({text});").block_items[0].rvalue
        argmap = {pname: (ptype, a) for (ptype, pname), a in zip(form["params"], args)}
        counts = used_ids(expr)
        for pname, (_, a) in argmap.items():
            if counts[pname] > 1 and has_side_effects(a):
                self.diag("XP-DETENSOR-002", f"'{name}': argument '{pname}' has side effects and the "
                          "reference body reads it more than once", call, name)
                return None

        class Sub(c_ast.NodeVisitor):
            def generic_visit(v, node):
                for cname, child in node.children():
                    if isinstance(child, c_ast.ID) and child.name in argmap:
                        ptype, a = argmap[child.name]
                        tn = bl.parse_block(f"__xpd_r = ({ptype})0;").block_items[0].rvalue.to_type
                        canon.replace_child(node, cname, c_ast.Cast(tn, copy.deepcopy(a)))
                    else:
                        v.visit(child)

        Sub().visit(expr)
        self.helpers |= used
        self.stats[name] += 1
        return expr

    # walk statements; expand calls in statement position, report the others
    def _stmt_tree(self, node, env):
        if node is None:
            return
        slots = statement_slots(node)
        if slots:
            splices = []
            for container, k in slots:
                stmt = canon.get_slot(container, k)
                call = special_call(stmt)
                if call is not None:
                    block = self._expand(call, env)
                    if block is not None:
                        canon.set_slot(container, k, block)
                    continue
                stored = self._stored_result(stmt, isinstance(k, int))
                if stored is not None:
                    call, target, decl = stored
                    block = self._expand(call, env, result=target)
                    if block is not None:
                        if decl is None:
                            canon.set_slot(container, k, block)
                        else:
                            splices.append((container, k, [decl, block]))
                    continue
                self._stmt_tree(stmt, env)
            for container, k, items in reversed(splices):
                container[k:k + 1] = items
            if isinstance(node, c_ast.If):
                self._exprs(node.cond)
            if isinstance(node, c_ast.For):
                for part in (node.init, node.cond, node.next):
                    self._exprs(part)
            if isinstance(node, (c_ast.While, c_ast.DoWhile)):
                self._exprs(node.cond)
            return
        if isinstance(node, c_ast.Switch):
            self._exprs(node.cond)
            self._stmt_tree(node.stmt, env)
            return
        self._exprs(node)

    @staticmethod
    def _stored_result(stmt, in_list: bool):
        """(call, target lvalue, declaration or None) for ``x = f(...);`` and, in a block,
        ``T x = f(...);`` where ``f`` is a special instruction returning a value (``__bang_sum``):
        the expansion stores the result into the target (a declaration loses its initializer
        and comes first). None otherwise (a const declaration, an lvalue with side effects)."""
        if isinstance(stmt, c_ast.Assignment) and stmt.op == "=" and special_call(stmt.rvalue) is not None \
                and not has_side_effects(stmt.lvalue):
            return special_call(stmt.rvalue), stmt.lvalue, None
        if in_list and isinstance(stmt, c_ast.Decl) and stmt.name and special_call(stmt.init) is not None \
                and "const" not in (stmt.quals or []) and isinstance(stmt.type, c_ast.TypeDecl) \
                and "const" not in (stmt.type.quals or []):
            call = special_call(stmt.init)
            decl = copy.copy(stmt)
            decl.init = None
            return call, c_ast.ID(stmt.name), decl
        return None

    def _exprs(self, node):
        if node is None:
            return
        for n in bl.walk(node):
            if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and is_special(n.name.name):
                self.diag("XP-DETENSOR-002", f"'{n.name.name}' is used inside an expression; only calls "
                          "in statement position are expanded", n, n.name.name)

    def _expand(self, call: c_ast.FuncCall, env, result=None) -> c_ast.Compound | None:
        """The block of ``call``; ``result``: the lvalue that receives its returned value."""
        name = call.name.name
        args = list(call.args.exprs) if call.args else []
        types = [bl.type_of(a, env) for a in args]
        if name not in bl.names():
            self.diag("XP-DETENSOR-001", f"'{name}' has no description with a reference body in "
                      "platforms/bang/intrinsics", call, name)
            return None
        if self.typed and result is None:
            block = self._typed_copy(call, args, types, env)
            if block is not None:
                return block
        form = bl.select_form(name, types)
        if form is None:
            self.diag("XP-DETENSOR-003", f"no form of '{name}' takes {len(args)} arguments", call, name)
            return None
        try:
            inst = bl.instantiate(form, types, self.arch_group, returns=result is not None)
        except bl.InstantiationError as exc:
            self.diag(exc.code, str(exc), call, name)
            return None
        if result is not None:
            m = re.search(r"\breturn\b([^;]*);\s*$", inst.body)
            if m is None or inst.ret == "void":
                self.diag("XP-DETENSOR-002", f"'{name}' returns no value to store", call, name)
                return None
            inst = replace(inst, body=inst.body[:m.start()] + f"__xpd_result = ({inst.ret})({m.group(1)});")
        self.counter += 1
        pre = f"xd{self.counter}_"
        lines = []
        for k, (ptype, pname) in enumerate(inst.params):
            star = "" if ptype.endswith("*") else " "
            lines.append(f"{ptype}{star}{pname} = __xpd_arg{k};")
        if inst.prelude.strip():
            lines.append(inst.prelude)
        if inst.loop is not None:
            if self.simd and self._no_partial_overlap(args, types):
                lines.append("#pragma omp simd")
            lines.append(f"for (unsigned int i = 0; i < (unsigned int)({inst.loop}); ++i) {{\n{inst.body}\n}}")
        else:
            lines.append(inst.body)
        try:
            block = bl.parse_block("\n".join(lines))
        except Exception as exc:  # a body outside the parser's C subset
            self.diag("XP-DETENSOR-004", f"reference body of '{name}' does not parse as C: {exc}", call, name)
            return None
        mapping = {n: pre + n for n in _declared(block)}
        _Renamer(mapping).visit(block)
        argmap = {f"__xpd_arg{k}": a for k, a in enumerate(args)}
        if result is not None:
            argmap["__xpd_result"] = result

        class Sub(c_ast.NodeVisitor):
            def generic_visit(v, node):
                for cname, child in node.children():
                    if isinstance(child, c_ast.ID) and child.name in argmap:
                        new = copy.deepcopy(argmap[child.name])
                        canon.replace_child(node, cname, new)
                    else:
                        v.visit(child)

        Sub().visit(block)
        self.helpers |= inst.helpers
        self.stats[name] += 1
        inner = env.child()
        inner.add_decls(block)
        self._stmt_tree(block, inner)          # forms defined in terms of others (__memcpy_async)
        # drop parameters the body does not read (e.g. the copy direction)
        uses = used_ids(block)
        items = []
        for k, item in enumerate(block.block_items or []):
            if (k < len(inst.params) and isinstance(item, c_ast.Decl) and uses[item.name] == 0
                    and not has_side_effects(item.init)):
                continue
            items.append(item)
        block.block_items = items
        return block

    def _typed_copy(self, call, args, types, env) -> c_ast.Compound | None:
        """``__memcpy(dst, src, size, dir[, dst_stride, src_stride, segnum])`` between two
        different arrays / pointers of one element type T, with byte counts that are whole
        elements by their form, as typed element loops (option ``typed``): ``dst[s * DS + i] =
        src[s * SS + i]`` for ``s <= segnum``, ``i < size / sizeof(T)``. None: not that form."""
        name = call.name.name
        if name not in ("__memcpy", "__memcpy_async") or len(args) not in (4, 7):
            return None
        td, ts = types[0], types[1]
        if td.ptr != 1 or ts.ptr != 1 or not td.known() or td.scalar != ts.scalar:
            return None
        nd, _ = _base(args[0])
        ns, _ = _base(args[1])
        if nd is None or ns is None or nd == ns:
            return None
        elem = bl.size_of(td.scalar)
        counts = [_elements(a, elem) for a in [args[2]] + (args[4:6] if len(args) == 7 else [])]
        if any(c is None for c in counts):
            return None
        self.counter += 1
        pre = f"xd{self.counter}_"
        t = td.base if bl.canon(td.base) == td.scalar else td.scalar
        q = {"dst": args[0], "src": args[1], "n": counts[0]}
        if len(args) == 7:
            q.update({"ds": counts[1], "ss": counts[2], "seg": args[6]})
            text = (f"{{ {t} *{pre}dst = ({t} *)(__xq_dst); const {t} *{pre}src = (const {t} *)(__xq_src);"
                    f" for (int {pre}s = 0; {pre}s <= (int)(__xq_seg); ++{pre}s)"
                    f" for (int {pre}i = 0; {pre}i < (int)(__xq_n); ++{pre}i)"
                    f" {pre}dst[{pre}s * (__xq_ds) + {pre}i] = {pre}src[{pre}s * (__xq_ss) + {pre}i]; }}")
        else:
            text = (f"{{ {t} *{pre}dst = ({t} *)(__xq_dst); const {t} *{pre}src = (const {t} *)(__xq_src);"
                    f" for (int {pre}i = 0; {pre}i < (int)(__xq_n); ++{pre}i) {pre}dst[{pre}i] = {pre}src[{pre}i]; }}")
        block = bl.parse_block(text).block_items[0]
        argmap = {f"__xq_{k}": v for k, v in q.items()}

        class Sub(c_ast.NodeVisitor):
            def generic_visit(v, node):
                for cname, child in node.children():
                    if isinstance(child, c_ast.ID) and child.name in argmap:
                        canon.replace_child(node, cname, copy.deepcopy(argmap[child.name]))
                    else:
                        v.visit(child)

        Sub().visit(block)
        self.stats[name + " (typed)"] += 1
        return block

    def _no_partial_overlap(self, args, types) -> bool:
        ptrs = [(a, self._text(a)) for a, t in zip(args, types) if t.ptr > 0]
        for i in range(len(ptrs)):
            for j in range(i + 1, len(ptrs)):
                (a, ta), (b, tb) = ptrs[i], ptrs[j]
                if ta == tb:
                    continue
                na, _ = _base(a)
                nb, _ = _base(b)
                if na is None or nb is None or na == nb or na not in self.arrays or nb not in self.arrays:
                    return False
        return True

    def _text(self, node) -> str:
        from platforms.common.generator import expr_text

        return expr_text(node)


def _existing_functions(ast) -> set[str]:
    out = set()
    for e in ast.ext:
        if isinstance(e, c_ast.FuncDef):
            out.add(e.decl.name)
        elif isinstance(e, c_ast.Decl) and isinstance(e.type, c_ast.FuncDecl):
            out.add(e.name)
        elif isinstance(e, c_ast.Decl) and isinstance(e.type, c_ast.Enum):
            out.add("XPD_modes")
    return out


def insert_helpers(ast, used: set[str]) -> None:
    have = _existing_functions(ast)
    need = {h for h in used if h not in have}
    if not need:
        return
    defs = bl.helper_defs(need)
    # after leading typedefs (e.g. the half type of a vnni program), before everything else
    at = 0
    while at < len(ast.ext) and isinstance(ast.ext[at], c_ast.Typedef):
        at += 1
    ast.ext[at:at] = defs


@register(PassInfo(
    name=NAME,
    summary="BANG: replace __bang_* / __memcpy / fill calls by scalar C loops generated from "
            "platforms/bang/intrinsics reference bodies",
    options={"arch_group": Option(int, 0, "arch group the bodies are folded for (0 = default profile)"),
             "simd": Option(bool, True, "mark independent element loops #pragma omp simd"),
             "typed": Option(bool, False, "1-D / 2-D __memcpy between two buffers of one element type "
                             "as typed element loops (byte counts that are whole elements by form)")},
    requires=("every special-instruction call has a description with a reference body (XP-DETENSOR-001)",
              "each such call is a statement (XP-DETENSOR-002)",
              "template parameters deducible from the argument types (XP-DETENSOR-003)",
              "the reference body lowers to plain C (XP-DETENSOR-004)"),
    guarantees=("same outputs on the BANG virtual device",
                "no __bang_* / __memcpy / fill call left"),
    introduces=("xpd_* plain-C helper functions", "#pragma omp simd"),
))
def detensorize(program, *, arch_group: int = 0, simd: bool = True, typed: bool = False,
                plan: canon.Rewritten | None = None):
    if program.platform != "bang":
        return program
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _expansion(
        program, arch_group=arch_group, simd=simd, typed=typed))
    ast, d = plan.ast, plan.data
    insert_helpers(ast, d.helpers)
    facts = copy.deepcopy(program.facts)
    facts.setdefault("statistics", {})[NAME] = dict(sorted(d.stats.items()))
    return replace(program, ast=ast, facts=facts, source="",
                   intrinsics=[i for i in program.intrinsics if not is_special(i)])


def _expansion(program, *, arch_group: int = 0, simd: bool = True, typed: bool = False):
    """The expansion run once on a copy of the AST: its refusals, or the rewritten AST with the
    Detensorizer (helpers used, statistics) for the rewrite to emit."""
    if program.platform != "bang":
        return [Diagnostic("XP-DETENSOR-005", f"detensorize (BANG part) applies to BANG programs, not "
                           f"{program.platform}", Coord(program.path), pass_name=NAME)]
    ast = copy.deepcopy(program.ast)
    d = Detensorizer(program, arch_group or default_arch_group(), simd, typed=typed)
    d.run(ast)
    return d.diagnostics or canon.Rewritten(ast, d)


@detensorize.legality
def _detensorize_legal(program, *, arch_group: int = 0, simd: bool = True, typed: bool = False):
    return _expansion(program, arch_group=arch_group, simd=simd, typed=typed)
