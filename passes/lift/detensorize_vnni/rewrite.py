"""Private helpers of ``detensorize_vnni``: AST analyses (uses, vector misuse, declared names)
and the rewrites (types, intrinsic calls, constants, macro text, helper functions as AST).

Analyses are ``NodeVisitor`` subclasses that only read; the rewrites work on the pass's own
deep copy of the AST.
"""
from __future__ import annotations

import re

from pycparser import c_ast

HELPER_FILE = "<xp-vnni-intrinsics>"
# helper nodes get line numbers far beyond the program's, so coordinate-keyed front-end facts
# (casts, constructor declarations: "line:col") can never apply to them
HELPER_LINE_OFFSET = 10_000_000
# names that come from <immintrin.h> (intrinsics, mask helpers, immediate macros, builtins)
INTRINSIC_LIKE = re.compile(
    r"^(?:_mm(?:256|512)?_\w+|_k\w+_mask\d+|_(?:cvt|load|store)\w*mask\d+\w*|_CMP_\w+|_MM_\w+|"
    r"__builtin_ia32_\w+|_(?:tzcnt|lzcnt|popcnt|bextr|blsr|blsi|blsmsk|pdep|pext|bzhi|rdtsc|bswap|"
    r"bit_scan_forward|bit_scan_reverse|castf32|castu32|addcarry|subborrow)\w*)$")
X86_HEADERS = (r"immintrin\.h|x86intrin\.h|x86gprintrin\.h|zmmintrin\.h|emmintrin\.h|xmmintrin\.h|"
               r"pmmintrin\.h|tmmintrin\.h|smmintrin\.h|nmmintrin\.h|wmmintrin\.h|avxintrin\.h|"
               r"avx2intrin\.h|avx512\w*intrin\.h|ia32intrin\.h|mmintrin\.h")


class Uses(c_ast.NodeVisitor):
    """Every identifier (``ids``) and type name (``types``) with its coordinate."""

    def __init__(self):
        self.ids: list[tuple[str, object]] = []
        self.types: list[tuple[str, object]] = []

    def visit_ID(self, node):
        self.ids.append((node.name, node.coord))

    def visit_IdentifierType(self, node):
        for n in node.names:
            self.types.append((n, node.coord))
        self.generic_visit(node)


def _vector_value_type(type_node, vector_types) -> bool:
    """True for a declarator that is directly a vector (not a pointer / array / function)."""
    return (isinstance(type_node, c_ast.TypeDecl) and isinstance(type_node.type, c_ast.IdentifierType)
            and any(n in vector_types for n in type_node.type.names))


class VectorMisuse(c_ast.NodeVisitor):
    """GCC vector-extension uses of vector values (operators, subscripts, value casts, brace
    initialisers). A name is a vector inside a function if the function declares it with a
    vector type in the innermost scope declaring it (blocks and ``for`` headers are scopes: a
    scalar ``d`` of a tail loop is not the vector ``d`` of the loop before it), or if no scope of
    the function declares it and a file-scope declaration gives it a vector type."""

    def __init__(self, vector_types: set[str]):
        self.vector_types = vector_types
        self.file_names: set[str] = set()
        self.scopes: list[dict[str, bool]] = []
        self.found: list[tuple[str, object]] = []

    def visit_FileAST(self, node):
        collect = _VectorNames(self.vector_types)
        for ext in node.ext:
            if not isinstance(ext, c_ast.FuncDef):
                collect.visit(ext)
        self.file_names = collect.vec
        self.generic_visit(node)

    def _scoped(self, node):
        self.scopes.append({})
        self.generic_visit(node)
        self.scopes.pop()

    def visit_FuncDef(self, node):
        self._scoped(node)

    def visit_Compound(self, node):
        self._scoped(node)

    def visit_For(self, node):
        self._scoped(node)

    def _is_vec(self, n) -> bool:
        if not isinstance(n, c_ast.ID):
            return False
        for scope in reversed(self.scopes):
            if n.name in scope:
                return scope[n.name]
        return n.name in self.file_names

    def visit_BinaryOp(self, node):
        if self._is_vec(node.left) or self._is_vec(node.right):
            name = node.left.name if self._is_vec(node.left) else node.right.name
            self.found.append((f"operator '{node.op}' on vector '{name}'", node.coord))
        self.generic_visit(node)

    def visit_UnaryOp(self, node):
        if node.op not in ("&", "sizeof") and self._is_vec(node.expr):
            self.found.append((f"operator '{node.op}' on vector '{node.expr.name}'", node.coord))
        self.generic_visit(node)

    def visit_ArrayRef(self, node):
        if self._is_vec(node.name):
            self.found.append((f"subscript of vector '{node.name.name}'", node.coord))
        self.generic_visit(node)

    def visit_Assignment(self, node):
        if node.op != "=" and (self._is_vec(node.lvalue) or self._is_vec(node.rvalue)):
            self.found.append((f"compound assignment '{node.op}' on a vector", node.coord))
        self.generic_visit(node)

    def visit_Cast(self, node):
        if _vector_value_type(node.to_type.type, self.vector_types):
            self.found.append(("value cast to a vector type", node.coord))
        self.generic_visit(node)

    def visit_Decl(self, node):
        if node.name and self.scopes:
            self.scopes[-1][node.name] = _vector_value_type(node.type, self.vector_types)
        if isinstance(node.init, c_ast.InitList) and _vector_value_type(node.type, self.vector_types):
            self.found.append((f"brace initialiser of vector '{node.name}'", node.coord))
        self.generic_visit(node)


