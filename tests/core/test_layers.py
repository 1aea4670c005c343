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
            base = node.module or ""
            if node.level:
                up = package.split(".")
                up = up[:len(up) - (node.level - 1)]
                base = ".".join(up + ([base] if base else []))
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
