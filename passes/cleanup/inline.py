"""inline: inline the file's helper functions into the entry, so the entry is one function.

Summary
    Every call, in the entry function, to a helper defined in the file (``static`` /
    ``inline`` / any non-entry definition) is replaced by the helper's body, repeatedly (calls
    the inlined bodies make are inlined in the next round), so that the analyses of
    ``passes/analysis/affine`` see every memory access of the program in one function. A helper whose
    body is a single ``return e;`` is inlined as the expression ``e`` with its parameters
    replaced by the (side-effect free) arguments, each converted to the parameter's type by a
    cast (pointer arguments of ``void *`` parameters are substituted as written when the body
    only casts them or passes them to ``memcpy``/``memset``/``memmove``). Other helpers are
    inlined as a block: the scalar parameters become locals initialised with the arguments,
    pointer parameters are substituted (same rule), locals are renamed ``name__iN``, ``return
    e`` becomes an assignment to the declared result (``T x = f(..)`` assigns ``x``, otherwise a
    temporary ``__xp_rN``). Returns at the ends of the branches of a top-level if / else-if /
    else chain (and, inside a branch, of its own top-level chains) are structured away: the
    statements after the chain go into each branch that falls through, and a returned value
    goes to a result local ``__xp_rv`` of the helper's return type (``if (c) return 0; else if
    (d) return 1; rest; return e;`` -> ``T rv; if (c) rv = 0; else if (d) rv = 1; else { rest;
    rv = e; }``; void ``if (c) return; rest`` -> ``if (!(c)) { rest }``), so no goto is
    introduced. Calls are hoisted in evaluation order out of the statement that contains them;
    helpers no longer referenced and declared ``static`` are removed. A call of an overloaded
    helper (the lift's ``min(int, int)``, ``min(float, float)``, ...) is inlined when exactly
    one overload's parameter types are the arguments' evident types (casts, literals, names
    declared once in the entry). A call of a function-like macro with an expression body
    (``BLOCKS(n)`` with ``#define BLOCKS(N) (N + THREADS - 1) / THREADS``) is expanded as the
    preprocessor expands it (the argument texts in place of the parameters, no parentheses
    added); the ``#define`` lines stay.
Requires
    1. The program has an entry function definition (XP-INLINE-001).
    2. At least one call in the entry can be inlined: the helper is defined in the file, not
       (mutually) recursive, declares no ``static`` local, uses no ``goto``/labels/variadic
       parameters, returns only as its last statement or as the last statement of a branch
       of a top-level if / else-if / else chain (recursively; not in a loop, a switch or a
       plain block; every path of a value helper returns; a branch that falls through
       declares no name the statements after the chain use), reads no file-scope name that
       the entry shadows, and the call is evaluated unconditionally in its statement (not in
       a loop condition or increment, not in the right operand of ``&&``/``||`` or a branch
       of ``?:``)
       (XP-INLINE-002: the entry calls no helper, nothing to do; XP-INLINE-003: it calls
       some, none of them inlinable). Other calls are left as they are.
Guarantees
    Same outputs on the virtual device (the call's effects happen in the same order: arguments
    first, then the body); the entry's name and parameters are kept.
Options
    rounds: maximum nesting depth inlined (default 16).
Example
    ``static inline int sq(int v) { return v * v; }  ... y[i] = sq(x[i]);``  ->
    ``y[i] = ((int) (x[i])) * ((int) (x[i]));``;
    ``xp_mm512_storeu_ps(out + i, v);``  ->  ``{ float a__i3[16]; memcpy(a__i3, &v, 64); for (..j..)
    ((float *) (out + i))[j] = a__i3[j]; }``.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon
from passes.base import Option, PassInfo, register

NAME = "inline"
MEMFUNCS = frozenset({"memcpy", "memset", "memmove"})


class _Helper:
    """A helper's inlinable form: params [(name, Decl)], body items, result expression."""

    def __init__(self, fdef: c_ast.FuncDef):
        self.fdef = fdef
        self.name = fdef.decl.name
        self.reason = ""
        self.params: list[c_ast.Decl] = []
        self.items: list = []
        self.result = None                  # the final return expression (None: void)
        self.void = False
        self.overloads: list[_Helper] = []      # the name's other definitions (C++ overloads)
        self.ok = self._prepare()

    def _prepare(self) -> bool:
        ftype = self.fdef.decl.type
        rtype = ftype.type
        self.void = isinstance(rtype, c_ast.TypeDecl) and canon.type_words(rtype) == ["void"]
        args = ftype.args.params if ftype.args is not None else []
        for p in args:
            if isinstance(p, c_ast.EllipsisParam):
                return self._no("variadic parameters")
            if isinstance(p, c_ast.Typename):
                if canon.type_words(p.type) == ["void"] and not isinstance(p.type, c_ast.PtrDecl):
                    continue
                return self._no("an unnamed parameter")
            if not isinstance(p, c_ast.Decl) or not p.name:
                return self._no("an unusual parameter")
            p = copy.deepcopy(p)
            if isinstance(p.type, c_ast.ArrayDecl):            # T a[N] parameter == T *a
                p.type = c_ast.PtrDecl([], p.type.type)
            self.params.append(p)
        for n in canon.walk(self.fdef.body):
            if isinstance(n, (c_ast.Goto, c_ast.Label)):
                return self._no("goto / labels")
            if isinstance(n, c_ast.Decl) and "static" in (n.storage or []):
                return self._no(f"static local '{n.name}'")
        # folded ``if constexpr`` chains leave ``{ { return x; } }``: a return last in
        # the inner block is then last in the body
        items = canon.open_last_block(list(self.fdef.body.block_items or []))
        if any(isinstance(s, c_ast.If) and _has_return(s) for s in items):
            # returns at the ends of if / else-if / else branches: structured (the rest of the
            # body goes into the branches that fall through); a value goes to a result local
            items = _returns_to_ifs(items, None if self.void else RESULT)
            if isinstance(items, str):
                return self._no(items)
            if not self.void:
                rt = copy.deepcopy(self.fdef.decl.type.type)
                _drop_const(rt)
                rd = c_ast.Decl(RESULT, [], [], [], [], rt, None, None)
                canon.set_declname(rd, RESULT)
                items = [rd] + items + [c_ast.Return(c_ast.ID(RESULT))]
        elif any(isinstance(s, c_ast.Return) for s in items[:-1]):
            return self._no(_MISPLACED)
        if items and isinstance(items[-1], c_ast.Return):
            last = items.pop()
            if last.expr is not None:
                if self.void:
                    items.append(last.expr)
                else:
                    self.result = last.expr
        if any(isinstance(n, c_ast.Return) for it in items for n in canon.walk(it)):
            return self._no("a return inside the body")
        if not self.void and self.result is None:
            return self._no("no final return")
        pnames = {p.name for p in self.params}
        for n in canon.walk(self.fdef.body):
            if isinstance(n, c_ast.Decl) and n.name in pnames:
                return self._no(f"a local shadows parameter '{n.name}'")
        self.items = items
        return True

    def _no(self, why: str) -> bool:
        self.reason = why
        return False

    @property
    def is_expression(self) -> bool:
        return not self.items and self.result is not None

    def free_names(self) -> set[str]:
        declared = {n.name for n in canon.walk(self.fdef) if isinstance(n, c_ast.Decl) and n.name}
        used = canon.ids_in(self.fdef.body)
        calls = {canon.call_name(n) for n in canon.walk(self.fdef.body) if canon.call_name(n)}
        return used - declared - calls


