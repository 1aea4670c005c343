"""What a retarget job does with each file under SRC_DIR (issue 18): translate it, copy it, or
skip it; where its output goes; which local headers and case file travel with it.

Plain functions over the file tree; nothing here writes anything. Symbolic links are never
followed out of SRC_DIR: a link whose target lies outside is an item with status ``skipped``.
"""
from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from collections import Counter
from pathlib import Path

import platforms
from platforms.common.emulate_util import INCLUDE

# suffixes whose files may hold a kernel (platforms.EXTENSIONS) plus C/C++ headers
CANDIDATE_SUFFIXES = frozenset(platforms.EXTENSIONS) | {".h", ".hpp", ".hh", ".cuh"}
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# a device kernel, a BANG entry, or an extern "C" function definition (an entry)
_KERNEL = re.compile(r'__global__|__mlu_global__|__mlu_entry__|extern\s+"C"\s+[^;{}"]*\)\s*\{')
MAX_INCLUDE_DEPTH = 16


def has_kernel(text: str) -> bool:
    """True when the code (comments ignored) defines a kernel or an entry."""
    return _KERNEL.search(_COMMENTS.sub(" ", text)) is not None


def output_name(rel: str, target: str) -> str:
    """``nn/pool/maxpool_a.cu`` -> ``nn/pool/maxpool_a.mlu`` (the target's suffix,
    ``platforms.FILE_SUFFIX``)."""
    stem, _ = posixpath.splitext(rel)
    return stem + platforms.FILE_SUFFIX[target]


def selected(rel: str, include: tuple | list, exclude: tuple | list) -> bool:
    """--include/--exclude globs, matched against the relative path and against the file name."""
    name = posixpath.basename(rel)

    def hit(globs):
        return any(fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(name, g) for g in globs)

    return (not include or hit(include)) and not hit(exclude)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def read_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def walk(src_dir: Path, include=(), exclude=()) -> list[dict]:
    """Every file under SRC_DIR (sorted relative paths), as ``{"rel", "path", "link"}`` where
    ``link`` is why a symbolic link is not followed (None for a regular file or a link whose
    target is a file inside SRC_DIR). Directory links are never descended into."""
    root = src_dir.resolve()
    out = []
    for here, dirs, files in os.walk(root, followlinks=False):
        here_p = Path(here)
        names = list(files)
        for d in list(dirs):
            if (here_p / d).is_symlink():
                dirs.remove(d)
                names.append(d)
        dirs.sort()
        for name in sorted(names):
            p = here_p / name
            rel = p.relative_to(root).as_posix()
            if not selected(rel, include, exclude):
                continue
            link = None
            if p.is_symlink():
                try:
                    target = p.resolve(strict=True)
                except (OSError, RuntimeError):
                    target = None
                if target is None:
                    link = f"dangling symbolic link (to {os.readlink(p)}): not followed"
                elif not _inside(target, root):
                    link = f"symbolic link to {os.readlink(p)}, outside the source directory: not followed"
                elif target.is_dir():
                    link = f"symbolic link to a directory ({os.readlink(p)}): not followed"
            elif not p.is_file():
                link = "not a regular file"
            out.append({"rel": rel, "path": p, "link": link})
    return out


def local_headers(root: Path, rel: str, text: str) -> dict[str, str]:
    """The local headers ``#include "..."`` reaches from REL, followed transitively: resolved
    relative to the including file, then to SRC_DIR; only files inside SRC_DIR (links resolved)
    count. {relative path: text}."""
    root = root.resolve()
    found: dict[str, str] = {}
    todo = [(rel, text, 0)]
    while todo:
        at, body, depth = todo.pop()
        if depth > MAX_INCLUDE_DEPTH:
            continue
        for m in INCLUDE.finditer(body):
            name = m.group(1)
            for cand in (posixpath.join(posixpath.dirname(at), name), name):
                cand = posixpath.normpath(cand)
                if cand.startswith("../") or cand == ".." or posixpath.isabs(cand):
                    continue
                p = root / cand
                try:
                    real = p.resolve(strict=True)
                except (OSError, RuntimeError):
                    continue
                if not _inside(real, root) or not real.is_file():
                    continue
                if cand not in found and cand != rel:
                    t = read_text(p)
                    if t is None:
                        break
                    found[cand] = t
                    todo.append((cand, t, depth + 1))
                break
    return dict(sorted(found.items()))


