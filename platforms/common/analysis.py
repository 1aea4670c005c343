"""Program facts from the normalised AST: functions, entry, parameter roles, launches,
allocations, on-chip buffers and special instructions.

Roles. A kernel / device helper / plain (VNNI) function is analysed directly
(``access.AccessWalker``): a pointer written is an output, read before any write an input,
both an inout. A host function is analysed through its runtime calls, in program order: a host
pointer copied host->device into a device buffer is *read* when the next kernel launch touching
that buffer reads it before writing; a host pointer copied device->host is *written* when a
launch wrote the buffer; direct host accesses count too.
"""
from __future__ import annotations

import copy
import re

from pycparser import c_ast

from xpiler.ir.errors import Coord, Diagnostic, SourceError
from xpiler.ir.program import DTYPES, Allocation, Buffer, Function, Launch, Param, Program

from .access import AccessWalker, Summary
from .consts import ITEMSIZE, ConstantTable
from .dialect import GLOBAL_VARIABLE_SPECIFIERS, SPACES, Dialect
from .generator import expr_text, type_text
from .lexer import REFERENCE

INTRINSIC = re.compile(r"(wmma::\w+|__builtin_amdgcn_mfma_\w+|__bang_\w+|__memcpy\w*"
                       r"|_mm(?:512|256)?_(?:mask_|maskz_)?dp\w+|__shfl\w*|atomic\w+)")
WMMA_FUNCTIONS = frozenset({"load_matrix_sync", "store_matrix_sync", "mma_sync", "fill_fragment",
                            "bmma_sync"})
DIM_FIELDS = ("x", "y", "z")


# -- small AST helpers ------------------------------------------------------------------
def base_type_names(node: c_ast.Node) -> str:
    """``unsigned int`` for ``const unsigned int *const p[4]``."""
    while not isinstance(node, c_ast.IdentifierType):
        if isinstance(node, (c_ast.PtrDecl, c_ast.ArrayDecl, c_ast.TypeDecl, c_ast.Typename,
                             c_ast.AttributedType, c_ast.Decl, c_ast.FuncDecl)):
            node = node.type
        else:
            return type(node).__name__.lower()
    return " ".join(node.names)


def is_reference(node: c_ast.Node) -> bool:
    return isinstance(node, c_ast.PtrDecl) and REFERENCE in (node.quals or [])


def root_name(e: c_ast.Node | None) -> str | None:
    """Variable a pointer expression is based on: ``d`` for ``(void **)&d``, ``h + off``."""
    match e:
        case c_ast.ID(name=name):
            return name
        case c_ast.Cast(expr=inner) | c_ast.UnaryOp(expr=inner) | c_ast.ArrayRef(name=inner):
            return root_name(inner)
        case c_ast.BinaryOp(left=a, right=b):
            return root_name(a) or root_name(b)
    return None


def func_params(fd: c_ast.FuncDef) -> list[c_ast.Decl]:
    args = fd.decl.type.args
    if args is None:
        return []
    params = [p for p in args.params if isinstance(p, c_ast.Decl) and p.name]
    return params


class LocalDefs(c_ast.NodeVisitor):
    """Definitions of the locals of one function: ``defs[name]`` values (None = unknown)."""

    def __init__(self):
        self.defs: dict[str, list] = {}
        self.fields: dict[str, dict[str, c_ast.Node]] = {}
        self.types: dict[str, str] = {}

    def visit_Decl(self, n: c_ast.Decl) -> None:
        if n.name and not isinstance(n.type, c_ast.FuncDecl):
            self.types[n.name] = base_type_names(n.type)
            if n.init is not None:
                self.defs.setdefault(n.name, []).append(n.init)
                self.visit(n.init)

    def visit_Assignment(self, n: c_ast.Assignment) -> None:
        lv = n.lvalue
        if isinstance(lv, c_ast.ID):
            self.defs.setdefault(lv.name, []).append(n.rvalue if n.op == "=" else None)
        elif isinstance(lv, c_ast.StructRef) and isinstance(lv.name, c_ast.ID) and \
                lv.type == "." and n.op == "=":
            self.fields.setdefault(lv.name.name, {})[lv.field.name] = n.rvalue
        self.visit(n.rvalue)

    def visit_UnaryOp(self, n: c_ast.UnaryOp) -> None:
        if n.op in ("++", "--", "p++", "p--") and isinstance(n.expr, c_ast.ID):
            self.defs.setdefault(n.expr.name, []).append(None)
        elif n.op == "&" and isinstance(n.expr, c_ast.ID):
            self.defs.setdefault(n.expr.name, []).append(None)   # may be set through pointer
        self.visit(n.expr)

    def single(self, name: str) -> c_ast.Node | None:
        values = self.defs.get(name, [])
        return values[0] if len(values) == 1 else None


