"""`ToolGate.install` on a server run in the test's own process, on whichever SDK line is
installed: a 2.x ``MCPServer`` or a 1.x ``FastMCP`` (1.x servers have no middleware, so the
gate wraps their ``tools/call`` handler)."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from strands_middleware.catalog import ToolApproval, ToolMock
from strands_middleware.mcp import ToolGate
from strands_middleware.mcp._sdk import ONE_X

from .processes import is_error, text_of
from .test_approval import ScriptedUser, accept


def _server(ran: list[str]) -> Any:
    if ONE_X:
        from mcp.server.fastmcp import FastMCP as Server  # type: ignore[import-not-found]
    else:
        from mcp.server.mcpserver import MCPServer as Server
    with warnings.catch_warnings():
        # FastMCP 1.23's settings warn about their own forward reference (fixed later in 1.x).
        warnings.simplefilter("ignore")
        server = Server("in-process")

    @server.tool()
    def delete_file(path: str) -> str:
        """Pretend to delete a file."""
        ran.append(path)
        return f"deleted {path}"

    @server.tool()
    def weather(city: str) -> str:
        """The weather."""
        ran.append(city)
        return f"sunny in {city}"

    return server


@asynccontextmanager
async def _client(server: Any, user: ScriptedUser) -> AsyncIterator[Any]:
    if ONE_X:
        from mcp.shared.memory import create_connected_server_and_client_session

        async with create_connected_server_and_client_session(
            server, elicitation_callback=user
        ) as client:
            yield client
    else:
        from mcp.client import Client

        async with Client(server, elicitation_callback=user, mode="legacy") as client:
            yield client


async def test_an_installed_gate_guards_the_servers_tools() -> None:
    ran: list[str] = []
    server = _server(ran)
    gate = ToolGate(
        ToolApproval(tools=["delete_file"]),
        ToolMock({"weather": "mocked weather"}),
    )
    gate.install(server)
    gate.install(server)  # once is enough: the second does nothing
    user = ScriptedUser(accept(decision="approve"), accept(decision="deny", message="no"))
    async with _client(server, user) as client:
        approved = await client.call_tool("delete_file", {"path": "a.txt"})
        denied = await client.call_tool("delete_file", {"path": "b.txt"})
        mocked = await client.call_tool("weather", {"city": "Oslo"})
    assert text_of(approved) == "deleted a.txt" and not is_error(approved)
    assert is_error(denied) and "no" in text_of(denied)
    assert text_of(mocked) == "mocked weather" and not is_error(mocked)
    assert ran == ["a.txt"]  # neither the denied call nor the mocked one reached the server
    assert len(user.asked) == 2
