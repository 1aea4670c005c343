"""Shared back-end printer: pycparser AST (normalised, see ``lexer.py``) -> dialect source.

``XGenerator`` subclasses pycparser's ``CGenerator`` and overrides only the node kinds whose
normalised form must be printed back as the original construct:

- ``FuncCall(FuncCall(ID('__xp_launch'), [k, cfg...]), args)`` -> ``k<<<cfg...>>>(args)``
- ``Cast`` whose coordinate is in ``facts['casts']`` -> ``static_cast<T>(e)`` / ``T(e)``
- ``Decl`` whose coordinate is in ``facts['ctor_decls']`` -> ``dim3 b(x, y)`` / ``dim3 b{x, y}``
- function ``Decl`` named in ``facts['extern_c']`` -> ``extern "C"`` prefix
- ``Typedef`` named in ``facts['using_aliases']`` -> ``using T = U;``
- ``AttributeSpecifier`` of namespace ``gnu`` -> ``__attribute__((...))``
- ``PtrDecl`` qualified ``__xp_ref`` -> ``&``
- ``Alignas`` -> ``alignas(...)`` (C++ spelling); ``TernaryOp`` without needless parentheses
- ``Decl.funcspec`` entries ``__launch_bounds__(...)`` are printed after the return type

``emit(program)`` prints the preamble (includes, defines, ``using namespace``) then the AST.
"""
from __future__ import annotations

import re

from pycparser import c_ast
from pycparser.c_generator import CGenerator

from .lexer import LAUNCH, REFERENCE, key

_REF = re.compile(r"\*\s*" + REFERENCE + r"\b ?")


class XGenerator(CGenerator):
    """CGenerator that reverses the front-end normalisation (see module docstring)."""

    def __init__(self, facts: dict | None = None):
        super().__init__(reduce_parentheses=True)
        facts = facts or {}
        self.casts: dict = facts.get("casts", {})
        self.ctor_decls: dict = facts.get("ctor_decls", {})
        self.extern_c = set(facts.get("extern_c", []))
        self.using_aliases = set(facts.get("using_aliases", []))
        self._top_level = False

    # -- launches ---------------------------------------------------------------
    def visit_FuncCall(self, n: c_ast.FuncCall) -> str:
        launch = launch_parts(n)
        if launch is None:
            return super().visit_FuncCall(n)
        kernel, config = launch
        cfg = ", ".join(self._visit_expr(e) for e in config)
        args = self.visit(n.args) if n.args is not None else ""
        return f"{self._parenthesize_unless_simple(kernel)}<<<{cfg}>>>({args})"

    # -- casts ------------------------------------------------------------------
    def visit_Cast(self, n: c_ast.Cast) -> str:
        kind = self.casts.get(coord_key(n)) if n.coord else None
        if kind is None:
            return super().visit_Cast(n)
        to_type = self._generate_type(n.to_type, emit_declname=False).strip()
        expr = self._visit_expr(n.expr)
        if kind == "functional":
            return f"{to_type}({expr})"
        return f"{kind}<{to_type}>({expr})"

    def visit_CompoundLiteral(self, n: c_ast.CompoundLiteral) -> str:
        if n.coord is None or self.casts.get(coord_key(n)) != "brace":
            return super().visit_CompoundLiteral(n)
        to_type = self._generate_type(n.type, emit_declname=False).strip()
        return f"{to_type}{{{self.visit(n.init)}}}"

    # -- declarations -------------------------------------------------------------
    def visit_Decl(self, n: c_ast.Decl, no_type: bool = False) -> str:
        style = self.ctor_decls.get(coord_key(n)) if n.coord and n.init is not None else None
        if style is None:
            return super().visit_Decl(n, no_type)
        head = self._generate_type(n.type, emit_base_type=False) if no_type \
            else self._generate_decl(n)
        if style == "brace":
            return f"{head}{{{self.visit(n.init)}}}"
        args = n.init.args if isinstance(n.init, c_ast.FuncCall) else None
        return f"{head}({self.visit(args) if args is not None else ''})"

    def _generate_decl(self, n: c_ast.Decl) -> str:
        if n.align:                          # C++ wants alignas(...) before the specifiers
            aligns = " ".join(self.visit(a) for a in n.align)
            bare = c_ast.Decl(n.name, n.quals, [], n.storage, n.funcspec, n.type, n.init,
                              n.bitsize, attributes=n.attributes, coord=n.coord)
            return aligns + " " + self._generate_decl(bare)
        specs = list(n.funcspec or [])
        late = [s for s in specs if s.startswith("__launch_bounds__")]
        if late and isinstance(n.type, c_ast.FuncDecl):
            n = _with_funcspec(n, [s for s in specs if s not in late])
            text = super()._generate_decl(n)
            text = _insert_after_return_type(text, n, " ".join(late))
        else:
            text = super()._generate_decl(n)
        if isinstance(n.type, c_ast.FuncDecl) and n.name in self.extern_c and self._top_level:
            text = 'extern "C" ' + text
        return text

    def visit_FileAST(self, n: c_ast.FileAST) -> str:
        out = []
        for ext in n.ext:
            self._top_level = True
            if isinstance(ext, c_ast.FuncDef):
                out.append(self.visit(ext) + "\n")
            elif isinstance(ext, c_ast.Pragma):
                out.append(self.visit(ext) + "\n")
            else:
                out.append(self.visit(ext) + ";\n")
            self._top_level = False
        return "".join(out)

    def visit_FuncDef(self, n: c_ast.FuncDef) -> str:
        decl = self.visit(n.decl)
        self._top_level = False
        self.indent_level = 0
        body = self.visit(n.body)
        return decl + "\n" + body

    def visit_Typedef(self, n: c_ast.Typedef) -> str:
        if n.name not in self.using_aliases:
            return super().visit_Typedef(n)
        attrs = ""
        inner = n.type
        if isinstance(inner, c_ast.TypeDecl) and inner.attributes:
            attrs = " " + self._generate_attributes(inner.attributes)
            inner = c_ast.TypeDecl(inner.declname, inner.quals, inner.align, inner.type,
                                   coord=inner.coord)
        target = self._generate_type(c_ast.Typename(None, [], None, inner),
                                     emit_declname=False).strip()
        return f"using {n.name} = {target}{attrs}"

    def visit_TernaryOp(self, n: c_ast.TernaryOp) -> str:
        parts = [self._parenthesize_unless_simple(x) for x in (n.cond, n.iftrue, n.iffalse)]
        return f"{parts[0]} ? {parts[1]} : {parts[2]}"

    def visit_Alignas(self, n: c_ast.Alignas) -> str:
        return f"alignas({self._visit_expr(n.alignment)})"

    def visit_AttributeSpecifier(self, n: c_ast.AttributeSpecifier) -> str:
        if n.attributes and all(a.namespace == "gnu" for a in n.attributes):
            items = ", ".join(a.name + (f"({a.arguments})" if a.arguments is not None else "")
                              for a in n.attributes)
            return f"__attribute__(({items}))"
        return super().visit_AttributeSpecifier(n)

    def _is_simple_node(self, n: c_ast.Node) -> bool:
        if isinstance(n, c_ast.Cast) and n.coord and coord_key(n) in self.casts:
            return True                       # static_cast<T>(e) / T(e) bind like calls
        return super()._is_simple_node(n)

    def _generate_type(self, n, modifiers=None, emit_declname=True, emit_base_type=True):
        text = super()._generate_type(n, modifiers, emit_declname, emit_base_type)
        return _REF.sub("&", text) if REFERENCE in text else text


