"""affine walker: the pycparser AST of the entry function -> ``NestInfo``.

``analyze(program)`` walks the entry function twice with ``_Walker`` (a scoped visitor: the
first walk counts the writes of each scalar, the second substitutes values and builds the
loops, the accesses with their subscripts as IR, the guards they run under and the problems,
constructs the analysis refuses); the bounds of running counters are attached afterwards
(``_counter_facts``). The AST helpers the walk needs (``parent_map``, loop steps, pure helper
functions) live here too.
"""
from __future__ import annotations

from pycparser import c_ast

from .ir import (
    Access, CHECK_CALLS, IR, LoopInfo, MEM_FUNCTIONS, NestInfo, OUTPUT_CALLS, PURE_FUNCTIONS, Var,
    bytes_of_words, const_ir, is_int_type, is_int_words, locals_in, recombine_divmod, replace_ir, subst_var, type_names, type_names_text)


class _Walker(c_ast.NodeVisitor):
    """Scoped walk of the entry function; ``writes`` from a first run feed substitution."""

    def __init__(self, program, fdef: c_ast.FuncDef, writes: dict | None):
        self.program = program
        self.constants = dict(program.facts.get("constants", {}))
        self.helpers = {e.decl.name: e for e in program.ast.ext if isinstance(e, c_ast.FuncDef)}
        # scalar typedefs (``typedef float simsimd_f32_t;``): casts and declarations through
        # them must read as their base types, or a cast to one looks like a reinterpretation
        self.typedefs = {e.name: e.type for e in program.ast.ext if isinstance(e, c_ast.Typedef)
                         and isinstance(e.type, c_ast.TypeDecl)
                         and isinstance(e.type.type, c_ast.IdentifierType)}
        self.writes_before = writes            # None in the first run
        self.writes: dict[str, int] = {}
        self.scopes: list[dict[str, Var]] = [{}]
        self.loops: list[LoopInfo] = []
        self.all_loops: list[LoopInfo] = []
        self.top: list[LoopInfo] = []
        self.guards: list = []
        self.accesses: list[Access] = []
        self.problems: list = []
        self.locals: dict[str, Var] = {}
        # early-exit flags of lifted thread loops: local array uid -> (setting loop, flag
        # index IR, exit condition IR) for ``if (c) { F[t] = 1; continue; }``
        self.flags: dict = {}
        self.counter = 0
        self.histories = 0                # values a local held before an assignment (_assigned)
        self.before: dict = {}            # local uid -> its history value while it is assigned
        self.fdef = fdef
        self.params = {}
        for p in program.entry.params:
            self.params[p.name] = p
            kind = "ptr" if p.kind == "pointer" else "scalar"
            v = Var(p.name, p.name, kind, value=("s", p.name) if kind == "scalar" else None,
                    root=p.name if kind == "ptr" else None, offset=("c", 0))
            self.scopes[0][p.name] = v

    # -- scopes --------------------------------------------------------------------------
    def lookup(self, name: str) -> Var | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def _uid(self, name: str) -> str:
        self.counter += 1
        return f"{name}#{self.counter}"

    def declare(self, decl: c_ast.Decl) -> Var:
        uid = self._uid(decl.name)
        owners = tuple(self.loops)
        t = decl.type
        if isinstance(t, c_ast.ArrayDecl):
            dims = []
            while isinstance(t, c_ast.ArrayDecl):
                d = self.ir(t.dim) if t.dim is not None else None
                dims.append(d[1] if d and d[0] == "c" else None)
                t = t.type
            var = Var(decl.name, uid, "array", owners, root=uid, offset=("c", 0),
                      dims=tuple(dims), decl=decl)
            if decl.init is not None:
                self.visit(decl.init)
        elif isinstance(t, c_ast.PtrDecl):
            var = Var(decl.name, uid, "local", owners, value=("l", uid), decl=decl)
            if decl.init is not None:
                self.visit_pointer_expr(decl.init)
                base = self.pointer_base(decl.init)
                if base is not None and self._never_written(uid):
                    var = Var(decl.name, uid, "alias", owners, root=base[0], offset=base[1],
                              decl=decl)
                    var.kind = "alias" if base[1] is not None else "alias?"
        else:
            value = ("l", uid)
            if decl.init is not None:
                self.visit(decl.init)
                if self._never_written(uid) and self.is_int(t) and not isinstance(
                        decl.init, c_ast.InitList):
                    sub = self.ir(decl.init)
                    if sub is not None:
                        value = sub
            var = Var(decl.name, uid, "local", owners, value=value, decl=decl)
        self.scopes[-1][decl.name] = var
        self.locals[uid] = var
        return var

    def _never_written(self, uid: str) -> bool:
        return self.writes_before is not None and self.writes_before.get(uid, 0) == 0

    # -- expressions -> IR -------------------------------------------------------------
    def ir(self, e) -> IR:
        match e:
            case c_ast.Constant(type=t, value=v) if "int" in t or "long" in t or "char" in t:
                try:
                    return ("c", int(v.rstrip("uUlL"), 0) if not v.startswith("'") else ord(v[1]))
                except ValueError:
                    return None
            case c_ast.ID(name=name):
                var = self.lookup(name)
                if var is None:
                    if name in self.constants and self.constants[name] is not None:
                        return ("c", int(self.constants[name]))
                    return None
                if var.kind in ("scalar", "loop", "local"):
                    return var.value
                return None
            case c_ast.Cast(to_type=tt, expr=x):
                return self.ir(x) if self.is_int(tt) else None
            case c_ast.UnaryOp(op="-", expr=x):
                a = self.ir(x)
                return None if a is None else ("neg", a)
            case c_ast.UnaryOp(op="+", expr=x):
                return self.ir(x)
            case c_ast.UnaryOp(op="~", expr=x):
                a = self.ir(x)
                return ("c", ~a[1]) if a is not None and a[0] == "c" else None
            case c_ast.UnaryOp(op="sizeof"):
                size = self._const_bytes(e)      # of a type or a constant-size array
                return None if size is None else ("c", size)
            case c_ast.BinaryOp(op=op, left=l, right=r) if op in ("+", "-", "*", "/", "%", "<<",
                                                                   ">>", "&"):
                a, b = self.ir(l), self.ir(r)
                if a is None or b is None:
                    return None
                if op in ("<<", ">>", "&") and const_ir(b) is not None:
                    b = ("c", const_ir(b))       # ``tx & 64 - 1`` (HIP warp lanes)
                if op == "<<":
                    return ("*", a, ("c", 1 << b[1])) if b[0] == "c" and 0 <= b[1] < 62 else None
                if op == ">>":
                    return ("fdiv", a, ("c", 1 << b[1])) if b[0] == "c" and 0 <= b[1] < 62 else None
                if op == "&":
                    if b[0] == "c" and b[1] >= 0 and (b[1] + 1) & b[1] == 0:
                        return ("fmod", a, ("c", b[1] + 1))
                    if b[0] == "c" and b[1] < 0 and (~b[1] + 1) & ~b[1] == 0:
                        # ``n & ~15``: n rounded down to a multiple of 16 (two's complement)
                        return ("*", ("fdiv", a, ("c", ~b[1] + 1)), ("c", ~b[1] + 1))
                    return None
                return recombine_divmod((op, a, b)) if op == "+" else (op, a, b)
            case c_ast.TernaryOp(cond=c, iftrue=t, iffalse=f):
                cc = self.cond(c)
                known = _const_cond(cc)
                if known is not None:          # ``(0 == 0) ? row : col`` (lifted layouts)
                    return self.ir(t if known else f)
                a, b = self.ir(t), self.ir(f)
                if cc is None or a is None or b is None:
                    return None
                return ("?", cc, a, b)
        return None

    def cond(self, e) -> IR:
        match e:
            case c_ast.BinaryOp(op=op, left=l, right=r) if op in ("<", "<=", ">", ">=", "==", "!="):
                a, b = self.ir(l), self.ir(r)
                if a is None or b is None:
                    return None
                if op == ">":
                    return ("<", b, a)
                if op == ">=":
                    return ("<=", b, a)
                return (op, a, b)
            case c_ast.BinaryOp(op=op, left=l, right=r) if op in ("&&", "||"):
                a, b = self.cond(l), self.cond(r)
                if op == "&&":
                    if a is None:
                        return b
                    return a if b is None else ("&&", a, b)
                return None if a is None or b is None else ("||", a, b)
            case c_ast.UnaryOp(op="!", expr=x):
                a = self.cond(x)
                return None if a is None else ("!", a)
        a = self.ir(e)
        return None if a is None else ("!=", a, ("c", 0))

    def pointer_base(self, e) -> tuple[str, IR] | None:
        """(root buffer, element offset IR or None) of a pointer-valued expression."""
        match e:
            case c_ast.ID(name=name):
                var = self.lookup(name)
                if var is None:
                    return None
                if var.kind in ("ptr", "alias", "alias?"):
                    return (var.root, var.offset)
                if var.kind == "array" and len(var.dims) == 1:
                    return (var.root, ("c", 0))
                return None
            case c_ast.Cast(expr=x):
                base = self.pointer_base(x)
                if base is None:
                    return None
                same = self.words(type_names(e.to_type)) == self._elem_type(base[0])
                if same or base[1] is None or _is_bytes(base[1]):
                    return base
                size = self.root_elem_bytes(base[0])          # reinterpretation: bytes
                return (base[0], None if size is None else ("bytes", ("*", base[1], ("c", size))))
            case c_ast.BinaryOp(op=op, left=l, right=r) if op in ("+", "-"):
                base = self.pointer_base(l)
                if base is None and op == "+":
                    base, r, l = self.pointer_base(r), l, r
                if base is None:
                    return None
                off = self.ir(r)
                if off is None or base[1] is None:
                    return (base[0], None)
                if _is_bytes(base[1]):
                    size = self.pointee_bytes(l)
                    if size is None:
                        return (base[0], None)
                    return (base[0], ("bytes", (op, base[1][1], ("*", off, ("c", size)))))
                return (base[0], recombine_divmod((op, base[1], off)) if op == "+" else
                        (op, base[1], off))
            case c_ast.ArrayRef():
                return self._decayed_row(e)
            case c_ast.UnaryOp(op="&", expr=c_ast.ArrayRef() as ref):
                acc = self.ref_target(ref)
                if acc is not None and acc[1] is not None and _is_bytes(acc[1]):
                    return (acc[0], ("bytes", acc[1][1]))
                return None if acc is None else (acc[0], acc[1])
        return None

    def _decayed_row(self, ref: c_ast.ArrayRef) -> tuple[str, IR] | None:
        """``a[i][j]`` of a local ``T a[D0][D1][D2][D3]`` used as a pointer (it decays to a
        pointer to its first element): (root, flat element offset ``(i * D1 + j) * D2 * D3``)."""
        subs, node = [], ref
        while isinstance(node, c_ast.ArrayRef):
            subs.append(node.subscript)
            node = node.name
        subs.reverse()
        if not isinstance(node, c_ast.ID):
            return None
        var = self.lookup(node.name)
        if var is None or var.kind != "array" or len(subs) >= len(var.dims) or \
                any(d is None for d in var.dims[1:]):
            return None
        idx: IR = ("c", 0)
        for k, sub in enumerate(subs):
            si = self.ir(sub)
            if si is None:
                return (var.root, None)
            idx = si if k == 0 else ("+", ("*", idx, ("c", var.dims[k])), si)
        rest = 1
        for d in var.dims[len(subs):]:
            rest *= d
        return (var.root, ("*", idx, ("c", rest)))

    def _row_dims(self, e) -> list | None:
        """Constant dimensions of the array type a pointer expression points to
        (``float (*F)[16]`` -> [16]); [] for a pointer to a scalar; None if unknown."""
        t = None
        if isinstance(e, c_ast.ID):
            var = self.lookup(e.name)
            if var is not None and var.decl is not None and isinstance(var.decl.type, c_ast.PtrDecl):
                t = var.decl.type.type
        elif isinstance(e, c_ast.Cast) and isinstance(e.to_type.type, c_ast.PtrDecl):
            t = e.to_type.type.type
        if t is None:
            return None
        dims = []
        while isinstance(t, c_ast.ArrayDecl):
            d = self.ir(t.dim) if t.dim is not None else None
            if d is None or d[0] != "c":
                return None
            dims.append(d[1])
            t = t.type
        return dims

    def root_elem_bytes(self, root: str) -> int | None:
        """Size in bytes of the element of buffer ``root`` (pointer parameter / local array)."""
        return bytes_of_words(self._elem_type(root))

    def pointee_bytes(self, e) -> int | None:
        """Size in bytes of what the pointer expression ``e`` points to (its C type), if known."""
        match e:
            case c_ast.Cast(to_type=tt) if isinstance(tt.type, c_ast.PtrDecl):
                return bytes_of_words(self.words(type_names(tt.type.type)))
            case c_ast.ID(name=name):
                var = self.lookup(name)
                if var is None:
                    return None
                if var.kind == "ptr":
                    return bytes_of_words(self.words(type_names_text(self.params[name].type)))
                if var.decl is not None and isinstance(var.decl.type, (c_ast.PtrDecl,
                                                                         c_ast.ArrayDecl)):
                    return bytes_of_words(self.words(type_names(var.decl.type.type)))
                return None
            case c_ast.BinaryOp(op=op, left=l, right=r) if op in ("+", "-"):
                return self.pointee_bytes(l) if self.pointer_base(l) is not None else \
                    self.pointee_bytes(r)
        return None

    def _elem_type(self, root: str) -> list[str]:
        p = self.params.get(root)
        if p is not None:
            return self.words(type_names_text(p.type))
        var = self.locals.get(root)
        return self.words(type_names(var.decl.type)) if var is not None and var.decl is not None else []

    def is_int(self, node) -> bool:
        return is_int_words(self.words(type_names(node)))

    def words(self, names: list[str]) -> list[str]:
        """Type words with a scalar typedef name replaced by its base type's words."""
        for _ in range(8):
            w = [x for x in names if x not in ("const", "volatile")]
            if len(w) != 1 or w[0] not in self.typedefs:
                return names
            names = type_names(self.typedefs[w[0]])
        return names

    def ref_target(self, ref: c_ast.ArrayRef) -> tuple[str, IR, bool] | None:
        """(buffer, index IR or None, is_param) of ``x[i]`` / ``x[i][j]``."""
        subs = []
        node = ref
        while isinstance(node, c_ast.ArrayRef):
            subs.append(node.subscript)
            node = node.name
        subs.reverse()
        if isinstance(node, c_ast.ID):
            var = self.lookup(node.name)
            if var is not None and var.kind == "array":
                if len(subs) != len(var.dims):
                    return (var.root, None, False)
                idx: IR = ("c", 0)
                for k, s in enumerate(subs):
                    si = self.ir(s)
                    if si is None or (k > 0 and var.dims[k] is None):
                        return (var.root, None, False)
                    idx = si if k == 0 else ("+", ("*", idx, ("c", var.dims[k])), si)
                return (var.root, idx, False)
        base = self.pointer_base(node)
        if base is None:
            return None
        if len(subs) > 1 and base[1] is not None and not _is_bytes(base[1]):
            # through a pointer to rows: ``F[r][c]`` with ``float (*F)[16]``
            dims = self._row_dims(node)
            if dims is None or len(dims) != len(subs) - 1:
                return (base[0], None, base[0] in self.params)
            idx = None
            for k, sub in enumerate(subs):
                si = self.ir(sub)
                if si is None:
                    return (base[0], None, base[0] in self.params)
                idx = si if k == 0 else ("+", ("*", idx, ("c", dims[k - 1])), si)
            return (base[0], idx if base[1] == ("c", 0) else ("+", base[1], idx),
                    base[0] in self.params)
        if len(subs) != 1:
            return (base[0], None, base[0] in self.params)
        si = self.ir(subs[0])
        if base[1] is not None and _is_bytes(base[1]):
            size = self.pointee_bytes(node)
            if si is None or size is None:
                return (base[0], None, base[0] in self.params)
            return (base[0], ("bytes", ("+", base[1][1], ("*", si, ("c", size))), size),
                    base[0] in self.params)
        idx = None if si is None or base[1] is None else \
            si if base[1] == ("c", 0) else recombine_divmod(("+", base[1], si))
        return (base[0], idx, base[0] in self.params)

    # -- recording ---------------------------------------------------------------------
    def record(self, target, read: bool, write: bool, node) -> None:
        buffer, idx, is_param = target
        if write and buffer in self.flags:
            del self.flags[buffer]        # written again: the flag no longer tells c
        byte_index, width = None, 0
        if idx is not None and _is_bytes(idx):
            byte_index, width, idx = idx[1], idx[2], None
        acc = Access(buffer, is_param, idx, read, write, tuple(self.loops), tuple(self.guards),
                     node, byte_index=byte_index, width=width)
        self.accesses.append(acc)
        for lp in self.loops:
            lp.accesses.append(acc)

    def scalar_write(self, name: str, node, header: bool = False) -> None:
        var = self.lookup(name)
        if var is None:
            self.problems.append(("XP-BIND-003", f"assignment to '{name}', which is not a local "
                                  "or parameter of the entry (global state)", node))
            return
        self.writes[var.uid] = self.writes.get(var.uid, 0) + 1
        self._stale({var.uid})
        for lp in self.loops:
            lp.scalar_writes.append((var, node, header))

    def _stale(self, uids: set) -> None:
        """The locals ``uids`` change value (a write, or a loop that writes them): an active
        guard that reads one of them (``('l', uid)``: its value when the guard was tested) no
        longer holds, and a never-assigned local or pointer alias whose recorded value reads
        one of them keeps its own value, which is no longer that expression of the current
        one (``int n = staged; staged = 0;``). The guard becomes true, the local its own
        opaque value, the alias an unknown offset (one Z3 symbol per local must mean one
        value)."""
        if not uids:
            return
        # what held of a local before the statement that assigns it (``_assigned`` named that
        # value) holds of the value before
        renamed = [self._to_history(g, uids) for g in self.guards]
        self.guards[:] = [_TRUE if locals_in(g, set()) & uids else g for g in renamed]
        for scope in self.scopes:
            for var in scope.values():
                if var.uid in uids:
                    continue
                if var.kind == "local" and var.value is not None and \
                        locals_in(var.value, set()) & uids:
                    # read of the value before the assignment (``int h1 = h0 + K; if (h0 <
                    # 0) h0 = 0;``): the history value ``_assigned`` named keeps it exact
                    value = self._to_history(var.value, uids)
                    var.value = value if not locals_in(value, set()) & uids else ("l", var.uid)
                elif var.kind in ("alias", "alias?") and var.offset is not None and \
                        locals_in(var.offset, set()) & uids:
                    var.kind, var.offset = "alias?", None

    def _to_history(self, ir, uids: set):
        """``ir`` with each local of ``uids`` that is being assigned (``self.before``) read as
        its history value, the value it had before the statement."""
        for uid, before in self.before.items():
            if uid in uids:
                ir = replace_ir(ir, ("l", uid), before)
        return ir

    def _stale_in(self, *nodes) -> set:
        """Before a loop: the locals in scope that its header or body may write (by name,
        an over-approximation) are stale for what was recorded before it (a later iteration
        sees their new values). Returns their uids."""
        uids = set()
        for root in nodes:
            if root is None:
                continue
            for n in _walk_nodes(root):
                x = None
                if isinstance(n, c_ast.Assignment):
                    x = n.lvalue
                elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
                    x = n.expr
                if isinstance(x, c_ast.ID):
                    var = self.lookup(x.name)
                    if var is not None:
                        uids.add(var.uid)
        self._stale(uids)
        return uids

    def lvalue(self, lv, read: bool, node) -> None:
        match lv:
            case c_ast.ID(name=name):
                self.scalar_write(name, node)
            case c_ast.ArrayRef() if _struct_member_root(lv) is not None:
                # s.devices[0].nsm = v: an element of an array field of a struct local; the
                # whole struct is the unit that is written (as for s.f = v)
                self.lvalue(_struct_member_root(lv), True, node)
                node_ = lv
                while isinstance(node_, (c_ast.ArrayRef, c_ast.StructRef)):
                    if isinstance(node_, c_ast.ArrayRef):
                        self.visit(node_.subscript)
                    node_ = node_.name
            case c_ast.ArrayRef():
                target = self.ref_target(lv)
                if target is None:
                    self.problems.append(("XP-BIND-003", "store through a pointer the analysis "
                                          "cannot trace to a parameter or local array", node))
                else:
                    self.record(target, read, True, node)
                self.visit(lv.subscript)
                self._visit_ref_inner(lv.name)
            case c_ast.UnaryOp(op="*", expr=x) if _address_of_object(x) is not None:
                # *((T *) &v) = e (an inlined out-parameter: cudaGetDevice(&id)): a store to v
                self.lvalue(_address_of_object(x), read, node)
            case c_ast.UnaryOp(op="*", expr=x):
                base = self.pointer_base(x)
                if base is None:
                    self.problems.append(("XP-BIND-003", "store through an untraceable pointer",
                                          node))
                else:
                    self.record((base[0], self._deref_index(base, x), base[0] in self.params),
                                read, True, node)
                self.visit_pointer_expr(x)
            case c_ast.StructRef(name=base, type="."):
                # a field of a struct local (v.x = ...) or of an array element (a[i].x):
                # the whole struct / element is the unit that is written (and read)
                self.lvalue(base, True, node)
            case c_ast.StructRef(name=base, type="->"):
                # p->f = ...: a store into the struct p points at, as (*p).f
                self.lvalue(c_ast.UnaryOp("*", base, coord=lv.coord), True, node)
            case _:
                self.problems.append(("XP-BIND-003", f"unsupported assignment target "
                                      f"({type(lv).__name__})", node))
                self.visit(lv)

    def _deref_index(self, base, x) -> IR:
        if base[1] is not None and _is_bytes(base[1]):
            size = self.pointee_bytes(x)
            return None if size is None else ("bytes", base[1][1], size)
        return base[1]

    def _visit_ref_inner(self, name) -> None:
        while isinstance(name, c_ast.ArrayRef):
            self.visit(name.subscript)
            name = name.name
        self.visit_pointer_expr(name)

    def visit_pointer_expr(self, e) -> None:
        """Visit the integer parts of a traced pointer expression (the base is no escape)."""
        if self.pointer_base(e) is None:
            self.visit(e)
            return
        match e:
            case c_ast.ID():
                return
            case c_ast.Cast(expr=x):
                self.visit_pointer_expr(x)
            case c_ast.BinaryOp(left=l, right=r):
                if self.pointer_base(l) is not None:
                    self.visit_pointer_expr(l)
                    self.visit(r)
                else:
                    self.visit(l)
                    self.visit_pointer_expr(r)
            case c_ast.UnaryOp(op="&", expr=c_ast.ArrayRef() as ref):
                self._visit_ref_inner(ref)
            case _:
                self.visit(e)

    # -- visitors ----------------------------------------------------------------------
    def visit_Compound(self, n):
        self.scopes.append({})
        pushed = 0
        items = n.block_items or []
        # a label (or case) after a statement can be reached without running it: what an
        # assignment states holds only in the part of the block before the last one
        entries = (c_ast.Label, c_ast.Case, c_ast.Default)
        last_entry = max((k for k, item in enumerate(items)
                          if any(isinstance(x, entries) for x in _walk_nodes(item))), default=-1)
        for k, item in enumerate(items):
            assigned = self._assigned(item) if k >= last_entry else None
            self.visit(item)
            self.before.clear()
            c = self._asserted(item) or assigned or self._declared(item)
            if c is None:
                c = self._exit_guard(item, items[k + 1:])
                if c is not None:
                    self._flag_site(n, item, items[:k])
            if c is not None:             # holds for the rest of the block
                self.guards.append(c)
                pushed += 1
        del self.guards[len(self.guards) - pushed:]
        self.scopes.pop()

    def _exit_guard(self, item, rest):
        """``!c`` after ``if (c) { ...; continue; }`` (or ``break`` / ``return``): the rest of
        the block runs only where ``c`` is false. None for other statements, or when a label
        in the rest of the block could be entered from elsewhere."""
        if not isinstance(item, c_ast.If) or item.iffalse is not None:
            return None
        body = item.iftrue
        last = body.block_items[-1] if isinstance(body, c_ast.Compound) and body.block_items \
            else body
        if not isinstance(last, (c_ast.Continue, c_ast.Break, c_ast.Return)):
            return None
        import passes.canon as canon
        entries = (c_ast.Label, c_ast.Case, c_ast.Default)    # ways into the rest
        if any(isinstance(x, entries) for r in rest for x in canon.walk(r)) or \
                any(isinstance(x, entries) for x in canon.walk(body)):
            return None
        c = self.cond(item.cond)
        if c is None:
            return self._flag_guard(item.cond)
        return ("!", c)

    def _flag_site(self, block, item, before) -> None:
        """Record ``if (c) { ...; F[e] = 1; ...; continue; }`` at the top of a loop body
        (nothing before it can leave the iteration): afterwards ``F[e] != 0`` wherever ``c``
        held for that iteration, until ``F`` is written again."""
        if not self.loops or block is not self.loops[-1].node.stmt or \
                not isinstance(item.iftrue, c_ast.Compound):
            return
        import passes.canon as canon
        if any(isinstance(x, (c_ast.Continue, c_ast.Break, c_ast.Return, c_ast.Goto))
               for b in before for x in canon.walk(b)):
            return
        c = self.cond(item.cond)
        if c is None or locals_in(c, set()):
            return
        exits = (c_ast.Continue, c_ast.Break, c_ast.Return, c_ast.Goto)
        for k, s in enumerate(item.iftrue.block_items or []):
            if any(isinstance(x, exits) for b in item.iftrue.block_items[:k]
                   for x in canon.walk(b)):
                return                    # the flag is not set on every path where c holds
            if isinstance(s, c_ast.Assignment) and s.op == "=" and \
                    isinstance(s.lvalue, c_ast.ArrayRef) and \
                    isinstance(s.rvalue, c_ast.Constant) and s.rvalue.value in ("1", "true"):
                t = self.ref_target(s.lvalue)
                if t is not None and not t[2] and t[1] is not None and \
                        not locals_in(t[1], set()):
                    var = self.locals.get(t[0])
                    if var is not None and var.kind == "array":
                        self.flags[t[0]] = (self.loops[-1], t[1], c)

    def _flag_guard(self, cond):
        """``!c'`` for ``if (F[e']) continue;`` in a loop over the same range as the loop that
        set the flag ``F`` (``e'`` and ``c'`` are ``e`` and ``c`` of its own variable): the
        rest of the body runs only where ``F[e'] == 0``, so ``c`` did not hold there."""
        if not isinstance(cond, c_ast.ArrayRef) or not self.loops:
            return None
        t = self.ref_target(cond)
        if t is None or t[0] not in self.flags or t[1] is None:
            return None
        l1, e1, c = self.flags[t[0]]
        l2 = self.loops[-1]
        if l2 is l1 or not l1.canonical or not l2.canonical or \
                (l1.lo, l1.hi, l1.start, l1.step) != (l2.lo, l2.hi, l2.start, l2.step):
            return None
        if subst_var(e1, l1.uid, l2.uid) != t[1]:
            return None
        return ("!", subst_var(c, l1.uid, l2.uid))

    def _asserted(self, item):
        """The condition of an ``assert(c);`` statement (the program's own precondition: it
        stops where ``c`` fails), None for other statements."""
        if isinstance(item, c_ast.FuncCall) and isinstance(item.name, c_ast.ID) and \
                item.name.name == "assert" and item.args is not None and \
                len(item.args.exprs) == 1:
            return self.cond(item.args.exprs[0])
        return None

    def _assigned(self, item):
        """``x == E`` after a statement ``x = E;`` of a block (``src = src < 0 ? 0 : src;``,
        a clamp of a value read from memory) for an integer local of unknown value, to hold
        for the rest of the block: ``E`` over the values before the statement, where the
        value ``x`` had is a symbol of its own (a history value: it never changes). A later
        write of ``x`` or of a local ``E`` reads makes the condition stale (``_stale``).
        Computed before the statement runs; None for other statements."""
        cond = None
        if isinstance(item, c_ast.If) and item.iffalse is None:
            # ``if (c) x = E;`` (a clamp ``if (jmax > S) jmax = S;``): x == (c ? E : x before)
            body = item.iftrue
            if isinstance(body, c_ast.Compound) and len(body.block_items or []) == 1:
                body = body.block_items[0]
            cond, item = self.cond(item.cond), body
            if cond is None:
                return None
        if not (isinstance(item, c_ast.Assignment) and item.op == "=" and
                isinstance(item.lvalue, c_ast.ID)):
            return None
        var = self._unknown_int_local(item.lvalue.name)
        value = self.ir(item.rvalue) if var is not None else None
        if value is None:
            return None
        self.histories += 1
        before = ("l", f"{var.uid}~{self.histories}")
        if cond is not None:
            value = ("?", cond, value, ("l", var.uid))
        self.before[var.uid] = before
        return ("==", ("l", var.uid), replace_ir(value, ("l", var.uid), before))

    def _unknown_int_local(self, name: str) -> Var | None:
        """The integer local ``name`` when the analysis keeps it as a value of its own (it is
        written after its declaration), else None."""
        var = self.lookup(name)
        if var is None or var.kind != "local" or var.value != ("l", var.uid) or \
                var.decl is None or not isinstance(var.decl.type, c_ast.TypeDecl) or \
                not self.is_int(var.decl.type):
            return None
        return var

    def _declared(self, item):
        """``x == E`` after ``int x = E;`` for an integer local written later (its value is
        a symbol of its own): the initial value, until the first write makes it stale."""
        if not (isinstance(item, c_ast.Decl) and item.init is not None and item.name and
                isinstance(item.type, c_ast.TypeDecl)) or isinstance(item.init, c_ast.InitList):
            return None
        var = self._unknown_int_local(item.name)
        if var is None or var.decl is not item:
            return None
        value = self.ir(item.init)
        if value is None or var.uid in locals_in(value, set()):
            return None
        return ("==", ("l", var.uid), value)

    def visit_Decl(self, n):
        if isinstance(n.type, c_ast.FuncDecl) or n.name is None:
            return
        self.declare(n)

    def visit_Assignment(self, n):
        self.visit(n.rvalue)
        self.lvalue(n.lvalue, n.op != "=", n)

    def visit_UnaryOp(self, n):
        if n.op in ("++", "--", "p++", "p--"):
            self.lvalue(n.expr, True, n)
        elif n.op == "*" and _address_of_object(n.expr) is not None:
            self.visit(_address_of_object(n.expr))      # *((T *) &v): a read of v
        elif n.op == "*":
            base = self.pointer_base(n.expr)
            if base is None:
                self.problems.append(("XP-BIND-003", "load through an untraceable pointer", n))
            else:
                self.record((base[0], self._deref_index(base, n.expr), base[0] in self.params),
                            True, False, n)
            self.visit_pointer_expr(n.expr)
        elif n.op == "&":
            if isinstance(n.expr, c_ast.ID):
                self.scalar_write(n.expr.name, n)     # address taken: may be written
            elif isinstance(n.expr, c_ast.ArrayRef):
                target = self.ref_target(n.expr)
                if target is not None:
                    self.record((target[0], None, target[2]), True, True, n)
                self.visit(n.expr.subscript)
            else:
                self.visit(n.expr)
        elif n.op == "sizeof":
            return
        else:
            self.visit(n.expr)

    def visit_ArrayRef(self, n):
        if _struct_member_root(n) is not None:      # s.a[i]: a read of the struct local s
            node = n
            while isinstance(node, (c_ast.ArrayRef, c_ast.StructRef)):
                if isinstance(node, c_ast.ArrayRef):
                    self.visit(node.subscript)
                node = node.name
            self.visit(node)
            return
        target = self.ref_target(n)
        if target is None:
            self.problems.append(("XP-BIND-003", "load through a pointer the analysis cannot "
                                  "trace to a parameter or local array", n))
        else:
            self.record(target, True, False, n)
        self.visit(n.subscript)
        self._visit_ref_inner(n.name)

    def visit_ID(self, n):
        var = self.lookup(n.name)
        if var is not None and var.kind in ("ptr", "alias", "alias?", "array"):
            # a pointer escaping into an expression we do not model (passed, stored)
            self._escape_pointer(var, n)

    def _escape_pointer(self, var: Var, node) -> None:
        root = var.root
        self.record((root, None, root in self.params), True, True, node)

    def visit_FuncCall(self, n):
        name = n.name.name if isinstance(n.name, c_ast.ID) else None
        args = n.args.exprs if n.args is not None else []
        helper = self.helpers.get(name) if name else None
        pure = name in PURE_FUNCTIONS or name in CHECK_CALLS or name in OUTPUT_CALLS or \
            (helper is not None and _pure_helper(helper, self.helpers))
        if name in MEM_FUNCTIONS and self._mem_operands_traced(name, args):
            if self._mem_ranges(name, args, n):
                return
            # its effects are the accesses its pointer operands record when visited (each an
            # escape: read and written at an unknown element of a known buffer)
            pure = True
        if not pure:
            for lp in self.loops:
                lp.unknown_calls.append((name or "?", n))
            if not self.loops:
                self.top_calls.append((name or "?", n))
        for a in args:
            self.visit(a)

    top_calls: list = []

    def _mem_ranges(self, name: str, args, node) -> bool:
        """Record a mem* call with a constant byte count as byte-range accesses (destination
        written, source read); False (nothing recorded) when the count is not constant."""
        nbytes = self._const_bytes(args[2])
        if nbytes is None or nbytes <= 0:
            return False
        ops = [(args[0], True)] + ([] if name == "memset" else [(args[1], False)])
        for a, write in ops:
            x = a
            while isinstance(x, c_ast.Cast):
                x = x.expr
            if isinstance(x, c_ast.UnaryOp) and x.op == "&" and isinstance(x.expr, c_ast.ID):
                self.scalar_write(x.expr.name, node)
                continue
            base = self.pointer_base(a)
            off = base[1]
            if off is not None and not _is_bytes(off):
                size = self.root_elem_bytes(base[0])
                off = None if size is None else ("bytes", ("*", off, ("c", size)))
            idx = None if off is None else ("bytes", off[1], nbytes)
            self.record((base[0], idx, base[0] in self.params), not write, write, node)
            self.visit_pointer_expr(a)
        if name == "memset":
            self.visit(args[1])
        return True

    def _const_bytes(self, e) -> int | None:
        """Value of a byte count: an integer expression or ``sizeof`` of a type / array."""
        if isinstance(e, c_ast.UnaryOp) and e.op == "sizeof":
            x = e.expr
            if isinstance(x, c_ast.Typename) and not isinstance(x.type, c_ast.PtrDecl):
                return bytes_of_words(self.words(type_names(x.type)))
            if isinstance(x, c_ast.ID):
                var = self.lookup(x.name)
                if var is not None and var.kind == "array" and var.decl is not None and \
                        all(d is not None for d in var.dims):
                    t = var.decl.type
                    while isinstance(t, c_ast.ArrayDecl):
                        t = t.type
                    size = bytes_of_words(self.words(type_names(t))) if isinstance(t, c_ast.TypeDecl) \
                        else None
                    if size is not None:
                        for d in var.dims:
                            size *= d
                    return size
            return None
        if isinstance(e, c_ast.BinaryOp) and e.op == "*":
            a, b = self._const_bytes(e.left), self._const_bytes(e.right)
            return None if a is None or b is None else a * b
        if isinstance(e, c_ast.Cast):
            return self._const_bytes(e.expr)
        v = self.ir(e)
        return v[1] if v is not None and v[0] == "c" else None

    def _mem_operands_traced(self, name: str, args) -> bool:
        """memcpy/memmove(d, s, n) / memset(d, c, n) whose pointer operands trace to buffers
        of the entry, so that visiting them records (conservative) accesses."""
        if len(args) != 3:
            return False
        ptrs = [args[0]] if name == "memset" else [args[0], args[1]]
        for a in ptrs:
            while isinstance(a, c_ast.Cast):
                a = a.expr
            if isinstance(a, c_ast.UnaryOp) and a.op == "&" and isinstance(a.expr, c_ast.ID):
                continue                  # &scalar: visiting marks the scalar written
            if self.pointer_base(a) is None:
                return False
        return True

    def visit_If(self, n):
        self.visit(n.cond)
        c = self.cond(n.cond)
        self._guarded(c, n.iftrue)
        if n.iffalse is not None:
            self._guarded(None if c is None else ("!", c), n.iffalse)

    def visit_TernaryOp(self, n):
        self.visit(n.cond)
        c = self.cond(n.cond)
        self._guarded(c, n.iftrue)
        self._guarded(None if c is None else ("!", c), n.iffalse)

    def visit_BinaryOp(self, n):
        if n.op in ("&&", "||"):
            if not self._null_test(n.left):
                self.visit(n.left)
            c = self.cond(n.left)
            if n.op == "||" and c is not None:
                c = ("!", c)
            if self._null_test(n.right):
                return
            self._guarded(c, n.right)
            return
        if n.op in ("==", "!=") and (self._null_test(n.left) or self._null_const(n.left)) and \
                (self._null_test(n.right) or self._null_const(n.right)):
            return                        # pointer identity (``dX != X``, ``w != NULL``): no element read
        self.generic_visit(n)

    def _null_test(self, e) -> bool:
        """``p`` (possibly cast) as an operand of ``&&`` / ``||`` or of a pointer comparison:
        the pointer's value is tested, no element is read (the lifts' ``done && done[src]``,
        ``(void *) dX != (void *) X``)."""
        while isinstance(e, c_ast.Cast):
            e = e.expr
        if not isinstance(e, c_ast.ID):
            return False
        var = self.lookup(e.name)
        return var is not None and var.kind in ("ptr", "alias", "array")

    def _null_const(self, e) -> bool:
        """A null pointer constant (``NULL``, ``nullptr``, ``0``, possibly cast)."""
        while isinstance(e, c_ast.Cast):
            e = e.expr
        if isinstance(e, c_ast.Constant):
            return e.value in ("0", "0L", "0l", "0u", "0U")
        return isinstance(e, c_ast.ID) and e.name in ("NULL", "nullptr") and self.lookup(e.name) is None

    def _guarded(self, c, stmt) -> None:
        if c is not None:
            self.guards.append(c)
        self.scopes.append({})
        self.visit(stmt)
        self.scopes.pop()
        if c is not None:
            self.guards.pop()

    def visit_While(self, n):
        self._opaque_loop(n)

    def visit_DoWhile(self, n):
        self._opaque_loop(n)

    def _opaque_loop(self, n):
        # variables written in the body are locals with unknown values; accesses stay exact
        # only through invariant subscripts
        self._stale_in(n.cond, n.stmt)
        self.visit(n.cond)
        self.scopes.append({})
        self._breakable += 1
        self._continuable += 1
        self.visit(n.stmt)
        self._breakable -= 1
        self._continuable -= 1
        self.scopes.pop()

    def visit_Switch(self, n):
        self.visit(n.cond)
        self.scopes.append({})
        self._breakable += 1
        self.visit(n.stmt)
        self._breakable -= 1
        self.scopes.pop()

    def visit_Break(self, n):
        if self.loops and self._breakable == 0:
            self.loops[-1].escapes.append(("break", n))

    _breakable = 0          # > 0 inside a while / do / switch nested in the current for
    _continuable = 0        # > 0 inside a while / do nested in the current for

    def visit_Continue(self, n):
        if self.loops and self._continuable == 0:
            self.loops[-1].escapes.append(("continue", n))

    def visit_Return(self, n):
        for lp in self.loops:
            lp.escapes.append(("return", n))
        if n.expr is not None:
            self.visit(n.expr)

    def visit_Goto(self, n):
        for lp in self.loops:
            lp.escapes.append(("goto", n))

    def visit_Pragma(self, n):
        return

    def visit_For(self, n):
        self.scopes.append({})
        parent = self.loops[-1] if self.loops else None
        lp = LoopInfo("?", "?", n, parent, len(self.loops))
        header_var = None
        if isinstance(n.init, c_ast.DeclList) and len(n.init.decls) == 1:
            d = n.init.decls[0]
            if d.init is not None:
                self.visit(d.init)
            uid = self._uid(d.name)
            header_var = Var(d.name, uid, "loop", tuple(self.loops), value=("v", uid), decl=d)
            start = self.ir(d.init) if d.init is not None else None
            self.scopes[-1][d.name] = header_var
            self.locals[uid] = header_var
            lp.var, lp.uid = d.name, uid
            self._recognise(lp, start, n, header_var)
        else:
            lp.reason = "the loop does not declare its own induction variable"
            if n.init is not None:
                self.visit(n.init)
        written = self._stale_in(n.cond, n.next, n.stmt)
        if lp.canonical and any(locals_in(b, set()) & written
                                for b in (lp.lo, lp.hi, lp.start) if b is not None):
            lp.canonical = False
            lp.lo = lp.hi = lp.start = None
            lp.reason = "a bound of the loop reads a local that the loop assigns"
        if parent is None:
            self.top.append(lp)
        else:
            parent.children.append(lp)
        self.all_loops.append(lp)
        self.loops.append(lp)
        if n.cond is not None:
            self.visit(n.cond)
        if n.next is not None:
            if lp.canonical:
                pass                      # the header's own update
            elif self.writes_before is None and header_var is not None and \
                    _self_step(n.next, header_var.name) is not None:
                # first walk: ``v += taskDim`` with a local step whose value is known only in
                # the second walk; the header's own update is not a body write of ``v``
                self.visit(_self_step(n.next, header_var.name))
            else:
                self.visit(n.next)
        saved = (self._breakable, self._continuable)
        self._breakable = self._continuable = 0
        self.visit(n.stmt)
        self._breakable, self._continuable = saved
        self.loops.pop()
        self.scopes.pop()
        if header_var is not None and lp.canonical and self.writes_before is not None and \
                self.writes_before.get(header_var.uid, 0) > 0:
            lp.canonical = False
            lp.reason = f"the induction variable '{lp.var}' is assigned in the loop body"

    def _upper_bound(self, c, name: str) -> IR:
        """Exclusive upper bound ``b`` of ``name`` from a condition ``v < b`` / ``v <= b`` /
        ``v + e < b`` (or mirrored), None for other conditions."""
        if not (isinstance(c, c_ast.BinaryOp) and c.op in ("<", "<=", ">", ">=")):
            return None
        op, l, r = c.op, c.left, c.right
        if _is_var(r, name) or (not _is_var(l, name) and _split_var_plus(l, name, self) is None):
            op, l, r = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op], r, l
        if op not in ("<", "<="):
            return None
        rb = self.ir(r)
        if rb is None:
            return None
        if _is_var(l, name):
            b = rb
        else:
            lin = _split_var_plus(l, name, self)
            if lin is None:
                return None
            b = ("-", rb, lin)
        return ("+", b, ("c", 1)) if op == "<=" else b

    def _recognise(self, lp: LoopInfo, start, n: c_ast.For, var: Var) -> None:
        name = var.name
        step = _step_of(n.next, name, self)
        if start is None:
            lp.reason = "the loop's initial value is not an integer expression of the scalars"
            return
        if step is None or step == 0:
            lp.reason = "the loop's increment is not a constant step of its variable"
            return
        c = n.cond
        if isinstance(c, c_ast.BinaryOp) and c.op == "&&" and step > 0:
            # ``v < b1 && v + c < b2``: both upper bounds hold up to the first iteration that
            # fails one of them, i.e. the loop runs while v < min(b1, b2)
            his = []
            for part in _conjuncts_ast(c):
                hb = self._upper_bound(part, name)
                if hb is None:
                    lp.reason = "a conjunct of the loop condition is not an upper bound of " \
                                "its variable"
                    return
                his.append(hb)
            hi = his[0]
            for h in his[1:]:
                hi = ("?", ("<", hi, h), hi, h)
            lp.lo, lp.start, lp.hi, lp.step = start, start, hi, step
            lp.canonical = True
            return
        bound = None
        if isinstance(c, c_ast.BinaryOp) and c.op in ("<", "<=", ">", ">=", "!="):
            op, l, r = c.op, c.left, c.right
            if _is_var(r, name) and not _is_var(l, name):
                op, l, r = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}[op], r, l
            scale = _var_times_const(l, name, self)
            if _is_var(l, name):
                b = self.ir(r)
            elif scale is not None and op in ("<", "<="):
                # v * C < n  ->  v < ceil(n / C);  v * C <= n  ->  v < floor(n / C) + 1
                rb = self.ir(r)
                b = None if rb is None else \
                    ("fdiv", ("+", rb, ("c", scale - 1)), ("c", scale)) if op == "<" else \
                    ("+", ("fdiv", rb, ("c", scale)), ("c", 1))
                op = "<"
            else:                         # v + c <= n  ->  v <= n - c
                lin = _split_var_plus(l, name, self)
                b = None if lin is None or self.ir(r) is None else ("-", self.ir(r), lin)
            if b is not None:
                bound = (op, b)
        if bound is None:
            lp.reason = "the loop condition does not compare its variable with a bound"
            return
        op, b = bound
        if step > 0 and op in ("<", "<=", "!="):
            if op == "!=" and step != 1:
                lp.reason = "'!=' loop condition with a step other than 1"
                return
            lp.lo, lp.start = start, start
            lp.hi = ("+", b, ("c", 1)) if op == "<=" else b
        elif step < 0 and op in (">", ">="):
            lp.start = start
            lp.hi = ("+", start, ("c", 1))
            lp.lo = ("+", b, ("c", 1)) if op == ">" else b
        else:
            lp.reason = "the loop condition and step go in opposite directions"
            return
        lp.step = step
        lp.canonical = True


