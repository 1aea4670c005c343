"""loop_sched: shared helpers of the loop schedule passes (loop_split, loop_reorder, loop_fuse,
loop_expansion, loop_contraction).

Not a pass. Locating a loop by the name of its induction variable (``loop=NAME``, ``nth=K``
among several, pre-order from 0), recognising counted loops, loop-invariance of bounds,
early exits, the ``#pragma omp`` lines a restructuring invalidates, fresh names and splicing a
statement list in place of a loop. Every helper answers conservatively (``None`` / a reason
when unsure); the passes refuse in that case.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from pycparser import c_ast, c_generator

import passes.analysis.affine as affine
import passes.canon as canon

INT_WORDS = frozenset("int unsigned signed long short char size_t int32_t int64_t uint32_t "
                      "uint64_t int16_t uint16_t int8_t uint8_t ptrdiff_t".split())


def text(node) -> str:
    return c_generator.CGenerator().visit(node)


def parents(root) -> dict:
    """id(child) -> parent node, for every node under ``root``."""
    out = {}
    stack = [root]
    while stack:
        n = stack.pop()
        for _, c in n.children():
            out[id(c)] = n
            stack.append(c)
    return out


def loops_named(fdef, name: str) -> list:
    """The ``for`` loops of ``fdef`` whose header declares ``name``, in pre-order."""
    out = []
    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.For) and isinstance(n.init, c_ast.DeclList) and \
                len(n.init.decls) == 1 and n.init.decls[0].name == name:
            out.append(n)
    return out


def select(program, pass_name: str, codes: tuple, loop: str, nth: int, ast=None):
    """(fdef, For) of the loop ``loop`` (``nth`` among several), or a list with one Diagnostic.
    ``codes``: (no entry, missing option, no such loop, several loops)."""
    ast = ast if ast is not None else program.ast
    fdef = canon.entry_def(ast, program.entry.name) if program.entry and ast else None
    if fdef is None:
        return [canon.diag(program, pass_name, codes[0], "no entry function definition")]
    if not loop:
        return [canon.diag(program, pass_name, codes[1], "option 'loop' is missing: name the "
                           "induction variable of the loop to transform (loop=NAME)")]
    found = loops_named(fdef, loop)
    if not found:
        return [canon.diag(program, pass_name, codes[2], f"no for loop declares the induction "
                           f"variable '{loop}'", fdef)]
    if nth >= 0:
        if nth >= len(found):
            return [canon.diag(program, pass_name, codes[2], f"nth={nth} but only "
                               f"{len(found)} loop(s) declare '{loop}'", fdef)]
        return fdef, found[nth]
    if len(found) > 1:
        return [canon.diag(program, pass_name, codes[3], f"{len(found)} loops declare '{loop}': "
                           "pick one with nth=K (0-based, program order)", found[1])]
    return fdef, found[0]


@dataclass
class Counted:
    """``for (T v = lo; v OP hi; <step>) body`` with OP in ``<``, ``<=``."""

    var: str
    decl: c_ast.Decl
    lo: c_ast.Node
    op: str
    hi: c_ast.Node
    step: int


def _int_type(decl) -> bool:
    t = decl.type
    if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
        return False
    words = [w for w in t.type.names if w not in ("const", "volatile")]
    return bool(words) and all(w in INT_WORDS for w in words)


def _step(nxt, var: str) -> int | None:
    from passes.cleanup.unit_loops import const_int

    if isinstance(nxt, c_ast.UnaryOp) and nxt.op in ("++", "p++") and \
            isinstance(nxt.expr, c_ast.ID) and nxt.expr.name == var:
        return 1
    if isinstance(nxt, c_ast.Assignment) and isinstance(nxt.lvalue, c_ast.ID) and \
            nxt.lvalue.name == var:
        if nxt.op == "+=":
            return const_int(nxt.rvalue)
        if nxt.op == "=" and isinstance(nxt.rvalue, c_ast.BinaryOp) and nxt.rvalue.op == "+" \
                and isinstance(nxt.rvalue.left, c_ast.ID) and nxt.rvalue.left.name == var:
            return const_int(nxt.rvalue.right)
    return None


def counted(f: c_ast.For) -> tuple[Counted | None, str]:
    """The counted form of ``f`` (positive constant step, upper bound ``<`` / ``<=``), or
    (None, why)."""
    if not isinstance(f.init, c_ast.DeclList) or len(f.init.decls) != 1:
        return None, "the loop does not declare exactly one induction variable"
    d = f.init.decls[0]
    if d.init is None or not _int_type(d):
        return None, f"the induction variable '{d.name}' is not an initialised integer"
    var = d.name
    c = f.cond
    if not (isinstance(c, c_ast.BinaryOp) and c.op in ("<", "<=") and
            isinstance(c.left, c_ast.ID) and c.left.name == var):
        return None, f"the condition is not '{var} < bound' or '{var} <= bound'"
    step = _step(f.next, var)
    if step is None or step <= 0:
        return None, f"the increment is not a positive constant step of '{var}'"
    return Counted(var, d, d.init, c.op, c.right, step), ""


def pure_expr(e) -> bool:
    """No side effects, no memory reads, no calls other than pure math."""
    for n in canon.walk(e):
        if isinstance(n, (c_ast.ArrayRef, c_ast.Assignment)):
            return False
        if isinstance(n, c_ast.UnaryOp) and n.op in ("*", "++", "--", "p++", "p--", "&"):
            return False
        if isinstance(n, c_ast.StructRef) and n.type == "->":
            return False
        if isinstance(n, c_ast.FuncCall) and canon.call_name(n) not in canon.PURE_CALLS:
            return False
    return True


def invariant_bounds(cl: Counted, body) -> str:
    """'' when ``cl``'s bounds are pure and name nothing ``body`` (or the loop) writes."""
    written = canon.written_names(body)
    for what, e in (("lower", cl.lo), ("upper", cl.hi)):
        if not pure_expr(e):
            return f"the {what} bound of '{cl.var}' reads memory or has side effects"
        bad = canon.ids_in(e) & (written | {cl.var})
        if bad:
            return f"the {what} bound of '{cl.var}' uses '{sorted(bad)[0]}', which the loop " \
                   "writes"
    return ""


