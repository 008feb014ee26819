"""The ExecuteToolStage runner: the terminal's rules and interrupt registration."""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    Interrupt,
    InterruptException,
    MiddlewareNext,
    MiddlewareRegistry,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.content import ToolSpec, ToolUse
from strands_middleware.events import ToolInterruptEvent
from strands_middleware.host import InterruptState, run_tool_call, tool_call_context

USE: ToolUse = {"toolUseId": "t-1", "name": "probe", "input": {"x": 1}}


class ProbeTool:
    """A hand-written tool with the Strands shape, scripted per test."""

    def __init__(self, behaviour: str = "ok") -> None:
        self.behaviour = behaviour
        self.calls: list[dict[str, Any]] = []

    @property
    def tool_name(self) -> str:
        return "probe"

    @property
    def tool_spec(self) -> ToolSpec:
        return {"name": "probe", "description": "probe", "inputSchema": {"json": {}}}

    async def stream(
        self, tool_use: ToolUse, invocation_state: dict[str, Any], **kwargs: Any
    ) -> AsyncGenerator[Any, None]:
        self.calls.append({"tool_use": tool_use, "kwargs": kwargs})
        if self.behaviour == "raise":
            raise ValueError("disk full")
        if self.behaviour == "interrupt":
            raise InterruptException(Interrupt(id="tool:1", name="tool-gate"))
        if self.behaviour == "interrupt_event":
            yield ToolInterruptEvent(tool_use, [Interrupt(id="tool:2", name="sub-agent")])
            return
        if self.behaviour == "no_result":
            yield {"progress": 1}
            return
        yield ToolResultEvent(
            {"toolUseId": tool_use["toolUseId"], "status": "success", "content": [{"text": "ok"}]}
        )


def context_for(
    tool: ProbeTool | None, state: InterruptState, signal: threading.Event
) -> ExecuteToolContext:
    return tool_call_context(
        "agent",
        tool=tool,
        tool_use=USE,
        invocation_state={},
        cancel_signal=signal,
        interrupts=state.interrupts,
    )


async def run(
    registry: MiddlewareRegistry, tool: ProbeTool | None, state: InterruptState | None = None
) -> list[TypedEvent]:
    state = state or InterruptState()
    signal = threading.Event()
    return [
        event
        async for event in run_tool_call(registry, context_for(tool, state, signal), state, signal)
    ]


def test_tool_use_is_a_shallow_copy() -> None:
    context = context_for(None, InterruptState(), threading.Event())
    context.tool_use["name"] = "changed"
    assert USE["name"] == "probe"
    assert context.tool_use["input"] is USE["input"]


async def test_a_raising_tool_becomes_an_error_result_middleware_can_see() -> None:
    seen: list[ToolResultEvent] = []
    registry = MiddlewareRegistry()
    registry.add_middleware(
        ExecuteToolStage.Output, lambda result: seen.append(result.value) or result
    )
    events = await run(registry, ProbeTool("raise"))
    result = events[-1]
    assert isinstance(result, ToolResultEvent)
    assert result.tool_result["status"] == "error"
    assert result.tool_result["content"] == [{"text": "Error: disk full"}]
    assert isinstance(result.exception, ValueError)
    assert seen == [result]


async def test_an_unknown_tool_runs_the_chain_with_tool_none() -> None:
    observed: list[object] = []

    async def watch(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        observed.append(context.tool)
        async for event in next_fn(context):
            yield event

    registry = MiddlewareRegistry()
    registry.add_middleware(ExecuteToolStage, watch)
    events = await run(registry, None)
    assert observed == [None]
    result = events[-1]
    assert isinstance(result, ToolResultEvent)
    assert result.tool_result == {
        "toolUseId": "t-1",
        "status": "error",
        "content": [{"text": "Unknown tool: probe"}],
    }


async def test_middleware_can_mock_an_unknown_tool() -> None:
    async def mock(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield ToolResultEvent(
            {"toolUseId": context.tool_use["toolUseId"], "status": "success", "content": []}
        )

    registry = MiddlewareRegistry()
    registry.add_middleware(ExecuteToolStage, mock)
    result = (await run(registry, None))[-1]
    assert isinstance(result, ToolResultEvent) and result.tool_result["status"] == "success"


async def test_the_tool_gets_the_executor_signal_not_a_replaced_one() -> None:
    tool = ProbeTool()
    registry = MiddlewareRegistry()
    registry.add_middleware(
        ExecuteToolStage.Input, lambda context: context.replace(cancel_signal=threading.Event())
    )
    state = InterruptState()
    signal = threading.Event()
    context = context_for(tool, state, signal)
    _ = [event async for event in run_tool_call(registry, context, state, signal)]
    assert tool.calls[0]["kwargs"]["cancel_signal"] is signal


async def test_a_tool_without_a_result_becomes_an_error_result() -> None:
    result = (await run(MiddlewareRegistry(), ProbeTool("no_result")))[-1]
    assert isinstance(result, ToolResultEvent)
    assert result.tool_result["status"] == "error"
    assert "ended without yielding a ToolResultEvent" in result.tool_result["content"][0]["text"]
    assert isinstance(result.exception, RuntimeError)


async def test_a_middleware_interrupt_is_registered_and_surfaced_once() -> None:
    async def gate(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        context.interrupt("approve", reason="delete?")
        async for event in next_fn(context):
            yield event

    registry = MiddlewareRegistry()
    registry.add_middleware(ExecuteToolStage, gate)
    tool = ProbeTool()
    state = InterruptState()
    events = await run(registry, tool, state)
    assert len(events) == 1
    event = events[0]
    assert isinstance(event, ToolInterruptEvent)
    assert [i.name for i in event.interrupts] == ["approve"]
    assert list(state.interrupts) == [event.interrupts[0].id]
    assert tool.calls == []


@pytest.mark.parametrize("behaviour", ["interrupt", "interrupt_event"])
async def test_a_tool_interrupt_halts_the_stage_without_output_handlers(behaviour: str) -> None:
    ran: list[object] = []
    registry = MiddlewareRegistry()
    registry.add_middleware(ExecuteToolStage.Output, lambda result: ran.append(result) or result)
    state = InterruptState()
    events = await run(registry, ProbeTool(behaviour), state)
    assert ran == []
    assert len(events) == 1 and isinstance(events[0], ToolInterruptEvent)
    assert len(state.interrupts) == 1


async def test_a_chain_without_result_or_interrupt_is_an_error() -> None:
    async def swallow(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for _event in next_fn(context):
            pass
        yield TypedEvent({"note": "nothing"})

    registry = MiddlewareRegistry()
    registry.add_middleware(ExecuteToolStage, swallow)
    with pytest.raises(RuntimeError, match="stage 'executeTool' ended without a ToolResultEvent"):
        await run(registry, ProbeTool())
