"""Shared helpers for the front-end / back-end tests: the sample corpus and AST comparison."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:      # tests/platforms must not shadow the real ``platforms``
    sys.path.insert(0, str(ROOT))

from pycparser import c_ast  # noqa: E402

from xpiler.parse import parse_file  # noqa: E402

SAMPLES = ROOT / "tests" / "samples"
# samples with several entry candidates: the entry the tests pick
ENTRY = {"two_kernels.cu": "copy_kernel", "quant_pair.cpp": "quantize_u8"}


def sample_paths() -> list[Path]:
    return sorted(p for p in SAMPLES.glob("*/*") if p.is_file())


def sample_ids() -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in sample_paths()]


def parse_sample(rel: str):
    path = SAMPLES / rel
    return parse_file(path, entry=ENTRY.get(path.name))


def structure(node):
    """Nested tuples of node kinds, attributes and children; coordinates left out."""
    if isinstance(node, list):
        return [structure(x) for x in node]
    if not isinstance(node, c_ast.Node):
        return node
    attrs = tuple((name, structure(getattr(node, name))) for name in node.attr_names)
    return type(node).__name__, attrs, tuple(structure(c) for _, c in node.children())
