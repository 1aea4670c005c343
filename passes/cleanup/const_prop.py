"""const_prop: propagate single-assignment scalar locals of the entry into their uses.

Summary
    A *single-definition local* is a scalar or pointer local of the entry (declared once, not
    ``volatile``, never address-taken) written exactly once: by its initialiser, or by one
    plain ``v = e;`` statement reached from the declaration's block through nested blocks only
    (no loop or branch in between); a pure initialiser that a later ``v = e;`` of the same
    block overwrites before any read (``unsigned dst = 0; dst = e;``) does not count. A value
    that loads memory (``dst = a[0];``) is propagated only into a single use in the value of
    the very next statement of the block (nothing can store in between). When ``e`` is pure and reads no memory (constants,
    parameters, other locals, casts, arithmetic, pure math calls; no subscripts, ``*``,
    ``->``, other calls), every variable of ``e`` keeps its value from the definition to every
    use of ``v`` (it is written nowhere but by its own initialiser before the definition, or
    by the header of a loop enclosing the definition and all uses), and every such variable is
    in scope at each use, then each read of ``v`` becomes ``(T) (e)`` (``T`` the declared
    type; an integer constant becomes a literal of ``T``), and the definition is removed.
    Repeated to a fixpoint, this folds the lifted launch bookkeeping (``grid__x = x__i1`` with
    ``x__i1 = 256``) into the loop bounds (``xp_tx < 256u``) and removes pointer aliases
    introduced by inlining (``T_add__i3 = T_add``). The address of a named variable
    (``const void *qty_ptr = &qty;``) is such a value too (the variable declared once, in
    scope at every use); a read ``*((T *) (&x))`` through pointer casts of a scalar ``x``
    declared with type ``T`` then becomes ``x``.
Requires
    1. The program has an entry function definition (XP-CONST-PROP-001).
    2. At least one single-definition local satisfying the conditions above
       (XP-CONST-PROP-002).
Guarantees
    Same outputs on the virtual device (each replaced read evaluates to the value the local
    held, converted to its type as the assignment did).
Options
    none.
Example
    ``unsigned int n; { unsigned int x = 256; n = x; } for (unsigned i = 0; i < n; ++i) ...``
    -> ``{ } for (unsigned i = 0; i < 256u; ++i) ...``
"""
from __future__ import annotations

import copy
from dataclasses import replace

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "const_prop"
_INT_TYPES = {"int": ("int", ""), "signed": ("int", ""), "signed int": ("int", ""),
              "unsigned": ("unsigned int", "u"), "unsigned int": ("unsigned int", "u")}
_SCALARS = set(canon.TYPE_BYTES) | {"long int", "long long int", "unsigned long int",
                                     "unsigned long long int", "short int", "unsigned short int"}


class _Index:
    """Parents, pre-order positions, declarations and writes of the entry body."""

    def __init__(self, body):
        self.parent: dict[int, c_ast.Node] = {}
        self.pos: dict[int, int] = {}
        self.decls: dict[str, list[c_ast.Decl]] = {}
        self.writes: dict[str, list[c_ast.Node]] = {}      # name -> Decl / Assignment / UnaryOp
        self.reads: dict[str, list[c_ast.ID]] = {}
        self.addressed: set[str] = set()
        self.ids_nodes: dict[int, c_ast.Node] = {}
        self._walk(body, None, [0])

    def _walk(self, n, parent, counter):
        self.parent[id(n)] = parent
        self.pos[id(n)] = counter[0]
        counter[0] += 1
        if isinstance(n, c_ast.Decl) and n.name:
            self.decls.setdefault(n.name, []).append(n)
            if n.init is not None:
                self.writes.setdefault(n.name, []).append(n)
        elif isinstance(n, c_ast.Assignment):
            # only a store to the variable itself changes its value (p[i] = v writes memory)
            if isinstance(n.lvalue, c_ast.ID):
                self.writes.setdefault(n.lvalue.name, []).append(n)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
            if isinstance(n.expr, c_ast.ID):
                self.writes.setdefault(n.expr.name, []).append(n)
        elif isinstance(n, c_ast.UnaryOp) and n.op == "&":
            r = canon.lvalue_root(n.expr)
            if r:
                self.addressed.add(r)
        elif isinstance(n, c_ast.ID):
            self.reads.setdefault(n.name, []).append(n)
        if isinstance(n, c_ast.StructRef):
            self._walk(n.name, n, counter)
            return
        for _, c in n.children():
            self._walk(c, n, counter)

    def ancestors(self, n):
        p = self.parent.get(id(n))
        while p is not None:
            yield p
            p = self.parent.get(id(p))

    def inside(self, n, anc) -> bool:
        return n is anc or any(a is anc for a in self.ancestors(n))

    def scope(self, decl):
        """The node whose extent is the declaration's scope (block or for statement)."""
        for a in self.ancestors(decl):
            if isinstance(a, (c_ast.Compound, c_ast.For)):
                return a
        return None


