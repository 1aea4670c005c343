"""Layers (issue 15, point 4): the ground (``xpiler/ir``: program model, errors, diagnostics)
imports nothing of the project above it; platforms and passes stand on the ground; drivers
(translate, infer, bench, CLI, run, ...) stand on top. Passes reach platform knowledge through
the one interface, ``platforms`` (``profile``, ``intrinsics``, ``api_map``, ``runtime_provided``,
``launch_config``, ``parse``, ``module(p, "frontend"/"backend"/...)``), never an emulator.

Every import counts, function-level ones included (the AST of each module is walked), and so do
``importlib.import_module("...")`` and ``platforms.module(p, "<part>")`` with a literal part."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import platforms

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = ("xpiler.run", "xpiler.translate", "xpiler.infer", "xpiler.bench", "xpiler.cli",
           "xpiler.resources", "xpiler.verify", "xpiler.parse", "xpiler.__main__")


def _modules(package: str) -> list[Path]:
    """The Python modules under a top-level directory (runtime data directories hold none)."""
    return sorted(p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _from_module(node: ast.ImportFrom, package: str) -> str:
    """The absolute module of ``from <module> import ...`` in a module of ``package``."""
    base = node.module or ""
    if node.level:
        up = package.split(".")
        up = up[:len(up) - (node.level - 1)]
        base = ".".join(up + ([base] if base else []))
    return base


def _imports(path: Path) -> list[tuple[int, str, bool]]:
    name = _dotted(path)
    return _imports_in(path.read_text(), name if path.name == "__init__.py" else name.rpartition(".")[0])


def _imports_in(source: str, package: str) -> list[tuple[int, str, bool]]:
    """(line, module, static) for every import in a module of ``package``, function-level ones
    included: ``from a import b`` yields ``a`` and ``a.b`` (``b`` may be a submodule), relative
    imports are resolved; ``importlib.import_module("m")`` yields ``m`` and
    ``platforms.module(p, "part")`` yields ``platforms.<p>.part`` (``<p>`` when ``p`` is not a
    literal platform id), both not static."""
    tree = ast.parse(source)
    out: list[tuple[int, str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name, True) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _from_module(node, package)
            out.append((node.lineno, base, True))
            out += [(node.lineno, f"{base}.{a.name}", True) for a in node.names if a.name != "*"]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            args = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None
                    for a in node.args]
            if node.func.attr == "import_module" and args and args[0]:
                out.append((node.lineno, args[0], False))
            elif (node.func.attr == "module" and isinstance(node.func.value, ast.Name)
                  and node.func.value.id == "platforms" and len(args) == 2 and args[1]):
                plat = args[0] if args[0] in platforms.PLATFORMS else "<p>"
                out.append((node.lineno, f"platforms.{plat}.{args[1]}", False))
    return out


def _within(module: str, prefixes) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _outside_ground(module: str) -> bool:
    """A module of the xpiler package above its ground, ``xpiler.ir``."""
    return _within(module, ("xpiler",)) and module != "xpiler" and not _within(module, ("xpiler.ir",))


def _pass_rule(module: str, static: bool) -> str | None:
    parts = module.split(".")
    if _within(module, DRIVERS) or _outside_ground(module):
        return "a pass imports no driver: of the xpiler package only xpiler.ir"
    if parts[0] == "platforms" and len(parts) > 2 and parts[2] == "emulate":
        return "a pass uses the platform interface (platforms.profile, ...), never an emulator"
    if static and parts[0] == "platforms" and len(parts) > 1 and parts[1] in platforms.PLATFORMS:
        return "a pass reaches a platform's modules through the interface (platforms.module, ...)"
    return None


def _platform_rule(module: str, static: bool) -> str | None:
    if _within(module, DRIVERS) or _outside_ground(module):
        return "a platform imports no driver: of the xpiler package only xpiler.ir"
    if _within(module, ("passes",)):
        return "a platform imports no pass"
    return None


def _ground_rule(module: str, static: bool) -> str | None:
    if _within(module, ("platforms", "passes")):
        return "the ground imports no platform and no pass"
    if _within(module, DRIVERS) or _outside_ground(module):
        return "the ground imports no driver"
    return None


def _violations(directory: str, rule) -> list[str]:
    out = []
    for path in _modules(directory):
        for line, module, static in _imports(path):
            why = rule(module, static)
            if why:
                out.append(f"{path.relative_to(ROOT)}:{line}: {module}: {why}")
    return out


@pytest.mark.parametrize("directory, rule", [("passes", _pass_rule), ("platforms", _platform_rule),
                                             ("xpiler/ir", _ground_rule)])
def test_layers(directory, rule):
    assert _modules(directory)
    assert _violations(directory, rule) == []


def test_the_walk_sees_every_kind_of_import():
    """The checker itself: function-level, relative and dynamic imports are all found and judged."""
    text = ("def f():\n    from platforms.bang.emulate import load_profile\n"
            "def g():\n    import xpiler.run\n"
            "def h(p):\n    import platforms\n    return platforms.module(p, 'emulate')\n"
            "from ..canon import reparse\n"
            "import importlib\nimportlib.import_module('xpiler.resources')\n")
    found = {(m, s) for _, m, s in _imports_in(text, "passes.lift")}
    assert {("platforms.bang.emulate", True), ("xpiler.run", True), ("platforms.<p>.emulate", False),
            ("xpiler.resources", False), ("passes.canon.reparse", True)} <= found
    assert _pass_rule("platforms.bang.emulate", True) and _pass_rule("platforms.<p>.emulate", False)
    assert _pass_rule("xpiler.run", True) and _pass_rule("xpiler.resources", False)
    assert _pass_rule("platforms.bang.intrinsics", True) and _pass_rule("xpiler.parse", True)
    assert not _pass_rule("platforms.bang.kernels", False) and not _pass_rule("platforms.common.generator", True)
    assert not _pass_rule("xpiler.ir.errors", True) and not _pass_rule("platforms.parse", True)
    assert _platform_rule("passes.base", True) and _platform_rule("xpiler.run", True)
    assert not _platform_rule("xpiler.ir.errors", True)
    assert _ground_rule("platforms", True) and _ground_rule("xpiler.translate", True)
    assert not _ground_rule("xpiler.ir.errors", True)


# ------------------------------------------------------------------ module boundaries and cycles
PACKAGES = ("passes", "platforms", "xpiler")


def _project_modules() -> dict[str, Path]:
    return {_dotted(p): p for d in PACKAGES for p in _modules(d)}


def _private_uses(path: Path, known: dict[str, Path]) -> list[str]:
    name = _dotted(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return [f"{path.relative_to(ROOT)}:{v}" for v in _private_uses_in(path.read_text(), package, known)]


def _private_uses_in(source: str, package: str, known) -> list[str]:
    """``from m import _x`` and ``alias._x`` where ``alias`` names a project module: a private
    name used outside the module that defines it ("line: what")."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname and a.name in known:
                    aliases[a.asname] = a.name
        elif isinstance(node, ast.ImportFrom):
            base = _from_module(node, package)
            for a in node.names:
                if f"{base}.{a.name}" in known:
                    aliases[a.asname or a.name] = f"{base}.{a.name}"
                elif a.name.startswith("_") and not a.name.startswith("__") and base in known:
                    out.append(f"{node.lineno}: from {base} import {a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in aliases and node.attr.startswith("_") and \
                not node.attr.startswith("__"):
            out.append(f"{node.lineno}: {aliases[node.value.id]}.{node.attr}")
    return out


def test_no_private_name_crosses_a_module():
    known = _project_modules()
    assert [v for p in known.values() for v in _private_uses(p, known)] == []


def _import_graph(known: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (function-level imports included; ``from pkg
    import sub`` is an edge to the submodule only, as that is all it runs of ``pkg`` once the
    package is initialised)."""
    graph: dict[str, set[str]] = {m: set() for m in known}
    for m, path in known.items():
        package = m if path.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _from_module(node, package)
                subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
                targets = subs + ([base] if len(subs) < len(node.names) else [])
            for t in targets:
                while t and t not in known:
                    t = t.rpartition(".")[0]
                if t and t != m:
                    graph[m].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_cycles():
    assert _cycles(_import_graph(_project_modules())) == []


def test_the_cycle_and_privacy_checks_can_fail():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    known = {"passes.canon": None, "passes.lift": None, "passes.lift.detensorize": None}
    probe = ("import passes.canon as canon\nfrom passes.lift import detensorize as d\n"
             "from .detensorize import _get, used_ids\nx = canon._subst(1) + d._walk + canon.walk\n")
    assert sorted(_private_uses_in(probe, "passes.lift", known)) == [
        "3: from passes.lift.detensorize import _get", "4: passes.canon._subst",
        "4: passes.lift.detensorize._walk"]