def escapes(body, allow_continue: bool = False) -> c_ast.Node | None:
    """A ``break`` / ``continue`` leaving ``body`` (not inside an inner loop or switch),
    or any ``return`` / ``goto`` / label; None when there is none."""
    def go(n, in_loop: bool, in_switch: bool):
        if isinstance(n, (c_ast.Return, c_ast.Goto, c_ast.Label)):
            return n
        if isinstance(n, c_ast.Break) and not in_loop and not in_switch:
            return n
        if isinstance(n, c_ast.Continue) and not in_loop and not allow_continue:
            return n
        loop = in_loop or isinstance(n, (c_ast.For, c_ast.While, c_ast.DoWhile))
        sw = in_switch or isinstance(n, c_ast.Switch)
        for _, c in n.children():
            got = go(c, loop, sw)
            if got is not None:
                return got
        return None

    return go(body, False, False)


def plain_writes(node) -> set[str]:
    """Names assigned / incremented as a plain identifier, or address-taken, under ``node``."""
    out = set()
    for n in canon.walk(node):
        if isinstance(n, c_ast.Assignment) and isinstance(n.lvalue, c_ast.ID):
            out.add(n.lvalue.name)
        elif isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--", "&") and \
                isinstance(n.expr, c_ast.ID):
            out.add(n.expr.name)
    return out


def declared(node) -> set[str]:
    return {n.name for n in canon.walk(node) if isinstance(n, c_ast.Decl) and n.name}


def all_names(ast) -> set[str]:
    out = set()
    for n in canon.walk(ast):
        if isinstance(n, c_ast.ID):
            out.add(n.name)
        elif isinstance(n, c_ast.Decl) and n.name:
            out.add(n.name)
        elif isinstance(n, c_ast.Typedef):
            out.add(n.name)
    return out


