"""canon: shared AST helpers of the canonicalisation passes (inline, sroa, memops, simplify, dce).

Not a pass. Small, pure utilities over pycparser ASTs: fresh names, side-effect and write
queries, scoped declaration lookup, element types of pointer expressions, byte sizes of scalar
types, statement-list rewriting. Every helper answers conservatively (``None`` / ``False`` when
unsure); the passes refuse or leave code alone in that case.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from pycparser import c_ast

from xpiler.ir.errors import Coord, Diagnostic

PURE_CALLS = frozenset("""
expf exp exp2f exp2 expm1f logf log log2f log2 log10f log1pf sqrtf sqrt rsqrtf cbrtf powf pow
fabsf fabs abs labs llabs fmaxf fmax fminf fmin tanhf tanh sinhf coshf sinf sin cosf cos tanf
atanf atan2f asinf acosf erff erf erfcf floorf floor ceilf ceil roundf round truncf trunc rintf
rint nearbyintf nearbyint lrintf fmodf fmod copysignf ldexpf max min isnan isinf
""".split())

# byte size of scalar element types (as spelled by the front-ends / lifts)
TYPE_BYTES = {
    "float": 4, "double": 8, "int": 4, "unsigned": 4, "unsigned int": 4, "signed": 4,
    "signed int": 4, "short": 2, "unsigned short": 2, "short int": 2, "char": 1,
    "signed char": 1, "unsigned char": 1, "long long": 8, "unsigned long long": 8,
    "long": 8, "unsigned long": 8, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2,
    "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8, "half": 2, "_Float16": 2,
    "bool": 1, "_Bool": 1, "size_t": 8,
}
_QUALS = ("const", "volatile", "restrict", "__restrict__", "__restrict")
# the words of integer types a cast is read through when a pass evaluates or matches integer
# expressions (the value is assumed to fit, as sources index with them): C's own and the
# fixed-width typedefs real kernels cast with (``(int64_t) blockIdx.x * blockDim.x``)
INT_CAST_WORDS = frozenset(("int", "unsigned", "signed", "long", "short", "size_t", "ptrdiff_t",
                            "int32_t", "uint32_t", "int64_t", "uint64_t"))


@dataclass
class Rewritten:
    """A check's plan where the pass's analysis and rewrite are one walk (passes/base.py): the
    check ran it on a copy of the program's AST (``ast``, rewritten), ``data`` is whatever else
    the rewrite needs (counts, facts). The rewrite only emits it: the walk runs once."""

    ast: Any
    data: Any = None


def plan_or_refuse(pass_name: str, got):
    """The plan a rewrite called without one computed itself (``got``: its check's answer):
    returned as is, or diagnostics raised as PassRefused (apply_pass reads not-applicable codes
    among them as "unchanged")."""
    if isinstance(got, (list, tuple)):
        from passes.base import PassRefused

        raise PassRefused.of(pass_name, got)
    return got


def diag(program, pass_name: str, code: str, message: str, node=None) -> Diagnostic:
    c = getattr(node, "coord", None)
    coord = Coord(getattr(c, "file", None) or program.path, getattr(c, "line", 0) or 0,
                  getattr(c, "column", 0) or 0)
    return Diagnostic(code, message, coord, pass_name=pass_name)


def reparse(program, ast):
    """The pass result: ``ast`` emitted by the program's back-end and parsed again, so the new
    Program's facts (params, launches, buffers, intrinsics) are those of its text."""
    import platforms
    from dataclasses import replace
    from platforms import parse as parse_source

    text = platforms.module(program.platform, "backend").emit(replace(program, ast=ast, source=""))
    return parse_source(text, program.platform, program.path, entry=program.entry.name)


def entry_def(ast, entry_name: str) -> c_ast.FuncDef | None:
    for e in ast.ext:
        if isinstance(e, c_ast.FuncDef) and e.decl.name == entry_name:
            return e
    return None


def func_defs(ast) -> dict[str, c_ast.FuncDef]:
    return {e.decl.name: e for e in ast.ext if isinstance(e, c_ast.FuncDef)}


def call_name(n) -> str | None:
    return n.name.name if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) else None


def walk(node):
    """Pre-order iteration over a node and its descendants."""
    if node is None:
        return
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for _, c in reversed(list(n.children())))


def ids_in(node) -> set[str]:
    """Variable names referenced under ``node`` (StructRef field names excluded)."""
    out: set[str] = set()

    def go(n):
        if isinstance(n, c_ast.ID):
            out.add(n.name)
            return
        if isinstance(n, c_ast.StructRef):
            go(n.name)
            return
        for _, c in n.children():
            go(c)

    if node is not None:
        go(node)
    return out


