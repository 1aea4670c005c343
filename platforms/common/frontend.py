"""Shared front-end: source text of any dialect -> ``Program`` (pycparser AST + facts).

Route: ``preprocess`` (length-preserving text stage: comments, directives) -> ``XLexer``
(token stage: qualifiers, launches, casts, templates... see ``lexer.py`` for the table) ->
``XParser`` (pycparser's ``CParser`` in C23 mode, knowing the dialect's type names) ->
``analysis.build`` (entry, parameter roles, launches, allocations, buffers, intrinsics).

Every AST node's ``coord`` is the position in the ORIGINAL file (rewrites never add or remove
newlines, removed text is padded with spaces, synthetic tokens carry the coordinates of the
construct they stand for).

Reversal data lives in ``Program.facts`` (JSON-able):

``preamble``        include / define / undef / ``using namespace`` lines, in file order
``defines``         ``{name: {params, body, line}}``
``extern_c``        names of functions declared ``extern "C"``
``casts``           ``{"line:col": "static_cast" | "reinterpret_cast" | ... | "functional"}``
``ctor_decls``      ``{"line:col": "paren" | "brace"}`` for ``dim3 b(x, y)`` / ``dim3 b{x, y}``
``cxx_types``       ``{spelling: {template, args}}`` for template types
``using_aliases``   typedef names written as ``using T = ...``
``namespaces``      namespaces opened with ``using namespace``
``macro_specifiers``  object-like macros standing for qualifiers, with their expansion
``constants``       compile-time integer constants (``#define``, ``constexpr``, ``const``)
``call_aliases``    ``{macro: intrinsic}``: calls through an object-like macro naming an
                    intrinsic, which call the intrinsic in the AST (``resolve_call_aliases``)
"""
from __future__ import annotations

import re

from pycparser import c_ast
from pycparser.c_parser import CParser, ParseError

from xpiler.ir.errors import Coord, Diagnostic, SourceError
from xpiler.ir.program import Program

from . import analysis
from .dialect import FUNCTION_SPECIFIER, MEMORY_SPACE, Dialect
from .lexer import PinnedToken, XLexer
from .preprocess import Macro, preprocess

_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_WORD = re.compile(r"[A-Za-z_]\w*")
_TYPE_WORDS = frozenset("void char short int long float double signed unsigned bool const".split())


class XParser(CParser):
    """pycparser's parser (C23 mode) that knows the dialect's predeclared type names."""

    def __init__(self, dialect: Dialect, macro_kinds: dict[str, str], facts: dict):
        super().__init__(lexer=XLexer, dialect="c23")
        self.clex.configure(dialect, macro_kinds, facts)

    def _is_type_in_scope(self, name: str) -> bool:
        for scope in reversed(self._scope_stack):
            if name in scope:
                return scope[name]
        return name in self.clex.parser_types

    def _classify_identifier(self, tok) -> None:
        if isinstance(tok, PinnedToken):
            self._typedef_checked_token = tok
            return
        super()._classify_identifier(tok)


def parse_program(text: str, dialect: Dialect, path: str = "<input>",
                  entry: str | None = None) -> Program:
    """Parse ``text`` as ``dialect`` and resolve the Program facts (raises SourceError).

    A defect of the front-end itself surfaces as diagnostic XP1199 (never a traceback)."""
    try:
        return _parse_program(text, dialect, path, entry)
    except SourceError as subset_error:
        if not _cxx_may_help(subset_error):
            raise
        return parse_cxx(text, dialect, path, entry, subset_error)
    except RecursionError:
        # a long operator chain (a + b + ... with hundreds of terms) gives an AST deeper than
        # the recursive analysis can walk: a limit of the front-end, not a defect
        raise _error("XP1104", "expression or statement nested too deeply for the front-end "
                     "(a very long operator chain or deep nesting)", Coord(path, 1, 1)) from None
    except Exception as exc:  # noqa: BLE001 - the one place internal errors become diagnostics
        msg = f"internal front-end error ({type(exc).__name__}: {exc}); please report it"
        raise _error("XP1199", msg, Coord(path, 1, 1)) from exc