def _struct_member_root(e):
    """The struct local ``s`` of an element of an array field, ``s.a[i]`` / ``s.a[i].b[j]``
    (only ``.`` accesses down to a named local), else None."""
    node, through_field = e, False
    while isinstance(node, (c_ast.ArrayRef, c_ast.StructRef)):
        if isinstance(node, c_ast.StructRef):
            if node.type != ".":
                return None
            through_field = True
        node = node.name
    return node if through_field and isinstance(node, c_ast.ID) else None


def _address_of_object(e):
    """``v`` / ``s.f`` / ``a[i]`` of ``&v``, ``(T *) &v`` (casts stripped): the object a pointer
    expression is the address of, when it names a local object directly (not through a pointer,
    ``p->f``), else None. ``*`` of it is an access of that object (an inlined out-parameter)."""
    cast = False
    while isinstance(e, c_ast.Cast):
        e, cast = e.expr, True
    if not (isinstance(e, c_ast.UnaryOp) and e.op == "&"):
        return None
    obj = e.expr
    node = obj
    while isinstance(node, (c_ast.StructRef, c_ast.ArrayRef)):
        if isinstance(node, c_ast.StructRef) and node.type == "->":
            return None
        if cast and isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.ID):
            return None     # (float4 *) &x[i]: a wider access than the element, not x[i]
        node = node.name
    if not isinstance(node, c_ast.ID):
        return None
    return obj


