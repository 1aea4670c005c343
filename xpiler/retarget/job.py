"""The client of a retarget job: plan the files, run the tasks on an executor (a local pool or
Dask), write OUT_DIR and the journal, build the report. Only this process writes OUT_DIR.

Journal: ``OUT_DIR/.xpiler-retarget.jsonl``, one JSON record per finished file, appended and
flushed to disk after each file (a line torn by a kill is ignored when read back; the journal is
rewritten atomically, compacted, when a job starts). A record holds the task's content hash
(source, included headers, case file, target, options), the hash of the output it wrote and
the report entry. ``--resume`` keeps a record whose hash matches and whose output is intact.
"""
from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import datetime, timezone
from pathlib import Path

import platforms
from xpiler.ir.errors import UsageError
from xpiler.translate import check_output_path, is_generated, write_atomically

from . import discover
from .task import failed_result, kill_workers, run_task, task_hash, text_hash

JOURNAL = ".xpiler-retarget.jsonl"
REPORT = "xpiler-report"
STATUSES = ("verified", "unverified", "failed", "copied", "skipped")
FORMATS = {"json": ".json", "md": ".md", "html": ".html"}
DETAIL_MESSAGE_CHARS = 4000


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _inside(a: Path, b: Path) -> bool:
    try:
        a.relative_to(b)
        return True
    except ValueError:
        return False


def check_dirs(src_dir: str | os.PathLike, out_dir: str | os.PathLike) -> tuple[Path, Path]:
    """SRC_DIR must be a directory; OUT_DIR must be neither inside SRC_DIR nor contain it."""
    src = Path(src_dir)
    if not src.is_dir():
        raise UsageError(f"{src_dir}: not a directory")
    src_r, out_r = src.resolve(), Path(out_dir).resolve()
    if _inside(out_r, src_r):
        raise UsageError(f"refusing OUT_DIR {out_dir}: it is inside SRC_DIR {src_dir} (nothing is ever written there)")
    if _inside(src_r, out_r):
        raise UsageError(f"refusing OUT_DIR {out_dir}: SRC_DIR {src_dir} is inside it")
    if out_r.exists() and not out_r.is_dir():
        raise UsageError(f"cannot write OUT_DIR {out_dir}: it exists and is not a directory")
    check_output_path(out_r / JOURNAL, "OUT_DIR")
    return src_r, out_r


# ---------------------------------------------------------------------------------- journal
def read_journal(path: Path) -> dict[str, dict]:
    """{source: last record}; torn or foreign lines are ignored."""
    records: dict[str, dict] = {}
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return records
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("source"), str) and "entry" in rec:
            records[rec["source"]] = rec
    return records