# refusals that C++ clang reads may explain: syntax (XP1100), qualifiers (XP1110), C++ constructs
# (XP1120), directives (XP1121), templates (XP1122); not a cut-off file, nesting limits, entries
_CXX_MAY_HELP = frozenset({"XP1100", "XP1110", "XP1120", "XP1121", "XP1122"})


def _cxx_may_help(error: SourceError) -> bool:
    return bool(error.diagnostics) and error.diagnostics[0].code in _CXX_MAY_HELP


def parse_cxx(text: str, dialect: Dialect, path: str, entry: str | None,
              subset_error: SourceError) -> Program:
    """The C++ route (platforms/common/cxx): clang reads the source; when it finds errors too,
    they follow the subset reader's diagnostics (XP1300); otherwise the constructs the subset reader lacks are
    lowered from clang's view (``lower.REWRITES``) and the lowered text is read again. The
    Program's ``facts["cxx_lowered"]`` names the rewrites applied; its ``source`` is the lowered
    text (same lines as the file), which the passes and backends read."""
    from .cxx import driver, lower

    try:
        unit = driver.parse(text, path, dialect.name)
    except driver.ClangUnavailable:
        raise subset_error from None
    if unit.errors:
        # not valid C++ either: the subset reader's finding first (its codes are the documented
        # ones), then what clang says, which names the C++ problem
        raise SourceError(subset_error.message,
                          diagnostics=subset_error.diagnostics + unit.errors[:10]) from None
    try:
        lowered, applied = lower.lower(unit, text)
    except lower.Unsupported as exc:
        raise _error_at("XP1310", str(exc), Coord(path, exc.line, exc.col), exc.construct) from None
    if not applied:
        raise subset_error
    try:
        program = _parse_program(lowered, dialect, path, entry)
    except SourceError as exc:
        if exc.diagnostics and exc.diagnostics[0].code == "XP1003":
            raise subset_error from None   # nothing but unused templates: the first finding says more
        raise
    program.facts["cxx_lowered"] = applied
    return program


def _error_at(code: str, msg: str, coord: Coord, construct: str | None) -> SourceError:
    return SourceError(msg, diagnostics=[Diagnostic(code, msg, coord, construct=construct)])


def _parse_program(text: str, dialect: Dialect, path: str, entry: str | None) -> Program:
    check_text(text, path)
    pre = preprocess(text, path, dialect.predefined)
    facts: dict = {"_stmt_macros": statement_macros(pre.defines)}
    macro_kinds, macro_specs = classify_macros(pre.defines, dialect)
    ast = run_parser(pre.text, path, dialect, macro_kinds, facts)
    if not ast.ext:
        raise _error("XP1003", "no declarations in file (empty after preprocessing)",
                     Coord(path, 1, 1))
    renamed = separate_overloads(ast, dialect, facts.get("extern_c_spans", []), macro_specs)
    call_aliases = resolve_call_aliases(ast, pre.defines, dialect.name)
    finish_facts(facts, pre, ast, macro_specs)
    if renamed:
        facts["overloads_renamed"] = renamed
    if call_aliases:
        facts["call_aliases"] = call_aliases
    program = Program(platform=dialect.name, source=text, path=path, ast=ast, facts=facts)
    program = analysis.build(program, dialect, entry)
    program.diagnostics.extend(missing_header_warnings(text, dialect.name, path))
    return program


def missing_header_warnings(text: str, platform: str, path: str) -> list[Diagnostic]:
    """XP1152 for each standard header the text uses a name of without including it
    (``std_headers.toml``); the virtual device's build and translated outputs include it."""
    from .std_headers import missing

    return [Diagnostic("XP1152", f"'{m.name}' is declared in <{m.header}>, which the file does not "
                       f"include; the virtual device adds #include <{m.header}> (add it to the source)",
                       Coord(path, m.line, m.col), severity="warning")
            for m in missing(text, platform)]