def _is_bytes(ir) -> bool:
    return isinstance(ir, tuple) and ir[:1] == ("bytes",)


def _const_cond(c) -> bool | None:
    """Truth value of a condition IR over constants only, else None."""
    if c is None:
        return None
    if c[0] in ("&&", "||"):
        a, b = _const_cond(c[1]), _const_cond(c[2])
        if a is None or b is None:
            return None
        return (a and b) if c[0] == "&&" else (a or b)
    if c[0] == "!":
        a = _const_cond(c[1])
        return None if a is None else not a
    if c[0] in ("<", "<=", "==", "!=") and c[1][0] == "c" and c[2][0] == "c":
        x, y = c[1][1], c[2][1]
        return {"<": x < y, "<=": x <= y, "==": x == y, "!=": x != y}[c[0]]
    return None


def _conjuncts_ast(c) -> list:
    if isinstance(c, c_ast.BinaryOp) and c.op == "&&":
        return _conjuncts_ast(c.left) + _conjuncts_ast(c.right)
    return [c]


def _is_var(e, name) -> bool:
    return isinstance(e, c_ast.ID) and e.name == name


def _var_times_const(e, name, walker) -> int | None:
    """C of ``v * C`` / ``C * v`` with C a positive integer constant, else None."""
    if isinstance(e, c_ast.BinaryOp) and e.op == "*":
        for v, c in ((e.left, e.right), (e.right, e.left)):
            if _is_var(v, name):
                k = const_ir(walker.ir(c))
                return k if k is not None and k > 0 else None
    return None


