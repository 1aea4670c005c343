"""Lower the C++ that clang understood into the dialect C the subset reader and the passes read.

The input is the source text and its clang unit (``driver.parse``); the output is source text of
the same platform in which the constructs below are spelled with what the passes already know.
Every rewrite is decided from clang's semantic view (what a name refers to, the type of a group
variable), never from the spelling alone; text outside the rewritten constructs is kept byte for
byte, and every rewrite keeps the number of lines of what it replaces, so later diagnostics keep
the source's line numbers.

Rewrites (each a plain function over the unit, registered in ``REWRITES``):

``alternative_tokens``  ``and or not bitand bitor xor compl and_eq or_eq xor_eq not_eq`` ->
                        ``&& || ! & | ^ ~ &= |= ^= !=`` (C++ operators clang lexed as such).
``cooperative_groups``  group objects of ``cooperative_groups`` become the CUDA built-ins they
                        stand for: ``this_thread_block()`` and ``tiled_partition<N>(g)``
                        declarations disappear, ``g.sync()`` / ``cg::sync(g)`` ->
                        ``__syncthreads()`` or ``__syncwarp(mask)``, ``thread_rank``,
                        ``size``/``num_threads``, ``meta_group_rank``/``meta_group_size``,
                        ``group_index``/``thread_index``/``dim_threads``, tile shuffles ->
                        ``__shfl*_sync(mask, v, x, N)``, ``any``/``all``/``ballot`` ->
                        ``__any_sync``/``__all_sync``/``__ballot_sync``, and
                        ``cg::reduce(tile, v, op)`` -> a generated butterfly helper;
                        ``namespace cg = cooperative_groups;``, ``using namespace
                        cooperative_groups;`` and the cooperative-groups includes go.
``uncaught_throw``      ``throw X`` in a file without ``try`` -> ``abort()`` (what an uncaught
                        exception does).
``preprocessor_conditionals``, ``specifier_macros``, ``default_arguments``: see each function.

A construct a rewrite recognises but cannot express (a group passed around in a way it does
not follow) raises ``Unsupported`` with the position; the caller reports it as a coded
diagnostic.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import instantiate
from .driver import ParsedUnit

ALT_TOKENS = {"and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|", "xor": "^",
              "compl": "~", "and_eq": "&=", "or_eq": "|=", "xor_eq": "^=", "not_eq": "!="}

LTID = "(threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y)"
NTHREADS = "(blockDim.x * blockDim.y * blockDim.z)"
CG_NAMESPACE = "cooperative_groups"


class Unsupported(Exception):
    """A construct the lowering recognises but cannot express; ``line``/``col`` locate it."""

    def __init__(self, message: str, line: int, col: int, construct: str):
        super().__init__(message)
        self.line, self.col, self.construct = line, col, construct


@dataclass
class Edit:
    start: int
    end: int
    render: object  # callable(Rewriter) -> str, or a str


@dataclass
class Rewriter:
    """Collects edits over the main file's text and renders the result (edits nest: a
    replacement may render the text of its sub-ranges with the edits inside them applied)."""

    text: str
    unit: ParsedUnit
    edits: list[Edit] = field(default_factory=list)
    helpers: dict[str, str] = field(default_factory=dict)   # name -> one-line definition
    helper_at: dict[int, list[str]] = field(default_factory=dict)  # top-level offset -> helpers

    def replace(self, start: int, end: int, render) -> None:
        self.edits.append(Edit(start, end, render))

    def need_helper(self, name: str, use, definition: str) -> None:
        """A file-scope helper, defined on the first line of the top-level declaration of its
        first use (one line: the source's line numbers stay)."""
        if name in self.helpers:
            return
        self.helpers[name] = definition
        at = use.extent.start.offset
        tops = [c.extent.start.offset for c in self.unit.tu.cursor.get_children()
                if self.unit.in_user_file(c) and c.extent.start.offset <= at <= c.extent.end.offset]
        start = min(tops) if tops else at
        self.helper_at.setdefault(start, []).append(definition)

    def render(self, start: int, end: int) -> str:
        inner = sorted((e for e in self.edits if start <= e.start and e.end <= end and (e.start, e.end) != (start, end)),
                       key=lambda e: (e.start, e.end != e.start, -e.end))  # insertions first
        out, pos = [], start
        for e in inner:
            if e.start < pos:
                continue  # nested in an edit already rendered
            out.append(self.text[pos:e.start])
            out.append(self._apply(e))
            pos = e.end
        out.append(self.text[pos:end])
        return "".join(out)

    def _apply(self, e: Edit) -> str:
        new = e.render if isinstance(e.render, str) else e.render(self)
        lost = self.text.count("\n", e.start, e.end) - new.count("\n")
        return new + "\n" * lost if lost > 0 else new

    def result(self) -> str:
        for at, defs in self.helper_at.items():
            self.edits.append(Edit(at, at, "".join(defs)))
        whole = Edit(0, len(self.text), lambda rw: rw.render(0, len(self.text)))
        return self._apply(whole)


# ------------------------------------------------------------------------------ helpers
def _kind(c) -> str:
    return c.kind.name


def _offsets(c) -> tuple[int, int]:
    return c.extent.start.offset, c.extent.end.offset


def _qualified_parent(decl) -> str:
    names = []
    p = decl.semantic_parent
    while p is not None and _kind(p) != "TRANSLATION_UNIT":
        if p.spelling:
            names.append(p.spelling)
        p = p.semantic_parent
    return "::".join(reversed(names))


def _in_cg(decl) -> bool:
    return decl is not None and CG_NAMESPACE in _qualified_parent(decl).split("::")


# ------------------------------------------------------------------------------ alternative tokens
def alternative_tokens(unit: ParsedUnit, rw: Rewriter) -> None:
    for tok in unit.tu.get_tokens(extent=unit.tu.cursor.extent):
        if tok.kind.name != "KEYWORD" and tok.kind.name != "PUNCTUATION":
            continue
        sym = ALT_TOKENS.get(tok.spelling)
        if sym is None or not _tok_in_main(unit, tok):
            continue
        s, e = tok.extent.start.offset, tok.extent.end.offset
        rw.replace(s, e, sym.ljust(e - s))


def _tok_in_main(unit, tok) -> bool:
    f = tok.location.file
    return f is not None and unit.in_user_file_name(f.name)


# ------------------------------------------------------------------------------ cooperative groups
@dataclass
class Group:
    kind: str          # "block" | "tile" | "coalesced" | "grid"
    size: int = 0      # tile size

    def mask(self) -> str:
        if self.kind == "block":
            return "0xffffffffu"
        if self.kind == "coalesced":
            return "__activemask()"
        if self.size >= 32:
            return "0xffffffffu"
        return f"(((1u << {self.size}) - 1u) << ({LTID} % 32u / {self.size}u * {self.size}u))"

    def rank(self) -> str:
        if self.kind == "block":
            return LTID
        if self.kind == "coalesced":
            return "__popc(__activemask() & ((1u << (" + LTID + " % 32u)) - 1u))"
        return f"({LTID} % {self.size}u)"

    def count(self) -> str:
        if self.kind == "block":
            return NTHREADS
        if self.kind == "coalesced":
            return "__popc(__activemask())"
        return f"{self.size}u"


_TILE = re.compile(r"thread_block_tile<\s*(\d+)")


def _group_of_type(type_spelling: str) -> Group | None:
    t = type_spelling.replace("cooperative_groups::", "").replace("cg::", "")
    t = re.sub(r"\b(const|volatile|struct|class)\b|&", " ", t).strip()
    m = _TILE.search(t)
    if m:
        return Group("tile", int(m.group(1)))
    base = t.split("<")[0].split("::")[-1].strip()
    return {"thread_block": Group("block"), "coalesced_group": Group("coalesced"),
            "grid_group": Group("grid")}.get(base)


def cooperative_groups(unit: ParsedUnit, rw: Rewriter) -> None:
    groups: dict[str, Group] = {}      # USR of a group variable -> what it is
    text = rw.text

    def group_of_var(ref) -> Group | None:
        d = ref.referenced
        if d is None:
            return None
        return groups.get(d.get_usr()) or _group_of_type(d.type.get_canonical().spelling) \
            if _is_group_type(d.type) else None

    def pos(c):
        return c.location.line, c.location.column

    def unsupported(c, what):
        line, col = pos(c)
        raise Unsupported(f"cooperative groups: {what}", line, col, c.spelling or _kind(c))

    cursors = unit.user_cursors()
    removed: list[tuple[int, int]] = []   # deleted declarations: what is inside them is gone too
    # 1. declarations of group variables go; remember their kind
    for c in cursors:
        if _kind(c) == "VAR_DECL" and _is_group_type(c.type):
            g = _group_of_type(c.type.get_canonical().spelling) or _group_of_type(c.type.spelling)
            if g is None:
                unsupported(c, f"group type '{c.type.spelling}'")
            if g.kind == "grid":
                unsupported(c, "grid groups (grid.sync() needs every block resident at once)")
            groups[c.get_usr()] = g
            stmt = c.semantic_parent and _decl_stmt(c)
            s, e = _offsets(stmt) if stmt is not None else _offsets(c)
            e = instantiate.through_semicolon(text, e)
            rw.replace(s, e, "")
            removed.append((s, e))
        elif _kind(c) == "PARM_DECL" and _is_group_type(c.type):
            unsupported(c, "a group passed as a function parameter")
    # 2. calls on groups and cg:: free functions
    for c in cursors:
        if _kind(c) != "CALL_EXPR":
            continue
        cs, ce = _offsets(c)
        if any(s <= cs and ce <= e for s, e in removed):
            continue
        decl = c.referenced
        if decl is None or not _in_cg(decl) or _kind(decl) == "CONSTRUCTOR":
            continue  # (constructors: the operator objects of reduce, consumed with their call)
        name = decl.spelling
        kids = list(c.get_children())
        member = next((k for k in kids[0].walk_preorder() if _kind(k) == "MEMBER_REF_EXPR"), None) if kids else None
        obj = _member_object(member) if member is not None else None
        args = [a for a in c.get_arguments()]
        if obj is not None:
            g = group_of_var(obj)
            if g is None:
                unsupported(c, f"'{name}' on an object that is not a named group variable")
            _lower_method(rw, c, g, name, args, unsupported)
        else:
            _lower_free(rw, c, name, args, group_of_var, unsupported)
    # 3. the namespace alias / using-directive and the includes
    for c in cursors:
        k = _kind(c)
        if k in ("NAMESPACE_ALIAS", "USING_DIRECTIVE") and CG_NAMESPACE in " ".join(
                t.spelling for t in c.get_tokens()):
            s, e = _offsets(c)
            rw.replace(s, instantiate.through_semicolon(text, e), "")
    for inc in unit.tu.get_includes():
        if inc.source is not None and unit.in_user_file_name(inc.source.name) and \
                re.match(r"cooperative_groups(\.h|/)", _include_spelling(text, inc.location)):
            s = inc.location.offset
            line_start = text.rfind("\n", 0, s) + 1
            line_end = text.find("\n", s)
            rw.replace(line_start, line_end if line_end >= 0 else len(text), "")


def _include_spelling(text: str, loc) -> str:
    line = text.splitlines()[loc.line - 1] if loc.line - 1 < len(text.splitlines()) else ""
    m = re.search(r"[<\"]([^>\"]+)[>\"]", line)
    return m.group(1) if m else ""


def _is_group_type(t) -> bool:
    s = t.get_canonical().spelling
    return CG_NAMESPACE in s and bool(re.search(
        r"\b(thread_block|thread_block_tile|coalesced_group|grid_group|thread_group)\b", s))


def _decl_stmt(var):
    # the DECL_STMT holding a local declaration: its lexical parent in the body
    parent = var.lexical_parent
    if parent is None:
        return None
    for c in parent.walk_preorder():
        if _kind(c) == "DECL_STMT" and any(k == var for k in c.get_children()):
            return c
    return None


def _member_object(member_ref):
    for k in member_ref.get_children():
        if _kind(k) == "DECL_REF_EXPR":
            return k
        inner = [x for x in k.walk_preorder() if _kind(x) == "DECL_REF_EXPR"]
        if inner:
            return inner[0]
    return None


def _arg(rw: Rewriter, a) -> str:
    s, e = _offsets(a)
    return rw.render(s, e)


def _lower_method(rw, call, g: Group, name, args, unsupported) -> None:
    s, e = _offsets(call)
    n = g.size

    def put(fn):
        rw.replace(s, e, fn)

    if name == "sync":
        put("__syncthreads()" if g.kind == "block" else f"__syncwarp({g.mask()})")
    elif name == "thread_rank":
        put(g.rank())
    elif name in ("size", "num_threads"):
        put(g.count())
    elif name == "meta_group_rank" and g.kind == "tile":
        put(f"({LTID} / {n}u)")
    elif name == "meta_group_size" and g.kind == "tile":
        put(f"(({NTHREADS} + {n}u - 1u) / {n}u)")
    elif name == "group_index" and g.kind == "block":
        put("blockIdx")
    elif name == "thread_index" and g.kind == "block":
        put("threadIdx")
    elif name in ("dim_threads", "group_dim") and g.kind == "block":
        put("blockDim")
    elif name in ("shfl", "shfl_down", "shfl_up", "shfl_xor") and g.kind == "tile" and len(args) == 2:
        fn = {"shfl": "__shfl_sync", "shfl_down": "__shfl_down_sync", "shfl_up": "__shfl_up_sync",
              "shfl_xor": "__shfl_xor_sync"}[name]
        put(lambda rw: f"{fn}({g.mask()}, {_arg(rw, args[0])}, {_arg(rw, args[1])}, {n})")
    elif name in ("any", "all") and g.kind == "tile" and len(args) == 1:
        put(lambda rw: f"__{name}_sync({g.mask()}, {_arg(rw, args[0])})")
    elif name == "ballot" and g.kind == "tile" and len(args) == 1:
        shift = "0u" if n >= 32 else f"({LTID} % 32u / {n}u * {n}u)"
        put(lambda rw: f"(__ballot_sync({g.mask()}, {_arg(rw, args[0])}) >> {shift})")
    else:
        unsupported(call, f"'{name}' on a {g.kind}{f'<{n}>' if n else ''} group")


_OPS = {"plus": "({a} + {b})", "less": "({a} < {b} ? {a} : {b})", "greater": "({a} > {b} ? {a} : {b})",
        "bit_and": "({a} & {b})", "bit_or": "({a} | {b})", "bit_xor": "({a} ^ {b})"}


def _lower_free(rw, call, name, args, group_of_var, unsupported) -> None:
    s, e = _offsets(call)
    if name in ("this_thread_block", "tiled_partition", "coalesced_threads", "this_grid"):
        unsupported(call, f"'{name}()' outside a group variable's declaration")
    if name == "sync" and len(args) == 1:
        g = group_of_var(_ref_in(args[0]))
        if g is None:
            unsupported(call, "sync() of something that is not a named group")
        rw.replace(s, e, "__syncthreads()" if g.kind == "block" else f"__syncwarp({g.mask()})")
        return
    if name in ("reduce", "inclusive_scan", "exclusive_scan") and len(args) == 3:
        g = group_of_var(_ref_in(args[0]))
        if g is None or g.kind != "tile":
            unsupported(call, f"{name} over something that is not a tile group")
        op = args[2].type.get_canonical().spelling
        m = re.search(r"cooperative_groups::(?:__v1::)?(\w+)<", op)
        if name != "reduce" or not m or m.group(1) not in _OPS:
            unsupported(call, f"{name} with operator '{args[2].type.spelling}'")
        vtype = args[1].type.get_canonical().spelling
        vtype = re.sub(r"\b(const|volatile)\b|&", "", vtype).strip()
        tag = re.sub(r"\W+", "_", vtype)
        helper = f"__xp_cg_reduce_{m.group(1)}_{tag}_{g.size}"
        body = _OPS[m.group(1)].format(a="v", b=f"__shfl_xor_sync(mask, v, o, {g.size})")
        rw.need_helper(helper, call, (
            f"__device__ static {vtype} {helper}({vtype} v) {{ "
            f"unsigned mask = {g.mask()}; "
            f"for (int o = {g.size} / 2; o > 0; o /= 2) v = {body}; "
            f"return v; }} "))
        rw.replace(s, e, lambda rw: f"{helper}({_arg(rw, args[1])})")
        return
    unsupported(call, f"cooperative_groups::{name}")


def _ref_in(expr):
    for c in expr.walk_preorder():
        if _kind(c) == "DECL_REF_EXPR":
            return c
    return expr


# ------------------------------------------------------------------------------ preprocessor
_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")


def _skipped_ranges(unit: ParsedUnit) -> list[tuple[int, int]]:
    import ctypes

    import clang.cindex as ci

    lib = ci.conf.lib

    class _RangeList(ctypes.Structure):
        _fields_ = [("count", ctypes.c_uint), ("ranges", ctypes.POINTER(ci.SourceRange))]

    fn = lib.clang_getSkippedRanges
    fn.argtypes = [ci.TranslationUnit, ci.File]
    fn.restype = ctypes.POINTER(_RangeList)
    f = unit.tu.get_file(unit.path)
    lst = fn(unit.tu, f)
    out = []
    if lst:
        for i in range(lst.contents.count):
            r = lst.contents.ranges[i]
            out.append((r.start.offset, r.end.offset))
        lib.clang_disposeSourceRangeList.argtypes = [ctypes.POINTER(_RangeList)]
        lib.clang_disposeSourceRangeList(lst)
    return out


def preprocessor_conditionals(unit: ParsedUnit, rw: Rewriter) -> None:
    """Conditional compilation as clang decided it: the code of inactive branches and every
    conditional directive line of the file go (the subset reader then need not evaluate
    conditions over macros it cannot see, such as ``__CUDA_ARCH__ >= GGML_CUDA_CC_AMPERE``)."""
    text = rw.text
    skipped = _skipped_ranges(unit)
    for s, e in skipped:
        rw.replace(s, e, "\n" * text.count("\n", s, e))
    pos = 0
    for line in text.split("\n"):
        end = pos + len(line)
        if _CONDITIONAL.match(line) and not any(s <= pos < e for s, e in skipped):
            stop = end
            while stop > pos and text[stop - 1] == "\\":   # continued directive
                nxt = text.find("\n", stop + 1)
                stop = nxt if nxt >= 0 else len(text)
            rw.replace(pos, stop, "")
        pos = end + 1


_SPECIFIER_WORDS = frozenset("""inline static extern const volatile constexpr __forceinline__ __noinline__
__device__ __host__ __global__ __restrict__ __restrict restrict __inline__ __inline register thread_local
__mlu_func__ __mlu_entry__ __mlu_global__ __mlu_device__ __mlu_host__""".split())


def _is_specifier_body(tokens: list[str]) -> bool:
    depth, i = 0, 0
    while i < len(tokens):
        t = tokens[i]
        if depth == 0 and t in _SPECIFIER_WORDS:
            i += 1
            continue
        if depth == 0 and t in ("__attribute__", "__declspec", "alignas", "__launch_bounds__", "__align__"):
            i += 1
            if i >= len(tokens) or tokens[i] != "(":
                return False
            depth = 0
            while i < len(tokens):
                depth += tokens[i] == "("
                depth -= tokens[i] == ")"
                i += 1
                if depth == 0:
                    break
            continue
        return False
    return bool(tokens)


def specifier_macros(unit: ParsedUnit, rw: Rewriter) -> None:
    """Uses of an object-like macro of the file that stands for declaration specifiers or
    attributes (``#define SIMSIMD_INTERNAL inline static``, ``#define ALIGN64
    __attribute__((aligned(64)))``) are replaced by its body."""
    bodies = {}
    for c in unit.tu.cursor.get_children():
        if c.kind.name == "MACRO_DEFINITION" and unit.in_user_file(c):
            toks = [t.spelling for t in c.get_tokens()][1:]
            if toks and toks[0] == "(" and _function_like(c):
                continue
            if _is_specifier_body(toks):
                bodies[c.spelling] = " ".join(toks)
    if not bodies:
        return
    for c in unit.tu.cursor.get_children():
        if c.kind.name == "MACRO_INSTANTIATION" and unit.in_user_file(c) and c.spelling in bodies:
            s, e = _offsets(c)
            rw.replace(s, e, bodies[c.spelling])


def _function_like(macro) -> bool:
    toks = list(macro.get_tokens())
    return len(toks) > 1 and toks[1].spelling == "(" and \
        toks[1].extent.start.offset == toks[0].extent.end.offset


# ------------------------------------------------------------------------------ default arguments
def default_arguments(unit: ParsedUnit, rw: Rewriter) -> None:
    """``int f(int n, int t = 256)``: the default goes from the declaration and every call that
    relies on it passes it explicitly (C has no default arguments)."""
    text = rw.text
    defaults: dict[str, list[str | None]] = {}
    for c in unit.user_cursors():
        if c.kind.name not in ("FUNCTION_DECL", "CXX_METHOD"):
            continue
        vals: list[str | None] = []
        for p in c.get_arguments():
            expr = [k for k in p.get_children() if k.kind.is_expression()]
            toks = list(p.get_tokens())
            eq = next((i for i, t in enumerate(toks) if t.spelling == "="), None)
            if eq is None or not expr:
                vals.append(None)
                continue
            vals.append(text[expr[-1].extent.start.offset:expr[-1].extent.end.offset])
            rw.replace(toks[eq].extent.start.offset, expr[-1].extent.end.offset, "")
        if any(v is not None for v in vals):
            defaults[c.get_usr()] = vals
    if not defaults:
        return
    for c in unit.user_cursors():
        if c.kind.name != "CALL_EXPR" or c.referenced is None:
            continue
        vals = defaults.get(c.referenced.get_usr())
        if vals is None:
            continue
        cs, ce = _offsets(c)
        given = [a for a in c.get_arguments() if cs <= a.extent.start.offset and a.extent.end.offset <= ce]
        missing = vals[len(given):]
        if not missing or any(v is None for v in missing):
            continue
        close = text.rfind(")", cs, ce)
        sep = ", " if given else ""
        rw.replace(close, close, sep + ", ".join(missing))


# ------------------------------------------------------------------------------ throw
def uncaught_throw(unit: ParsedUnit, rw: Rewriter) -> None:
    """``throw X;`` in a file without ``try`` ends the program through std::terminate, which
    aborts: the same as ``abort();`` (the error paths of host launchers:
    ``if (err != hipSuccess) throw std::runtime_error(...)``). A file with a ``try`` keeps it."""
    cursors = unit.user_cursors()
    if any(c.kind.name == "CXX_TRY_STMT" for c in cursors):
        return
    for c in cursors:
        if c.kind.name == "CXX_THROW_EXPR":
            s, e = _offsets(c)
            rw.replace(s, e, "abort()")


# ------------------------------------------------------------------------------ braced values
def braced_values(unit: ParsedUnit, rw: Rewriter) -> None:
    """A braced list used as a value (``v[i] = {0.0, 0.0};``, ``return {a, b};``) becomes a C
    compound literal of the type clang gave it (``(float2){0.0, 0.0}``); initialisers of
    declarations and nested lists stay as they are."""
    text = rw.text
    keep: set[tuple[int, int]] = set()
    lists = []
    for c in unit.user_cursors():
        k = c.kind.name
        if k in ("VAR_DECL", "FIELD_DECL", "INIT_LIST_EXPR"):
            for d in c.get_children():
                for x in [d, *d.get_children()]:
                    if x.kind.name == "INIT_LIST_EXPR":
                        keep.add(_offsets(x))
        if k == "INIT_LIST_EXPR":
            lists.append(c)
    assigned = _assigned_list_types(unit)
    for c in lists:
        s, e = _offsets(c)
        if (s, e) in keep or s >= len(text) or text[s] != "{" or _typed_list(text, s):
            continue
        t = c.type.spelling
        if t in ("void", "", "<dependent type>") or "dependent" in t:
            # inside a template clang leaves the list untyped (``void``): an assignment's
            # left-hand side still names the type (``v[i] = {..}`` with ``float2 v[N]``)
            t = assigned.get((s, e), "")
        if not t or "<" in t or t.startswith("("):
            continue
        rw.replace(s, s, f"({t})")


_WORD_BEFORE = re.compile(r"(\w+|>)\s*$")


def _typed_list(text: str, s: int) -> bool:
    """The list at ``s`` already names its type (``Relu6{}``, ``float2{a, b}``): the subset
    reader takes such a temporary as it is."""
    m = _WORD_BEFORE.search(text, max(0, s - 200), s)
    return m is not None and m.group(1) not in ("return", "else", "do", "case")


def _assigned_list_types(unit: ParsedUnit) -> dict[tuple[int, int], str]:
    """Braced lists on the right of ``=``: their extents -> the type of the variable (or array
    element) assigned, read from the variable's declaration through the subscripts."""
    out = {}
    for c in unit.user_cursors():
        if c.kind.name != "BINARY_OPERATOR":
            continue
        kids = list(c.get_children())
        if len(kids) != 2 or kids[1].kind.name != "INIT_LIST_EXPR":
            continue
        lhs, subscripts = kids[0], 0
        while lhs.kind.name in ("ARRAY_SUBSCRIPT_EXPR", "UNEXPOSED_EXPR", "PAREN_EXPR"):
            subscripts += lhs.kind.name == "ARRAY_SUBSCRIPT_EXPR"
            first = next(iter(lhs.get_children()), None)
            if first is None:
                break
            lhs = first
        decl = lhs.referenced if lhs.kind.name == "DECL_REF_EXPR" else None
        if decl is None:
            continue
        t = decl.type
        for _ in range(subscripts):
            t = t.get_array_element_type()
        name = t.spelling
        if name and "[" not in name and "dependent" not in name and name != "void":
            out[_offsets(kids[1])] = name
    return out


def templates_and_classes(unit: ParsedUnit, rw: Rewriter) -> None:
    """Templates instantiated as clang instantiated them, member functions as free functions,
    ``if constexpr``, ``static_assert``, scoped enums: see ``instantiate.py``. Runs last: the
    instances are printed from the template's text with the other rewrites' edits applied."""
    try:
        instantiate.monomorphise(unit, rw)
    except instantiate.Unsupported as exc:
        raise Unsupported(str(exc), exc.line, exc.col, exc.construct) from None


REWRITES = (preprocessor_conditionals, specifier_macros, alternative_tokens, default_arguments,
            uncaught_throw, braced_values, cooperative_groups, templates_and_classes)


def lower(unit: ParsedUnit, source: str) -> tuple[str, list[str]]:
    """The source with every rewrite applied; also the names of the rewrites that changed it."""
    # clang's offsets count bytes: work on one character per byte (latin-1) and decode at the end
    rw = Rewriter(source.encode("utf-8").decode("latin-1"), unit)
    applied = []
    for rewrite in REWRITES:
        before = len(rw.edits)
        rewrite(unit, rw)
        if len(rw.edits) > before:
            applied.append(rewrite.__name__)
    if not applied:
        return source, []
    try:
        text = rw.result()   # instances are printed here (their edits render lazily)
    except instantiate.Unsupported as exc:
        raise Unsupported(str(exc), exc.line, exc.col, exc.construct) from None
    return text.encode("latin-1").decode("utf-8"), applied