class _References(c_ast.NodeVisitor):
    """Calls and launches of one name inside a function body: (node, 'launch' | 'call')."""

    def __init__(self, name: str, launch_functions: frozenset[str]):
        self.name, self.launch_functions, self.found = name, launch_functions, []

    def visit_FuncCall(self, n: c_ast.FuncCall) -> None:
        from .generator import launch_parts

        launch = launch_parts(n)
        if launch is not None:
            kernel = launch[0]
            if isinstance(kernel, c_ast.ID) and kernel.name == self.name:
                self.found.append((kernel, "launch"))
        elif isinstance(n.name, c_ast.ID):
            if n.name.name == self.name:
                self.found.append((n.name, "call"))
            elif n.name.name in self.launch_functions and n.args and n.args.exprs:
                kernel = n.args.exprs[0]
                if isinstance(kernel, c_ast.FuncCall) and kernel.args and len(kernel.args.exprs) == 1:
                    kernel = kernel.args.exprs[0]             # HIP_KERNEL_NAME(k)
                if isinstance(kernel, c_ast.ID) and kernel.name == self.name:
                    self.found.append((kernel, "launch"))
        self.generic_visit(n)


class _Names(c_ast.NodeVisitor):
    def __init__(self):
        self.names: set[str] = set()

    def visit_ID(self, n):
        self.names.add(n.name)

    def visit_Decl(self, n):
        if n.name:
            self.names.add(n.name)
        self.generic_visit(n)


def resolve_call_aliases(ast: c_ast.FileAST, defines: dict[str, Macro], platform: str) -> dict[str, str]:
    """Calls through an object-like macro that names an intrinsic (``#define SHFL_SYNC
    __shfl_sync`` ... ``SHFL_SYNC(FULL_MASK, v, i)``) call the intrinsic itself, as the C
    preprocessor expands them: the callee becomes the intrinsic's name, so that the analysis and
    the passes, which give intrinsics their meaning by name (shuffles, atomics, vector
    intrinsics), see it. Chains of aliases are followed; only a macro defined above the call,
    with a body of one identifier that is spelled like an intrinsic of ``platform``
    (``known_names.looks_intrinsic``, ``analysis.INTRINSIC``), is resolved; the ``#define`` stays
    in the preamble. Returns ``{macro: intrinsic}`` for the aliases used so."""
    from .known_names import looks_intrinsic

    def target(name: str, line: int) -> str | None:
        seen = set()
        while name in defines and name not in seen and len(seen) < 16:
            m = defines[name]
            if m.params is not None or not _WORD.fullmatch(m.body.strip()) or m.line >= line:
                return None
            seen.add(name)
            name = m.body.strip()
        if not seen or name in _TYPE_WORDS:
            return None
        return name if looks_intrinsic(platform, name) or analysis.INTRINSIC.fullmatch(name) else None

    used: dict[str, str] = {}

    class Calls(c_ast.NodeVisitor):
        def visit_FuncCall(self, node):
            if isinstance(node.name, c_ast.ID) and node.name.name in defines:
                coord = node.name.coord or node.coord
                new = target(node.name.name, getattr(coord, "line", None) or 1 << 30)
                if new is not None:
                    used[node.name.name] = new
                    node.name = c_ast.ID(new, coord=node.name.coord)
            self.generic_visit(node)

    if any(m.params is None for m in defines.values()):
        Calls().visit(ast)
    return used