def _split_var_plus(e, name, walker) -> IR:
    """``v + c`` -> IR of c (v appearing once, added)."""
    if isinstance(e, c_ast.BinaryOp) and e.op == "+":
        if _is_var(e.left, name):
            return walker.ir(e.right)
        if _is_var(e.right, name):
            return walker.ir(e.left)
    if isinstance(e, c_ast.BinaryOp) and e.op == "-" and _is_var(e.left, name):
        r = walker.ir(e.right)
        return None if r is None else ("neg", r)
    return None


def _step_of(nxt, name, walker) -> int | None:
    match nxt:
        case c_ast.UnaryOp(op=op, expr=c_ast.ID(name=n)) if n == name:
            return 1 if op in ("++", "p++") else -1 if op in ("--", "p--") else None
        case c_ast.Assignment(op=op, lvalue=c_ast.ID(name=n), rvalue=r) if n == name:
            if op in ("+=", "-="):
                c = const_ir(walker.ir(r))
                if c is not None:
                    return c if op == "+=" else -c
            if op == "=" and isinstance(r, c_ast.BinaryOp) and r.op in ("+", "-"):
                if _is_var(r.left, name):
                    c = const_ir(walker.ir(r.right))
                    if c is not None:
                        return c if r.op == "+" else -c
    return None


