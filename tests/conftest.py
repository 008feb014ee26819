"""What the whole suite collects, by what this interpreter has installed.

The documentation site is built on Python 3.11 and newer (MkDocs Material needs it, so the dev
extra installs the docs tools there only): on 3.10 the tests of its build hook are not collected.
Every other test runs on every supported Python.

It also holds the fixture every test that needs a real Redis shares: `redis_server`, one
``redis-server`` for the session, started on first use and stopped by its PID at the end (tests
that stop or freeze a server start one of their own, see ``tests/stores/conftest.py``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .stores.redis_server import RedisServer

collect_ignore = [] if importlib.util.find_spec("mkdocs") is not None else ["test_docs_site.py"]


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One real ``redis-server`` for the whole session; each test keeps to a key prefix."""
    from .stores.redis_server import start_redis_server

    server = start_redis_server(tmp_path_factory.mktemp("redis"))
    try:
        yield server
    finally:
        server.stop()
