"""`ToolGate` on servers run in the test's own process: an ``MCPServer`` and a low-level
``Server``, reached through the SDK's in-process client on both protocol eras."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer

from strands_middleware import ExecuteToolStage, InvokeModelStage
from strands_middleware.catalog import CallLimit, Redact, Retry, ToolApproval
from strands_middleware.events import ToolResultEvent, TypedEvent
from strands_middleware.exceptions import UnsupportedStageError
from strands_middleware.mcp import ToolGate
from strands_middleware.stages._execute_tool import ExecuteToolContext

from .processes import text_of
from .test_approval import ScriptedUser


def _server(gate: ToolGate, ran: list[str]) -> MCPServer:
    server = MCPServer("in-process", middleware=[gate])

    @server.tool()
    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return f"deleted {path}"

    @server.tool()
    def secret(user: str) -> str:
        """Say a secret."""
        ran.append(user)
        return f"the key of {user} is sk-live-1234567890abcdef"

    return server


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_gate_runs_catalog_items_on_an_mcpserver(mode: str) -> None:
    seen: list[tuple[dict[str, Any], Any]] = []

    @ExecuteToolStage.wrap
    async def observe(
        context: ExecuteToolContext, next_fn: Any
    ) -> AsyncGenerator[TypedEvent, None]:
        seen.append((dict(context.tool_use), context.tool.tool_spec if context.tool else None))
        async for event in next_fn(context):
            yield event

    ran: list[str] = []
    gate = ToolGate(
        observe,
        ToolApproval(tools=["delete"]),
        Redact(patterns={"key": r"sk-live-\w+"}, model_input=False, model_output=False),
    )
    user = ScriptedUser(
        types.ElicitResult(action="accept", content={"decision": "approve"}),
        types.ElicitResult(action="decline"),
    )
    async with Client(_server(gate, ran), elicitation_callback=user, mode=mode) as client:
        approved = await client.call_tool("delete", {"path": "a"})
        declined = await client.call_tool("delete", {"path": "b"})
        redacted = await client.call_tool("secret", {"user": "ann"})
    assert text_of(approved) == "deleted a"
    assert declined.is_error and "Approval was required" in text_of(declined)
    assert "sk-live" not in text_of(redacted) and "ann" in text_of(redacted)
    assert ran == ["a", "ann"]
    tool_use, spec = seen[0]
    assert tool_use["name"] == "delete" and tool_use["input"] == {"path": "a"}
    assert tool_use["toolUseId"].startswith("mcp-")
    assert spec["description"] == "Delete a file."
    assert spec["inputSchema"]["json"]["properties"]["path"]["type"] == "string"


async def test_an_invocation_scoped_limit_counts_the_gates_calls() -> None:
    ran: list[str] = []
    gate = ToolGate(CallLimit(tool_calls=1))
    async with Client(_server(gate, ran)) as client:
        first = await client.call_tool("delete", {"path": "a"})
        second = await client.call_tool("delete", {"path": "b"})
    assert not first.is_error and second.is_error
    assert ran == ["a"]


async def test_a_low_level_server_tool_failure_is_an_error_naming_the_tool() -> None:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name="boom", input_schema={"type": "object"})]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        raise RuntimeError("the disk is on fire")

    @ExecuteToolStage.wrap
    async def passing(
        context: ExecuteToolContext, next_fn: Any
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            yield event

    server: Server[Any] = Server("low", on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware.append(ToolGate(passing))
    async with Client(server) as client:
        result = await client.call_tool("boom", {})
    assert result.is_error
    assert "'boom'" in text_of(result) and "the disk is on fire" in text_of(result)


async def test_an_unknown_tool_still_runs_the_chain() -> None:
    @ExecuteToolStage.wrap
    async def answer_anything(
        context: ExecuteToolContext, next_fn: Any
    ) -> AsyncGenerator[TypedEvent, None]:
        assert context.tool is None
        yield ToolResultEvent(
            {
                "toolUseId": context.tool_use["toolUseId"],
                "status": "success",
                "content": [{"text": "made up"}, {"json": {"n": 1}}],
            }
        )

    async with Client(_server(ToolGate(answer_anything), [])) as client:
        result = await client.call_tool("nowhere", {})
    assert not result.is_error
    assert text_of(result) == "made up" and result.structured_content == {"n": 1}


async def test_a_call_the_client_cancels_sets_its_cancel_signal() -> None:
    # The client abandons the call (its task is cancelled: the SDK sends the server
    # notifications/cancelled), the server cancels the handler, and the gate sets the signal
    # the call's handlers hold, for a tool or a handler's work still running in a thread.
    started = asyncio.Event()
    signals: list[threading.Event] = []

    async def wait() -> str:
        """Wait until cancelled."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    def note(context: ExecuteToolContext) -> ExecuteToolContext:
        signals.append(context.cancel_signal)
        return context

    server = MCPServer("in-process", middleware=[ToolGate(ExecuteToolStage.input(note))])
    server.add_tool(wait)
    async with Client(server) as client:
        call = asyncio.ensure_future(client.call_tool("wait", {}))
        await asyncio.wait_for(started.wait(), 5)
        assert [signal.is_set() for signal in signals] == [False]
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await asyncio.to_thread(signals[0].wait, 5)


def test_model_middleware_is_refused_at_registration() -> None:
    gate = ToolGate()
    with pytest.raises(UnsupportedStageError, match="sees tool calls only"):
        gate.use(Retry(InvokeModelStage))
    with pytest.raises(UnsupportedStageError, match="sees tool calls only"):
        ToolGate(Retry(InvokeModelStage))
    assert not gate.middleware_registry.has_handlers(ExecuteToolStage)


def test_an_sdk_older_than_1_23_is_refused_with_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib
    import importlib.metadata

    import strands_middleware.mcp as package

    real = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata, "version", lambda name: "1.22.0" if name == "mcp" else real(name)
    )
    try:
        with pytest.raises(
            ImportError, match=r"needs the mcp SDK 1\.23 or newer, and mcp 1\.22\.0"
        ):
            importlib.reload(package)
    finally:
        monkeypatch.undo()
        importlib.reload(package)