def _append(path: Path, record: dict) -> None:
    with open(path, "a") as fh:
        fh.write(json.dumps(record) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _file_hash(path: Path) -> str | None:
    try:
        return text_hash(path.read_bytes().decode("utf-8", errors="surrogateescape"))
    except OSError:
        return None


def _ours(path: Path, journal: dict[str, dict]) -> bool:
    """May PATH be replaced? It does not exist, or xpiler wrote it: the translate banner, or the
    journal records it as an output with the content it has now."""
    if not os.path.lexists(path):
        return True
    if path.is_symlink() or not path.is_file():
        return False
    if is_generated(path):
        return True
    have = _file_hash(path)
    return any(r.get("output_path") == str(path) and r.get("output_hash") == have for r in journal.values())


def _copy_atomically(src: Path, dst: Path) -> None:
    """Copy bytes unchanged through a temporary file in DST's directory and a rename."""
    try:
        data = src.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {src}: {exc.strerror or exc}") from None
    write_atomically(dst, data)


def clean_temporaries(out_dir: Path, names: list[str]) -> int:
    """Remove the temporary files an interrupted atomic write left (``.<name>.XXXXXXXX`` beside
    a file this job writes). Returns how many."""
    by_dir: dict[Path, set[str]] = {}
    for rel in names:
        p = out_dir / rel
        by_dir.setdefault(p.parent, set()).add(p.name[:48])
    gone = 0
    for d, stems in by_dir.items():
        if not d.is_dir():
            continue
        for f in d.iterdir():
            m = re.fullmatch(r"\.(.+)\.[A-Za-z0-9_]{8}", f.name)
            if m and m.group(1) in stems and f.is_file() and not f.is_symlink():
                f.unlink()
                gone += 1
    return gone


# ---------------------------------------------------------------------------------- the job
def _detail(result: dict) -> dict:
    """What the HTML report shows of a translation: inputs, message, the pass log with each
    step's verification figures."""
    rep = result.get("report") or {}
    passes = [{**p, "message": (p.get("message") or "")[:DETAIL_MESSAGE_CHARS]} for p in rep.get("passes", [])]
    return {"inputs": rep.get("inputs", ""), "message": (rep.get("message") or "")[:DETAIL_MESSAGE_CHARS],
            "applied": rep.get("applied", ""), "passes": passes}


def _entry(source: str, output: str | None, status: str, seconds: float = 0.0, pipeline: str = "",
           diagnostics=(), resources=None) -> dict:
    return {"source": source, "output": output, "status": status, "seconds": round(seconds, 3),
            "pipeline": pipeline, "diagnostics": list(diagnostics), "resources": resources or {}}


def _note(message: str) -> list[dict]:
    return [{"code": "", "message": message, "line": None}] if message else []


def make_executor(kind: str, jobs: int, scheduler: str | None, dask_processes: bool = True):
    """(submit(task) -> future, as_completed(futures), close()) for ``local`` or ``dask``."""
    if kind == "local":
        pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="xpiler-retarget")

        def close(interrupted=False):
            if interrupted:
                pool.shutdown(wait=False, cancel_futures=True)
                kill_workers()
            pool.shutdown(wait=True)

        return (lambda task: pool.submit(run_task, task)), as_completed, close
    if kind != "dask":
        raise UsageError(f"--executor {kind}: expected local or dask")
    try:
        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError:
        raise UsageError("--executor dask needs dask.distributed: pip install 'xpiler[dask]'") from None
    cluster = None
    try:
        if scheduler:
            client = Client(scheduler, timeout=30)
        else:
            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, host="127.0.0.1", protocol="tcp://",
                                   dashboard_address=None, processes=dask_processes)
            client = Client(cluster)
    except (OSError, TimeoutError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        raise UsageError(f"cannot reach the Dask scheduler {scheduler or '(local cluster)'}: {exc}") from None

    def close(interrupted=False):
        client.close()
        if cluster is not None:
            cluster.close()

    return (lambda task: client.submit(run_task, task, pure=False)), dask_completed, close


def retarget(src_dir, to: str, out_dir, *, jobs: int | None = None, include=(), exclude=(),
             resume: bool = False, force: bool = False, report: str | None = None, fmt: str = "json",
             executor: str = "local", scheduler: str | None = None, allow_unverified: bool = False,
             timeout: float = 300, copy: bool = True, progress=None, dask_processes: bool = True) -> dict:
    """Run a retarget job (``xpiler retarget``; README). Returns the report dict (also written).
    ``progress(event, data)`` is called with ``("start", {"total", "reused"})`` and
    ``("file", entry)`` for each file as it finishes."""
    target = platforms.canonical(to)
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt}: expected one of {', '.join(FORMATS)}")
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    if jobs < 1:
        raise UsageError(f"--jobs {jobs}: expected at least 1")
    if not timeout > 0:
        raise UsageError(f"--timeout {timeout:g}: expected seconds > 0")
    if resume and force:
        raise UsageError("--resume and --force exclude each other")
    src, out = check_dirs(src_dir, out_dir)
    json_path = out / f"{REPORT}.json" if fmt != "json" or report is None else Path(report).resolve()
    page_path = None if fmt == "json" else (Path(report).resolve() if report else out / f"{REPORT}{FORMATS[fmt]}")
    for p in (json_path, page_path):
        if p is not None and (_inside(p, src)):
            raise UsageError(f"refusing to write the report {p} inside SRC_DIR {src_dir}")
        if p is not None:
            check_output_path(p, "--report")
    started = _now()
    items, source_platform = discover.plan(src, target, include, exclude, copy)
    journal_path = out / JOURNAL
    journal = read_journal(journal_path)
    if not (resume or force):
        taken = [i["output"] for i in items if i["output"] and os.path.lexists(out / i["output"])]
        if journal_path.exists() or taken:
            raise UsageError(f"OUT_DIR {out_dir} holds the output of another run ("
                             f"{'its journal ' + JOURNAL if journal_path.exists() else ', '.join(taken[:3])}"
                             f"{' ...' if len(taken) > 3 else ''}): use --resume to finish it or --force to redo it")
    out.mkdir(parents=True, exist_ok=True)
    clean_temporaries(out, [i["output"] for i in items if i["output"]] + [JOURNAL])
    # compact the journal (one record per file still in the job), atomically
    keep = {i["rel"] for i in items}
    journal = {k: v for k, v in journal.items() if k in keep}
    write_atomically(journal_path, "".join(json.dumps(r) + "\n" for r in journal.values()))
    renames = {i["rel"]: i["output"] for i in items if i["action"] == "translate"}
    task_options = {"timeout": timeout, "allow_unverified": allow_unverified}
    entries: dict[str, dict] = {}
    details: dict[str, dict] = {}

    def record(rel: str, entry: dict, h: str | None, output_text_hash: str | None, detail=None) -> None:
        entries[rel] = entry
        if detail:
            details[rel] = detail
        rec = {"source": rel, "hash": h, "entry": entry, "detail": detail,
               "output_path": str(out / entry["output"]) if entry["output"] else None,
               "output_hash": output_text_hash}
        journal[rel] = rec
        _append(journal_path, rec)
        if progress:
            progress("file", entry)

    pending = []
    for item in items:
        rel = item["rel"]
        dest = out / item["output"] if item["output"] else None
        if item["action"] == "skip":
            entries[rel] = _entry(rel, None, "skipped", diagnostics=_note(item["note"]))
            continue
        if dest is not None and not _ours(dest, journal):
            entries[rel] = _entry(rel, None, "skipped", diagnostics=_note(
                f"{item['output']} exists in OUT_DIR and was not written by xpiler: not overwritten"))
            continue
        if item["action"] == "copy":
            path = src / rel
            if _file_hash(dest) != _file_hash(path):
                _copy_atomically(path, dest)
            entries[rel] = _entry(rel, item["output"], "copied", diagnostics=_note(item["note"]))
            journal[rel] = {"source": rel, "hash": None, "entry": entries[rel], "detail": None,
                            "output_path": str(dest), "output_hash": _file_hash(dest)}
            _append(journal_path, journal[rel])
            continue
        text = discover.read_text(src / rel) or ""
        task = {"rel": rel, "text": text, "headers": discover.local_headers(src, rel, text),
                "case": discover.case_text(src, rel), "target": target, "options": task_options}
        h = task_hash(task)
        old = journal.get(rel)
        if resume and old and old.get("hash") == h and old.get("entry"):
            e = old["entry"]
            if e.get("output") is None or _file_hash(out / e["output"]) == old.get("output_hash"):
                entries[rel] = e
                if old.get("detail"):
                    details[rel] = old["detail"]
                continue
        pending.append((item, task, h))

    if progress:
        progress("start", {"total": len(items), "pending": len(pending), "done": len(entries),
                           "entries": list(entries.values())})

    def finish(item: dict, h: str, result: dict) -> None:
        rel, dest = item["rel"], out / item["output"]
        text = result.get("output_text")
        output, out_hash = None, None
        if text is not None:
            text = discover.rewrite_includes(text, rel, renames)
            write_atomically(dest, text)
            output, out_hash = item["output"], _file_hash(dest)
        elif dest.is_file() and _ours(dest, journal):   # no stale output of an earlier run
            dest.unlink()
        entry = _entry(rel, output, result["status"], result.get("seconds", 0.0), result.get("pipeline", ""),
                       result.get("diagnostics", []), result.get("resources", {}))
        record(rel, entry, h, out_hash, _detail(result))

    if pending:
        submit, completed, close = make_executor(executor, jobs, scheduler, dask_processes)
        interrupted = True
        try:
            futures = {}
            for item, task, h in pending:
                futures[submit(task)] = (item, h)
            for fut in completed(list(futures)):
                item, h = futures[fut]
                try:
                    result = fut.result()
                except Exception as exc:  # a lost worker, a serialisation error: this file failed
                    result = failed_result(f"the executor lost the task: {type(exc).__name__}: {exc}",
                                           code="WorkerCrashed")
                finish(item, h, result)
            interrupted = False
        finally:
            close(interrupted)

    files = [entries[i["rel"]] for i in items]
    counts = {s: sum(1 for f in files if f["status"] == s) for s in STATUSES}
    counts["total"] = len(files)
    doc = {"source_dir": str(src), "target": target, "options": {
        "source_platform": source_platform, "jobs": jobs, "include": list(include), "exclude": list(exclude),
        "copy": copy, "resume": resume, "force": force, "executor": executor, "scheduler": scheduler,
        "allow_unverified": allow_unverified, "timeout": timeout, "format": fmt},
        "started": started, "finished": _now(), "counts": counts, "files": files}
    from .report import markdown
    from .html import page

    write_atomically(json_path, json.dumps(doc, indent=2))
    if page_path is not None:
        render = markdown if fmt == "md" else page
        write_atomically(page_path, render(doc, details, src, out))
    doc["report_paths"] = [str(p) for p in (json_path, page_path) if p is not None]
    return doc


def exit_status(doc: dict) -> int:
    """0 every kernel verified (or none to translate); 1 some failed; 3 some unverified, none failed."""
    c = doc["counts"]
    return 1 if c["failed"] else 3 if c["unverified"] else 0
