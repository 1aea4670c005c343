"""Reports of a retarget job besides the JSON: the review-ready Markdown summary, and the
diagnostic-code helpers the Markdown and HTML reports share (a code links to its explanation
in ``docs/diagnostics.md``; the explanations come from the diagnostics tables that file is
generated from)."""
from __future__ import annotations

import functools
import os
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "diagnostics.md"
# the sections of docs/diagnostics.md (its headings' anchors) and the tables they list
SECTIONS = (("front-end-xp1nnn", re.compile(r"XP\d{4}$"), ROOT / "xpiler" / "ir" / "diagnostics.toml"),
            ("passes-xp-pass-nnn", re.compile(r"XP-[A-Z0-9-]+-\d{3}$"), ROOT / "passes" / "diagnostics.toml"))
ORDER = ("failed", "unverified", "verified", "copied", "skipped")


@functools.lru_cache(maxsize=None)
def _table(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def explain(code: str) -> dict | None:
    """{"title", "meaning", "hint", "anchor"} of a documented code; None for another (e.g. an
    exception name such as ``TranslationTimeLimit``)."""
    for anchor, pattern, table in SECTIONS:
        if pattern.match(code or ""):
            row = _table(table).get(code)
            if row is not None:
                return {"title": row.get("title", ""), "meaning": row.get("meaning", ""),
                        "hint": row.get("hint", ""), "anchor": anchor}
    return None


def docs_link(code: str, base: Path | None = None) -> str | None:
    """The link to CODE's section of docs/diagnostics.md, relative to directory BASE when the
    file is there to be linked to (else the repository-relative path)."""
    info = explain(code)
    if info is None:
        return None
    where = os.path.relpath(DOCS, base) if base is not None and DOCS.exists() else "docs/diagnostics.md"
    return f"{where}#{info['anchor']}"


def counts_line(counts: dict) -> str:
    return ", ".join(f"{counts.get(s, 0)} {s}" for s in ORDER) + f" (of {counts.get('total', 0)} files)"


def _md_cell(text: str) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def markdown(doc: dict, details: dict, src: Path, out: Path, base: Path | None = None) -> str:
    """A review-ready Markdown summary: counts, then one table row per file (failures first),
    then per translated file its pipeline, diagnostics and resources."""
    from xpiler.resources import one_line

    base = base if base is not None else out
    lines = [f"# xpiler retarget: {doc['source_dir']} -> {doc['target']}", "",
             f"- started {doc['started']}, finished {doc['finished']}",
             f"- {counts_line(doc['counts'])}", "",
             "| file | output | status | seconds | pipeline | first diagnostic |", "|---|---|---|---|---|---|"]
    files = sorted(doc["files"], key=lambda f: (ORDER.index(f["status"]), f["source"]))
    for f in files:
        d = f["diagnostics"][0] if f["diagnostics"] else None
        first = ""
        if d:
            link = docs_link(d["code"], base)
            code = f"[{d['code']}]({link})" if link else (f"`{d['code']}`" if d["code"] else "")
            first = f"{code} {_md_cell(d['message'])[:160]}".strip()
        output = f"`{f['output']}`" if f["output"] else "-"
        lines.append(f"| `{f['source']}` | {output} | **{f['status']}** | "
                     f"{f['seconds']:.1f} | `{_md_cell(f['pipeline']) or '-'}` | {first} |")
    for f in files:
        if f["status"] not in ("failed", "unverified", "verified"):
            continue
        lines += ["", f"## `{f['source']}`: {f['status']}", ""]
        if f["pipeline"]:
            lines.append(f"- pipeline: `{f['pipeline']}`")
        det = details.get(f["source"]) or {}
        if det.get("inputs"):
            lines.append(f"- inputs: {_md_cell(det['inputs'])}")
        for d in f["diagnostics"]:
            link = docs_link(d["code"], base)
            code = f"[{d['code']}]({link})" if link else (f"`{d['code']}`" if d["code"] else "")
            at = f" (line {d['line']})" if d.get("line") else ""
            lines.append(f"- {code}{at}: {_md_cell(d['message'])}".replace("- :", "-"))
        for key in ("source", "output"):
            res = (f.get("resources") or {}).get(key)
            if res and "error" not in res:
                try:
                    lines.append(f"- {key} resources ({res.get('platform', '?')}): {_md_cell(one_line(res))}")
                except Exception:  # informative only
                    pass
    return "\n".join(lines) + "\n"