_MISPLACED = ("a return that is neither last nor at the end of a branch of a top-level "
              "if / else-if / else chain")
RESULT = "__xp_rv"


def _has_return(s) -> bool:
    return any(isinstance(n, c_ast.Return) for n in canon.walk(s))


def _terminates(items: list) -> bool:
    """Every path through ``items`` ends in a ``return`` (the last statement is one, or an
    if / else whose branches all terminate)."""
    if not items:
        return False
    last = items[-1]
    if isinstance(last, c_ast.Return):
        return True
    return isinstance(last, c_ast.If) and last.iffalse is not None and \
        _terminates(canon.as_items(last.iftrue)) and _terminates(canon.as_items(last.iffalse))


def _top_declared(items: list) -> set[str]:
    return {d.name for s in items for d in (s.decls if isinstance(s, c_ast.DeclList) else [s])
            if isinstance(d, c_ast.Decl) and d.name}


def _returns_to_ifs(items: list, rv: str | None):
    """The statements ``items`` (a helper's body, or a branch with the rest of the body
    appended) without returns: ``return e;`` at the end becomes ``rv = e;`` (a void helper:
    nothing, or ``e;``), and an if / else-if / else chain some of whose branches return gets
    the statements after it pushed into each branch that falls through
    (``if (c) { A; return x; } else if (d) { B } rest`` -> ``if (c) { A; rv = x; } else if (d)
    { B; rest } else { rest }``; void ``if (c) return; rest`` -> ``if (!(c)) { rest }``). The
    reason (a string) when a return is elsewhere (in a loop, a switch, a nested block, not
    last) or a value helper can fall off its end."""
    out = []
    for k, s in enumerate(items):
        if isinstance(s, c_ast.Return):
            if k != len(items) - 1:
                return _MISPLACED
            if rv is not None:
                if s.expr is None:
                    return "a 'return;' in a helper returning a value"
                out.append(c_ast.Assignment("=", c_ast.ID(rv), s.expr))
            elif s.expr is not None:
                out.append(s.expr)
            return out
        if isinstance(s, c_ast.If) and _has_return(s):
            rest = items[k + 1:]
            pushed = _push_rest(s, rest, rv)
            if isinstance(pushed, str):
                return pushed
            if pushed is not None:
                out.append(pushed)
            return out
        if _has_return(s):
            return _MISPLACED
        out.append(s)
    if rv is not None:
        return "a path that ends without a return"
    return out


