"""``xpiler retarget``: translate a whole directory of kernels (issue 18).

- ``discover``: which files are translated, copied or skipped, their outputs, headers, case files;
- ``task``: one file as a pure task, the worker that translates it (in its own process);
- ``job``: the client: executors (local pool, Dask), OUT_DIR, the journal, resume, the report;
- ``report`` / ``html``: the Markdown and HTML reports.

``retarget(src_dir, to, out_dir, ...) -> report dict`` and ``exit_status(report)`` are the API.
"""
from __future__ import annotations

from .job import exit_status, retarget

__all__ = ["retarget", "exit_status"]
