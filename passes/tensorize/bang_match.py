"""Private helper of ``tensorize_bang``: element-wise patterns from the intrinsic descriptions.

Each eligible description in ``platforms/bang/intrinsics`` (shape ``vec_binary``,
``vec_scalar`` or ``vec_unary``: ``loop = "elem_count"``, one element per ``i``) is turned into
a *pattern*: its reference body, with local temporaries substituted and casts to ``T`` /
``float`` dropped for ``T = float`` (identity casts), becomes one assignment
``dst[i] = F(src0[i], src1[i], src[i], value)``. ``match(pattern, expr, bind)`` unifies a loop's
right-hand side with ``F``: operand placeholders bind to NRAM references ``p[v + c]`` (``bind``
checks them), ``value`` to a loop-invariant expression, constants compare by value, every
other node must be identical (``+`` and ``*`` are also tried with swapped operands: exact in
IEEE arithmetic).

Eligibility (numerics first): ``float`` in the entry's types; every rule that applies to the
profile's arch group is ``elem_count > 0`` (others - alignment, 128-byte multiples, input
domains, arch exclusions - are not provable here, so such entries are skipped); not
deprecated; and for ``activation.toml`` (lookup tables / Taylor series on the hardware) only
entries whose source states the result is exact.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from pycparser import c_ast
from pycparser.c_parser import CParser

import passes.canon as canon

SHAPES = {
    "vec_binary": ("dst", "src0", "src1"),
    "vec_scalar": ("dst", "src", "value"),
    "vec_unary": ("dst", "src"),
}
_SIG = {
    "vec_binary": re.compile(r"\(T \*dst, const T \*src0, const T \*src1, unsigned int elem_count\)"),
    "vec_scalar": re.compile(r"\(T \*dst, const T \*src, xpb::same_t<T> value, unsigned int elem_count\)"),
    "vec_unary": re.compile(r"\(T \*dst, const T \*src, unsigned int elem_count\)"),
}


@dataclass
class Pattern:
    name: str
    shape: str
    rhs: c_ast.Node             # F over placeholder references and ``value``
    source: str


def applies(arch: str, group: int) -> bool:
    if arch in ("all", None):
        return True
    if arch.endswith("+"):
        return group >= int(arch[0])
    return group == int(arch[0])


def _type_ok(types: dict, group: int) -> bool:
    for t in types.get("T", []):
        base, _, arch = t.partition(":")
        if base == "float" and (not arch or group >= int(arch[0])):
            return True
    return False


def eligible(entry: dict, group: int) -> str | None:
    """The shape of an eligible entry, else None."""
    if entry.get("loop") != "elem_count":
        return None
    shape = next((s for s, rx in _SIG.items() if rx.search(entry["signature"])), None)
    if shape is None:
        return None
    src = entry.get("source", "") + " " + entry.get("notes", "")
    if "deprecated" in src:
        return None
    need = re.search(r"(?:>=|\u2265)\s*(\d)\d\d", src)     # "(>= 322)": first arch group
    if need and group < int(need.group(1)):
        return None
    if entry["file"] == "activation.toml" and ("exact" not in src or "approximation" in src):
        return None
    if not _type_ok(entry.get("types", {}), group):
        return None
    for rule in entry.get("rules", []):
        if "call" in rule:
            return None
        if applies(rule.get("arch", "all"), group) and \
                rule["check"].replace(" ", "") != "elem_count>0":
            return None
    return shape


def patterns(group: int) -> list[Pattern]:
    import platforms

    out = []
    for e in platforms.intrinsics("bang"):
        shape = eligible(e, group)
        if shape is None:
            continue
        rhs = _body_rhs(e["body"])
        if rhs is not None:
            out.append(Pattern(e["name"], shape, rhs, e.get("source", "")))
    return out


def _body_rhs(body: str):
    """``dst[i] = F;`` with locals substituted and identity casts (T = float) removed."""
    text = "typedef float T;\nvoid __xp_f(float *dst, float *src, float *src0, float *src1, " \
           "float value, int i) {\n" + body.replace("xpb::", "xpb_") + "\n}"
    try:
        fn = CParser().parse(text).ext[-1]
    except Exception:
        return None
    env: dict[str, c_ast.Node] = {}
    rhs = None
    for s in fn.body.block_items or []:
        if isinstance(s, c_ast.Decl) and s.init is not None and len(_names(s.type)) == 1:
            env[s.name] = _subst(s.init, env)
        elif isinstance(s, c_ast.Assignment) and s.op == "=" and \
                isinstance(s.lvalue, c_ast.ArrayRef) and _is_id(s.lvalue.name, "dst") and \
                _is_id(s.lvalue.subscript, "i") and rhs is None:
            rhs = _subst(s.rvalue, env)
        else:
            return None
    return None if rhs is None else _strip_casts(rhs)


def _names(t) -> list:
    while t is not None and not isinstance(t, c_ast.IdentifierType):
        t = getattr(t, "type", None)
    return t.names if t is not None else []


def _is_id(n, name: str) -> bool:
    return isinstance(n, c_ast.ID) and n.name == name


def _subst(node, env: dict):
    return canon.rebuild(node, lambda n: copy.deepcopy(env[n.name])
                         if isinstance(n, c_ast.ID) and n.name in env else None)


def _strip_casts(node):
    """Drop casts to float / T (identity for T = float)."""
    def cast(n):
        if isinstance(n, c_ast.Cast) and _names(n.to_type) in (["float"], ["T"]) and \
                not isinstance(n.to_type.type, c_ast.PtrDecl):
            return _strip_casts(n.expr)
        return None
    return canon.rebuild(node, cast)


def const_value(n) -> float | None:
    if isinstance(n, c_ast.Constant) and n.type in ("int", "float", "double"):
        t = n.value.rstrip("fFlLuU")
        try:
            return float(int(t, 0)) if n.type == "int" else float(t)
        except ValueError:
            return None
    if isinstance(n, c_ast.UnaryOp) and n.op == "-":
        v = const_value(n.expr)
        return None if v is None else -v
    if isinstance(n, c_ast.Cast) and _names(n.to_type) in (["float"], ["T"]):
        return const_value(n.expr)
    return None


def match(pat, node, binds: dict, operand, invariant) -> bool:
    """Unify pattern ``pat`` with ``node``. ``operand(name, node) -> key | None`` checks a
    reference for placeholder ``name``; ``invariant(node) -> bool`` checks ``value``."""
    if isinstance(pat, c_ast.ArrayRef) and isinstance(pat.name, c_ast.ID) and \
            _is_id(pat.subscript, "i"):
        key = operand(pat.name.name, node)
        if key is None:
            return False
        have = binds.setdefault(pat.name.name, key)
        return have == key
    if _is_id(pat, "value"):
        if not invariant(node):
            return False
        have = binds.setdefault("value", node)
        return have is node or _same(have, node)
    cv = const_value(pat)
    if cv is not None:
        return const_value(node) == cv
    if isinstance(node, c_ast.Cast) and _names(node.to_type) == ["float"] and \
            not isinstance(node.to_type.type, c_ast.PtrDecl):
        node = node.expr                     # identity cast in a float loop
    if type(pat) is not type(node):
        return False
    if isinstance(pat, c_ast.BinaryOp):
        if pat.op != node.op:
            return False
        saved = dict(binds)
        if match(pat.left, node.left, binds, operand, invariant) and \
                match(pat.right, node.right, binds, operand, invariant):
            return True
        binds.clear()
        binds.update(saved)
        if pat.op in ("+", "*"):
            if match(pat.left, node.right, binds, operand, invariant) and \
                    match(pat.right, node.left, binds, operand, invariant):
                return True
            binds.clear()
            binds.update(saved)
        return False
    if isinstance(pat, c_ast.UnaryOp):
        return pat.op == node.op and match(pat.expr, node.expr, binds, operand, invariant)
    if isinstance(pat, c_ast.TernaryOp):
        return all(match(a, b, binds, operand, invariant) for a, b in
                   ((pat.cond, node.cond), (pat.iftrue, node.iftrue), (pat.iffalse, node.iffalse)))
    if isinstance(pat, c_ast.FuncCall):
        if not (isinstance(pat.name, c_ast.ID) and isinstance(node.name, c_ast.ID) and
                pat.name.name == node.name.name):
            return False
        pa = pat.args.exprs if pat.args else []
        na = node.args.exprs if node.args else []
        return len(pa) == len(na) and all(match(a, b, binds, operand, invariant)
                                          for a, b in zip(pa, na))
    if isinstance(pat, c_ast.ID):
        return pat.name == node.name
    return False


def _same(a, b) -> bool:
    from pycparser.c_generator import CGenerator

    g = CGenerator()
    return g.visit(a) == g.visit(b)