def _push_rest(s: c_ast.If, rest: list, rv: str | None):
    """The chain ``s`` with ``rest`` (the statements after it) appended to every branch that
    falls through, returns removed (``_returns_to_ifs``); the reason (a string) when it cannot
    be done; None when nothing is left to run (a void guard with an empty rest and a
    side-effect-free condition)."""
    branches = []
    for b in (s.iftrue, s.iffalse):
        if isinstance(b, c_ast.If):                             # else if: same chain
            r = _push_rest(b, rest, rv)
            if isinstance(r, str):
                return r
            branches.append(r if r is not None and b is s.iffalse else
                            c_ast.Compound([r] if r is not None else []))
            continue
        own = canon.as_items(b) if b is not None else []
        if _terminates(own):
            r = _returns_to_ifs(own, rv)
        else:
            # the rest goes into the branch's block: a name declared there must not capture
            # (or collide with) a name the rest uses or declares
            if _top_declared(own) & (set().union(*[canon.ids_in(x) for x in rest] or [set()]) |
                                     _top_declared(rest)):
                return "a branch declares a name the statements after it use"
            r = _returns_to_ifs(own + copy.deepcopy(rest), rv)
        if isinstance(r, str):
            return r
        branches.append(c_ast.Compound(r))
    t, f = branches
    if isinstance(f, c_ast.Compound) and not f.block_items and s.iffalse is None:
        f = None
    if not t.block_items and f is None:
        if canon.has_side_effects(s.cond):
            return c_ast.If(s.cond, t, None, s.coord)
        return None
    if not t.block_items:                                       # if (c) return; rest
        if not isinstance(f, c_ast.Compound):
            f = c_ast.Compound([f])
        return c_ast.If(c_ast.UnaryOp("!", s.cond), f, None, s.coord)
    return c_ast.If(s.cond, t, f, s.coord)


def _recursive(defs: dict) -> set[str]:
    graph = {n: {canon.call_name(c) for c in canon.walk(f.body) if canon.call_name(c) in defs}
             for n, f in defs.items()}
    bad = set()
    for start in graph:
        seen, stack = set(), list(graph[start])
        while stack:
            n = stack.pop()
            if n == start:
                bad.add(start)
                break
            if n in seen:
                continue
            seen.add(n)
            stack.extend(graph.get(n, ()))
    return bad