def map_children(node: c_ast.Node, fn) -> c_ast.Node:
    """``node`` with each child node (a field or a list item) replaced in place by ``fn(child)``:
    the generic case of a rewriting visitor."""
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        value = getattr(node, attr, None)
        if isinstance(value, c_ast.Node):
            setattr(node, attr, fn(value))
        elif isinstance(value, list):
            setattr(node, attr, [fn(x) if isinstance(x, c_ast.Node) else x for x in value])
    return node


def replace_ids(node: c_ast.Node, fn) -> c_ast.Node:
    """Copy of ``node`` with each ``ID`` replaced by ``fn(id)`` (when not None)."""
    if isinstance(node, c_ast.ID):
        return fn(node) or node
    node = copy.copy(node)
    for attr in node.__slots__:
        if attr in ("coord", "__weakref__"):
            continue
        value = getattr(node, attr)
        if isinstance(value, c_ast.Node):
            setattr(node, attr, replace_ids(value, fn))
        elif isinstance(value, list) and value and isinstance(value[0], c_ast.Node):
            setattr(node, attr, [replace_ids(v, fn) for v in value])
    return node


# -- the analysis ----------------------------------------------------------------------------
class Analysis:
    def __init__(self, program: Program, dialect: Dialect):
        self.program = program
        self.dialect = dialect
        self.facts = program.facts
        self.ast: c_ast.FileAST = program.ast
        self.defs: dict[str, c_ast.FuncDef] = {}
        self.typedefs: dict[str, c_ast.Typedef] = {}
        self.namespaces = set(self.facts.get("namespaces", []))
        self.summaries: dict[str, tuple[list[str], Summary] | None] = {}
        self.timelines: dict[str, list[tuple]] = {}
        self.diagnostics: list[Diagnostic] = []
        self.consts = ConstantTable(self.facts.get("defines", {}), self.dtype_of)
        self._index_file()

    def _index_file(self) -> None:
        for ext in self.ast.ext:
            if isinstance(ext, c_ast.FuncDef):
                self.defs[ext.decl.name] = ext
            elif isinstance(ext, c_ast.Typedef):
                self.typedefs[ext.name] = ext
            elif isinstance(ext, c_ast.Decl) and ext.init is not None and \
                    ("constexpr" in ext.storage or "const" in (ext.quals or [])):
                self.consts.add(ext.name, expr_text(ext.init))

    # -- types --------------------------------------------------------------------------
    def dtype_of(self, spelling: str, depth: int = 0) -> str:
        spelling = " ".join(w for w in spelling.split() if w not in ("const", "volatile"))
        if spelling in DTYPES:
            return DTYPES[spelling]
        if spelling in self.typedefs and depth < 8:
            return self.dtype_of(base_type_names(self.typedefs[spelling].type), depth + 1)
        macro = self.facts.get("defines", {}).get(spelling)
        if macro and macro["params"] is None and depth < 8:      # #define REAL float
            return self.dtype_of(macro["body"], depth + 1)
        if spelling == "void":
            return "uint8"
        return spelling

    # -- functions ----------------------------------------------------------------------
    def specifiers(self, decl: c_ast.Decl) -> list[str]:
        expand = self.facts.get("macro_specifiers", {})
        out = []
        for spec in decl.funcspec or []:
            out.extend(expand.get(spec, [spec]))
        return out

    def kind_of(self, fd: c_ast.FuncDef) -> str:
        return self.dialect.function_kind(self.specifiers(fd.decl))

    def canonical_call(self, name: str) -> str:
        if name.startswith("nvcuda::"):
            name = name[len("nvcuda::"):]
        if name in WMMA_FUNCTIONS and "nvcuda::wmma" in self.namespaces:
            return "wmma::" + name
        return name

    def summary(self, name: str) -> tuple[list[str], Summary] | None:
        """Access summary of a function defined in this file (memoised; recursion-safe)."""
        if name not in self.defs:
            return None
        if name in self.summaries:
            return self.summaries[name]
        self.summaries[name] = None
        fd = self.defs[name]
        params = func_params(fd)
        tracked = {p.name for p in params if isinstance(p.type, (c_ast.PtrDecl, c_ast.ArrayDecl))}
        refs = {p.name for p in params if is_reference(p.type)}
        walker = AccessWalker(tracked, refs, self.summary, self.canonical_call)
        walker.visit(fd.body)
        result = ([p.name for p in params], Summary.from_timeline(walker.timeline))
        self.summaries[name] = result
        self.timelines[name] = walker.timeline
        return result

    def function(self, fd: c_ast.FuncDef) -> Function:
        kind = self.kind_of(fd)
        roles, sizes = (self.host_roles(fd) if kind == "host" and self.launches_in(fd)
                        else (self.direct_roles(fd), {}))
        params = tuple(self.param(p, roles.get(p.name), sizes.get(p.name))
                       for p in func_params(fd))
        decl = fd.decl
        return Function(name=decl.name, kind=kind, params=params,
                        extern_c=decl.name in self.facts.get("extern_c", []),
                        qualifiers=tuple(decl.funcspec or []) + tuple(decl.storage or []),
                        line=decl.coord.line if decl.coord else 0)

    def param(self, p: c_ast.Decl, role: str | None, size: str | None) -> Param:
        pointer = isinstance(p.type, (c_ast.PtrDecl, c_ast.ArrayDecl))
        dtype = self.dtype_of(base_type_names(p.type))
        if not pointer:
            role = "scalar"
        return Param(name=p.name, type=type_text(p.type), kind="pointer" if pointer else "scalar",
                     dtype=dtype, role=role or "input", size=size)

    def direct_roles(self, fd: c_ast.FuncDef) -> dict[str, str]:
        names, summary = self.summary(fd.decl.name)
        return {n: role_of(summary.get(n).read_first, summary.get(n).written) for n in names}

    # -- host code ------------------------------------------------------------------------
    def launches_in(self, fd: c_ast.FuncDef) -> bool:
        self.summary(fd.decl.name)
        timeline = self.timelines[fd.decl.name]
        return any(self.as_launch(ev) is not None for ev in timeline) or any(
            ev[0] == "call" and ev[1] in self.dialect.malloc_functions for ev in timeline)

    def as_launch(self, ev: tuple):
        """(kernel name, config nodes, arg nodes) for launch-like timeline events."""
        if ev[0] == "launch" and isinstance(ev[1], c_ast.ID):
            return ev[1].name, ev[2], ev[3]
        if ev[0] == "call" and ev[1] in self.dialect.launch_functions and len(ev[2]) >= 5:
            kernel = ev[2][0]
            if isinstance(kernel, c_ast.FuncCall) and kernel.args is not None and \
                    len(kernel.args.exprs) == 1:          # HIP_KERNEL_NAME(k)
                kernel = kernel.args.exprs[0]
            if isinstance(kernel, c_ast.ID):
                return kernel.name, ev[2][1:5], ev[2][5:]
        return None

    def host_roles(self, fd: c_ast.FuncDef) -> tuple[dict[str, str], dict[str, str]]:
        name = fd.decl.name
        timeline = self.timelines[name]
        locals_ = LocalDefs()
        locals_.visit(fd.body)
        params = {p.name: p for p in func_params(fd)}
        device: dict[str, list[tuple]] = {}
        copies: dict[str, str] = {}
        for ev in timeline:
            self.host_event(ev, fd, locals_, params, device, copies)
        direct = Summary.from_timeline(timeline)
        roles = {}
        for pname in params:
            reads = direct.get(pname).read_first or any(
                _reads_host(events, pname) for events in device.values())
            writes = direct.get(pname).written or any(
                _writes_host(events, pname) for events in device.values())
            roles[pname] = role_of(reads, writes)
        sizes = {p: self.elements(copies[p], params[p], locals_, params)
                 for p in copies if p in params}
        return roles, sizes

    def host_event(self, ev, fd, locals_, params, device, copies) -> None:
        launch = self.as_launch(ev)
        if launch is not None:
            self.record_launch(launch, fd, locals_, params, device)
            return
        if ev[0] != "call":
            return
        fname, args = ev[1], ev[2]
        if fname in self.dialect.malloc_functions and len(args) >= 2:
            ptr = root_name(args[0])
            device.setdefault(ptr, [])
            self.program.allocations.append(Allocation(
                name=ptr or "?", bytes=self.host_expr(args[1], locals_, params),
                function=fd.decl.name))
        elif fname in self.dialect.memcpy_functions and len(args) >= 4:
            direction = expr_text(args[3])
            dst, src = root_name(args[0]), root_name(args[1])
            if direction in self.dialect.h2d:
                device.setdefault(dst, []).append(("h2d", src))
                copies.setdefault(src, args[2])
            elif direction in self.dialect.d2h:
                device.setdefault(src, []).append(("d2h", dst))
                copies.setdefault(dst, args[2])
        elif fname in self.dialect.memset_functions and args:
            device.setdefault(root_name(args[0]), []).append(("set",))

    def record_launch(self, launch, fd, locals_, params, device) -> None:
        kernel, config, args = launch
        callee = self.summary(kernel)
        if callee is None and kernel not in self.defs:
            self.warn("XP1150", f"launch of kernel '{kernel}' that is not defined in this file: "
                      "its pointer arguments are assumed read and written", config)
        for i, a in enumerate(args):
            buf = root_name(a)
            if buf not in device:
                continue
            if callee is None or i >= len(callee[0]):
                device[buf].append(("launch", True, True))
            else:
                acc = callee[1].get(callee[0][i])
                device[buf].append(("launch", acc.read_first, acc.written))
        self.program.launches.append(self.launch_record(kernel, config, args, fd, locals_, params))

    def launch_record(self, kernel, config, args, fd, locals_, params) -> Launch:
        text = [self.host_expr(a, locals_, params) for a in args]
        if self.dialect.name == "bang":
            dim = self.dim3(config[0], locals_, params) if config else None
            ktype = self.resolved_text(config[1], locals_) if len(config) > 1 else None
            stream = expr_text(config[2]) if len(config) > 2 else None
            return Launch(kernel=kernel, caller=fd.decl.name, dim=dim, ktype=ktype,
                          stream=stream, args=tuple(text))
        grid = self.dim3(config[0], locals_, params) if config else None
        block = self.dim3(config[1], locals_, params) if len(config) > 1 else None
        shmem = self.host_expr(config[2], locals_, params) if len(config) > 2 else None
        stream = expr_text(config[3]) if len(config) > 3 else None
        return Launch(kernel=kernel, caller=fd.decl.name, grid=grid, block=block, shmem=shmem,
                      stream=stream, args=tuple(text))

    def resolved_text(self, e: c_ast.Node, locals_: LocalDefs) -> str:
        if isinstance(e, c_ast.ID) and locals_.single(e.name) is not None:
            return expr_text(locals_.single(e.name))
        return expr_text(e)

    def dim3(self, e: c_ast.Node, locals_: LocalDefs, params) -> tuple[str, ...]:
        parts: list[c_ast.Node | None] = [None, None, None]
        source = e
        if isinstance(e, c_ast.ID) and e.name not in params:
            source = locals_.single(e.name)
            for field_name, value in locals_.fields.get(e.name, {}).items():
                if field_name in DIM_FIELDS:
                    parts[DIM_FIELDS.index(field_name)] = value
        items = self.dim_items(source) if source is not None else [e]
        for i, item in enumerate(items[:3]):
            if parts[i] is None:
                parts[i] = item
        return tuple(self.host_expr(p, locals_, params) if p is not None else "1" for p in parts)

    def dim_items(self, e: c_ast.Node) -> list[c_ast.Node]:
        if isinstance(e, c_ast.FuncCall) and isinstance(e.name, c_ast.ID) and \
                e.name.name in self.dialect.ctor_types:
            return list(e.args.exprs) if e.args is not None else []
        if isinstance(e, c_ast.InitList):
            return list(e.exprs)
        return [e]

    def host_expr(self, e: c_ast.Node, locals_: LocalDefs, params, depth: int = 0) -> str:
        """C text of ``e`` with single-definition host locals substituted (entry scalars kept)."""
        def subst(node: c_ast.ID):
            value = locals_.single(node.name)
            if node.name in params or value is None or depth > 8:
                return None
            if locals_.types.get(node.name) in self.dialect.ctor_types:
                return None
            return replace_ids(value, lambda n: self._subst_inner(n, locals_, params, depth + 1))
        return expr_text(replace_ids(e, subst))

    def _subst_inner(self, node: c_ast.ID, locals_, params, depth):
        value = locals_.single(node.name)
        if node.name in params or value is None or depth > 8:
            return None
        return replace_ids(value, lambda n: self._subst_inner(n, locals_, params, depth + 1))

    def elements(self, nbytes: c_ast.Node, p: c_ast.Decl, locals_, params) -> str:
        """Element count of a host copy of ``nbytes`` bytes into parameter ``p``."""
        text = self.host_expr(nbytes, locals_, params)
        elem = base_type_names(p.type)
        if re.fullmatch(rf"\(?sizeof\({re.escape(elem)}\)\)?", text):
            return "1"
        for pattern in (rf"^(.*\S)\s*\*\s*sizeof\({re.escape(elem)}\)$",
                        rf"^sizeof\({re.escape(elem)}\)\s*\*\s*(.*\S)$"):
            m = re.match(pattern, text)
            if m and _balanced(m.group(1)):
                return _strip_parens(m.group(1))
        return f"({text}) / sizeof({elem})"

    def warn(self, code: str, msg: str, nodes) -> None:
        coord = next((n.coord for n in nodes if getattr(n, "coord", None)), None)
        where = Coord(self.program.path, coord.line, coord.column or 0) if coord \
            else Coord(self.program.path)
        self.diagnostics.append(Diagnostic(code, msg, where, severity="warning"))

    # -- entry ------------------------------------------------------------------------------
    def entry(self, functions: list[Function], requested: str | None) -> Function:
        path = self.program.path
        if requested is not None:
            found = next((f for f in functions if f.name == requested), None)
            if found is None:
                names = ", ".join(f.name for f in functions) or "none"
                raise _source_error("XP1142", f"entry '{requested}' not found (functions: {names})",
                                    Coord(path, 1, 1))
            return found
        for candidates in self.entry_candidates(functions):
            if len(candidates) == 1:
                return candidates[0]
            if len(candidates) > 1:
                names = ", ".join(f.name for f in candidates)
                err = _source_error(
                    "XP1141", f"several entry candidates ({names}); choose one with entry= "
                    "(--entry NAME; `xpiler translate` without --entry translates each)",
                    Coord(path, candidates[1].line, 1))
                err.entry_candidates = [f.name for f in candidates]
                raise err
        raise _source_error("XP1140", "no entry: the file defines no kernel and no function",
                            Coord(path, 1, 1))

    def entry_candidates(self, functions: list[Function]):
        hosts = [f for f in functions if f.kind == "host" and f.name != "main"]
        yield [f for f in hosts if f.extern_c]
        yield [f for f in hosts if self.launches_in(self.defs[f.name])]
        kernels = [f for f in functions if f.kind == "kernel"]
        yield kernels if len(kernels) <= 1 else [f for f in kernels if f.extern_c] or kernels
        called = self.called_names()
        yield [f for f in hosts if f.name not in called and "static" not in f.qualifiers]

    def called_names(self) -> set[str]:
        names = set()
        for name in self.defs:
            self.summary(name)
            names.update(ev[1] for ev in self.timelines[name] if ev[0] == "call")
            names.update(ev[1].name for ev in self.timelines[name]
                         if ev[0] == "launch" and isinstance(ev[1], c_ast.ID))
        return names

    # -- buffers and intrinsics ----------------------------------------------------------------
    def buffers(self) -> list[Buffer]:
        collector = BufferCollector(self)
        collector.visit(self.ast)
        return collector.buffers

    def unknown_intrinsics(self) -> set[str]:
        """Warn (XP1151) at calls of intrinsic-looking names nothing knows (``known_names``)."""
        from .known_names import unknown_intrinsic_calls

        found = unknown_intrinsic_calls(self.program)
        where = ("the compiler's intrinsic headers" if self.dialect.name == "vnni"
                 else f"the {self.dialect.name} intrinsic descriptions")
        for name, coord in found:
            self.diagnostics.append(Diagnostic(
                "XP1151", f"'{name}' is not a known intrinsic or builtin: neither the virtual device's "
                f"runtime nor {where} declare it, and nothing in this file does (a typo, or an "
                "intrinsic the virtual device does not implement: the build will fail)",
                Coord(self.program.path, coord.line, coord.column or 0) if coord else Coord(self.program.path),
                severity="warning", construct=name))
        return {name for name, _ in found}

    def intrinsics(self) -> list[str]:
        names = set()
        for name in self.defs:
            self.summary(name)
            for ev in self.timelines[name]:
                if ev[0] == "call" and INTRINSIC.fullmatch(ev[1]):
                    names.add(ev[1])
        return sorted(names)