def _decl_kind(d, typedefs=None) -> str | None:
    """'int' / 'float' / 'ptr' for a propagatable declared type (scalar typedefs resolved),
    else None."""
    if "volatile" in (getattr(d.type, "quals", None) or []) or d.bitsize is not None:
        return None
    t = d.type
    if isinstance(t, c_ast.PtrDecl):
        inner = t.type
        if isinstance(inner, c_ast.TypeDecl) and isinstance(inner.type, c_ast.IdentifierType):
            return "ptr"
        return None
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
        words = " ".join(w for w in t.type.names if w not in ("const", "volatile"))
        for _ in range(8):
            td = (typedefs or {}).get(words)
            if td is None or not isinstance(td.type, c_ast.TypeDecl) or \
                    not isinstance(td.type.type, c_ast.IdentifierType):
                break
            words = " ".join(w for w in td.type.type.names if w not in ("const", "volatile"))
        if words in ("float", "double", "half", "_Float16"):
            return "float"
        if words in _SCALARS:
            return "int"
    return None


def _pure_value(e) -> bool:
    for n in canon.walk(e):
        if isinstance(n, (c_ast.Assignment, c_ast.ArrayRef, c_ast.StructRef, c_ast.InitList,
                          c_ast.CompoundLiteral)):
            return False
        if isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID):
            continue                    # the address of a named variable: fixed in its scope
        if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "*", "&"):
            return False
        if isinstance(n, c_ast.FuncCall) and canon.call_name(n) not in canon.PURE_CALLS:
            return False
    return True


def _loads_only(e) -> bool:
    """``e`` may read memory (subscripts, ``*p``, members) but changes nothing."""
    for n in canon.walk(e):
        if isinstance(n, (c_ast.Assignment, c_ast.InitList, c_ast.CompoundLiteral)):
            return False
        if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
            return False
        if isinstance(n, c_ast.FuncCall) and canon.call_name(n) not in canon.PURE_CALLS:
            return False
    return True


def _address_ids(e) -> set[str]:
    """Names ``e`` takes the address of (``&v``): their object, not their value."""
    return {n.expr.name for n in canon.walk(e)
            if isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID)}


def _value_ids(e) -> set[str]:
    out = set()
    under_address = {id(n.expr) for n in canon.walk(e)
                     if isinstance(n, c_ast.UnaryOp) and n.op == "&" and isinstance(n.expr, c_ast.ID)}
    for n in canon.walk(e):
        if isinstance(n, c_ast.ID) and id(n) not in under_address:
            out.add(n.name)
    # the name of a pure call is not a variable
    for n in canon.walk(e):
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID):
            out.discard(n.name.name)
    return out