def inlinable(ast, entry_name: str) -> dict[str, _Helper]:
    defs = {n: f for n, f in canon.func_defs(ast).items() if n != entry_name}
    overloaded: dict[str, int] = {}
    for e in ast.ext:
        if isinstance(e, c_ast.FuncDef):
            overloaded[e.decl.name] = overloaded.get(e.decl.name, 0) + 1
    bad = _recursive(defs)
    out = {}
    for name, f in defs.items():
        h = _Helper(f)
        if name in bad:
            h.ok, h.reason = False, "recursive"
        elif overloaded.get(name, 0) > 1:
            # C++ overloads (min(int, int), min(float, float), ...): the call's argument types
            # choose one (``_Inliner.usable``: only an overload whose parameter types are
            # exactly the arguments' evident types); other calls stay calls rather than inline
            # a wrong overload
            h.ok, h.reason = False, "overloaded"
            h.overloads = [_Helper(e) for e in ast.ext if isinstance(e, c_ast.FuncDef)
                           and e.decl.name == name]
        out[name] = h
    return out


_TYPE_SPELLING = {"signed": "int", "signed int": "int", "unsigned": "unsigned int",
                  "short int": "short", "signed short": "short", "signed short int": "short",
                  "unsigned short int": "unsigned short", "long int": "long", "signed long": "long",
                  "signed long int": "long", "unsigned long int": "unsigned long",
                  "long long int": "long long", "signed long long": "long long",
                  "unsigned long long int": "unsigned long long"}


def _scalar_type(t) -> str | None:
    """The spelling of a scalar (non-pointer) declared type, qualifiers dropped."""
    if isinstance(t, c_ast.Typename):
        t = t.type
    if not (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)):
        return None
    words = " ".join(w for w in t.type.names if w not in ("const", "volatile"))
    return _TYPE_SPELLING.get(words, words) or None


def _evident_type(e, names: dict) -> str | None:
    """The type of an argument evident from its form: a cast to a scalar type, a literal, or
    a name with one scalar declaration in the entry (``names``)."""
    if isinstance(e, c_ast.ID):
        return names.get(e.name)
    if isinstance(e, c_ast.Cast):
        return _scalar_type(e.to_type)
    if isinstance(e, c_ast.Constant):
        v = e.value.lower()
        if e.type in ("float", "double"):
            return "float" if v.endswith("f") else None if v.endswith("l") else "double"
        return {"int": "int", "unsigned int": "unsigned int", "long int": "long",
                "unsigned long int": "unsigned long", "long long int": "long long",
                "unsigned long long int": "unsigned long long"}.get(e.type)
    return None


def _overload_for(h: _Helper, call, names: dict) -> _Helper | None:
    """The overload of ``h``'s name whose parameter types are exactly the call's argument
    types (evident from casts, literals and declared names): an exact match is C++'s unique
    best candidate."""
    args = call.args.exprs if call.args is not None else []
    types = [_evident_type(a, names) for a in args]
    if not h.overloads or None in types:
        return None
    hits = [o for o in h.overloads if o.ok and len(o.params) == len(types) and
            [_scalar_type(p.type) for p in o.params] == types]
    return hits[0] if len(hits) == 1 else None