def separate_overloads(ast: c_ast.FileAST, dialect: Dialect, spans: list[list[int]],
                       macro_specs: dict[str, list[str]]) -> dict[str, str]:
    """C++ overloads one name across sides: a ``__global__ void add(...)`` launched by
    ``extern "C" void add(...)`` (legal C++: the parameter lists differ, one of them has C
    linkage). The program's functions are keyed by name, so the one that keeps the name is the
    ``extern "C"`` function (its name is the ABI), or else the only host function; each other
    definition (and its prototypes) gets a fresh name ``<name>_<kind>`` (``add_kernel``) with the
    references that resolve to it as C++ resolves them: a launch names the kernel, a call in
    device code the device function. Returns ``{new name: source name}``; ``{}`` when no name
    is shared, or when the overloads are not one per side (left as they are)."""
    def extern_c(decl) -> bool:
        c = decl.coord
        here = (c.line, c.column or 0) if c is not None else None
        return here is not None and any((a, b) <= here <= (cc, d) for a, b, cc, d in spans)

    def kind(decl) -> str:
        specs = []
        for spec in decl.funcspec or []:
            specs.extend(macro_specs.get(spec, [spec]))
        return dialect.function_kind(specs)

    defs: dict[str, list[c_ast.FuncDef]] = {}
    for ext in ast.ext:
        if isinstance(ext, c_ast.FuncDef):
            defs.setdefault(ext.decl.name, []).append(ext)
    shared = {n: fds for n, fds in defs.items() if len(fds) > 1}
    if not shared:
        return {}
    used = _Names()
    used.visit(ast)
    renamed: dict[str, str] = {}
    for name, fds in shared.items():
        kinds = [kind(fd.decl) for fd in fds]
        if len(set(kinds)) != len(kinds):
            continue                              # two overloads on one side: not ours to pick
        if len({_signature(fd) for fd in fds}) != len(fds):
            continue                              # a redefinition (C++ rejects it; so does the build)
        keepers = [fd for fd in fds if extern_c(fd.decl)] or [fd for fd, k in zip(fds, kinds) if k == "host"]
        if len(keepers) != 1:
            continue
        keeper = keepers[0]
        new_names: dict[str, str] = {}             # kind -> fresh name
        for fd, k in zip(fds, kinds):
            if fd is keeper:
                continue
            fresh, i = f"{name}_{k}", 2
            while fresh in used.names or fresh in defs:
                fresh, i = f"{name}_{k}{i}", i + 1
            used.names.add(fresh)
            new_names[k] = fresh
            renamed[fresh] = name
        keeper_kind = kind(keeper.decl)
        for ext in ast.ext:
            decl = ext.decl if isinstance(ext, c_ast.FuncDef) else ext
            if not (isinstance(decl, c_ast.Decl) and isinstance(decl.type, c_ast.FuncDecl)):
                continue
            k = kind(decl)
            if decl.name == name and k in new_names and not (ext is keeper or extern_c(decl) and k == keeper_kind):
                _rename_decl(decl, new_names[k])
            if not isinstance(ext, c_ast.FuncDef):
                continue
            refs = _References(name, dialect.launch_functions)
            refs.visit(ext.body)
            for node, how in refs.found:
                if how == "launch" and "kernel" in new_names:
                    node.name = new_names["kernel"]
                elif how == "call" and k in ("kernel", "device") and "device" in new_names:
                    node.name = new_names["device"]
                elif how == "call" and k == "host" and keeper_kind != "host" and "host" in new_names:
                    node.name = new_names["host"]
    return renamed


def _signature(fd: c_ast.FuncDef) -> tuple[str, ...]:
    from .analysis import func_params
    from .generator import type_text

    return tuple(type_text(p.type) for p in func_params(fd))


def _rename_decl(decl: c_ast.Decl, new: str) -> None:
    decl.name = new
    t = decl.type
    while t is not None and not isinstance(t, c_ast.TypeDecl):
        t = getattr(t, "type", None)
    if t is not None:
        t.declname = new


def check_text(text: str, path: str) -> None:
    """Empty or binary input gives a coded diagnostic (XP1003 / XP1004)."""
    if not text.strip():
        raise _error("XP1003", "empty file", Coord(path, 1, 1))
    bad = _CONTROL.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        col = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        raise _error("XP1004", f"control character {bad.group(0)!r} in source (binary data?)",
                     Coord(path, line, col))