def fresh(ast, base: str, taken: set | None = None) -> str:
    names = all_names(ast) | (taken or set())
    if base not in names:
        return base
    k = 2
    while f"{base}{k}" in names:
        k += 1
    return f"{base}{k}"


def is_omp(s) -> bool:
    return isinstance(s, c_ast.Pragma) and s.string.strip().startswith("omp")


def drop_omp(fdef, targets) -> None:
    """Remove the ``#pragma omp`` line on each loop in ``targets`` and any ``collapse`` pragma
    of a loop containing one of them (its perfect nest changes)."""
    ids = {id(t) for t in targets}

    def contains(f):
        return any(id(n) in ids for n in canon.walk(f))

    for n in canon.walk(fdef.body):
        if isinstance(n, c_ast.Compound) and n.block_items:
            items, out = n.block_items, []
            for k, s in enumerate(items):
                nxt = items[k + 1] if k + 1 < len(items) else None
                if is_omp(s) and isinstance(nxt, c_ast.For) and (
                        id(nxt) in ids or ("collapse" in s.string and contains(nxt))):
                    continue
                out.append(s)
            n.block_items = out


def replace_stmt(par: dict, old, new_items: list) -> None:
    """Put ``new_items`` in place of the statement ``old`` (spliced into a block, or wrapped
    in one where a single statement is expected)."""
    p = par[id(old)]
    if isinstance(p, c_ast.Compound):
        k = next(i for i, s in enumerate(p.block_items) if s is old)
        p.block_items[k:k + 1] = new_items
        return
    for attr in ("stmt", "iftrue", "iffalse"):
        if getattr(p, attr, None) is old:
            setattr(p, attr, new_items[0] if len(new_items) == 1 else c_ast.Compound(new_items))
            return
    raise ValueError("statement not found in its parent")


def next_sibling(par: dict, f):
    """(block, index of ``f``, the statement after ``f`` skipping ``#pragma omp`` lines)."""
    p = par.get(id(f))
    if not isinstance(p, c_ast.Compound):
        return None, -1, None
    items = p.block_items
    k = next(i for i, s in enumerate(items) if s is f)
    j = k + 1
    while j < len(items) and is_omp(items[j]):
        j += 1
    return p, k, (items[j] if j < len(items) else None)


def analysis(program, ast):
    """``affine.analyze`` of ``program`` with ``ast`` (a copy being rewritten), or None."""
    try:
        return affine.analyze(replace(program, ast=ast))
    except affine.ANALYSIS_ERRORS:
        return None


def loop_info(info, f):
    return info.loop_of.get(id(f)) if info is not None else None


def accesses_under(info, lp) -> list:
    return [a for a in info.accesses if lp in a.loops]


def local_array_in(info, buffer: str, lp) -> bool:
    """``buffer`` is a local array declared inside ``lp`` (a fresh object per iteration)."""
    var = info.locals.get(buffer)
    return var is not None and var.kind == "array" and any(o is lp for o in var.owners)


def const_of(ir) -> int | None:
    if ir is None:
        return None
    p = affine.to_poly(ir)
    return p.value() if p is not None and p.is_const() else None


def same_header(a: Counted, b: Counted) -> bool:
    """Same type, bounds (``b``'s variable read as ``a``'s) and step."""
    if canon.type_words(a.decl.type) != canon.type_words(b.decl.type):
        return False
    if a.op != b.op or a.step != b.step:
        return False
    m = {b.var: c_ast.ID(a.var)}
    return text(a.lo) == text(canon.substitute(b.lo, m)) and \
        text(a.hi) == text(canon.substitute(b.hi, m))


def problems_in(info, nodes) -> tuple | None:
    """The first problem the analysis recorded under one of ``nodes``."""
    inside = set()
    for n in nodes:
        inside |= {id(x) for x in canon.walk(n)}
    for prob in info.problems:
        if id(prob[2]) in inside:
            return prob
    return None