class _Inliner:
    def __init__(self, helpers: dict[str, _Helper], entry: c_ast.FuncDef, counter: list):
        self.helpers = helpers
        self.counter = counter
        self.done = 0
        self.entry_names = {n.name for n in canon.walk(entry) if isinstance(n, c_ast.Decl) and n.name}
        # scalar names of the entry with one declared type (overload resolution)
        self.scalar_types: dict[str, str | None] = {}
        for n in canon.walk(entry):
            if isinstance(n, c_ast.Decl) and n.name and not isinstance(n.type, c_ast.FuncDecl):
                t = _scalar_type(n.type)
                if n.name in self.scalar_types and self.scalar_types[n.name] != t:
                    t = None
                self.scalar_types[n.name] = t
        self.pure = frozenset(n for n, h in helpers.items() if h.ok and h.is_expression and
                              not canon.has_side_effects(h.result))

    def fresh(self) -> int:
        self.counter[0] += 1
        return self.counter[0]

    def usable(self, call) -> _Helper | None:
        name = canon.call_name(call)
        h = self.helpers.get(name)
        if h is not None and not h.ok:
            h = _overload_for(h, call, self.scalar_types)
        if h is None or not h.ok:
            return None
        if h.free_names() & self.entry_names:
            return None
        nargs = len(call.args.exprs) if call.args is not None else 0
        if nargs != len(h.params):
            return None
        return h

    # -- statements ---------------------------------------------------------------------
    def block(self, items: list) -> list:
        out = []
        for s in items:
            out += self.stmt(s)
        return out

    def body(self, s):
        if s is None:
            return None
        items = self.stmt(s)
        if len(items) == 1 and (isinstance(items[0], c_ast.Compound) or items[0] is s):
            return items[0]
        return c_ast.Compound(items)

    def stmt(self, s) -> list:
        match s:
            case c_ast.Compound():
                return [c_ast.Compound(self.block(list(s.block_items or [])), s.coord)]
            case c_ast.For():
                s.stmt = self.body(s.stmt)
                return [s]
            case c_ast.While() | c_ast.DoWhile():
                s.stmt = self.body(s.stmt)
                return [s]
            case c_ast.Switch():
                s.stmt = self.body(s.stmt)
                return [s]
            case c_ast.If():
                pre: list = []
                s.cond = self.expr(s.cond, pre)
                s.iftrue = self.body(s.iftrue)
                s.iffalse = self.body(s.iffalse)
                return pre + [s]
            case c_ast.Return():
                pre = []
                if s.expr is not None:
                    s.expr = self.expr(s.expr, pre)
                return pre + [s]
            case c_ast.Decl() if s.init is not None and not isinstance(s.init, c_ast.InitList):
                h = self.usable(s.init) if isinstance(s.init, c_ast.FuncCall) else None
                if h is not None and not h.is_expression and not isinstance(s.type, c_ast.ArrayDecl):
                    pre = []
                    call = s.init
                    self._args(call, pre)
                    s = copy.copy(s)
                    s.init = None
                    s.quals = [q for q in s.quals or [] if q != "const"]
                    _drop_const(s.type)
                    return pre + [s] + self.inline_block(h, call, c_ast.ID(s.name))
                pre = []
                s.init = self.expr(s.init, pre)
                return pre + [s]
            case c_ast.DeclList():
                return [s]
            case c_ast.FuncCall():
                h = self.usable(s)
                if h is not None:
                    pre = []
                    self._args(s, pre)
                    if h.is_expression:
                        e = self.expand(h, s)
                        return pre + ([e] if canon.has_side_effects(e, self.pure) else [])
                    return pre + self.inline_block(h, s, None)
                pre = []
                return pre + [self.expr(s, pre)]
            case c_ast.Assignment(op="=") if isinstance(s.rvalue, c_ast.FuncCall) and \
                    isinstance(s.lvalue, c_ast.ID):
                h = self.usable(s.rvalue)
                if h is not None and not h.is_expression:
                    pre = []
                    self._args(s.rvalue, pre)
                    return pre + self.inline_block(h, s.rvalue, s.lvalue)
                pre = []
                return pre + [self.expr(s, pre)]
            case c_ast.Label() | c_ast.Case() | c_ast.Default():
                if s.stmts if hasattr(s, "stmts") else False:
                    s.stmts = self.block(list(s.stmts))
                return [s]
        if isinstance(s, (c_ast.Assignment, c_ast.UnaryOp, c_ast.BinaryOp, c_ast.Cast,
                          c_ast.ExprList, c_ast.TernaryOp)):
            pre = []
            return pre + [self.expr(s, pre)]
        return [s]

    # -- expressions --------------------------------------------------------------------
    def _args(self, call, pre) -> None:
        if call.args is not None:
            call.args.exprs = [self.expr(a, pre) for a in call.args.exprs]

    def expr(self, e, pre: list):
        """``e`` with its unconditionally evaluated inlinable calls expanded (statements that
        must run first appended to ``pre``)."""
        match e:
            case c_ast.FuncCall():
                self._args(e, pre)
                h = self.usable(e)
                if h is None:
                    return e
                if h.is_expression and all(not canon.has_side_effects(a, self.pure)
                                           for a in (e.args.exprs if e.args else [])) and \
                        not self._bindings(h, e, [h.result])[0]:
                    # every parameter is substituted: the helper is its result expression (a
                    # parameter that needs a declaration, e.g. a void * passed on to another
                    # call, takes the statement form below)
                    return self.expand(h, e)
                if h.void:
                    return e
                k = self.fresh()
                tmp = _result_decl(h, f"__xp_r{k}")
                pre.append(tmp)
                pre.extend(self.inline_block(h, e, c_ast.ID(tmp.name)))
                return c_ast.ID(tmp.name)
            case c_ast.BinaryOp(op=op) if op in ("&&", "||"):
                e.left = self.expr(e.left, pre)
                return e
            case c_ast.TernaryOp():
                e.cond = self.expr(e.cond, pre)
                return e
            case c_ast.UnaryOp(op="sizeof"):
                return e
            case c_ast.Assignment():
                e.rvalue = self.expr(e.rvalue, pre)
                e.lvalue = self.expr(e.lvalue, pre)
                return e
        # a type name holds no expression to inline
        return canon.map_children(e, lambda x: x if isinstance(x, c_ast.Typename)
                                  else self.expr(x, pre))

    # -- expansion ----------------------------------------------------------------------
    def _bindings(self, h: _Helper, call, body_nodes) -> tuple[list, dict]:
        """(declarations for the parameters, substitutions for the others)."""
        args = call.args.exprs if call.args is not None else []
        decls, subst = [], {}
        for p, a in zip(h.params, args):
            is_ptr = isinstance(p.type, c_ast.PtrDecl)
            if is_ptr and not canon.has_side_effects(a, self.pure) and \
                    p.name not in set().union(*[canon.written_names(n) for n in body_nodes] or [set()]):
                if _is_void_ptr(p.type):
                    if _only_cast_uses(p.name, body_nodes):
                        subst[p.name] = a
                        continue
                else:
                    subst[p.name] = c_ast.Cast(c_ast.Typename(None, [], None, copy.deepcopy(p.type)), a)
                    continue
            if not is_ptr and h.is_expression and not canon.has_side_effects(a, self.pure):
                t = copy.deepcopy(p.type)
                _drop_const(t)
                subst[p.name] = c_ast.Cast(c_ast.Typename(None, [], None, t), a)
                continue
            d = copy.deepcopy(p)
            d.init = a
            d.storage, d.funcspec = [], []
            decls.append(d)
        return decls, subst

    def expand(self, h: _Helper, call):
        _, subst = self._bindings(h, call, [h.result])
        self.done += 1
        return canon.substitute(h.result, subst)

    def inline_block(self, h: _Helper, call, target) -> list:
        k = self.fresh()
        items = copy.deepcopy(h.items)
        result = copy.deepcopy(h.result)
        decls, subst = self._bindings(h, call, items + ([result] if result is not None else []))
        # rename the helper's own names first (declared parameters and locals), then put the
        # arguments (outer expressions, never renamed) in place of the substituted parameters
        marker = "__xp_result_marker"
        params = [copy.deepcopy(d) for d in decls]
        for d in params:
            d.init = None
        tail = [c_ast.Assignment("=", c_ast.ID(marker), result)] if result is not None else []
        holder = canon.rename_decls(c_ast.Compound(params + items + tail), f"__i{k}")
        holder = canon.substitute(holder, subst)
        for d, orig in zip(holder.block_items[:len(decls)], decls):
            d.init = copy.deepcopy(orig.init)
        if result is not None:
            last = holder.block_items.pop()
            if target is not None:
                last.lvalue = copy.deepcopy(target)
                holder.block_items.append(last)
            elif canon.has_side_effects(last.rvalue, self.pure):
                holder.block_items.append(last.rvalue)
        self.done += 1
        return [holder]


