"""Shared pytest set-up.

Builds of the virtual device are content-addressed (unit text, flags, runtime headers), so one
cache can be shared by every test run and every xdist worker: it lives in the repository
(``.xpiler-test-cache/``, git-ignored) unless ``XPILER_CACHE_DIR`` is set; tests never write to
the user's ~/.cache.
"""
import os
from pathlib import Path

_CACHE = Path(__file__).resolve().parents[1] / ".xpiler-test-cache"
os.environ.setdefault("XPILER_CACHE_DIR", str(_CACHE))
