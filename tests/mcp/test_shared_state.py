"""Two proxy processes sharing one RateLimit bucket through a real redis-server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession

from strands_middleware.mcp._sdk import TIMEOUT_CODE, SdkError, read_timeout

from ..stores.redis_server import RedisServer, start_redis_server
from .conftest import StartProxy, calls
from .processes import text_of


@pytest.fixture
def redis_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    folder = tmp_path / "redis"
    folder.mkdir()
    server: RedisServer = start_redis_server(folder)
    try:
        monkeypatch.setenv("GATEWAY_REDIS_URL", server.url)
        monkeypatch.setenv("GATEWAY_PREFIX", f"test-{uuid.uuid4().hex[:12]}")
        yield server.url
    finally:
        server.stop()


async def test_a_rate_limit_in_redis_holds_across_proxies(
    start_proxy: StartProxy, call_log: Path, redis_url: str
) -> None:
    async with (
        start_proxy("tests.mcp.gates:shared_rate") as first,
        start_proxy("tests.mcp.gates:shared_rate") as second,
        ClientSession(first.read, first.write) as one,
        ClientSession(second.read, second.write) as other,
    ):
        await one.initialize()
        await other.initialize()
        allowed = await one.call_tool("echo", {"text": "first"})
        assert text_of(allowed) == "first"
        # The bucket held one call and refills in a minute: the other proxy's call waits.
        with pytest.raises(SdkError) as waited:
            await other.call_tool("echo", {"text": "second"}, read_timeout_seconds=read_timeout(3))
        assert waited.value.error.code == TIMEOUT_CODE
    assert calls(call_log) == ["echo"]