class BufferCollector(c_ast.NodeVisitor):
    """Variables placed in a memory space: ``__shared__``, ``__nram__``, ``__device__`` ..."""

    def __init__(self, analysis: Analysis):
        self.analysis = analysis
        self.buffers: list[Buffer] = []
        self.function: str | None = None

    def visit_FuncDef(self, n: c_ast.FuncDef) -> None:
        self.function = n.decl.name
        self.visit(n.body)
        self.function = None

    def visit_Decl(self, n: c_ast.Decl) -> None:
        if isinstance(n.type, c_ast.FuncDecl) or not n.name:
            return
        space = next((SPACES[s] for s in n.storage or [] if s in SPACES), None)
        specs = set(self.analysis.specifiers(n))
        if space is None and specs & GLOBAL_VARIABLE_SPECIFIERS:
            space = "gdram"
        if space is not None:
            self.buffers.append(self.buffer(n, space))
        if n.init is not None:
            self.visit(n.init)

    def buffer(self, n: c_ast.Decl, space: str) -> Buffer:
        a = self.analysis
        dims, node = [], n.type
        while isinstance(node, c_ast.ArrayDecl):
            dims.append(node.dim)
            node = node.type
        shape = tuple(expr_text(d) if d is not None else "?" for d in dims)
        dtype = a.dtype_of(base_type_names(n.type))
        size = ITEMSIZE.get(dtype)
        for text in shape:
            value = a.consts.evaluate(text) if text != "?" else None
            size = size * value if size is not None and value is not None else None
        return Buffer(name=n.name, space=space, dtype=dtype, shape=shape, bytes=size,
                      function=self.function)


