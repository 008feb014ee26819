"""On the 2026-07-28 protocol (mcp 2.x only) the server cannot send requests: the proxy answers a
gated call with ``InputRequiredResult`` and the client sends the call again with the answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import types
from mcp.client import Client

from .conftest import StartProxy, calls
from .processes import is_error, text_of
from .test_approval import ScriptedUser, accept


class Streams:
    """A transport for ``mcp.client.Client`` over streams a test already holds."""

    def __init__(self, read: Any, write: Any) -> None:
        self.streams = (read, write)

    async def __aenter__(self) -> Any:
        return self.streams

    async def __aexit__(self, *exc: object) -> None:
        return None


async def test_on_the_newest_protocol_the_call_is_paused_and_sent_again(
    start_proxy: StartProxy, call_log: Path
) -> None:
    user = ScriptedUser(accept(decision="approve"), types.ElicitResult(action="decline"))
    async with (
        start_proxy("tests.mcp.gates:approval") as proxy,
        Client(Streams(proxy.read, proxy.write), elicitation_callback=user) as client,
    ):
        assert client.protocol_version == "2026-07-28"
        approved = await client.call_tool("delete_file", {"path": "a.txt"})
        declined = await client.call_tool("delete_file", {"path": "b.txt"})
    assert text_of(approved) == "deleted a.txt" and not is_error(approved)
    assert is_error(declined) and "Approval was required" in text_of(declined)
    assert calls(call_log) == ["delete_file"]
    assert len(user.asked) == 2