class _Finder:
    def __init__(self, fdef, globals_: dict, params: set[str], typedefs: dict | None = None):
        self.fdef = fdef
        self.globals = globals_
        self.params = params
        self.typedefs = typedefs or {}

    def find(self):
        """One propagatable (name, decl, definition node, value expression), or None."""
        ix = _Index(self.fdef.body)
        for name in sorted(ix.decls, key=lambda k: ix.pos[id(ix.decls[k][0])]):
            got = self._check(ix, name)
            if got is not None:
                return ix, got
        return ix, None

    def _check(self, ix, name):
        ds = ix.decls[name]
        if len(ds) != 1 or name in self.params or name in self.globals or name in ix.addressed:
            return None
        d = ds[0]
        kind = _decl_kind(d, self.typedefs)
        if kind is None or "static" in (d.storage or []) or "extern" in (d.storage or []):
            return None
        writes = ix.writes.get(name, [])
        if len(writes) == 2 and writes[0] is d and self._dead_init(ix, name, d, writes[1]):
            writes = writes[1:]            # ``T v = 0; ... v = e;``: the initialiser is never read
        if len(writes) != 1:
            return None
        w = writes[0]
        dscope = ix.scope(d)
        if dscope is None:
            return None
        if isinstance(dscope, c_ast.For) and ix.parent.get(id(d)) is not None and \
                isinstance(ix.parent.get(id(d)), c_ast.DeclList):
            return None                         # a loop's own variable
        if w is d:
            value, site = d.init, d
        else:
            if not isinstance(w, c_ast.Assignment) or w.op != "=" or \
                    not isinstance(w.lvalue, c_ast.ID):
                return None
            # reached from the declaration's block through blocks only
            p = ix.parent.get(id(w))
            while p is not dscope:
                if not isinstance(p, c_ast.Compound):
                    return None
                p = ix.parent.get(id(p))
            if not isinstance(ix.parent.get(id(w)), c_ast.Compound) or \
                    ix.pos[id(w)] < ix.pos[id(d)]:
                return None
            value, site = w.rvalue, w
        if value is None or isinstance(value, c_ast.InitList):
            return None
        uses = [u for u in ix.reads.get(name, []) if not ix.inside(u, site)]
        if not _pure_value(value) and not (_loads_only(value) and self._next_use(ix, site, uses)):
            return None
        if any(ix.pos[id(u)] < ix.pos[id(site)] for u in uses):
            return None
        for v in _value_ids(value):
            if v == name:
                return None
            if not self._stable(ix, v, site, uses):
                return None
        for v in _address_ids(value):
            if v == name or not self._same_object(ix, v, site, uses):
                return None
        return name, d, site, value, kind, uses

    def _same_object(self, ix, v, site, uses) -> bool:
        """``&v`` taken at ``site`` names the same object at every use: ``v`` is a parameter,
        a file-scope variable, or a local declared once before ``site`` whose scope holds
        every use (its value may change; its address does not)."""
        vd = ix.decls.get(v)
        if vd is None:
            return v in self.params or v in self.globals
        if len(vd) != 1 or ix.pos[id(vd[0])] > ix.pos[id(site)]:
            return False
        sc = ix.scope(vd[0])
        return sc is not None and all(ix.inside(u, sc) for u in uses)

    @staticmethod
    def _next_use(ix, site, uses) -> bool:
        """The one use is in the value of the statement right after ``site`` in its block (a
        plain assignment or declaration): nothing runs between the load and the use."""
        if len(uses) != 1:
            return False
        block = ix.parent.get(id(site))
        if not isinstance(block, c_ast.Compound):
            return False
        items = block.block_items
        k = next((i for i, s in enumerate(items) if s is site), None)
        if k is None or k + 1 >= len(items):
            return False
        nxt = items[k + 1]
        if isinstance(nxt, c_ast.Assignment) and nxt.op == "=":
            value = nxt.rvalue
        elif isinstance(nxt, c_ast.Decl) and nxt.init is not None:
            value = nxt.init
        else:
            return False
        return ix.inside(uses[0], value) and _loads_only(value)

    @staticmethod
    def _dead_init(ix, name, d, w) -> bool:
        """``w`` (``name = e;``) is a later item of the block declaring ``d`` and nothing reads
        ``name`` in between: every path from the declaration meets ``w`` before a read."""
        block = ix.parent.get(id(d))
        if not isinstance(block, c_ast.Compound) or ix.parent.get(id(w)) is not block or \
                not isinstance(w, c_ast.Assignment) or w.op != "=" or ix.pos[id(w)] < ix.pos[id(d)]:
            return False
        if not _pure_value(d.init):
            return False
        lo, hi = ix.pos[id(d)], ix.pos[id(w)]
        if any(lo < ix.pos[id(u)] < hi for u in ix.reads.get(name, [])):
            return False
        items = block.block_items
        between = items[items.index(d) + 1:items.index(w)]
        return not any(isinstance(n, (c_ast.Goto, c_ast.Label, c_ast.Return, c_ast.Break,
                                      c_ast.Continue)) for s in between for n in canon.walk(s))

    def _stable(self, ix, v, site, uses) -> bool:
        """``v`` keeps its value from ``site`` to every use, and is in scope at every use."""
        vd = ix.decls.get(v)
        if vd is None:
            if v in self.params:
                return not ix.writes.get(v) and v not in ix.addressed
            g = self.globals.get(v)
            if g is None:
                return True                     # enum constant / function-like name
            return "const" in (getattr(g.type, "quals", None) or [])
        if len(vd) != 1 or v in ix.addressed:
            return False
        d = vd[0]
        if ix.pos[id(d)] > ix.pos[id(site)]:
            return False
        sc = ix.scope(d)
        if sc is None or not all(ix.inside(u, sc) for u in uses):
            return False
        is_array = isinstance(d.type, c_ast.ArrayDecl)
        for w in ix.writes.get(v, []):
            if w is d:
                continue
            if is_array and isinstance(w, c_ast.Assignment) and not isinstance(w.lvalue, c_ast.ID):
                continue                        # element writes leave the array's address
            loop = next((a for a in ix.ancestors(w) if isinstance(a, c_ast.For)), None)
            if loop is None or not ((loop.init is not None and ix.inside(w, loop.init)) or
                                    (loop.next is not None and ix.inside(w, loop.next))):
                return False
            if not (ix.inside(site, loop.stmt) and all(ix.inside(u, loop.stmt) for u in uses)):
                return False
        return True


