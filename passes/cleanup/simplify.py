"""simplify: masked-tail lane tests -> index guards the affine analysis understands.

Summary
    A lane test ``(k >> j) & 1`` whose mask ``k`` is (through ``const``-like locals: declared
    with an initialiser and never assigned) a *tail mask* ``(L >= W) ? FULL : ((1u << L) - 1u)``
    with ``FULL == 2^W - 1`` (casts to unsigned types of at least W bits allowed), and whose lane
    ``j`` is the variable of an enclosing loop ``for (int j = 0; j < W'; ++j)`` with ``W' <= W``
    (or a constant ``0 <= j < W``), becomes ``(j < L)``: bit ``j`` of the mask is set exactly
    when ``j < L`` (for ``L < 0`` the original shift is undefined). A lane test of the full
    mask constant itself becomes ``1``. The unguarded ``(1u << L) - 1u`` (oneDNN / MLAS tails;
    ``1ull``: 64 bits) is a tail mask too: bit ``j`` below the literal's width and the bits kept
    on the way is set exactly when ``j < L`` wherever the source's shift is defined. This is the shape every ``tail16(n - i)`` helper of the
    VNNI corpus takes once ``detensorize_vnni`` and ``inline`` have run; the guard ``j < n - i``
    bounds the accessed extent exactly (``passes/analysis/affine/extents.py``), where the bit test is opaque.
Requires
    1. The program has an entry function definition (XP-SIMPLIFY-001).
    2. At least one lane test matches the form above, with no name of ``L`` or of the mask
       chain assigned anywhere in the entry (other than loop headers of enclosing loops) and
       the lane loop variable not assigned in its body (XP-SIMPLIFY-002: no lane test, nothing
       to do; XP-SIMPLIFY-003: lane tests, none of this form).
Guarantees
    Same outputs on the virtual device.
Options
    none.
Example
    ``unsigned short m = (n - i >= 16) ? (unsigned short) 0xFFFF : (unsigned short) ((1u << (n - i)) - 1u);``
    ``for (int j = 0; j < 16; ++j) if (m >> j & 1) out[i + j] = a[j];``  ->
    ``... if (j < (n - i)) out[i + j] = a[j];``
"""
from __future__ import annotations

import copy
from dataclasses import replace

from pycparser import c_ast
from pycparser.c_generator import CGenerator

from platforms.common.analysis import map_children

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "simplify"
UNSIGNED_BITS = {"unsigned char": 8, "uint8_t": 8, "unsigned short": 16, "uint16_t": 16,
                 "unsigned": 32, "unsigned int": 32, "uint32_t": 32, "unsigned long long": 64,
                 "uint64_t": 64, "unsigned long": 64, "int": 31, "long long": 63, "long": 63}


def _text(e) -> str:
    return CGenerator().visit(e)


def _strip_int_casts(e):
    while isinstance(e, c_ast.Cast) and not isinstance(e.to_type.type, c_ast.PtrDecl):
        e = e.expr
    return e


