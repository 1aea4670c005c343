"""Which pointer parameters a function reads and writes, in program order.

``AccessWalker`` walks one function body in evaluation order and records a *timeline*: memory
accesses through tracked pointers (``('r'|'w', base)``) and calls (``('call', name, args,
node)``), including normalised ``<<<>>>`` launches. Local pointers derived from a tracked one
(``float *q = p + off;``, ``q = (half *)p;``) are aliases of it. Accesses count through
``p[i]``, ``*p``, ``p->f``, references (``T &x``), device helper calls (the callee's summary,
mapped argument by argument) and intrinsics with a known data direction (``INTRINSIC_EFFECTS``).

``Summary`` condenses a timeline: per base, whether its first access is a read (the function
needs the incoming data), whether it is read at all, and whether it is written.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from pycparser import c_ast

from .generator import launch_parts

FILL_FUNCTIONS = frozenset({"__bang_write_value", "__bang_write_zero", "__nramset",
                            "__memset_nram", "__gdramset", "__ldramset", "__sramset", "memset"})
COPY_FUNCTIONS = frozenset({"__memcpy", "__memcpy_async", "memcpy", "memmove", "__builtin_memcpy"})
_STORE = re.compile(r"_mm\d*_(?:mask_)?(?:storeu?|stream)_\w+")
_LOAD = re.compile(r"_mm\d*_(?:mask_|maskz_)?(?:loadu?|stream_load)_\w+")


def call_effects(name: str, nargs: int) -> tuple[set[int], set[int]] | None:
    """(argument indexes read through, argument indexes written through), or None."""
    base = name.rsplit("::", 1)[-1]
    everything = set(range(nargs))
    if base in COPY_FUNCTIONS:
        return {1}, {0}
    if base in FILL_FUNCTIONS:
        return set(), {0}
    if base.startswith("__bang_"):
        return everything - {0}, {0}
    if base == "store_matrix_sync":
        return set(), {0}
    if base == "load_matrix_sync":
        return {1}, set()
    if _STORE.fullmatch(base):
        return set(), {0}
    if _LOAD.fullmatch(base) or base == "__ldg":
        return everything, set()
    if base.startswith("atomic"):
        return {0}, {0}
    return None


@dataclass
class Access:
    read_first: bool = False
    read: bool = False
    written: bool = False


@dataclass
class Summary:
    """Per tracked base (parameter name): how the function uses its memory."""

    bases: dict[str, Access] = field(default_factory=dict)

    @classmethod
    def from_timeline(cls, timeline: list[tuple]) -> "Summary":
        out = cls()
        for event in timeline:
            if event[0] not in ("r", "w"):
                continue
            kind, base = event[0], event[1]
            acc = out.bases.get(base)
            if acc is None:
                acc = out.bases[base] = Access(read_first=kind == "r")
            acc.read |= kind == "r"
            acc.written |= kind == "w"
        return out

    def get(self, base: str) -> Access:
        return self.bases.get(base, Access())


class AccessWalker(c_ast.NodeVisitor):
    """Timeline of accesses and calls of one function body (see module docstring)."""

    def __init__(self, tracked: set[str], references: set[str], callee_summary,
                 canonical=lambda name: name):
        self.alias: dict[str, str] = {name: name for name in tracked}
        self.refs = set(references)
        self.callee_summary = callee_summary     # name -> (list[str] params, Summary) | None
        self.canonical = canonical
        self.timeline: list[tuple] = []

    # -- events -------------------------------------------------------------------
    def read(self, base: str | None) -> None:
        if base is not None:
            self.timeline.append(("r", base))

    def write(self, base: str | None) -> None:
        if base is not None:
            self.timeline.append(("w", base))

    # -- what an expression points into --------------------------------------------
    def base_of(self, e: c_ast.Node | None) -> str | None:
        """Tracked base a pointer-valued expression points into."""
        match e:
            case c_ast.ID(name=name):
                return self.alias.get(name)
            case c_ast.Cast(expr=inner) | c_ast.UnaryOp(op="&", expr=inner):
                return self.base_of(inner)
            case c_ast.BinaryOp(op="+" | "-", left=a, right=b):
                return self.base_of(a) or self.base_of(b)
            case c_ast.ArrayRef(name=inner):
                return self.base_of(inner)
            case c_ast.TernaryOp(iftrue=a, iffalse=b):
                return self.base_of(a) or self.base_of(b)
        return None

    def target(self, e: c_ast.Node) -> str | None:
        """Tracked base whose memory the lvalue ``e`` designates."""
        match e:
            case c_ast.ArrayRef(name=inner) | c_ast.UnaryOp(op="*", expr=inner):
                return self.base_of(inner)
            case c_ast.StructRef(type="->", name=inner):
                return self.base_of(inner)
            case c_ast.StructRef(type=".", name=inner):
                return self.target(inner)
            case c_ast.ID(name=name) if name in self.refs:
                return self.alias.get(name, name)
        return None

    def visit_parts(self, e: c_ast.Node) -> None:
        """Visit the sub-expressions of an lvalue (indexes) without its own access."""
        match e:
            case c_ast.ArrayRef(name=inner, subscript=sub):
                self.visit_parts(inner)
                self.visit(sub)
            case c_ast.UnaryOp(op="*", expr=inner):
                self.visit(inner)
            case c_ast.StructRef(type=".", name=inner):
                self.visit_parts(inner)
            case c_ast.StructRef(name=inner):
                self.visit(inner)
            case c_ast.ID():
                pass
            case _:
                self.visit(e)

    # -- statements and expressions ---------------------------------------------------
    def visit_Assignment(self, n: c_ast.Assignment) -> None:
        self.visit(n.rvalue)
        self.visit_parts(n.lvalue)
        base = self.target(n.lvalue)
        if base is not None:
            if n.op != "=":
                self.read(base)
            self.write(base)
        elif isinstance(n.lvalue, c_ast.ID) and n.lvalue.name not in self.refs:
            self.rebind(n.lvalue.name, n.rvalue)

    def rebind(self, name: str, value: c_ast.Node | None) -> None:
        base = self.base_of(value) if value is not None else None
        if base is not None:
            self.alias[name] = base
        elif name in self.alias and self.alias[name] != name:
            del self.alias[name]

    def visit_Decl(self, n: c_ast.Decl) -> None:
        if n.init is not None:
            self.visit(n.init)
        if isinstance(n.type, c_ast.PtrDecl) and n.init is not None:
            self.rebind(n.name, n.init)
        elif n.name in self.alias:
            del self.alias[n.name]     # shadowed by a local that is not a pointer
        if isinstance(n.type, c_ast.ArrayDecl):
            self.visit(n.type)

    def visit_UnaryOp(self, n: c_ast.UnaryOp) -> None:
        if n.op in ("++", "--", "p++", "p--"):
            self.visit_parts(n.expr)
            base = self.target(n.expr)
            self.read(base)
            self.write(base)
        elif n.op == "*":
            self.read(self.base_of(n.expr))
            self.visit(n.expr)
        elif n.op == "&":
            self.visit_parts(n.expr)
        elif n.op != "sizeof":
            self.visit(n.expr)

    def visit_ArrayRef(self, n: c_ast.ArrayRef) -> None:
        self.read(self.base_of(n.name))
        self.visit_parts(n)

    def visit_StructRef(self, n: c_ast.StructRef) -> None:
        if n.type == "->":
            self.read(self.base_of(n.name))
        self.visit(n.name)

    def visit_ID(self, n: c_ast.ID) -> None:
        if n.name in self.refs:
            self.read(self.alias.get(n.name, n.name))

    def visit_FuncCall(self, n: c_ast.FuncCall) -> None:
        launch = launch_parts(n)
        args = list(n.args.exprs) if n.args is not None else []
        if launch is not None:
            kernel, config = launch
            for e in config:
                self.visit(e)
            self.timeline.append(("launch", kernel, config, args, n))
            return
        name = self.canonical(n.name.name) if isinstance(n.name, c_ast.ID) else None
        if name is None:
            self.generic_visit(n)
            return
        self.timeline.append(("call", name, args, n))
        effects = call_effects(name, len(args))
        if effects is not None:
            self.apply_effects(args, *effects)
            return
        callee = self.callee_summary(name)
        if callee is not None:
            self.apply_callee(args, *callee)
            return
        for a in args:
            self.visit(a)

    def apply_effects(self, args: list[c_ast.Node], reads: set[int], writes: set[int]) -> None:
        for i, a in enumerate(args):
            self.visit(a)
            base = self.base_of(a)
            if i in reads:
                self.read(base)
            if i in writes:
                self.write(base)

    def apply_callee(self, args: list[c_ast.Node], params: list[str], summary: Summary) -> None:
        for i, a in enumerate(args):
            if i >= len(params):
                self.visit(a)
                continue
            acc = summary.get(params[i])
            base = self.base_of(a) or self.target(a)
            if base is None or not (acc.read or acc.written):
                self.visit(a)
                continue
            self.visit_parts(a)
            if acc.read_first:
                self.read(base)
            if acc.written:
                self.write(base)