def _drop_const(t) -> None:
    while t is not None:
        if hasattr(t, "quals") and isinstance(t.quals, list):
            t.quals = [q for q in t.quals if q != "const"]
        if isinstance(t, (c_ast.PtrDecl,)):
            return                                   # const pointees stay
        t = getattr(t, "type", None)


def _result_decl(h: _Helper, name: str) -> c_ast.Decl:
    t = copy.deepcopy(h.fdef.decl.type.type)
    _drop_const(t)
    d = c_ast.Decl(name, [], [], [], [], t, None, None)
    canon.set_declname(d, name)
    return d


def _is_void_ptr(t) -> bool:
    return isinstance(t, c_ast.PtrDecl) and isinstance(t.type, c_ast.TypeDecl) and \
        canon.type_words(t.type) == ["void"]


def _only_cast_uses(name: str, nodes) -> bool:
    """Every use of ``name`` is the operand of a pointer cast or a mem* argument."""
    ok = True

    def go(n, parent, mem_args):
        nonlocal ok
        if isinstance(n, c_ast.ID) and n.name == name:
            if isinstance(parent, c_ast.Cast) and isinstance(parent.to_type.type, c_ast.PtrDecl):
                return
            if parent is mem_args and parent is not None:
                return
            ok = False
            return
        if isinstance(n, c_ast.FuncCall) and canon.call_name(n) in MEMFUNCS and n.args is not None:
            go(n.args, n, n.args)
            return
        if isinstance(n, c_ast.StructRef):
            go(n.name, n, None)
            return
        for _, c in n.children():
            go(c, n, mem_args if n is mem_args else None)

    for n in nodes:
        if n is not None:
            go(n, None, None)
    return ok


