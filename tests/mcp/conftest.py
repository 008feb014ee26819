"""Fixtures for the MCP gateway tests: real processes, each stopped by its PID at teardown."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from .processes import McpProcess, children, environment, mcp_process, proxy_command, stop_pid

StartProxy = Callable[..., AbstractAsyncContextManager[McpProcess]]


@pytest.fixture
def call_log(tmp_path: Path) -> Path:
    """The file the upstream appends a line to for every tool it runs."""
    return tmp_path / "calls.log"


@pytest.fixture
def started_pids() -> Iterator[list[int]]:
    """Every PID a test started; each still running at teardown is stopped by its PID."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        stop_pid(pid)


@pytest.fixture
def start_proxy(tmp_path: Path, call_log: Path, started_pids: list[int]) -> StartProxy:
    """Start the proxy's command line as a subprocess: ``start_proxy("module:attr", ...)``."""
    count = 0

    @asynccontextmanager
    async def start(
        *middleware: str,
        extra: list[str] | None = None,
        upstream: list[str] | None = None,
        argv: list[str] | None = None,
    ) -> AsyncIterator[McpProcess]:
        nonlocal count
        count += 1
        if argv is None:
            argv = proxy_command(*middleware, upstream=upstream)
            if extra:
                argv[4:4] = extra  # options go before the "--"
        env = environment(UPSTREAM_CALL_LOG=str(call_log))
        async with mcp_process(argv, tmp_path / f"proxy-{count}.stderr", env) as process:
            started_pids.append(process.pid)
            try:
                yield process
            finally:
                started_pids.extend(children(process.pid))  # its upstream, stopped by PID too

    return start


def calls(call_log: Path) -> list[str]:
    """The tools the upstream ran, in order."""
    if not call_log.exists():
        return []
    return [line.split()[1] for line in call_log.read_text(encoding="utf-8").splitlines()]
