"""Fixtures for the store tests: stores on a real redis-server, and the figures tests measure.

One server serves the whole session (`redis_server`, in ``tests/conftest.py``); each test gets a
store with a prefix of its own, so tests never see each other's keys. Tests that stop or freeze
a server use `private_redis`, a server of their own.

Figures a test measures (a rate held, the most holders seen, ...) are passed to `figures` and
printed in the terminal summary under "measured figures", so every run shows them.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from strands_middleware.stores.redis import RedisStore

from .redis_server import RedisServer, start_redis_server

_FIGURES: list[str] = []


@pytest.fixture
def private_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = start_redis_server(tmp_path_factory.mktemp("redis-private"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def prefix() -> str:
    """A key prefix no other test uses."""
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def redis_store(redis_server: RedisServer, prefix: str) -> AsyncIterator[RedisStore]:
    store = RedisStore.from_url(redis_server.url, prefix=prefix, timeout=2.0)
    yield store
    await store.aclose()


@pytest.fixture
def figures() -> list[str]:
    """Append a line to report a measured figure in the terminal summary."""
    return _FIGURES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _FIGURES:
        terminalreporter.section("measured figures (tests/stores)")
        for line in _FIGURES:
            terminalreporter.write_line(line)
