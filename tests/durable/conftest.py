"""Fixtures for the durable-run tests: one real Temporal dev server for the whole session."""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Iterator

import pytest
from temporalio.client import Client

from .temporal_server import TemporalServer, start_temporal_server

# pydantic-ai supports Python 3.11 and newer: without it, its module is not collected.
collect_ignore = (
    []
    if importlib.util.find_spec("pydantic_ai") is not None
    else ["test_pydantic_ai_durability.py", "pydantic_ai_agent.py", "pydantic_ai_workflow.py"]
)
if importlib.util.find_spec("temporalio.strands_agents") is None:
    collect_ignore += [
        "test_strands_temporal_agent.py",
        "strands_temporal_agent.py",
        "strands_temporal_workflow.py",
    ]

CRASH_COUNTS: list[str] = []
"""One line per crash scenario, printed in the terminal summary (tests/durable/test_crashes.py)."""


@pytest.fixture(scope="session")
def temporal_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TemporalServer]:
    server = start_temporal_server(tmp_path_factory.mktemp("temporal"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def client(temporal_server: TemporalServer) -> AsyncIterator[Client]:
    yield await Client.connect(temporal_server.address)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if CRASH_COUNTS:
        terminalreporter.section("durable crash counts (tests/durable)")
        for line in CRASH_COUNTS:
            terminalreporter.write_line(line)