def case_text(root: Path, rel: str) -> str | None:
    """The case file beside a kernel (``<stem>.json``), if it is a file inside SRC_DIR."""
    stem, _ = posixpath.splitext(rel)
    p = root / (stem + ".json")
    try:
        if not _inside(p.resolve(strict=True), root.resolve()) or not p.is_file():
            return None
    except (OSError, RuntimeError):
        return None
    return read_text(p)


def plan(src_dir: Path, target: str, include=(), exclude=(), copy: bool = True) -> tuple[list[dict], str | None]:
    """The job: one item per selected file, ``{"rel", "action": translate|copy|skip, "output"
    (relative, None for skip), "platform", "note"}``, and the source platform (the most common
    platform of the kernel files other than the target; None when there is none). Only kernel
    files of that platform are translated; a kernel file of the target or of another platform
    is copied, and the note says so."""
    root = src_dir.resolve()
    items = []
    for f in walk(root, include, exclude):
        rel = f["rel"]
        item = {"rel": rel, "action": "copy", "output": rel, "platform": None, "note": ""}
        if f["link"]:
            item.update(action="skip", output=None, note=f["link"])
        else:
            suffix = posixpath.splitext(rel)[1].lower()
            text = read_text(f["path"]) if suffix in CANDIDATE_SUFFIXES else None
            if text is not None and has_kernel(text):
                item["platform"] = platforms.detect(rel, text)
                item["action"] = "translate"
        items.append(item)
    kinds = Counter(i["platform"] for i in items if i["action"] == "translate" and i["platform"] != target)
    order = {p: k for k, p in enumerate(platforms.PLATFORMS)}
    source = min(kinds, key=lambda p: (-kinds[p], order.get(p, 99))) if kinds else None
    for i in items:
        if i["action"] != "translate":
            continue
        if i["platform"] == target:
            i.update(action="copy", note=f"a {target} kernel file (already the target platform): copied unchanged")
        elif i["platform"] != source:
            i.update(action="copy", note=f"a {i['platform']} kernel file (this job translates {source} files): "
                                         "copied unchanged")
        else:
            i["output"] = output_name(i["rel"], target)
    for i in items:
        if i["action"] == "copy" and not copy:
            i.update(action="skip", output=None, note=(i["note"] + "; " if i["note"] else "") + "not copied (--no-copy)")
        elif i["action"] == "copy" and not i["note"]:
            i["note"] = "not a kernel file: copied unchanged"
    # two files may not share an output (a.cu -> a.hip next to an a.hip copied)
    owner: dict[str, str] = {}
    for i in sorted(items, key=lambda i: (i["action"] != "translate", i["rel"])):
        out = i["output"]
        if out is None:
            continue
        if out in owner:
            i.update(action="skip", output=None, note=f"its output {out} is also the output of {owner[out]}")
        else:
            owner[out] = i["rel"]
    return items, source


def rewrite_includes(text: str, rel: str, renames: dict[str, str]) -> str:
    """In the output of REL, ``#include "x.cuh"`` of a header that the job translates (and so
    renames: ``renames`` {source rel: output rel}) names the new file."""
    def repl(m: re.Match) -> str:
        name = m.group(1)
        for cand in (posixpath.normpath(posixpath.join(posixpath.dirname(rel), name)), posixpath.normpath(name)):
            if cand in renames:
                new = renames[cand]
                if new == cand:
                    return m.group(0)
                new_name = posixpath.splitext(name)[0] + posixpath.splitext(new)[1]
                return m.group(0).replace(f'"{name}"', f'"{new_name}"', 1)
        return m.group(0)

    return INCLUDE.sub(repl, text)
