"""One file of a retarget job as a pure task, and the worker that translates it.

A task is a plain dict (JSON-serialisable, so it travels to a Dask worker without a shared
filesystem): ``{"rel", "text", "headers": {rel: text}, "case": text | None, "target",
"options": {"timeout", "allow_unverified"}}``. ``translate_task(task)`` materialises those
files in a fresh temporary directory with the same relative layout, runs
``xpiler.translate.translate`` there and returns a result dict:
``{"status", "output_text", "seconds", "pipeline", "diagnostics": [{"code", "message", "line"}],
"resources", "report"}``; paths inside the temporary directory are made relative.

``run_task(task)`` is what the executors call (the local thread pool and Dask alike): it runs
``translate_task`` in its own short-lived process (``python -m xpiler.retarget.worker``), killed
with its process group once the task's time limit and a grace period are over, so a file that
hangs or crashes the translator costs its time limit and a failed result, nothing else.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GRACE_S = 5.0             # start-up of the worker process and writing its result
LIVE: set = set()         # worker processes running in this process (killed by kill_workers)
_LOCATION = re.compile(r"^(?:[^:\n]+):(\d+)(?::\d+)?:")


def task_hash(task: dict) -> str:
    """The content hash of a task: source text, included headers, case file, target and
    options (and the xpiler version). Equal hashes: the same translation."""
    from xpiler import __version__

    blob = json.dumps({"version": __version__, **task}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _line_of(message: str):
    m = _LOCATION.match(message or "")
    return int(m.group(1)) if m else None


def _strip(value, prefix: str):
    """Every string in VALUE with the temporary directory PREFIX removed (paths become relative)."""
    if isinstance(value, str):
        return value.replace(prefix, "")
    if isinstance(value, list):
        return [_strip(v, prefix) for v in value]
    if isinstance(value, dict):
        return {k: _strip(v, prefix) for k, v in value.items()}
    return value


def failed_result(message: str, code: str = "", line=None, seconds: float = 0.0) -> dict:
    return {"status": "failed", "output_text": None, "seconds": round(seconds, 3), "pipeline": "",
            "diagnostics": [{"code": code, "message": message, "line": line}], "resources": {}, "report": None}


def _materialise(root: Path, rel: str, text: str) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def translate_task(task: dict) -> dict:
    """Translate one task in-process (see the module docstring)."""
    import platforms
    from xpiler.ir.errors import XpilerError
    from xpiler.translate import translate

    t0 = time.perf_counter()
    opts = task.get("options", {})
    limit = float(opts.get("timeout") or 0) or None
    with tempfile.TemporaryDirectory(prefix="xpiler-retarget-") as tmp:
        root = Path(tmp) / "src"
        for rel, text in task.get("headers", {}).items():
            _materialise(root, rel, text)
        src = _materialise(root, task["rel"], task["text"])
        if task.get("case") is not None:
            src.with_suffix(".json").write_text(task["case"])
        out = src.with_suffix(platforms.FILE_SUFFIX[task["target"]])
        if out.exists():          # same suffix (a .cpp HIP file to vnni): another name in the sandbox
            out = src.with_name(src.stem + ".xpiler-out" + out.suffix)
        prefix = str(root) + os.sep
        try:
            report = translate(str(src), task["target"], str(out), timeout=min(60.0, limit or 60.0),
                               time_limit=limit, infer=True,
                               allow_unverified=bool(opts.get("allow_unverified")))
        except XpilerError as exc:
            diags = [{"code": d.code, "message": d.message, "line": d.coord.line or None}
                     for d in exc.diagnostics] or \
                    [{"code": type(exc).__name__, "message": exc.message, "line": _line_of(exc.message)}]
            return _strip(failed_result("", seconds=time.perf_counter() - t0) | {"diagnostics": diags},
                          prefix)
        text = out.read_text() if report.written and out.is_file() else None
        data = report.to_json()
        data["source"], data["output"] = task["rel"], None
        if report.status == "failed":
            diags = [{"code": c.code, "message": c.message or c.reason, "line": _line_of(c.message)}
                     for c in report.causes] or [{"code": "", "message": report.message, "line": None}]
        elif report.status == "unverified":
            diags = [{"code": "Unverified", "message": report.message, "line": None}]
        else:
            diags = []
        result = {"status": report.status, "output_text": text, "seconds": round(time.perf_counter() - t0, 3),
                  "pipeline": report.pipeline, "diagnostics": diags, "resources": report.resources,
                  "report": data}
        return _strip(result, prefix)


def run_task(task: dict) -> dict:
    """``translate_task`` in its own process, bounded by the task's time limit plus ``GRACE_S``
    (the process group is killed past it); a crash or a kill gives a failed result."""
    t0 = time.perf_counter()
    limit = float(task.get("options", {}).get("timeout") or 0)
    with tempfile.TemporaryDirectory(prefix="xpiler-retarget-task-") as tmp:
        task_file, result_file, err_file = (Path(tmp) / n for n in ("task.json", "result.json", "stderr"))
        task_file.write_text(json.dumps(task))
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        with open(err_file, "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "xpiler.retarget.worker", str(task_file),
                                     str(result_file)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err, start_new_session=True, env=env)
            LIVE.add(proc)
            try:
                proc.wait(timeout=limit + GRACE_S if limit > 0 else None)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                return failed_result(f"the translation ran past --timeout {limit:g} s and was stopped",
                                     code="TranslationTimeLimit", seconds=time.perf_counter() - t0)
            except BaseException:
                _kill_group(proc)
                raise
            finally:
                LIVE.discard(proc)
            _kill_group(proc)             # children a kernel run may have left behind
        try:
            return json.loads(result_file.read_text())
        except (OSError, ValueError):
            tail = err_file.read_text(errors="replace").strip().splitlines()[-3:]
            why = f"exit status {proc.returncode}" if proc.returncode >= 0 else f"signal {-proc.returncode}"
            return failed_result(f"the translator crashed ({why})" + (f": {' | '.join(tail)}" if tail else ""),
                                 code="WorkerCrashed", seconds=time.perf_counter() - t0)


def kill_workers() -> None:
    """Stop every worker process this process started (an interrupted job)."""
    for proc in list(LIVE):
        _kill_group(proc)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