def lvalue_root(lv) -> str | None:
    """Variable name an lvalue writes into (``x``, ``x[i]``, ``x.v[i]``), else None."""
    while True:
        if isinstance(lv, c_ast.ID):
            return lv.name
        if isinstance(lv, c_ast.ArrayRef):
            lv = lv.name
        elif isinstance(lv, c_ast.StructRef) and lv.type == ".":
            lv = lv.name
        else:
            return None


def written_names(node) -> set[str]:
    """Names assigned, incremented or address-taken anywhere under ``node`` (by name only)."""
    out = set()
    for n in walk(node):
        if isinstance(n, c_ast.Assignment):
            r = lvalue_root(n.lvalue)
            if r:
                out.add(r)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&"):
            r = lvalue_root(n.expr)
            if r:
                out.add(r)
    return out


def has_side_effects(e, pure_helpers=frozenset()) -> bool:
    for n in walk(e):
        if isinstance(n, c_ast.Assignment):
            return True
        if isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--"):
            return True
        if isinstance(n, c_ast.FuncCall):
            name = call_name(n)
            if name not in PURE_CALLS and name not in pure_helpers:
                return True
    return False


def type_words(t) -> list[str]:
    while t is not None and not isinstance(t, (c_ast.IdentifierType, c_ast.Struct)):
        t = getattr(t, "type", None)
    if isinstance(t, c_ast.IdentifierType):
        return [w for w in t.names if w not in _QUALS]
    return []


def scalar_bytes(words) -> int | None:
    return TYPE_BYTES.get(" ".join(w for w in words if w not in _QUALS))


def strip_coords(n) -> None:
    n.coord = None
    for _, c in n.children():
        strip_coords(c)


# ------------------------------------------------------------------------------ tree rewriting
# The one home of the "walk pycparser's child slots and put something else there" loops the
# passes used to write out each (issue 15). Slots are named as ``Node.children()`` names them:
# ``"stmt"``, or ``"block_items[3]"`` for an element of a list slot.
_NOT_CHILDREN = ("coord", "__weakref__")
_STRUCT_FIELD = {c_ast.StructRef: ("field",)}   # a field name is not a variable


def child_slots(node) -> list[str]:
    """The attribute names of ``node``'s child slots (node or list of nodes)."""
    return [a for a in node.__slots__ if a not in _NOT_CHILDREN]


def get_slot(container, key):
    """``container[key]`` for an int key (a list slot's element), else ``container.key``."""
    return container[key] if isinstance(key, int) else getattr(container, key)


def set_slot(container, key, value) -> None:
    if isinstance(key, int):
        container[key] = value
    else:
        setattr(container, key, value)


def replace_child(parent, cname: str, new) -> None:
    """Put ``new`` in ``parent``'s child slot ``cname`` as ``children()`` names it."""
    attr, _, index = cname.partition("[")
    if index:
        getattr(parent, attr)[int(index.rstrip("]"))] = new
    else:
        setattr(parent, attr, new)


def _skipped(node, skip) -> tuple:
    return next((attrs for kind, attrs in (skip or {}).items() if isinstance(node, kind)), ())


def map_children(node, fn, skip=None):
    """Set every child of ``node`` to ``fn(child)`` (element-wise in list slots; the lists are
    new) and return ``node``: the one-level step of a recursive rewriter whose ``fn`` recurses.
    ``skip`` maps node classes to slot names left alone (e.g. ``{c_ast.StructRef: ("field",)}``)."""
    left = _skipped(node, skip)
    for attr in child_slots(node):
        if attr in left:
            continue
        v = getattr(node, attr, None)
        if isinstance(v, c_ast.Node):
            setattr(node, attr, fn(v))
        elif isinstance(v, list):
            setattr(node, attr, [fn(x) if isinstance(x, c_ast.Node) else x for x in v])
    return node


def replace_nodes(root, replacement, skip=None):
    """In place, pre-order: every node strictly under ``root`` for which ``replacement(node)``
    is not None is replaced by that value, which is not descended into. List slots are updated
    in place. Returns ``root``."""
    left = _skipped(root, skip)
    for attr in child_slots(root):
        if attr in left:
            continue
        v = getattr(root, attr, None)
        if isinstance(v, c_ast.Node):
            r = replacement(v)
            if r is None:
                replace_nodes(v, replacement, skip)
            else:
                setattr(root, attr, r)
        elif isinstance(v, list):
            for k, x in enumerate(v):
                if isinstance(x, c_ast.Node):
                    r = replacement(x)
                    if r is None:
                        replace_nodes(x, replacement, skip)
                    else:
                        v[k] = r
    return root