# -- helpers -----------------------------------------------------------------------------------
def role_of(reads: bool, writes: bool) -> str:
    if reads and writes:
        return "inout"
    return "output" if writes else "input"


def _reads_host(events: list[tuple], host: str) -> bool:
    """A host->device copy from ``host`` whose next launch reads the buffer first."""
    for i, ev in enumerate(events):
        if ev[0] == "h2d" and ev[1] == host:
            # the next launch / copy / set (no slice copy per event: linear in a long host function)
            nxt = next((events[j] for j in range(i + 1, len(events))
                        if events[j][0] in ("launch", "h2d", "set")), None)
            if nxt is not None and nxt[0] == "launch" and nxt[1]:
                return True
    return False


def _writes_host(events: list[tuple], host: str) -> bool:
    """A device->host copy into ``host`` of a buffer some earlier launch wrote."""
    written = False                  # some launch before this event wrote the buffer
    for ev in events:
        if ev[0] == "d2h" and ev[1] == host and written:
            return True
        written = written or (ev[0] == "launch" and ev[2])
    return False


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += 1 if ch == "(" else -1 if ch == ")" else 0
        if depth < 0:
            return False
    return depth == 0


def _strip_parens(text: str) -> str:
    while text.startswith("(") and text.endswith(")") and _balanced(text[1:-1]):
        text = text[1:-1].strip()
    return text