def _self_step(nxt, name):
    """The step expression of a loop update ``v += e`` / ``v -= e`` / ``v = v + e`` /
    ``v = v - e`` whose step does not mention ``v`` (None for other updates)."""
    match nxt:
        case c_ast.Assignment(op=op, lvalue=c_ast.ID(name=n), rvalue=r) if n == name:
            if op in ("+=", "-="):
                step = r
            elif op == "=" and isinstance(r, c_ast.BinaryOp) and r.op in ("+", "-") and \
                    _is_var(r.left, name):
                step = r.right
            else:
                return None
            import passes.canon as canon
            return None if name in canon.ids_in(step) else step
    return None


def _pure_helper(fdef: c_ast.FuncDef, helpers: dict | None = None, seen: frozenset = frozenset()) -> bool:
    """A file-scope helper that takes no pointers/references and writes no globals; it may
    call pure helpers of the file (``helpers``) and copy bytes between its own locals
    (``memcpy(&bits, &x, 2)``: the bit casts of the lifts' rounding helpers)."""
    args = fdef.decl.type.args
    for p in (args.params if args is not None else []):
        if isinstance(getattr(p, "type", None), (c_ast.PtrDecl, c_ast.ArrayDecl)):
            return False
    local = set()
    params = {p.name for p in (args.params if args is not None else []) if getattr(p, "name", None)}
    seen = seen | {fdef.decl.name}

    def own(e) -> bool:
        """``&v`` / ``v`` of a local array or scalar of this helper (or a parameter)."""
        while isinstance(e, c_ast.Cast):
            e = e.expr
        if isinstance(e, c_ast.UnaryOp) and e.op == "&":
            e = e.expr
        return isinstance(e, c_ast.ID) and (e.name in local or e.name in params)

    class V(c_ast.NodeVisitor):
        ok = True

        def visit_Decl(self, n):
            local.add(n.name)
            if isinstance(n.type, (c_ast.PtrDecl,)) or "static" in (n.storage or []):
                self.ok = False
            self.generic_visit(n)

        def visit_Assignment(self, n):
            if isinstance(n.lvalue, c_ast.ID) and n.lvalue.name not in local and \
                    n.lvalue.name not in params:
                self.ok = False
            if not isinstance(n.lvalue, c_ast.ID):
                self.ok = False
            self.generic_visit(n)

        def visit_FuncCall(self, n):
            nm = n.name.name if isinstance(n.name, c_ast.ID) else None
            exprs = n.args.exprs if n.args is not None else []
            if nm in ("memcpy", "memmove") and len(exprs) == 3 and own(exprs[0]) and own(exprs[1]):
                self.generic_visit(n)
                return
            callee = (helpers or {}).get(nm)
            if nm not in PURE_FUNCTIONS and not (callee is not None and nm not in seen and
                                                 _pure_helper(callee, helpers, seen)):
                self.ok = False
            self.generic_visit(n)

        def visit_UnaryOp(self, n):
            if n.op == "&" and not own(n):
                self.ok = False
            self.generic_visit(n)

    v = V()
    v.visit(fdef.body)
    return v.ok


