"""pointer_select: fold a select between two pointers into one buffer into one pointer with a
selected offset (``c ? ping : pong`` -> ``buf + (c ? 0 : D)``).

Not a pass: a named rewrite that ``task_recovery{form=flat}`` applies to the task functions it
builds (``fold_pointer_selects``), so that the GPU lowering's pointer tracing
(``passes/analysis/affine``) sees one buffer and an integer offset it understands instead of a
pointer that is one of two values (BANG ping-pong buffers: ``float *cur = (i % 2 == 0) ?
ping : pong;`` with ``ping = nram + 0``, ``pong = nram + 2 * N``).

Legality (``resolve``): each arm of ``c ? P : Q`` is, after replacing pointer locals by their
initializers, ``B + e1 + ... - ek`` for the same buffer ``B`` - a one-dimensional array
declared once in the function or a pointer parameter the function never writes - and integer
offsets ``e`` that are stable where the select is evaluated:

* a pointer local used in the chain is declared once in the function with an initializer and
  is never written (no assignment, increment or address), and points to ``B``'s element type;
* the offsets are side-effect free expressions (no calls, assignments, increments, memory
  reads) over constants and names that are parameters or locals declared once and never
  written (a local with an initializer), or names the file does not declare as a variable
  (macros, enumerators), all of integer (non-pointer) type;
* casts in the chain convert to a pointer to ``B``'s element type only.

Offsets written in the select's arms themselves (``c ? p + k : q``) stay where they were
evaluated (only the chosen arm's, as before) and need only be integers.

A name the offset reads is declared once and in scope wherever the pointer local is (the
local's scope lies in theirs), so the offset has the same value at the select as at the
local's declaration; ``c`` is evaluated once, as before. The result ``B + (c ? e_P : e_Q)``
points to the same element as the select did.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

import passes.canon as canon

_ARITH = (c_ast.Constant, c_ast.BinaryOp, c_ast.TernaryOp, c_ast.Cast, c_ast.Typename, c_ast.TypeDecl,
          c_ast.IdentifierType, c_ast.ID)


class _Scope:
    def __init__(self, fd: c_ast.FuncDef, file_vars: set[str]):
        self.decls: dict[str, list] = {}
        for p in (fd.decl.type.args.params if fd.decl.type.args else []):
            if isinstance(p, c_ast.Decl) and p.name:
                self.decls.setdefault(p.name, []).append(p)
        self.params = set(self.decls)
        for n in canon.walk(fd.body):
            if isinstance(n, c_ast.Decl) and n.name and not isinstance(n.type, c_ast.FuncDecl):
                self.decls.setdefault(n.name, []).append(n)
        self.written = canon.written_names(fd.body)
        self.file_vars = file_vars

    def one(self, name):
        ds = self.decls.get(name, [])
        return ds[0] if len(ds) == 1 else None

    def stable_int(self, name: str) -> bool:
        """``name`` has one value wherever it is in scope below its declaration: an integer
        parameter or local never written (a local with an initializer), or a name the
        function and the file do not declare as a variable (macro, enumerator)."""
        if name not in self.decls:
            return name not in self.file_vars
        d = self.one(name)
        if d is None or name in self.written or not isinstance(d.type, c_ast.TypeDecl) \
                or not isinstance(d.type.type, c_ast.IdentifierType):
            return False
        return name in self.params or d.init is not None

    def offset_ok(self, e) -> bool:
        for n in canon.walk(e):
            if isinstance(n, c_ast.ID):
                if not self.stable_int(n.name):
                    return False
            elif isinstance(n, c_ast.UnaryOp):
                if n.op not in ("-", "+", "~", "!", "sizeof"):
                    return False
            elif not isinstance(n, _ARITH):
                return False
        return True

    def base_type(self, name: str):
        """(element type words, const) of buffer ``name`` (1-D local array declared once, or a pointer
        parameter never written), else None."""
        d = self.one(name)
        if d is None or name in self.written:
            return None
        if name in self.params and isinstance(d.type, c_ast.PtrDecl) and isinstance(d.type.type, c_ast.TypeDecl):
            return canon.type_words(d.type.type), "const" in (d.type.type.quals or [])
        if name not in self.params and isinstance(d.type, c_ast.ArrayDecl) and isinstance(d.type.type, c_ast.TypeDecl):
            return canon.type_words(d.type.type), "const" in (d.type.type.quals or [])
        return None

    def integer(self, e) -> bool:
        """``e`` names no pointer or array (an integer offset, not a pointer difference)."""
        for n in canon.walk(e):
            if isinstance(n, c_ast.ID):
                d = self.one(n.name)
                if n.name in self.decls and (d is None or not isinstance(d.type, c_ast.TypeDecl)):
                    return False
        return True

    def resolve(self, e, depth: int = 0, moved: bool = False):
        """(buffer, [(sign, offset expr)], element type words, view) of pointer expression
        ``e``: the offsets count the buffer's elements; ``view`` is None, or the type words
        ``T`` of a ``T *`` reinterpreting a byte buffer (``(float *)(nram + row_bytes)`` into
        ``char nram[]``; offsets after the cast count ``sizeof(T)`` bytes each).
        ``moved``: ``e`` is a pointer local's initializer, to be evaluated at the select
        instead (its offsets must be stable); otherwise ``e`` is an arm of the select itself,
        evaluated as before (its offsets need only be integers)."""
        if depth > 16:
            return None
        if isinstance(e, c_ast.ID):
            words = self.base_type(e.name)
            if words is not None:
                return e.name, [], words, None
            d = self.one(e.name)
            if d is None or e.name in self.params or e.name in self.written or d.init is None \
                    or not isinstance(d.type, c_ast.PtrDecl) or not isinstance(d.type.type, c_ast.TypeDecl):
                return None
            r = self.resolve(d.init, depth + 1, True)
            return _viewed(d.type.type, r)
        if isinstance(e, c_ast.Cast):
            t = e.to_type.type
            r = self.resolve(e.expr, depth + 1, moved)
            if not isinstance(t, c_ast.PtrDecl) or not isinstance(t.type, c_ast.TypeDecl):
                return None
            return _viewed(t.type, r)
        if isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            r = self.resolve(e.left, depth + 1, moved)
            off, sign = e.right, e.op
            if r is None and e.op == "+":
                r, off, sign = self.resolve(e.right, depth + 1, moved), e.left, "+"
            if r is None or not self.integer(off) or (moved and not self.offset_ok(off)):
                return None
            if r[3] is not None:        # T elements of a byte buffer: sizeof(T) bytes each
                off = c_ast.BinaryOp("*", c_ast.Cast(_typename(["long"]), copy.deepcopy(off)),
                                     c_ast.UnaryOp("sizeof", _typename(r[3])))
            return r[0], r[1] + [(sign, off)], r[2], r[3]
        if isinstance(e, c_ast.TernaryOp):
            if moved and not self.offset_ok(e.cond):
                return None
            folded = self.fold(e, depth, moved)
            return None if folded is None else self.resolve(folded, depth + 1, moved)
        return None

    def fold(self, t: c_ast.TernaryOp, depth: int = 0, moved: bool = False):
        """``B + (c ? off_P : off_Q)`` for a select between two pointers into ``B``, else None."""
        p, q = self.resolve(t.iftrue, depth + 1, moved), self.resolve(t.iffalse, depth + 1, moved)
        if p is None or q is None or p[0] != q[0] or p[2] != q[2] or p[3] != q[3]:
            return None
        out = c_ast.BinaryOp("+", c_ast.ID(p[0]), c_ast.TernaryOp(
            copy.deepcopy(t.cond), _sum(p[1]), _sum(q[1]), t.coord), t.coord)
        if p[3] is not None:            # the same view of the byte buffer: (T *) (B + bytes)
            words, const = p[2]
            ty = c_ast.TypeDecl(None, ["const"] if const else [], None, c_ast.IdentifierType(list(p[3])))
            out = c_ast.Cast(c_ast.Typename(None, [], None, c_ast.PtrDecl([], ty)), out)
        return out


_BYTE_WORDS = ({"char"}, {"signed", "char"}, {"unsigned", "char"}, {"int8_t"}, {"uint8_t"})


def _viewed(t: c_ast.TypeDecl, r):
    """``r`` (a ``resolve`` result) seen through a pointer to ``t``: unchanged when ``t`` is
    the buffer's element type (or the view's), a view when ``t`` reinterprets a byte buffer
    not yet viewed, else None."""
    if r is None:
        return None
    words, const = r[2]
    if const and "const" not in (t.quals or []):
        return None
    tw = canon.type_words(t)
    if r[3] is not None:
        return r if tuple(tw) == r[3] else None
    if tw == words:
        return r
    if set(words) in _BYTE_WORDS and tw and isinstance(t.type, c_ast.IdentifierType):
        return r[0], r[1], r[2], tuple(tw)
    return None


def _typename(words):
    return c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(list(words))))


def _sum(terms):
    if not terms:
        return c_ast.Constant("int", "0")
    out = None
    for sign, e in terms:
        e = copy.deepcopy(e)
        if out is None:
            out = e if sign == "+" else c_ast.UnaryOp("-", e)
        else:
            out = c_ast.BinaryOp(sign, out, e)
    return out


def file_variables(ast) -> set[str]:
    """Names the file declares as non-const variables (their values may change between two
    reads: not stable offsets)."""
    return {e.name for e in ast.ext if isinstance(e, c_ast.Decl) and e.name
            and not isinstance(e.type, c_ast.FuncDecl) and "const" not in (e.quals or [])}


def fold_pointer_selects(fd: c_ast.FuncDef, file_vars: set[str]) -> int:
    """Rewrites every foldable pointer select in ``fd`` in place (innermost first); returns
    how many. ``file_vars``: names the file declares as variables (not stable offsets)."""

    count = 0
    scope = _Scope(fd, file_vars)

    def go(node):
        nonlocal count
        for cname, child in node.children():
            go(child)
            if isinstance(child, c_ast.TernaryOp):
                new = scope.fold(child)
                if new is not None:
                    canon.replace_child(node, cname, new)
                    count += 1
    go(fd.body)
    return count
