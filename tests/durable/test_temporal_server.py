"""The dev-server fixture: a real server on a free port, answering, stopped by its PID."""

from __future__ import annotations

import sys
from pathlib import Path

from temporalio.client import Client

from .temporal_server import TemporalServer, start_temporal_server, temporal_executable


def test_the_cli_comes_from_the_virtual_environment() -> None:
    assert Path(temporal_executable()) == Path(sys.executable).parent / "temporal"


async def test_the_session_server_answers(temporal_server: TemporalServer) -> None:
    client = await Client.connect(temporal_server.address)
    assert await client.service_client.check_health()


def test_a_server_stops_by_its_pid(tmp_path: Path) -> None:
    server = start_temporal_server(tmp_path)
    assert server.process.poll() is None
    server.stop()
    assert server.process.returncode is not None
