#!/usr/bin/env python3
"""Translation benchmark: the corpus through all 12 directions, one table.

A thin wrapper over ``xpiler.bench`` (the same code as ``xpiler bench``). Usage:
python tools/bench_translate.py [--only cuda:hip,hip:cuda] [--limit N] [--jobs N] [--compile-check]
                                [--json F] [--jsonl F [--resume]] [--timeout S]
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from xpiler.bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