def entry_function(program) -> c_ast.FuncDef | None:
    if program.entry is None or program.ast is None:
        return None
    for ext in program.ast.ext:
        if isinstance(ext, c_ast.FuncDef) and ext.decl.name == program.entry.name:
            return ext
    return None


def analyze(program) -> NestInfo:
    """Loops, accesses and guards of the entry function (two walks: writes, then values)."""
    fdef = entry_function(program)
    if fdef is None:
        raise ValueError("the program has no entry function definition")
    first = _Walker(program, fdef, None)
    first.top_calls = []
    first.visit(fdef.body)
    w = _Walker(program, fdef, _writes_by_uid(first))
    w.top_calls = []
    w.visit(fdef.body)
    for name, node in w.top_calls:
        w.problems.append(("XP-BIND-003", f"call to '{name}' whose effects are unknown", node))
    _counter_facts(fdef, w.all_loops, w.writes)
    return NestInfo(fdef, w.params, w.all_loops, w.top, w.accesses,
                    {id(l.node): l for l in w.all_loops}, w.problems, w.locals)


_TRUE = ("==", ("c", 0), ("c", 0))     # a guard that no longer tells anything


def _literal(e) -> int | None:
    while isinstance(e, c_ast.Cast):
        e = e.expr
    if isinstance(e, c_ast.Constant) and e.type == "int":
        try:
            return int(e.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
    return None


def _counter_facts(fdef, loops, writes: dict) -> None:
    """Bounds of running counters, attached to the accesses of their loop (``Access.facts``).

    A counter of a canonical loop ``L`` (positive step ``s``, start ``a``) is an integer local
    declared with a literal ``k0 >= 0`` as an earlier statement of the block that holds
    ``L``, written only in ``L``'s body, outside any loop nested in it: by exactly one
    increment (``++c``, ``c++``, ``c += 1``) and by resets ``c = k`` (literals ``k >= 0``).
    Each execution of that block runs the declaration before ``L``, and each iteration
    increments at most once, so in the iteration ``v`` (after ``(v - a) / s`` earlier ones)
    ``min(k0, k...) <= c <= max(k0, k...) + (v - a) / s + 1`` anywhere in the loop (the
    staging counter of a flush-every-8-rows gather: ``staged <= i + 1``). Nothing is
    attached when the function has goto, labels or switch cases (a jump could skip the
    declaration or repeat an increment)."""
    if any(isinstance(n, (c_ast.Goto, c_ast.Label, c_ast.Case, c_ast.Default))
           for n in _walk_nodes(fdef)):
        return
    parents = parent_map(fdef)
    for lp in loops:
        if not lp.canonical or lp.step <= 0 or lp.start is None:
            continue
        def nested(node) -> bool:
            """Inside a loop (for / while / do) nested in ``lp``'s body?"""
            n = parents.get(id(node))
            while n is not None and n is not lp.node:
                if isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile)):
                    return True
                n = parents.get(id(n))
            return n is None

        by_var: dict = {}
        for var, node, hdr in lp.scalar_writes:
            by_var.setdefault(var.uid, (var, []))[1].append((node, hdr))
        for uid, (var, ws) in by_var.items():
            decl = var.decl
            if var.kind != "local" or decl is None or any(o is lp for o in var.owners) or \
                    not isinstance(decl.type, c_ast.TypeDecl) or not is_int_type(decl.type):
                continue
            k0 = _literal(decl.init)
            if k0 is None or k0 < 0 or writes.get(uid, 0) != len(ws):
                continue                   # written before or after the loop too
            incs, vals = 0, [k0]
            for node, hdr in ws:
                if hdr or nested(node):
                    break
                if isinstance(node, c_ast.UnaryOp) and node.op in ("++", "p++") and \
                        isinstance(node.expr, c_ast.ID):
                    incs += 1
                elif isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID) \
                        and node.op == "+=" and _literal(node.rvalue) == 1:
                    incs += 1
                elif isinstance(node, c_ast.Assignment) and isinstance(node.lvalue, c_ast.ID) \
                        and node.op == "=" and (_literal(node.rvalue) or 0) >= 0 and \
                        _literal(node.rvalue) is not None:
                    vals.append(_literal(node.rvalue))
                else:
                    break
            else:
                block = parents.get(id(lp.node))
                if incs != 1 or not isinstance(block, c_ast.Compound) or \
                        parents.get(id(decl)) is not block:
                    continue
                items = [id(x) for x in block.block_items or []]
                if items.index(id(decl)) > items.index(id(lp.node)):
                    continue
                c = ("l", uid)
                k = ("-", ("v", lp.uid), lp.start)
                if lp.step != 1:
                    k = ("/", k, ("c", lp.step))
                facts = (("<=", ("c", min(vals)), c), ("<=", c, ("+", k, ("c", max(vals) + 1))))
                for acc in lp.accesses:
                    acc.facts = tuple(acc.facts) + facts


def _walk_nodes(n):
    yield n
    for _, c in n.children():
        yield from _walk_nodes(c)


def _writes_by_uid(first: _Walker) -> dict[str, int]:
    # uids are assigned in the same deterministic order in both walks
    return dict(first.writes)


def parent_map(fdef) -> dict:
    out = {}

    def walk(n):
        for _, c in n.children():
            out[id(c)] = n
            walk(c)
    walk(fdef)
    return out