def _replacement(d, value, kind):
    t = copy.deepcopy(d.type)
    _strip_names(t)
    if kind == "int" and isinstance(value, c_ast.Constant) and value.type in ("int", "unsigned int"):
        words = " ".join(w for w in d.type.type.names if w not in ("const",))
        txt = value.value.rstrip("uU")
        if words in _INT_TYPES and txt.isdigit() and int(txt) < 2 ** 31:
            ty, suf = _INT_TYPES[words]
            return c_ast.Constant(ty, txt + suf)
    if isinstance(value, c_ast.Cast) and _same_type(value.to_type.type, t):
        return copy.deepcopy(value)
    return c_ast.Cast(c_ast.Typename(None, [], None, t), copy.deepcopy(value))


def _strip_names(t):
    while t is not None:
        if isinstance(t, c_ast.TypeDecl):
            t.declname = None
            t.quals = [q for q in (t.quals or []) if q != "const"]
            return
        if isinstance(t, c_ast.PtrDecl):
            t.quals = [q for q in (t.quals or []) if q != "const"]
        t = getattr(t, "type", None)


def _same_type(a, b) -> bool:
    from pycparser import c_generator

    g = c_generator.CGenerator()
    try:
        return g.visit(c_ast.Typename(None, [], None, copy.deepcopy(a))) == \
            g.visit(c_ast.Typename(None, [], None, copy.deepcopy(b)))
    except Exception:
        return False


def _remove(node, target) -> bool:
    """Remove statement ``target`` from the block lists under ``node``."""
    for n in canon.walk(node):
        if isinstance(n, c_ast.Compound) and n.block_items:
            for k, s in enumerate(n.block_items):
                if s is target:
                    del n.block_items[k]
                    return True
    return False


def _replace_ids(node, targets: set[int], new):
    canon.replace_nodes(node, lambda n: copy.deepcopy(new) if id(n) in targets else None)


def _deref_target(e):
    """``x`` for ``*(T *) ... (&x)`` (pointer casts only; ``T`` the outermost one), else None;
    the second item: the pointee type node of that cast (None when there is no cast)."""
    if not (isinstance(e, c_ast.UnaryOp) and e.op == "*"):
        return None, None
    x, to = e.expr, None
    while isinstance(x, c_ast.Cast):
        if not isinstance(x.to_type.type, c_ast.PtrDecl):
            return None, None
        if to is None:
            to = x.to_type.type.type
        x = x.expr
    if isinstance(x, c_ast.UnaryOp) and x.op == "&" and isinstance(x.expr, c_ast.ID):
        return x.expr.name, to
    return None, None