@register(PassInfo(
    name=NAME,
    summary="inline the file's helper functions (incl. ones taking pointers) into the entry",
    options={"rounds": Option(int, 16, "maximum nesting depth inlined")},
    requires=("an entry function definition (XP-INLINE-001)",
              "a call in the entry to a non-recursive helper without static locals / goto, "
              "returning last or at the ends of top-level if / else-if / else branches, evaluated "
              "unconditionally (XP-INLINE-002 no helper call, XP-INLINE-003 none inlinable)"),
    guarantees=("same outputs on the virtual device", "entry name and parameters kept",
                "unreferenced static helpers removed"),
    introduces=("__xp_rN result temporaries", "name__iN renamed locals"),
))
def inline(program, *, rounds: int = 16, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program, rounds=rounds))
    return canon.reparse(program, plan.ast)


def _inline_all(program, ast, rounds: int) -> int:
    """Inline into the entry of ``ast`` (a copy), up to ``rounds`` nesting levels; the number
    of calls inlined."""
    entry = canon.entry_def(ast, program.entry.name)
    counter = [0]
    total = 0
    for _ in range(max(1, rounds)):
        helpers = inlinable(ast, program.entry.name)
        inl = _Inliner(helpers, entry, counter)
        entry.body = c_ast.Compound(inl.block(list(entry.body.block_items or [])), entry.body.coord)
        total += inl.done
        if not inl.done:
            break
    if total:
        _drop_unused_static(ast, program.entry.name, _macro_words(program.facts))
    return total


def _macro_words(facts) -> set[str]:
    """Identifiers in the bodies of the file's macros: a helper a macro calls
    (``CUDA_CHECK(call)`` reporting through ``xp_error_string``) is referenced wherever the
    macro is used, which the AST does not show."""
    import re

    words = set()
    for d in ((facts or {}).get("defines") or {}).values():
        body = d.get("body") if isinstance(d, dict) else None
        if isinstance(body, str):
            words |= set(re.findall(r"[A-Za-z_]\w*", body))
    for line in (facts or {}).get("preamble") or []:      # as emitted (the lift rewrites
        if re.match(r"\s*#\s*define\b", line):              # API names in macro text)
            words |= set(re.findall(r"[A-Za-z_]\w*", line))
    return words


def _drop_unused_static(ast, entry_name: str, keep_names: set[str] = frozenset()) -> None:
    while True:
        called = set(keep_names)
        for e in ast.ext:
            if isinstance(e, c_ast.FuncDef):
                for n in canon.walk(e.body):
                    if isinstance(n, c_ast.ID):
                        called.add(n.name)
            elif not (isinstance(e, c_ast.Decl) and isinstance(e.type, c_ast.FuncDecl)):
                called |= canon.ids_in(e)
        keep, removed = [], False
        for e in ast.ext:
            name = e.decl.name if isinstance(e, c_ast.FuncDef) else \
                e.name if isinstance(e, c_ast.Decl) and isinstance(e.type, c_ast.FuncDecl) else None
            storage = (e.decl.storage if isinstance(e, c_ast.FuncDef) else
                       e.storage if name else []) or []
            if name and name != entry_name and name not in called and "static" in storage:
                removed = True
                continue
            keep.append(e)
        ast.ext[:] = keep
        if not removed:
            return