def _source_error(code: str, msg: str, coord: Coord) -> SourceError:
    return SourceError(msg, diagnostics=[Diagnostic(code, msg, coord)])


def build(program: Program, dialect: Dialect, entry: str | None) -> Program:
    """Fill ``program``'s facts from its AST (see the module docstring)."""
    a = Analysis(program, dialect)
    functions = [a.function(fd) for fd in a.defs.values()]
    program.functions = functions
    program.entry = a.entry(functions, entry)
    program.buffers = a.buffers()
    unknown = a.unknown_intrinsics()
    program.intrinsics = [n for n in a.intrinsics() if n not in unknown]
    program.diagnostics = a.diagnostics
    program.facts["constants"] = {n: v for n in a.consts.sources
                                  if (v := a.consts.value(n)) is not None}
    program.facts["expression_functions"] = expression_functions(a.defs.values())
    return program


def expression_functions(defs) -> dict[str, dict]:
    """The file's functions whose body is one ``return E;`` over integer parameters passed by
    value (``int conv_out_size(int in, int k, int s, int p) { return (in + 2*p - k) / s + 1; }``):
    name -> {"params": [...], "body": E as text}. Host sizes written with them
    (``N * K * conv_out_size(H, R, stride, pad)``) can then be evaluated."""
    out = {}
    for fd in defs:
        ftype = fd.decl.type
        items = fd.body.block_items or []
        if not isinstance(ftype, c_ast.FuncDecl) or len(items) != 1 or \
                not isinstance(items[0], c_ast.Return) or items[0].expr is None:
            continue
        params = [p for p in (ftype.args.params if ftype.args else [])
                  if not (isinstance(p, c_ast.Typename) and type_text(p.type) == "void")]
        if not all(isinstance(p, c_ast.Decl) and p.name and isinstance(p.type, c_ast.TypeDecl) and
                   isinstance(p.type.type, c_ast.IdentifierType) and
                   not ({"float", "double"} & set(p.type.type.names)) for p in params):
            continue
        if any(isinstance(n, (c_ast.Assignment, c_ast.FuncCall)) or
               (isinstance(n, c_ast.UnaryOp) and n.op in ("++", "--", "p++", "p--")) for n in _walk(items[0])):
            continue
        out[fd.decl.name] = {"params": [p.name for p in params], "body": expr_text(items[0].expr)}
    return out


def _walk(node):
    yield node
    for _, child in node.children():
        yield from _walk(child)