def _const(e) -> int | None:
    e = _strip_int_casts(e)
    if isinstance(e, c_ast.Constant) and e.type in ("int", "unsigned int", "long", "unsigned long"):
        try:
            return int(e.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
    return None


def _casts_ok(e, width: int) -> bool:
    """Every cast on the way down keeps at least ``width`` bits of a non-negative value."""
    while isinstance(e, c_ast.Cast):
        words = " ".join(canon.type_words(e.to_type.type))
        if isinstance(e.to_type.type, c_ast.PtrDecl) or UNSIGNED_BITS.get(words, 0) < width:
            return False
        e = e.expr
    return True


class _Simplifier:
    def __init__(self, program, fdef):
        globals_ = canon.file_scope_decls(program.ast)
        self.scopes = canon.Scopes(globals_)
        self.globals = globals_
        self.typedefs = canon.typedef_map(program.ast)
        self.constants = program.facts.get("constants") or {}
        self.written = canon.written_names(fdef.body)
        self.loops: list[tuple[str, int, c_ast.For]] = []     # (var, trip bound, node)
        self.done = 0
        self.seen = 0

    def resolve(self, e):
        """(mask expression behind ``e``, fewest bits kept on the way) following
        never-assigned initialised locals and integer casts."""
        width = 64
        for _ in range(8):
            while isinstance(e, c_ast.Cast):
                words = " ".join(canon.type_words(e.to_type.type))
                if isinstance(e.to_type.type, c_ast.PtrDecl) or words not in UNSIGNED_BITS:
                    return None, 0
                width = min(width, UNSIGNED_BITS[words])
                e = e.expr
            if isinstance(e, c_ast.ID):
                d = self.scopes.get(e.name)
                if not isinstance(d, c_ast.Decl) or d.init is None or e.name in self.written or \
                        not isinstance(d.type, c_ast.TypeDecl):
                    return None, 0
                words = " ".join(canon.type_words(d.type))
                if words not in UNSIGNED_BITS:
                    return None, 0
                width = min(width, UNSIGNED_BITS[words])
                e = d.init
                continue
            return e, width
        return None, 0

    def tail_bound(self, mask):
        """(L, W) when ``mask`` is ``(L >= W) ? 2^W-1 : ((1u << L) - 1u)``; ('full', W) for the
        full constant; (L, W, 'bare') for the unguarded ``(1u << L) - 1u``; None otherwise."""
        m = _strip_int_casts(mask)
        c = _const(m)
        if c is not None:
            for w in (8, 16, 32, 64):
                if c == (1 << w) - 1:
                    return ("full", w)
            return None
        if not isinstance(m, c_ast.TernaryOp):
            return self.bare_tail(mask)
        below = self.bzhi_tail(m)
        if below is not None:
            return below
        cond = m.cond
        if not isinstance(cond, c_ast.BinaryOp):
            return None
        if cond.op == ">=":
            L, W = cond.left, self.width(cond.right)
        elif cond.op == "<=":
            L, W = cond.right, self.width(cond.left)
        else:
            return None
        if W is None or W not in (8, 16, 32, 64):
            return None
        if _const(m.iftrue) != (1 << W) - 1 or not _casts_ok(m.iftrue, W):
            return None
        f = m.iffalse
        if not _casts_ok(f, W):
            return None
        f = _strip_int_casts(f)
        if not (isinstance(f, c_ast.BinaryOp) and f.op == "-" and _const(f.right) == 1):
            return None
        sh = _strip_int_casts(f.left) if W < 32 else f.left
        if not (isinstance(sh, c_ast.BinaryOp) and sh.op == "<<" and _const(sh.left) == 1):
            return None
        lit = _strip_int_casts(sh.left)
        if W == 64 and not ("ll" in lit.value.lower() or "ul" in lit.value.lower()):
            return None
        if W == 32 and "u" not in lit.value.lower():
            return None
        if _text(_strip_int_casts(sh.right)) != _text(_strip_int_casts(L)):
            return None
        if canon.has_side_effects(L) or (canon.ids_in(L) & self.written_not_loops()):
            return None
        return (L, W)

    def bzhi_tail(self, m):
        """(L, W) when ``m`` is ``(L < W) ? (FULL & ((1 << L) - 1)) : FULL`` (BZHI's form:
        ``FULL &`` optional, ``1`` of at least W bits, FULL == 2^W - 1); ``L`` is the
        narrowest equal form (``x & 255`` with ``0 <= x <= 255`` is ``x``)."""
        cond = m.cond
        if not isinstance(cond, c_ast.BinaryOp):
            return None
        if cond.op == "<":
            L, W = cond.left, self.width(cond.right)
        elif cond.op == ">":
            L, W = cond.right, self.width(cond.left)
        else:
            return None
        if W not in (8, 16, 32, 64) or not _casts_ok(m.iffalse, W) or \
                self.value_of(m.iffalse) != (1 << W) - 1:
            return None
        t = _strip_int_casts(m.iftrue)
        if isinstance(t, c_ast.BinaryOp) and t.op == "&":
            for full, rest in ((t.left, t.right), (t.right, t.left)):
                if self.value_of(full) == (1 << W) - 1 and _casts_ok(full, W):
                    t = rest
                    break
            else:
                return None
        if not _casts_ok(t, W):
            return None
        t = _strip_int_casts(t)
        if not (isinstance(t, c_ast.BinaryOp) and t.op == "-" and _const(t.right) == 1):
            return None
        sh = t.left
        if not (isinstance(sh, c_ast.BinaryOp) and sh.op == "<<" and _const(sh.left) == 1):
            return None
        one = sh.left
        if isinstance(one, c_ast.Cast):
            if not _casts_ok(one, W):
                return None
        elif W > 32 or (W == 32 and "u" not in one.value.lower()) or \
                (W == 64 and not ("ll" in one.value.lower() or "ul" in one.value.lower())):
            return None
        if _text(_strip_int_casts(sh.right)) != _text(_strip_int_casts(L)):
            return None
        if canon.has_side_effects(L) or (canon.ids_in(L) & self.written_not_loops()):
            return None
        return (self.narrowest(L), W, "bzhi")

    def value_of(self, e) -> int | None:
        """An integer constant, also through never-assigned initialised locals."""
        for _ in range(8):
            c = _const(e)
            if c is not None:
                return c
            e = _strip_int_casts(e)
            if not isinstance(e, c_ast.ID):
                return None
            d = self.scopes.get(e.name)
            if not isinstance(d, c_ast.Decl) or d.init is None or e.name in self.written:
                return None
            e = d.init
        return None

    def narrowest(self, L):
        """``L`` without a ``& M`` (under integer casts) that cannot clear a bit of a value
        proved to lie in ``[0, M]`` (BZHI's ``index & 255`` of a remainder below 16)."""
        x = _strip_int_casts(L)
        if isinstance(x, c_ast.BinaryOp) and x.op == "&":
            for mask, rest in ((x.right, x.left), (x.left, x.right)):
                M = _const(mask)
                if M is not None and M >= 0:
                    nonneg, upper = self.bounds(rest)
                    if nonneg and upper is not None and upper <= M and _casts_ok(L, M.bit_length()):
                        return rest
        return L

    def type_bits(self, words) -> tuple[bool, int] | None:
        """(unsigned, value bits) of integer type words, typedefs resolved."""
        for _ in range(8):
            w = [x for x in words if x not in ("const", "volatile")]
            if len(w) == 1 and w[0] in self.typedefs:
                words = canon.type_words(self.typedefs[w[0]].type)
                continue
            text = " ".join(w)
            if text in UNSIGNED_BITS:
                bits = UNSIGNED_BITS[text]
                return (bits not in (31, 63), bits)
            if text in ("size_t", "uintptr_t"):
                return (True, 64)
            return None
        return None

    def bounds(self, e, depth: int = 0) -> tuple[bool, int | None]:
        """(value >= 0 proved, an upper bound or None) of an integer expression."""
        if depth > 12:
            return (False, None)
        c = _const(e) if isinstance(e, c_ast.Constant) else None
        if c is not None:
            return (c >= 0, c if c >= 0 else None)
        if isinstance(e, c_ast.Cast):
            tb = self.type_bits(canon.type_words(e.to_type.type)) \
                if not isinstance(e.to_type.type, c_ast.PtrDecl) else None
            if tb is None:
                return (False, None)
            nonneg, upper = self.bounds(e.expr, depth + 1)
            top = (1 << tb[1]) - 1
            if nonneg and upper is not None and upper <= top:
                return (True, upper)
            return (True, top) if tb[0] else (False, None)
        if isinstance(e, c_ast.ID):
            d = self.scopes.get(e.name)
            if not isinstance(d, c_ast.Decl) or not isinstance(d.type, c_ast.TypeDecl):
                return (False, None)
            tb = self.type_bits(canon.type_words(d.type))
            if tb is None:
                return (False, None)
            top = (1 << tb[1]) - 1
            if d.init is not None and e.name not in self.written:
                nonneg, upper = self.bounds(d.init, depth + 1)
                if nonneg and upper is not None and upper <= top:
                    return (True, upper)
            return (True, top) if tb[0] else (False, None)
        if isinstance(e, c_ast.BinaryOp) and e.op == "&":
            for mask, rest in ((e.right, e.left), (e.left, e.right)):
                M = _const(mask)
                if M is not None and M >= 0:
                    nonneg, upper = self.bounds(rest, depth + 1)
                    return (True, min(M, upper) if nonneg and upper is not None else M)
            return (False, None)
        if isinstance(e, c_ast.BinaryOp) and e.op == "%":
            C = _const(e.right)
            nonneg, upper = self.bounds(e.left, depth + 1)
            if C is not None and C > 0 and nonneg:
                return (True, C - 1 if upper is None else min(C - 1, upper))
        return (False, None)

    def width(self, e) -> int | None:
        """A literal, or a file-scope named constant (``constexpr int NR = 16;``) that no local
        shadows."""
        c = _const(e)
        e = _strip_int_casts(e)
        if c is None and isinstance(e, c_ast.ID) and \
                self.scopes.get(e.name) is self.globals.get(e.name):
            v = self.constants.get(e.name)
            c = v if isinstance(v, int) and not isinstance(v, bool) else None
        return c

    def bare_tail(self, mask):
        """(L, W, 'bare') when ``mask`` is the unguarded ``(1u << L) - 1u`` (``1ull``/``1ul``: W = 64;
        ``1u``: W = 32): bit ``j < W`` is set exactly when ``j < L`` wherever the shift is
        defined (``0 <= L < W``); outside that range the source's shift is undefined."""
        f = mask
        if not (isinstance(f, c_ast.BinaryOp) and f.op == "-" and _const(f.right) == 1):
            return None
        sh = f.left
        if not (isinstance(sh, c_ast.BinaryOp) and sh.op == "<<" and _const(sh.left) == 1
                and isinstance(sh.left, c_ast.Constant)):
            return None
        lit = sh.left.value.lower()
        W = 64 if ("ll" in lit or "ul" in lit) else 32 if "u" in lit else None
        if W is None:
            return None
        L = sh.right
        if canon.has_side_effects(L) or (canon.ids_in(L) & self.written_not_loops()):
            return None
        return (L, W, "bare")

    def written_not_loops(self) -> set[str]:
        """Names assigned in the entry, except enclosing loops' variables that only their
        header updates (constant within one iteration of the body)."""
        stable = set()
        for _, _, node in self.loops:
            if isinstance(node.init, c_ast.DeclList) and len(node.init.decls) == 1:
                v = node.init.decls[0].name
                if v not in canon.written_names(node.stmt):
                    stable.add(v)
        return self.written - stable

    def lane(self, j, W: int) -> bool:
        c = _const(j)
        if c is not None:
            return 0 <= c < W
        if not isinstance(j, c_ast.ID):
            return False
        for var, bound, node in reversed(self.loops):
            if var == j.name:
                return bound is not None and bound <= W and \
                    j.name not in canon.written_names(node.stmt)
        return False

    def bit_test(self, e):
        """The replacement of a lane test ``e``, or None."""
        if not (isinstance(e, c_ast.BinaryOp) and e.op == "&"):
            return None
        for a, b in ((e.left, e.right), (e.right, e.left)):
            if _const(b) != 1 or not isinstance(a, c_ast.BinaryOp) or a.op != ">>":
                continue
            self.seen += 1
            mask, width = self.resolve(a.left)
            if mask is None:
                return None
            tb = self.tail_bound(mask)
            if tb is None:
                return None
            L, W = tb[:2]
            if len(tb) == 3:                 # bare / BZHI forms: the lanes below the bits kept
                W = min(W, width)
            if width < W:
                return None
            if not self.lane(a.right, W):
                return None
            if L == "full":
                return c_ast.Constant("int", "1")
            return c_ast.BinaryOp("<", copy.deepcopy(a.right), copy.deepcopy(L))
        return None

    # -- walk ---------------------------------------------------------------------------
    def node(self, n):
        if isinstance(n, c_ast.Compound):
            self.scopes.push()
            n.block_items = [self.node(x) for x in n.block_items or []]
            self.scopes.pop()
            return n
        if isinstance(n, c_ast.Decl):
            if n.init is not None:
                n.init = self.node(n.init)
            self.scopes.add(n)
            return n
        if isinstance(n, c_ast.For):
            self.scopes.push()
            if n.init is not None:
                n.init = self.node(n.init)
            self.loops.append((_loop_var(n), _loop_bound(n), n))
            n.cond = self.node(n.cond) if n.cond is not None else None
            n.stmt = self.node(n.stmt)
            self.loops.pop()
            self.scopes.pop()
            return n
        r = self.bit_test(n)
        if r is not None:
            self.done += 1
            return r
        return map_children(n, self.node)


def _loop_var(n: c_ast.For) -> str | None:
    if isinstance(n.init, c_ast.DeclList) and len(n.init.decls) == 1:
        d = n.init.decls[0]
        if _const(d.init) == 0 and isinstance(n.next, c_ast.UnaryOp) and n.next.op in ("++", "p++") \
                and isinstance(n.next.expr, c_ast.ID) and n.next.expr.name == d.name:
            return d.name
    return None


def _loop_bound(n: c_ast.For) -> int | None:
    c = n.cond
    var = _loop_var(n)
    if var and isinstance(c, c_ast.BinaryOp) and c.op == "<" and isinstance(c.left, c_ast.ID) \
            and c.left.name == var:
        return _const(c.right)
    return None


def _run(program, ast):
    fdef = canon.entry_def(ast, program.entry.name) if program.entry else None
    if fdef is None:
        return None
    s = _Simplifier(replace(program, ast=ast), fdef)
    s.node(fdef.body)
    return s


@register(PassInfo(
    name=NAME,
    summary="masked-tail lane tests ((tail_mask(L) >> j) & 1) -> index guards (j < L)",
    requires=("an entry function definition (XP-SIMPLIFY-001)",
              "a lane test of a never-assigned tail mask (L >= W) ? 2^W-1 : (1u << L) - 1u with "
              "the lane a 0..W'-1 loop variable, W' <= W (XP-SIMPLIFY-002 no lane test, "
              "XP-SIMPLIFY-003 none of this form)"),
    guarantees=("same outputs on the virtual device",),
))
def simplify(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@simplify.legality
def _legal(program):
    """The simplification, run on a copy of the AST: the plan the rewrite emits."""
    if program.entry is None or canon.entry_def(program.ast, program.entry.name) is None:
        return [canon.diag(program, NAME, "XP-SIMPLIFY-001", "no entry function definition")]
    ast = copy.deepcopy(program.ast)
    s = _run(program, ast)
    if not s.done:
        if s.seen:          # lane tests, none of whose masks is proved a tail mask
            return [canon.diag(program, NAME, "XP-SIMPLIFY-003", "a lane test whose mask is not a "
                               "never-assigned tail mask")]
        return [canon.diag(program, NAME, "XP-SIMPLIFY-002", "nothing to simplify: no lane test "
                           "((k >> j) & 1)")]
    return canon.Rewritten(ast)
