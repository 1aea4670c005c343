"""The HTML report of a retarget job: one self-contained page (inline CSS and a few lines of
JS, no external resource) with a status filter, and per file its pass log with the
verification figures, the resources of source and output, a side-by-side diff of source and
output, and its diagnostics; a code links to its explanation in the page's glossary, which
links on to ``docs/diagnostics.md``."""
from __future__ import annotations

import difflib
from html import escape
from pathlib import Path

from .report import ORDER, counts_line, docs_link, explain

MAX_DIFF_LINES = 4000

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
.verified{color:#176f2c}.unverified{color:#9a6700}.failed{color:#b42318}.copied,.skipped{color:#666}
section.file{border-top:2px solid #ddd;margin-top:1.5em}
table.diff{font:12px monospace}.diff_add{background:#e6ffec}.diff_chg{background:#fff5b1}.diff_sub{background:#ffebe9}
td.diff_header{color:#888}pre{white-space:pre-wrap;margin:0}
"""
JS = """
function filt(){var on={};document.querySelectorAll('input.status').forEach(function(c){on[c.value]=c.checked});
document.querySelectorAll('[data-status]').forEach(function(e){e.style.display=on[e.dataset.status]?'':'none'})}
"""


def _anchor(rel: str) -> str:
    import hashlib

    return "file-" + "".join(c if c.isalnum() else "-" for c in rel) + "-" + hashlib.sha1(rel.encode()).hexdigest()[:6]


def _code(code: str) -> str:
    if explain(code) is not None:
        return f'<a href="#code-{escape(code)}"><code>{escape(code)}</code></a>'
    return f"<code>{escape(code)}</code>" if code else ""


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def _resources(res: dict) -> str:
    from xpiler.resources import one_line

    rows = []
    for key in ("source", "output"):
        r = (res or {}).get(key)
        if not r:
            continue
        try:
            text = r["error"] if "error" in r else one_line(r)
        except Exception:  # informative only
            text = "?"
        rows.append(f"<tr><th>{key} ({escape(str(r.get('platform', '')))})</th><td>{escape(text)}</td></tr>")
    return f"<table>{''.join(rows)}</table>" if rows else ""


def _passes(detail: dict) -> str:
    rows = []
    for p in detail.get("passes", []):
        figures = "; ".join(
            f"{o['name']}: max abs {o.get('max_abs_err', 0):.3g}, max rel {o.get('max_rel_err', 0):.3g}, "
            f"{o.get('mismatches', 0)}/{o.get('size', 0)} differ" for o in p.get("outputs", []))
        opts = "".join(f"{k}={v};" for k, v in (p.get("options") or {}).items()).rstrip(";")
        rows.append(f"<tr><td>{escape(p['pass'])}{'{' + escape(opts) + '}' if opts else ''}</td>"
                    f"<td class=\"{escape(p['status'])}\">{escape(p['status'])}</td><td>{p.get('seconds', 0):.2f}</td>"
                    f"<td>{_code(p.get('code', ''))}</td><td>{escape(figures)}</td>"
                    f"<td><pre>{escape(p.get('message', ''))}</pre></td></tr>")
    if not rows:
        return ""
    return ("<details><summary>pass log</summary><table><tr><th>pass</th><th>status</th><th>s</th><th>code</th>"
            "<th>verification</th><th>message</th></tr>" + "".join(rows) + "</table></details>")


def _diff(a: str | None, b: str | None, left: str, right: str) -> str:
    if a is None or b is None:
        return ""
    al, bl = a.splitlines()[:MAX_DIFF_LINES], b.splitlines()[:MAX_DIFF_LINES]
    table = difflib.HtmlDiff(tabsize=4, wrapcolumn=90).make_table(al, bl, escape(left), escape(right))
    # HtmlDiff's navigation links (href="#difflib_chg_...") repeat ids across tables: drop them
    import re

    table = re.sub(r'<a href="#difflib_chg_[^"]*">([^<]*)</a>', r"\1", table)
    table = re.sub(r' id="difflib_chg_[^"]*"', "", table)
    table = re.sub(r'<a name="difflib_chg_[^"]*"></a>', "", table)
    return f"<details><summary>side-by-side diff</summary>{table}</details>"


def page(doc: dict, details: dict, src: Path, out: Path, base: Path | None = None) -> str:
    files = sorted(doc["files"], key=lambda f: (ORDER.index(f["status"]), f["source"]))
    base = base if base is not None else out
    boxes = "".join(f'<label><input type="checkbox" class="status" value="{s}" checked onchange="filt()"> '
                    f'<span class="{s}">{s}</span> ({doc["counts"].get(s, 0)})</label> ' for s in ORDER)
    index = ["<table><tr><th>file</th><th>output</th><th>status</th><th>seconds</th><th>pipeline</th></tr>"]
    sections = []
    codes: set[str] = set()
    for f in files:
        a = _anchor(f["source"])
        st = f["status"]
        index.append(f'<tr data-status="{st}"><td><a href="#{a}">{escape(f["source"])}</a></td>'
                     f'<td>{escape(f["output"] or "-")}</td><td class="{st}">{st}</td><td>{f["seconds"]:.1f}</td>'
                     f'<td><code>{escape(f["pipeline"] or "")}</code></td></tr>')
        diags = []
        for d in f["diagnostics"]:
            codes.add(d["code"])
            at = f" (line {d['line']})" if d.get("line") else ""
            diags.append(f"<li>{_code(d['code'])}{at} <pre>{escape(d['message'] or '')}</pre></li>")
        det = details.get(f["source"]) or {}
        for p in det.get("passes", []):
            codes.add(p.get("code", ""))
        body = [f'<section class="file" id="{a}" data-status="{st}"><h2>{escape(f["source"])} '
                f'<span class="{st}">{st}</span></h2>']
        if f["output"]:
            body.append(f"<p>output: <code>{escape(f['output'])}</code></p>")
        if f["pipeline"]:
            body.append(f"<p>pipeline: <code>{escape(f['pipeline'])}</code></p>")
        if det.get("inputs"):
            body.append(f"<p>inputs: {escape(det['inputs'])}</p>")
        if diags:
            body.append(f"<ul>{''.join(diags)}</ul>")
        body.append(_resources(f.get("resources")))
        body.append(_passes(det))
        if st in ("verified", "unverified") and f["output"]:
            body.append(_diff(_read(src / f["source"]), _read(out / f["output"]), f["source"], f["output"]))
        body.append('<p><a href="#top">back to the index</a></p></section>')
        sections.append("".join(body))
    index.append("</table>")
    glossary = []
    for code in sorted(c for c in codes if c and explain(c) is not None):
        info = explain(code)
        link = docs_link(code, base)
        glossary.append(f'<dt id="code-{escape(code)}"><code>{escape(code)}</code> {escape(info["title"])}</dt>'
                        f'<dd>{escape(info["meaning"])} <i>{escape(info["hint"])}</i> '
                        f'(<a href="{escape(link)}">docs/diagnostics.md</a>)</dd>')
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>xpiler retarget report</title>"
            f"<style>{CSS}</style><script>{JS}</script></head><body>"
            f'<h1 id="top">xpiler retarget: {escape(doc["source_dir"])} &rarr; {escape(doc["target"])}</h1>'
            f"<p>started {escape(doc['started'])}, finished {escape(doc['finished'])}; "
            f"{escape(counts_line(doc['counts']))}</p><p>show: {boxes}</p>"
            + "".join(index) + "".join(sections)
            + (f'<h2 id="codes">diagnostic codes</h2><dl>{"".join(glossary)}</dl>' if glossary else "")
            + "</body></html>\n")