def _expression_macros(program, ast) -> dict:
    """Function-like macros of the file the entry calls like functions (``BLOCKS(n)`` with
    ``#define BLOCKS(N) (N + THREADS - 1) / THREADS``): expression bodies without ``#`` /
    ``##`` / ``__VA_ARGS__`` / statements, not naming themselves, no function of that name."""
    import re

    defines = (program.facts or {}).get("defines") or {}
    entry = canon.entry_def(ast, program.entry.name)
    called = {canon.call_name(n) for n in canon.walk(entry.body) if isinstance(n, c_ast.FuncCall)}
    functions = {e.decl.name for e in ast.ext if isinstance(e, c_ast.FuncDef)} | \
        {e.name for e in ast.ext if isinstance(e, c_ast.Decl) and isinstance(e.type, c_ast.FuncDecl)}
    out = {}
    for name in called - functions:
        d = defines.get(name)
        if not isinstance(d, dict) or d.get("params") is None or not isinstance(d.get("body"), str):
            continue
        body = d["body"].strip()
        if not body or "#" in body or "__VA_ARGS__" in body or re.search(r"[;{}]", body) or \
                re.search(rf"\b{re.escape(name)}\b", body) or re.match(
                    r"(for|if|while|do|switch|return)\b", body):
            continue
        out[name] = (list(d["params"]), body)
    return out


def _macro_args(text: str, k: int):
    """The argument texts of the call whose '(' is at ``text[k]`` and the index after its ')'."""
    depth, args, cur, quote = 0, [], [], None
    i = k
    while i < len(text):
        ch = text[i]
        if quote:
            cur.append(ch)
            if ch == "\\" and i + 1 < len(text):
                cur.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch in "([{":
            depth += 1
            if depth > 1:
                cur.append(ch)
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args, i + 1
            cur.append(ch)
        elif ch == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
        i += 1
    return None, k


def _expand_macros(program, ast):
    """The AST with the entry's calls of expression macros expanded as the preprocessor
    does (each parameter replaced by the argument's text, the body's text in place of the
    call; the rescan leaves the other macros), or None. The ``#define`` lines stay."""
    import re
    from dataclasses import replace as _replace

    import platforms

    macros = _expression_macros(program, ast)
    if not macros:
        return None
    text = platforms.module(program.platform, "backend").emit(_replace(program, ast=ast, source=""))
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in macros) + r")\s*\(")
    lines, out, cont = text.split("\n"), [], False
    for line in lines:
        directive = cont or line.lstrip().startswith("#")
        cont = directive and line.rstrip().endswith("\\")
        if directive:
            out.append(line)
            continue
        pos = 0
        while True:
            m = pattern.search(line, pos)
            if m is None:
                break
            params, body = macros[m.group(1)]
            args, end = _macro_args(line, m.end() - 1)
            if args is None or len(args) != len(params) and not (params == [] and args == [""]):
                pos = m.end()
                continue
            sub = dict(zip(params, args))
            exp = re.sub(r"\b[A-Za-z_]\w*\b", lambda w: sub.get(w.group(0), w.group(0)), body) \
                if sub else body
            line = line[:m.start()] + exp + line[end:]
            pos = m.start() + len(exp)
        out.append(line)
    new = "\n".join(out)
    if new == text:
        return None
    try:
        return platforms.parse(new, program.platform, program.path, entry=program.entry.name).ast
    except Exception:                      # noqa: BLE001 - the expansion does not parse: keep the calls
        return None


@inline.legality
def _legal(program, *, rounds: int = 16):
    """The inlining, run on a copy of the AST: the plan the rewrite emits."""
    if program.entry is None or program.ast is None or \
            canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-INLINE-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    done = _inline_all(program, ast, rounds)
    expanded = _expand_macros(program, ast)
    if expanded is not None:
        ast = expanded
        done += 1 + _inline_all(program, ast, rounds)
    if done:
        return canon.Rewritten(ast)
    entry = canon.entry_def(program.ast, program.entry.name)
    helpers = inlinable(program.ast, program.entry.name)
    calls = [n for n in canon.walk(entry.body) if canon.call_name(n) in helpers]
    if not calls:
        return [canon.diag(program, NAME, "XP-INLINE-002", "the entry calls no helper defined in "
                           "the file")]
    c = calls[0]
    h = helpers[canon.call_name(c)]
    why = h.reason or "it reads a file-scope name the entry shadows"
    return [canon.diag(program, NAME, "XP-INLINE-003", f"'{h.name}' cannot be inlined: {why}", c)]