def _fold_derefs(fdef, typedefs=None) -> int:
    """``*((T *) (&x))`` -> ``x`` where ``x`` is a scalar local or parameter declared once with
    type ``T`` (the same words, typedefs resolved): reading or writing ``x`` through a
    pointer to its own type is reading or writing ``x`` (what a propagated ``p = &x``
    leaves, e.g. an inlined helper reading its size through ``const void *``)."""
    decls: dict[str, list] = {}
    for n in canon.walk(fdef):
        if isinstance(n, c_ast.Decl) and n.name:
            decls.setdefault(n.name, []).append(n)

    def words(t):
        return _resolved_words(canon.type_words(t), typedefs)

    def fold(n):
        name, to = _deref_target(n)
        if name is None:
            return None
        ds = decls.get(name, [])
        if len(ds) != 1 or not isinstance(ds[0].type, c_ast.TypeDecl) or \
                "volatile" in (ds[0].quals or []):
            return None
        if not words(ds[0].type) or to is not None and (not isinstance(to, c_ast.TypeDecl) or
                                                        words(to) != words(ds[0].type)):
            return None
        return c_ast.ID(name)
    count = sum(1 for n in canon.walk(fdef.body) if fold(n) is not None)
    if count:
        canon.replace_nodes(fdef.body, fold)
    return count


def _resolved_words(ws, typedefs) -> tuple:
    ws = [w for w in ws if w not in ("const", "volatile")]
    for _ in range(8):
        td = (typedefs or {}).get(" ".join(ws))
        if td is None or not isinstance(td.type, c_ast.TypeDecl) or \
                not isinstance(td.type.type, c_ast.IdentifierType):
            break
        ws = [w for w in td.type.type.names if w not in ("const", "volatile")]
    return tuple(ws)


def _run(fdef, globals_, params, typedefs=None, limit=10000) -> int:
    done = 0
    finder = _Finder(fdef, globals_, params, typedefs)
    while done < limit:
        ix, got = finder.find()
        if got is None:
            folded = _fold_derefs(fdef, typedefs)
            if not folded:
                break
            done += folded
            continue
        name, d, site, value, kind, uses = got
        new = _replacement(d, value, kind)
        _replace_ids(fdef.body, {id(u) for u in uses}, new)
        if site is not d:
            _remove(fdef.body, site)
        _remove(fdef.body, d)
        done += 1
    return done


def _context(program):
    fdef = canon.entry_def(program.ast, program.entry.name) if program.entry else None
    globals_ = canon.file_scope_decls(program.ast)
    params = {p.name for p in program.entry.params} if program.entry else set()
    if fdef is not None and fdef.decl.type.args is not None:
        params |= {p.name for p in fdef.decl.type.args.params if getattr(p, "name", None)}
    return fdef, globals_, params, canon.typedef_map(program.ast)


@register(PassInfo(
    name=NAME,
    summary="propagate single-definition scalar/pointer locals (constants, copies, pure "
            "expressions) into their uses and drop the definitions",
    requires=("an entry function definition (XP-CONST-PROP-001)",
              "a single-definition local with a pure, memory-free value that stays valid at "
              "every use (XP-CONST-PROP-002)"),
    guarantees=("same outputs on the virtual device",
                "every replaced read converts the value to the local's declared type"),
))
def const_prop(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@const_prop.legality
def _legal(program):
    """The propagation, run on a copy of the AST: the plan the rewrite emits."""
    if _context(program)[0] is None:
        return [canon.diag(program, NAME, "XP-CONST-PROP-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    if not _run(*_context(replace(program, ast=ast))):
        return [canon.diag(program, NAME, "XP-CONST-PROP-002", "no single-definition local "
                           "with a pure value to propagate")]
    return canon.Rewritten(ast)
