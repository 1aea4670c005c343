"""kernel_ast: AST building blocks of the GPU lowering passes (``loop_bind``, its two-level
schedule ``passes/lower/loop_bind/blocks.py`` and ``task_bind``).

Not a pass. Template snippets parsed as plain C (``parse_snippet``) with holes filled by nodes
(``fill``), affine IR and Polys as C expressions (``ir_ast``, ``count_ast``: trip counts in
64-bit arithmetic), declarations of bound loop variables from linear indices
(``loop_var_decls``), kernel parameter lists (``param_decls``, ``typedefs``) and source
statements copied without OpenMP pragmas (``clean``).
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast

import passes.analysis.affine as affine
import passes.canon as canon
from passes.canon import strip_coords


def strip_quals(t) -> None:
    while t is not None:
        if hasattr(t, "quals"):
            t.quals = [q for q in t.quals if q not in ("const", "volatile", "__restrict__",
                                                       "__restrict", "restrict")]
        t = getattr(t, "type", None)


def loop_type(lp: affine.LoopInfo) -> str:
    d = lp.node.init.decls[0]
    return " ".join(affine.type_names(d.type))


def only_loop(stmt):
    """The For that is the whole of ``stmt`` (alone in a block), else None."""
    if isinstance(stmt, c_ast.Compound) and len(stmt.block_items or []) == 1:
        stmt = stmt.block_items[0]
    return stmt if isinstance(stmt, c_ast.For) else None


def is_omp(s) -> bool:
    return isinstance(s, c_ast.Pragma) and s.string.strip().startswith("omp")


def mentions_loop(ir, uid: str) -> bool:
    if isinstance(ir, tuple):
        if ir[:2] == ("v", uid):
            return True
        return any(mentions_loop(x, uid) for x in ir[1:])
    return False


def ir_names(ir, info) -> list[str] | None:
    """Names of host values an IR reads (None if it needs a value only the device has)."""
    out: list[str] = []

    def walk(x) -> bool:
        if not isinstance(x, tuple):
            return True
        tag = x[0]
        if tag == "s":
            out.append(x[1])
        elif tag in ("v", "l"):
            var = info.locals.get(x[1])
            if var is None:
                return False
            out.append(var.name)
        elif tag != "c":
            return all(walk(y) for y in x[1:])
        return True

    return out if walk(ir) else None


def parse_snippet(code: str) -> list:
    """Statements of ``code`` parsed as plain C (template text of this pass, no source)."""
    from pycparser.c_parser import CParser

    ast = CParser().parse("void __xp_tmpl(void) {\n" + code + "\n}")
    items = ast.ext[-1].body.block_items or []
    for it in items:
        strip_coords(it)
    return items


def fill(node, holes: dict):
    """Replace ``ID(hole)`` by deep copies of the given nodes (in place; returns node)."""
    return canon.replace_nodes(node, lambda x: copy.deepcopy(holes[x.name])
                               if isinstance(x, c_ast.ID) and x.name in holes else None)

def ir_ast(ir, info):
    tag = ir[0]
    if tag == "c":
        return c_ast.Constant("int", str(ir[1]))
    if tag == "s":
        return c_ast.ID(ir[1])
    if tag in ("v", "l"):
        return c_ast.ID(info.locals[ir[1]].name)
    if tag == "neg":
        return c_ast.UnaryOp("-", ir_ast(ir[1], info))
    if tag == "?":
        return c_ast.TernaryOp(_cond_ast(ir[1], info), ir_ast(ir[2], info), ir_ast(ir[3], info))
    if tag == "fdiv":
        return c_ast.BinaryOp(">>", ir_ast(ir[1], info),
                              c_ast.Constant("int", str(ir[2][1].bit_length() - 1)))
    if tag == "fmod":
        return c_ast.BinaryOp("&", ir_ast(ir[1], info), c_ast.Constant("int", str(ir[2][1] - 1)))
    return c_ast.BinaryOp(tag, ir_ast(ir[1], info), ir_ast(ir[2], info))


def _cond_ast(c, info):
    if c[0] in ("&&", "||"):
        return c_ast.BinaryOp(c[0], _cond_ast(c[1], info), _cond_ast(c[2], info))
    if c[0] == "!":
        return c_ast.UnaryOp("!", _cond_ast(c[1], info))
    return c_ast.BinaryOp(c[0], ir_ast(c[1], info), ir_ast(c[2], info))


def count_ast(lp: affine.LoopInfo, info):
    """Trip count ``(hi - lo + s - 1) / s`` of a canonical loop, in 64-bit arithmetic."""
    s = abs(lp.step)
    hi, lo = affine.to_poly(lp.hi), affine.to_poly(lp.lo)
    if hi is not None and lo is not None and poly_ok(hi - lo):
        span = hi - lo + affine.Poly.const(s - 1)
        e = _poly_ast(span, info, wide=True)
        return e if s == 1 else c_ast.BinaryOp("/", e, c_ast.Constant("int", str(s)))
    (e,) = parse_snippet(f"__xp_r = ((long long)(__xp_hi) - (long long)(__xp_lo) + {s - 1}) / {s};")
    return fill(e, {"__xp_hi": ir_ast(lp.hi, info), "__xp_lo": ir_ast(lp.lo, info)}).rvalue


def poly_ok(p) -> bool:
    return all(not k.startswith("a:") for k in p.keys())


def _ll(e):
    return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(
        None, [], None, c_ast.IdentifierType(["long", "long"]))), e)


def _poly_ast(p, info, wide: bool):
    """AST of a Poly over scalars / loop variables; ``wide``: each term in long long."""
    if not p.t:
        return c_ast.Constant("int", "0")
    out = None
    for m in sorted(p.t, key=lambda m: (-len(m), m)):
        c = p.t[m]
        factors = []
        for key in m:
            kind, _, rest = key.partition(":")
            factors.append(c_ast.ID(rest if kind == "s" else info.locals[rest].name))
        mag = abs(c)
        if mag != 1 or not factors:
            factors.insert(0, c_ast.Constant("int", str(mag)))
        if wide:
            factors[0] = _ll(factors[0])
        term = factors[0]
        for f in factors[1:]:
            term = c_ast.BinaryOp("*", term, f)
        if out is None:
            out = term if c > 0 else c_ast.UnaryOp("-", term)
        else:
            out = c_ast.BinaryOp("+" if c > 0 else "-", out, term)
    return out


def clean(stmt):
    """Deep copy of a source statement without OpenMP pragmas."""
    stmt = copy.deepcopy(stmt)

    class V(c_ast.NodeVisitor):
        def generic_visit(v, n):
            for attr in ("block_items",):
                items = getattr(n, attr, None)
                if isinstance(items, list):
                    n.block_items = [x for x in items if not is_omp(x)]
            for c in n:
                v.visit(c)

    V().visit(stmt)
    return stmt


def param_decls(params) -> str:
    out = []
    for name, t in params:
        t = t.strip()
        if "(*)" in t:                   # pointer to a row: float (*p)[64]
            out.append(t.replace("(*)", f"(*{name})", 1))
        else:
            out.append(f"{t}{name}" if t.endswith("*") else f"{t} {name}")
    return ", ".join(out) or "void"


def typedefs(params) -> str:
    """Typedef lines that let plain pycparser read the parameter types."""
    known = set("void char short int long float double signed unsigned const volatile "
                "restrict __restrict__ _Bool bool".split())
    out = []
    for _, t in params:
        for w in re.findall(r"[A-Za-z_]\w*", t):
            if w not in known and f"typedef int {w};" not in out:
                out.append(f"typedef int {w};")
    return "\n".join(out) + "\n"


def loop_var_decls(loops, info, idx) -> list:
    """Declarations of the bound loops' variables from their linear indices ``idx``
    (``__xp_k0``, ``__xp_k1`` -> index expressions): ``T v = (T) (start + k * step);``."""
    var_decls = []
    for k, lp in enumerate(loops):
        d = copy.deepcopy(lp.node.init.decls[0])
        strip_coords(d)
        tname = " ".join(affine.type_names(d.type))
        start = affine.to_poly(lp.start)
        if start is not None and poly_ok(start):
            start_ast = None if not start.t else _poly_ast(start, info, wide=True)
        else:
            start_ast = _ll(ir_ast(lp.start, info))
        step = idx[f"__xp_k{k}"]
        if lp.step != 1:
            step = c_ast.BinaryOp("*", step, c_ast.Constant("int", str(lp.step)))
        value = step if start_ast is None else c_ast.BinaryOp("+", start_ast, step)
        (tmpl,) = parse_snippet("__xp_x = (int)(__xp_v);")
        tmpl = fill(tmpl, {"__xp_v": value}).rvalue
        tmpl.to_type = c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None,
                                      c_ast.IdentifierType(tname.split())))
        d.init = tmpl
        var_decls.append(d)
    return var_decls