def classify_macros(defines: dict[str, Macro], dialect: Dialect
                    ) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Object-like macros that stand for a type or for qualifiers get a token kind."""
    kinds: dict[str, str] = {}
    specs: dict[str, list[str]] = {}
    types = dialect.all_types
    for name, macro in defines.items():
        words = macro.body.split()
        if macro.params is not None or not words or not all(_WORD.fullmatch(w) for w in words):
            continue
        if all(w in dialect.function_specifiers for w in words):
            kinds[name] = FUNCTION_SPECIFIER
            specs[name] = words
        elif all(w in dialect.memory_spaces for w in words):
            kinds[name] = MEMORY_SPACE
            specs[name] = words
        elif all(w in _TYPE_WORDS or w in types for w in words):
            kinds[name] = "TYPEID"
    return kinds, specs


def run_parser(text: str, path: str, dialect: Dialect, macro_kinds: dict[str, str],
               facts: dict) -> c_ast.FileAST:
    parser = XParser(dialect, macro_kinds, facts)
    try:
        return parser.parse(text, path)
    except ParseError as exc:
        raise parse_error_diagnostic(str(exc), path, text, _current_token(parser)) from None
    except RecursionError:
        at = _current_token(parser)
        where = Coord(path, at.lineno, at.column) if at is not None else Coord(path, 1, 1)
        raise _error("XP1104", "construct nested too deeply for the parser", where) from None


def _current_token(parser: XParser):
    """The token the parser stopped at (for errors pycparser reports without a position)."""
    try:
        return parser._tokens.peek(1)
    except Exception:   # noqa: BLE001 - best effort, private API
        return None


def parse_error_diagnostic(message: str, path: str, text: str, at=None) -> SourceError:
    """Map pycparser's ``file:line:col: msg`` text to a coded SourceError."""
    rest = message[len(path) + 1:] if message.startswith(path + ":") else message
    m = re.match(r"(\d+)(?::(\d+))?: (.*)", rest, re.S)
    if not m:
        msg = rest.lstrip(": ") or message
        where = Coord(path, at.lineno, at.column) if at is not None \
            else Coord(path, text.count("\n") + 1, 1)
        if "end of input" in msg.lower():
            return _error("XP1103", "unexpected end of file", where)
        return _error("XP1100", f"syntax error: {msg}", where)
    line, col, msg = int(m.group(1)), int(m.group(2) or 0), m.group(3)
    if "end of input" in msg.lower():
        return _error("XP1103", "unexpected end of file", Coord(path, line, col))
    if msg.startswith("before: "):
        msg = f"syntax error before '{msg[8:]}'"
    else:
        msg = f"syntax error: {msg}"
    return _error("XP1100", msg, Coord(path, line, col))


def _error(code: str, msg: str, coord: Coord) -> SourceError:
    return SourceError(msg, diagnostics=[Diagnostic(code, msg, coord)])


def statement_macros(defines: dict[str, Macro]) -> dict[str, tuple[tuple[str, ...], str]]:
    """Function-like macros whose body starts a statement (``for``/``if``/``while``/``switch``
    head): their uses are expanded by the token stage (``CUDA_KERNEL_LOOP(i, n) { ... }``)."""
    out = {}
    for name, m in defines.items():
        if m.params is not None and re.match(r"\s*(for|if|while|switch)\s*\(", m.body):
            out[name] = (tuple(p.strip() for p in m.params), m.body)
    return out


def finish_facts(facts: dict, pre, ast: c_ast.FileAST, macro_specs: dict[str, list[str]]) -> None:
    facts.pop("_stmt_macros", None)
    facts["preamble"] = pre.preamble + facts.get("preamble", [])
    facts["includes"] = list(pre.includes)
    facts["defines"] = {n: m.to_json() for n, m in pre.defines.items()}
    facts["macro_specifiers"] = macro_specs
    facts["extern_c"] = extern_c_names(ast, facts.pop("extern_c_spans", []))


def extern_c_names(ast: c_ast.FileAST, spans: list[list[int]]) -> list[str]:
    names = []
    for ext in ast.ext:
        decl = ext.decl if isinstance(ext, c_ast.FuncDef) else ext
        coord = getattr(decl, "coord", None)
        if coord is None or not isinstance(decl, c_ast.Decl):
            continue
        here = (coord.line, coord.column or 0)
        if any((a, b) <= here <= (c, d) for a, b, c, d in spans) and decl.name not in names:
            names.append(decl.name)
    return names
