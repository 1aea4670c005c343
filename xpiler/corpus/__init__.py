"""The kernel corpus: ``xpiler/corpus/<platform>/<name>.<ext>`` + ``<name>.json``.

See ``xpiler/corpus/README.md``. API::

    platforms() -> list[str]                          # platform folders present
    entries(platform=None, op=None) -> list[Entry]    # every kernel with a case file
    get(platform, name) -> Entry
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

CORPUS_DIR = Path(__file__).resolve().parent

# source extensions per platform, in order of preference
EXTENSIONS = {"cuda": (".cu",), "hip": (".hip", ".cpp"), "bang": (".mlu",),
              "vnni": (".cpp", ".cc", ".c")}


@dataclass(frozen=True)
class Entry:
    platform: str
    name: str
    source: Path
    case_path: Path

    @cached_property
    def case(self) -> dict:
        from xpiler.ops import load_case

        return load_case(self.case_path)

    @property
    def op(self) -> str:
        return self.case["op"]


def platforms() -> list[str]:
    return sorted(p.name for p in CORPUS_DIR.iterdir()
                  if p.is_dir() and not p.name.startswith(("_", ".")))


def _source_for(case_path: Path, platform: str) -> Path | None:
    for ext in EXTENSIONS.get(platform, ()):
        cand = case_path.with_suffix(ext)
        if cand.exists():
            return cand
    for cand in sorted(case_path.parent.glob(case_path.stem + ".*")):
        if cand.suffix != ".json":
            return cand
    return None


def entries(platform: str | None = None, op: str | None = None) -> list[Entry]:
    """Corpus kernels that have both a source and a case file, sorted by name."""
    out: list[Entry] = []
    for plat in ([platform] if platform else platforms()):
        d = CORPUS_DIR / plat
        if not d.is_dir():
            continue
        for cp in sorted(d.glob("*.json")):
            src = _source_for(cp, plat)
            if src is None:
                continue
            if op is not None:
                with open(cp) as fh:
                    if json.load(fh).get("op") != op:
                        continue
            out.append(Entry(plat, cp.stem, src, cp))
    return out


def get(platform: str, name: str) -> Entry:
    cp = CORPUS_DIR / platform / f"{name}.json"
    src = _source_for(cp, platform) if cp.exists() else None
    if src is None:
        raise FileNotFoundError(f"no corpus kernel {platform}/{name}")
    return Entry(platform, name, src, cp)