class _VectorNames(c_ast.NodeVisitor):
    def __init__(self, vector_types):
        self.vector_types = vector_types
        self.vec: set[str] = set()
        self.other: set[str] = set()

    def visit_Decl(self, node):
        if node.name:
            (self.vec if _vector_value_type(node.type, self.vector_types) else self.other).add(node.name)
        self.generic_visit(node)


class DeclaredNames(c_ast.NodeVisitor):
    """Names the program declares (objects, functions, typedefs) with coordinates."""

    def __init__(self):
        self.names: list[tuple[str, object]] = []

    def visit_Decl(self, node):
        if node.name:
            self.names.append((node.name, node.coord))
        self.generic_visit(node)

    def visit_Typedef(self, node):
        self.names.append((node.name, node.coord))
        self.generic_visit(node)


# ------------------------------------------------------------------------------ rewrites
def _children_slots(node):
    return [s for s in getattr(type(node), "__slots__", ()) if s not in ("coord", "__weakref__")]


def _map(node, fn):
    """Replace, bottom-up and in place, every child ``c`` of ``node`` by ``fn(c)``."""
    for slot in _children_slots(node):
        value = getattr(node, slot, None)
        if isinstance(value, c_ast.Node):
            _map(value, fn)
            setattr(node, slot, fn(value))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, c_ast.Node):
                    _map(item, fn)
                    value[i] = fn(item)


def rewrite_ast(ast, cat) -> tuple[set[str], set[str]]:
    """Rewrite ``ast`` in place; return (intrinsics used, vector types used)."""
    used_i: set[str] = set()
    used_t: set[str] = set()

    def fn(n):
        if isinstance(n, c_ast.IdentifierType):
            names = []
            for w in n.names:
                if w in cat.types:
                    used_t.add(w)
                    names.append(cat.types[w].c)
                elif w in cat.masks:
                    names.extend(cat.masks[w].c.split())
                else:
                    names.append(w)
            n.names = names
        elif isinstance(n, c_ast.ID):
            if n.name in cat.intrinsics:
                used_i.add(n.name)
                n.name = cat.helper_name(n.name)
            elif n.name in cat.constants:
                return c_ast.Constant("int", str(cat.constants[n.name]), coord=n.coord)
        return n

    _map(ast, fn)
    return used_i, used_t


def rewrite_macro_text(text: str, cat) -> tuple[str, set[str], set[str]]:
    """The same rewrite on a macro body (text): returns (text, intrinsics used, types used)."""
    used_i: set[str] = set()
    used_t: set[str] = set()

    def sub(m):
        w = m.group(0)
        if w in cat.intrinsics:
            used_i.add(w)
            return cat.helper_name(w)
        if w in cat.constants:
            return str(cat.constants[w])
        if w in cat.types:
            used_t.add(w)
            return cat.types[w].c
        if w in cat.masks:
            return cat.masks[w].c
        return w

    return re.sub(r"\b[A-Za-z_]\w*\b", sub, text), used_i, used_t


def helper_ast(cat, intrinsics, types, *, rules: bool = True) -> list:
    """File-scope AST nodes (typedefs, support code, reference functions) for the intrinsics."""
    import platforms
    from platforms.common.frontend import parse_program

    DIALECT = platforms.module("vnni", "frontend").DIALECT

    text = cat.helpers_c(sorted(intrinsics), rules=rules, types=types)
    entry = "xp_vnni_helpers_entry__"
    unit = parse_program("#include <stdint.h>\n#include <string.h>\n#include <math.h>\n" + text +
                         f'extern "C" void {entry}(void) {{}}\n', DIALECT, path=HELPER_FILE, entry=entry)
    nodes = [n for n in unit.ast.ext
             if not (isinstance(n, c_ast.FuncDef) and n.decl.name == entry)]
    for n in nodes:
        _shift_coords(n)
    return nodes


def _shift_coords(node) -> None:
    c = node.coord
    if c is not None and getattr(c, "line", None) is not None:
        node.coord = type(c)(c.file, c.line + HELPER_LINE_OFFSET, c.column)
    for _, child in node.children():
        _shift_coords(child)