def emit_program(program, generator_class=None) -> str:
    """Source text of ``program``: its preamble lines, a blank line, then the AST."""
    generator = (generator_class or XGenerator)(program.facts)
    preamble = program.facts.get("preamble", [])
    head = "\n".join(preamble) + "\n\n" if preamble else ""
    return head + generator.visit(program.ast)


def launch_parts(n: c_ast.Node) -> tuple[c_ast.Node, list[c_ast.Node]] | None:
    """``(kernel, [grid, block, ...])`` if ``n`` is a normalised ``<<<>>>`` launch."""
    if not isinstance(n, c_ast.FuncCall) or not isinstance(n.name, c_ast.FuncCall):
        return None
    inner = n.name
    if not (isinstance(inner.name, c_ast.ID) and inner.name.name == LAUNCH and inner.args):
        return None
    exprs = inner.args.exprs
    return exprs[0], list(exprs[1:])


def coord_key(n: c_ast.Node) -> str:
    return key(n.coord.line, n.coord.column)


def _with_funcspec(n: c_ast.Decl, funcspec: list[str]) -> c_ast.Decl:
    return c_ast.Decl(n.name, n.quals, n.align, n.storage, funcspec, n.type, n.init, n.bitsize,
                      attributes=n.attributes, coord=n.coord)


def _insert_after_return_type(text: str, n: c_ast.Decl, late: str) -> str:
    """Put ``__launch_bounds__(...)`` between the return type and the function name."""
    m = re.search(r"\b" + re.escape(n.name) + r"\s*\(", text)
    if not m:
        return text + " " + late
    return text[: m.start()] + late + " " + text[m.start():]


def expr_text(node: c_ast.Node | None) -> str | None:
    """C spelling of an expression (normalised forms printed back)."""
    if node is None:
        return None
    gen = XGenerator()
    return gen._visit_expr(node)


def type_text(node: c_ast.Node) -> str:
    """C spelling of a declaration's type without its name, e.g. ``const float *``."""
    return XGenerator()._generate_type(node, emit_declname=False).strip()
