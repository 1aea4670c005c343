"""Shared pytest set-up: an isolated build cache per session, so tests never reuse stale builds
from a developer's ~/.cache and never write outside tmp."""
import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    if "XPILER_CACHE_DIR" not in os.environ or os.environ.get("XPILER_TEST_FRESH_CACHE"):
        os.environ["XPILER_CACHE_DIR"] = str(tmp_path_factory.mktemp("xpiler-cache"))
    yield
