"""std_containers: ``std::vector<T>`` locals of a fixed length -> local arrays of that length.

Summary
    C++ kernels keep scratch rows in vectors (``std::vector<float> tmp(n);``, a copy
    ``std::vector<float> row(x, x + n);``) and hand them on as ``tmp.data()`` / ``tmp.size()``.
    The front-end reads such a declaration as a constructor call and the methods as calls
    through a member; the analyses and the back-ends know arrays. A vector local of a scalar
    type, declared once with a length, a length and a value, or a pointer range, and then only
    indexed, read through ``data()`` / ``size()`` / ``begin()`` / ``end()`` / ``empty()`` /
    ``at(i)``, becomes::

        const size_t __xp_size_v = LENGTH;     /* n, or last - first */
        T v[__xp_size_v];                       /* the host code's later heap pass moves it */
        for (size_t __xp_i = 0; __xp_i < __xp_size_v; ++__xp_i) v[__xp_i] = INIT;

    with ``INIT`` ``0`` (value-initialised), the given value, or ``first[__xp_i]``; ``v.data()``
    and ``v.begin()`` read ``v``, ``v.end()`` ``(v + __xp_size_v)``, ``v.size()``
    ``__xp_size_v``, ``v.empty()`` ``(__xp_size_v == 0)`` and ``v.at(i)`` ``v[i]``.
Requires
    1. A ``std::vector<T>`` local with ``T`` a scalar type (XP-STD-CONTAINERS-001: none, nothing
       to do).
    2. Each such local is declared once with one of the three constructors, never assigned,
       resized or grown, its address not taken, and named only as above
       (XP-STD-CONTAINERS-002 names the first other use).
Guarantees
    Same outputs on the virtual device: the array holds what the vector held, for as long as
    it lived (its block); the length is the one the constructor saw.
Options
    none.
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast

import passes.canon as canon
from passes.base import PassInfo, register

NAME = "std_containers"
_VECTOR = re.compile(r"std::vector\s*<\s*([A-Za-z_][\w ]*?)\s*>$")
_METHODS = frozenset({"data", "size", "begin", "end", "empty", "at"})


def _element(decl) -> str | None:
    """``T`` of a ``std::vector<T>`` local of a scalar type, else None."""
    t = decl.type
    if not (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)):
        return None
    m = _VECTOR.match(" ".join(t.type.names))
    if m is None or " ".join(m.group(1).split()) not in canon.TYPE_BYTES:
        return None
    return " ".join(m.group(1).split())


def _method(node, name: str):
    """(method, args) of a call ``name.method(args)``, else None."""
    if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.StructRef) and \
            node.name.type == "." and isinstance(node.name.name, c_ast.ID) and \
            node.name.name.name == name:
        return node.name.field.name, list(node.args.exprs) if node.args else []
    return None


def _vectors(fdef):
    """[(decl, block, element type, (length, init kind, init expr))] of the vector locals, and
    the problems [(message, node)]."""
    decls = [n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Decl) and n.name]
    count: dict[str, int] = {}
    for d in decls:
        count[d.name] = count.get(d.name, 0) + 1
    found, problems = [], []
    for block in (n for n in canon.walk(fdef.body) if isinstance(n, c_ast.Compound)):
        for d in block.block_items or []:
            if not isinstance(d, c_ast.Decl) or not d.name:
                continue
            elem = _element(d)
            if elem is None:
                continue
            if count[d.name] != 1:
                problems.append((f"std::vector '{d.name}' is declared more than once", d))
                continue
            init = d.init
            args = list(init.args.exprs) if isinstance(init, c_ast.FuncCall) and init.args else None
            if args is None or any(canon.has_side_effects(a) for a in args):
                problems.append((f"std::vector '{d.name}' is not constructed with a length, a "
                                 "length and a value, or a pointer range", d))
                continue
            if len(args) == 1:
                shape = (args[0], "zero", None)
            elif len(args) == 2 and _is_pointer_range(args, fdef):
                shape = (canon.pointer_difference(args[1], args[0]), "copy", args[0])
            elif len(args) == 2:
                shape = (args[0], "fill", args[1])
            else:
                problems.append((f"std::vector '{d.name}' constructed with {len(args)} arguments", d))
                continue
            bad = _other_use(fdef.body, d)
            if bad is not None:
                problems.append((f"std::vector '{d.name}' is used other than indexed or through "
                                 "data() / size() / begin() / end() / empty() / at()", bad))
                continue
            found.append((d, block, elem, shape))
    return found, problems


def _pointer_names(fdef) -> set[str]:
    names = set()
    for n in canon.walk(fdef):
        if isinstance(n, c_ast.Decl) and n.name and isinstance(n.type, (c_ast.PtrDecl, c_ast.ArrayDecl)):
            names.add(n.name)
    return names


def _is_pointer_range(args, fdef) -> bool:
    """``(first, last)`` are pointers into one object: ``p, p + n`` / ``p + a, p + b`` of a
    pointer or array ``p`` (a length and a value otherwise)."""
    pointers = _pointer_names(fdef)

    def base(e):
        while isinstance(e, c_ast.BinaryOp) and e.op in ("+", "-"):
            e = e.left
        return e.name if isinstance(e, c_ast.ID) and e.name in pointers else None
    return base(args[0]) is not None and base(args[0]) == base(args[1])


def _other_use(body, decl):
    """The first node naming the vector other than as the base of a subscript or a known
    method call (an assignment, a resize, the vector passed whole), else None."""
    name = decl.name
    ok: set[int] = set()
    for n in canon.walk(body):
        got = _method(n, name)
        if got is not None:
            if got[0] not in _METHODS:
                return n
            ok.add(id(n.name.name))
        elif isinstance(n, c_ast.ArrayRef) and isinstance(n.name, c_ast.ID) and n.name.name == name:
            ok.add(id(n.name))
    for n in canon.walk(body):
        if isinstance(n, c_ast.ID) and n.name == name and id(n) not in ok:
            return n
    return None


def _rewrite(fdef, found) -> None:
    for k, (d, block, elem, (length, kind, value)) in enumerate(found):
        size = f"__xp_size_{d.name}"
        i = "__xp_i"
        head = canon.parse_stmts(f"const size_t {size} = 0;\n{elem} {d.name}[{size}];\n")
        head[0].init = c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
            None, [], None, c_ast.IdentifierType(["size_t"]))), copy.deepcopy(length))
        (fill,) = canon.parse_stmts(f"for (size_t {i} = 0; {i} < {size}; ++{i}) {d.name}[{i}] = 0;")
        if kind == "fill":
            fill.stmt.rvalue = copy.deepcopy(value)
        elif kind == "copy":
            fill.stmt.rvalue = c_ast.ArrayRef(copy.deepcopy(value), c_ast.ID(i))
        items = list(block.block_items)
        at = next(j for j, x in enumerate(items) if x is d)
        block.block_items = items[:at] + head + [fill] + items[at + 1:]

        def replacement(n, name=d.name, size=size):
            got = _method(n, name)
            if got is None:
                return None
            method, args = got
            if method in ("data", "begin"):
                return c_ast.ID(name)
            if method == "end":
                return c_ast.BinaryOp("+", c_ast.ID(name), c_ast.ID(size))
            if method == "size":
                return c_ast.ID(size)
            if method == "empty":
                return c_ast.BinaryOp("==", c_ast.ID(size), c_ast.Constant("int", "0"))
            return c_ast.ArrayRef(c_ast.ID(name), args[0])          # at(i)
        canon.replace_nodes(fdef.body, replacement, skip={c_ast.StructRef: ("field",)})


@register(PassInfo(
    name=NAME,
    summary="std::vector<T> locals of a fixed length (n; n, value; first, last) -> local arrays, "
            "data() / size() / begin() / end() read through",
    options={},
    requires=("a std::vector<T> local of a scalar type (XP-STD-CONTAINERS-001)",
              "declared once with a length, a length and a value or a pointer range, then only "
              "indexed or read through data / size / begin / end / empty / at "
              "(XP-STD-CONTAINERS-002)"),
    guarantees=("same outputs on the virtual device",),
    introduces=("__xp_size_<v> length constants", "local arrays of the vectors' lengths"),
))
def std_containers(program, *, plan=None):
    plan = canon.plan_or_refuse(NAME, plan if plan is not None else _legal(program))
    return canon.reparse(program, plan.ast)


@std_containers.legality
def _legal(program):
    ast = copy.deepcopy(program.ast)
    found_any, problems = False, []
    for fdef in (e for e in ast.ext if isinstance(e, c_ast.FuncDef)):
        found, bad = _vectors(fdef)
        problems += bad
        if found and not bad:
            _rewrite(fdef, found)
            found_any = True
    if problems:
        return [canon.diag(program, NAME, "XP-STD-CONTAINERS-002", why, node) for why, node in problems]
    if not found_any:
        return [canon.diag(program, NAME, "XP-STD-CONTAINERS-001",
                           "no std::vector local of a scalar type")]
    return canon.Rewritten(ast)