def rebuild(node, replacement, skip=None):
    """A copy of ``node`` (the input untouched) where every node for which
    ``replacement(node)`` is not None, ``node`` itself included, is replaced by that value.
    Nodes on the way are shallow copies and lists are new; leaves and replacements are shared
    unless ``replacement`` copies them."""
    r = replacement(node)
    if r is not None:
        return r
    return map_children(copy.copy(node), lambda x: rebuild(x, replacement, skip), skip)


def _library_typedefs(code: str, typedefs: str) -> str:
    """``typedef int T;`` for each library type name the front-ends always treat as a typedef
    name (``size_t``, ``int64_t``, ``half`` ...: platforms/common/dialect.py COMMON_TYPES) that
    ``code`` mentions and ``typedefs`` does not declare. pycparser must know a typedef name in
    advance (``(size_t) N`` is a cast only then); the parsed statements keep the name as
    written, so the stand-in ``int`` never reaches a result."""
    import re

    from platforms.common.dialect import COMMON_TYPES

    words = set(re.findall(r"[A-Za-z_]\w*", code)) & COMMON_TYPES
    declared = set(re.findall(r"[A-Za-z_]\w*", typedefs)) if typedefs else set()
    return "".join(f"typedef int {w};\n" for w in sorted(words - declared))


def parse_stmts(code: str, typedefs: str = "") -> list:
    """Statements of the C snippet ``code`` (coordinates stripped). ``typedefs``: declarations
    of the file's own type names the snippet uses; the library type names are added here."""
    from pycparser.c_parser import CParser

    head = _library_typedefs(code, typedefs) + typedefs
    ast = CParser().parse(head + "\nvoid __xp_tmpl(void) {\n" + code + "\n}")
    items = ast.ext[-1].body.block_items or []
    for it in items:
        strip_coords(it)
    return items


def parse_expr(code: str, typedefs: str = ""):
    (s,) = parse_stmts(f"__xp_e = ({code});", typedefs)
    return s.rvalue


def substitute(node, mapping: dict):
    """Deep copy of ``node`` with ``ID(name)`` replaced by copies of ``mapping[name]``
    (StructRef fields untouched)."""
    return _substitute_in_place(copy.deepcopy(node), mapping)


def _substitute_in_place(node, mapping: dict):
    def hole(n):
        if isinstance(n, c_ast.ID) and n.name in mapping:
            return copy.deepcopy(mapping[n.name])
        return None
    whole = hole(node)
    return whole if whole is not None else replace_nodes(node, hole, skip=_STRUCT_FIELD)


def rename_decls(node, suffix: str) -> c_ast.Node:
    """Rename every name declared under ``node`` (and its uses) to ``name + suffix``.
    A name declared once is renamed everywhere inside; callers pass fresh, function-private
    bodies. A name declared more than once (the same local in both branches of an ``if``)
    gets one name per declaration - ``name + suffix``, then ``name + suffix + "_2"``, ... -
    and each use the name of the declaration in scope (C block scoping), so that the names
    of the result are unique: later passes that key locals by name (``sroa``, the binders'
    host buffers) then see one object per name."""
    decls = [n for n in walk(node) if isinstance(n, c_ast.Decl) and n.name]
    counts: dict[str, int] = {}
    for d in decls:
        counts[d.name] = counts.get(d.name, 0) + 1
    multi = {name for name, k in counts.items() if k > 1}
    if multi:
        _rename_scoped(node, multi, suffix)
    declared = set(counts) - multi
    mapping = {d: c_ast.ID(d + suffix) for d in declared}
    rename_in_pragmas(node, {d: d + suffix for d in declared})
    node = _substitute_in_place(node, mapping)
    for n in decls:
        if n.name in declared:
            set_declname(n, n.name + suffix)
    return node


_PRAGMA_CLAUSE = re.compile(r"\(([^()]*)\)")


def rename_in_pragmas(node, names: dict[str, str]) -> None:
    """In place: the variables named in the clauses of the ``#pragma omp`` lines under
    ``node`` (``reduction(+:sum)``, ``private(t)``) renamed by ``names``, as their uses are."""
    if not names:
        return
    word = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")
    for n in walk(node):
        if isinstance(n, c_ast.Pragma) and n.string.lstrip().startswith("omp"):
            n.string = _PRAGMA_CLAUSE.sub(
                lambda m: "(" + word.sub(lambda w: names[w.group(1)], m.group(1)) + ")",
                n.string)


def _rename_scoped(node, names: set, suffix: str) -> None:
    """``rename_decls`` for the names declared more than once under ``node``, in place: each
    declaration a fresh name, each use the one of the declaration in scope (a use outside
    all of them: ``name + suffix``)."""
    taken = {n.name for n in walk(node) if isinstance(n, (c_ast.ID, c_ast.Decl)) and n.name}
    seen: dict[str, int] = {}
    stack: list[dict] = [{}]

    def fresh(name: str) -> str:
        seen[name] = seen.get(name, 0) + 1
        if seen[name] == 1:
            return name + suffix
        while True:
            cand = f"{name}{suffix}_{seen[name]}"
            if cand not in taken:
                taken.add(cand)
                return cand
            seen[name] += 1

    def lookup(name: str) -> str:
        for scope in reversed(stack):
            if name in scope:
                return scope[name]
        return name + suffix

    def visit(n) -> None:
        if isinstance(n, (c_ast.Compound, c_ast.For)):
            stack.append({})
            for _, c in n.children():
                visit(c)
            stack.pop()
        elif isinstance(n, c_ast.Decl) and n.name in names:
            old = n.name
            set_declname(n, fresh(old))
            stack[-1][old] = n.name        # in scope from its declarator on (its initialiser)
            for _, c in n.children():
                visit(c)
        elif isinstance(n, c_ast.ID):
            if n.name in names:
                n.name = lookup(n.name)
        elif isinstance(n, c_ast.StructRef):
            visit(n.name)                  # a field name is not a variable
        else:
            for _, c in n.children():
                visit(c)

    visit(node)


def set_declname(decl: c_ast.Decl, name: str) -> None:
    decl.name = name
    t = decl.type
    while t is not None:
        if isinstance(t, c_ast.TypeDecl):
            t.declname = name
            return
        t = getattr(t, "type", None)


class Scopes:
    """Declarations visible at a point of a scoped walk: name -> Decl (None for unknown)."""

    def __init__(self, globals_: dict | None = None):
        self.stack: list[dict] = [dict(globals_ or {})]

    def push(self):
        self.stack.append({})

    def pop(self):
        self.stack.pop()

    def add(self, decl):
        if decl.name:
            self.stack[-1][decl.name] = decl

    def get(self, name):
        for s in reversed(self.stack):
            if name in s:
                return s[name]
        return None


def file_scope_decls(ast) -> dict:
    out = {}
    for e in ast.ext:
        if isinstance(e, c_ast.Decl) and e.name and not isinstance(e.type, c_ast.FuncDecl):
            out[e.name] = e
    return out


def typedef_map(ast) -> dict[str, c_ast.Typedef]:
    return {e.name: e for e in ast.ext if isinstance(e, c_ast.Typedef)}


def without_block_typedefs(fdef: c_ast.FuncDef) -> c_ast.FuncDef:
    """A copy of ``fdef`` where each block-scope ``typedef T X;`` naming a plain type (words
    such as ``float`` or ``unsigned int``, no qualifiers) is dropped and ``X`` spelled ``T``
    for the rest of its block: a statement moved out of the block (a kernel outlined from a
    loop nest) then names only types the file declares. ``fdef`` itself when it has none."""
    if not any(isinstance(n, c_ast.Typedef) and _plain_typedef(n) for n in walk(fdef.body)):
        return fdef

    def rewrite(node, names: dict):
        if isinstance(node, c_ast.IdentifierType) and len(node.names) == 1 and \
                node.names[0] in names:
            return c_ast.IdentifierType(list(names[node.names[0]]), coord=node.coord)
        if isinstance(node, c_ast.Compound):
            inner, items = dict(names), []
            for item in node.block_items or []:
                if isinstance(item, c_ast.Typedef) and _plain_typedef(item):
                    words = rewrite(item.type.type, inner).names
                    inner[item.name] = tuple(words)
                    continue
                items.append(rewrite(item, inner))
            return c_ast.Compound(items, coord=node.coord)
        return map_children(copy.copy(node), lambda x: rewrite(x, names))

    return rewrite(fdef, {})


def _plain_typedef(t: c_ast.Typedef) -> bool:
    return isinstance(t.type, c_ast.TypeDecl) and not t.type.quals and not t.quals and \
        isinstance(t.type.type, c_ast.IdentifierType)


def elem_type_of_decl_type(t, typedefs) -> tuple[list[str], int] | None:
    """(element type words, indirection) of a declared type: pointers and arrays count one
    level each; None for structs / function pointers."""
    depth = 0
    while isinstance(t, (c_ast.PtrDecl, c_ast.ArrayDecl)):
        depth += 1
        t = t.type
    if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
        return None
    words = [w for w in t.type.names if w not in _QUALS]
    if len(words) == 1 and words[0] in typedefs:
        inner = typedefs[words[0]].type
        if isinstance(inner, c_ast.TypeDecl) and isinstance(inner.type, c_ast.IdentifierType):
            words = [w for w in inner.type.names if w not in _QUALS]
    return words, depth


def pointee(e, scopes: Scopes, typedefs) -> list[str] | None:
    """Element type words of a pointer-valued expression (one level), or None."""
    match e:
        case c_ast.ID(name=name):
            d = scopes.get(name)
            if d is None or not isinstance(d, c_ast.Decl):
                return None
            et = elem_type_of_decl_type(d.type, typedefs)
            if et is None or et[1] == 0:
                return None
            if et[1] == 1:
                return et[0]
            # a 2-D array decays to a pointer to rows: not a scalar element pointer
            return None
        case c_ast.Cast(to_type=tt):
            et = elem_type_of_decl_type(tt.type, typedefs)
            return et[0] if et is not None and et[1] == 1 else None
        case c_ast.BinaryOp(op=op, left=l, right=r) if op in ("+", "-"):
            return pointee(l, scopes, typedefs) or (pointee(r, scopes, typedefs) if op == "+" else None)
        case c_ast.ArrayRef(name=c_ast.ID(name=name)):
            d = scopes.get(name)
            if isinstance(d, c_ast.Decl):
                et = elem_type_of_decl_type(d.type, typedefs)
                if et is not None and et[1] == 2 and isinstance(d.type, c_ast.ArrayDecl):
                    return et[0]
            return None
        case c_ast.UnaryOp(op="&", expr=c_ast.ArrayRef(name=c_ast.ID(name=name))):
            d = scopes.get(name)
            if isinstance(d, c_ast.Decl):
                et = elem_type_of_decl_type(d.type, typedefs)
                if et is not None and et[1] == 1:
                    return et[0]
            return None
    return None


def block(items) -> c_ast.Compound:
    return c_ast.Compound(list(items))


def open_last_block(items: list) -> list:
    """``items`` with a plain block in last position opened into them, repeatedly: the block
    ends where the list ends, so its statements run the same in the enclosing scope, unless
    it declares a name the list already declares at its top level (a redeclaration)."""
    def declared(xs):
        return {d.name for x in xs for d in (x.decls if isinstance(x, c_ast.DeclList) else [x])
                if isinstance(d, c_ast.Decl) and d.name}

    while items and isinstance(items[-1], c_ast.Compound):
        inner = list(items[-1].block_items or [])
        if declared(inner) & declared(items[:-1]):
            break
        items = items[:-1] + inner
    return items


def as_items(stmt) -> list:
    if isinstance(stmt, c_ast.Compound):
        return list(stmt.block_items or [])
    return [stmt]


def _base_and_offset(e):
    """(base name, [offset terms]) of ``p``, ``p + a``, ``p + a + b`` (a pointer or array
    ``p``), else None."""
    terms = []
    while isinstance(e, c_ast.BinaryOp) and e.op == "+":
        terms.append(e.right)
        e = e.left
    return (e.name, terms[::-1]) if isinstance(e, c_ast.ID) else None


def pointer_difference(last, first):
    """``last - first`` for two pointers into one object, as the difference of their offsets
    when both are ``p + ...`` of the same ``p`` (``(p + n) - p`` -> ``n``); the plain
    difference otherwise."""
    a, b = _base_and_offset(last), _base_and_offset(first)
    if a is not None and b is not None and a[0] == b[0]:
        def total(terms):
            out = None
            for t in terms:
                out = copy.deepcopy(t) if out is None else c_ast.BinaryOp("+", out, copy.deepcopy(t))
            return out
        x, y = total(a[1]), total(b[1])
        if y is None:
            return x if x is not None else c_ast.Constant("int", "0")
        return c_ast.BinaryOp("-", x if x is not None else c_ast.Constant("int", "0"), y)
    return c_ast.BinaryOp("-", copy.deepcopy(last), copy.deepcopy(first))
