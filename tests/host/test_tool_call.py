"""The ExecuteToolStage runner: the terminal's rules and interrupt registration."""

from __future__ import annotations

import asyncio
import logging
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
    MiddlewareResult,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.catalog import ToolApproval
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


def test_tool_use_is_copied_so_a_handler_cannot_edit_the_callers_dicts() -> None:
    handle = threading.Lock()
    use: ToolUse = {"toolUseId": "t-1", "name": "probe", "input": {"x": [1], "handle": handle}}
    context = tool_call_context(
        "agent",
        tool=None,
        tool_use=use,
        invocation_state={},
        cancel_signal=threading.Event(),
        interrupts={},
    )
    context.tool_use["name"] = "changed"
    context.tool_use["input"]["x"].append(2)
    context.tool_use["input"]["y"] = 3
    assert use == {"toolUseId": "t-1", "name": "probe", "input": {"x": [1], "handle": handle}}
    # Values that are not dicts or lists are shared, so input that cannot be copied still works.
    assert context.tool_use["input"]["handle"] is handle


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


async def test_a_tool_call_cancelled_with_its_task_sets_the_executors_signal() -> None:
    registry = MiddlewareRegistry()
    started = asyncio.Event()

    async def waits(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        started.set()
        await asyncio.Event().wait()
        yield ToolResultEvent.error(context.tool_use["toolUseId"], "never")

    registry.add_middleware(ExecuteToolStage, waits)
    state = InterruptState()
    signal = threading.Event()
    events = run_tool_call(registry, context_for(ProbeTool(), state, signal), state, signal)
    call = asyncio.ensure_future(events.__anext__())
    await asyncio.wait_for(started.wait(), 5)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert signal.is_set()


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


def error_text(events: list[TypedEvent]) -> str:
    """The text of the error result a run of the stage ended with."""
    result = events[-1]
    assert isinstance(result, ToolResultEvent)
    assert result.tool_result["status"] == "error"
    return str(result.tool_result["content"][0].get("text"))


def logged_failure(caplog: pytest.LogCaptureFixture) -> logging.LogRecord:
    """The one ERROR record the stage logged, which must carry its traceback."""
    [record] = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert record.name == "strands_middleware"
    assert record.exc_info is not None
    return record


class TestHandlerFailuresAreLoud:
    """A handler's own exception becomes an error result and is logged at ERROR with traceback."""

    async def test_a_wrap_handler_bug_is_logged_naming_handler_stage_and_phase(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        async def typo(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            _ = context.tool_use["inptu"]  # type: ignore[typeddict-item]
            async for event in next_fn(context):
                yield event

        registry = MiddlewareRegistry()
        registry.add_middleware(ExecuteToolStage, typo)
        tool = ProbeTool()
        events = await run(registry, tool)
        assert error_text(events) == "Error: 'inptu'"
        assert tool.calls == []
        record = logged_failure(caplog)
        message = record.getMessage()
        assert "typo (executeTool.Wrap)" in message
        assert "'t-1' (probe)" in message
        assert record.exc_info is not None and isinstance(record.exc_info[1], KeyError)

    async def test_an_output_handler_returning_the_bare_event_is_logged(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        def bare(result: MiddlewareResult[ToolResultEvent]) -> ToolResultEvent:
            return result.value

        registry = MiddlewareRegistry()
        registry.add_middleware(ExecuteToolStage.Output, bare)  # type: ignore[arg-type]
        events = await run(registry, ProbeTool())
        assert "Output handler bare (executeTool.Output) returned ToolResultEvent" in error_text(
            events
        )
        assert "bare (executeTool.Output)" in logged_failure(caplog).getMessage()

    async def test_a_chain_without_result_or_interrupt_is_logged_naming_its_wrap_handlers(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        async def swallow(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            async for _event in next_fn(context):
                pass
            yield TypedEvent({"note": "nothing"})

        registry = MiddlewareRegistry()
        registry.add_middleware(ExecuteToolStage, swallow)
        events = await run(registry, ProbeTool())
        assert "stage 'executeTool' ended without a ToolResultEvent" in error_text(events)
        message = logged_failure(caplog).getMessage()
        assert "Wrap handlers, outermost first: swallow" in message

    async def test_an_input_handler_that_forgets_to_return_is_named(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        def forgetful(context: ExecuteToolContext) -> ExecuteToolContext:
            _ = context.tool_use["name"]

        registry = MiddlewareRegistry()
        registry.add_middleware(ExecuteToolStage.Input, forgetful)
        events = await run(registry, ProbeTool())
        assert "Input handler forgetful (executeTool.Input) returned None" in error_text(events)
        logged_failure(caplog)

    async def test_next_fn_called_without_the_context_is_logged_naming_the_caller(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        async def hurried(
            context: ExecuteToolContext, next_fn: Any
        ) -> AsyncGenerator[TypedEvent, None]:
            async for event in next_fn():
                yield event

        registry = MiddlewareRegistry()
        registry.add_middleware(ExecuteToolStage, hurried)
        events = await run(registry, ProbeTool())
        assert "hurried (executeTool.Wrap) called next_fn() without the context" in error_text(
            events
        )
        assert "hurried (executeTool.Wrap)" in logged_failure(caplog).getMessage()

    async def test_a_failing_tool_is_not_a_middleware_failure(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        events = await run(MiddlewareRegistry(), ProbeTool("raise"))
        assert error_text(events) == "Error: disk full"
        assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


async def careless(
    context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    """A gate whose broad except swallows its own interrupt."""
    try:
        answer = context.interrupt("approve", reason="run it?").response
    except Exception:
        answer = "yes"  # "if asking fails, go ahead": the pause is caught as a failure
    if answer != "yes":
        yield ToolResultEvent.error(context.tool_use["toolUseId"], "denied")
        return
    async for event in next_fn(context):
        yield event


class TestGatesFailClosed:
    """An interrupt that does not reach the executor never lets the tool run."""

    async def test_a_swallowed_interrupt_keeps_the_tool_from_running(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        registry = MiddlewareRegistry()
        registry.add_middleware(ExecuteToolStage, careless)
        tool = ProbeTool()
        state = InterruptState()
        text = error_text(await run(registry, tool, state))
        assert tool.calls == []
        assert "interrupt 'approve'" in text
        assert "never reached the executor" in text
        assert "except Exception" in text
        assert "CONTROL_FLOW_EXCEPTIONS" in text
        assert dict(state.interrupts) == {}
        assert "careless (executeTool.Wrap)" in logged_failure(caplog).getMessage()

    async def test_a_catalog_gate_wrapped_in_a_broad_except_keeps_the_tool_from_running(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        [gate] = ToolApproval()

        async def lenient(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            # "If the gate fails, just run the tool": the pause is caught as a failure.
            try:
                async for event in gate.handler(context, next_fn):
                    yield event
            except Exception:
                async for event in next_fn(context):
                    yield event

        registry = MiddlewareRegistry()
        registry.add_middleware(ExecuteToolStage, lenient)
        tool = ProbeTool()
        text = error_text(await run(registry, tool))
        assert tool.calls == []
        assert "interrupt 'approve-tool-call'" in text
        assert "never reached the executor" in text
        logged_failure(caplog)

    async def test_a_swallowed_interrupt_is_found_at_the_end_of_the_stage(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        async def quiet(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            try:
                context.interrupt("approve")
            except Exception:
                yield ToolResultEvent.error(context.tool_use["toolUseId"], "not approved")
                return
            async for event in next_fn(context):
                yield event

        registry = MiddlewareRegistry()
        registry.add_middleware(ExecuteToolStage, quiet)
        events = await run(registry, ProbeTool())
        text = error_text(events)
        assert "interrupt 'approve'" in text and "never reached the executor" in text
        # The handler's own result is held back, never delivered ahead of the error.
        assert [e for e in events if isinstance(e, ToolResultEvent)] == [events[-1]]
        logged_failure(caplog)

    async def test_an_interrupt_after_the_tool_ran_is_refused(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        async def review(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            events = [event async for event in next_fn(context)]
            context.interrupt("review", reason="keep the result?")
            for event in events:
                yield event

        registry = MiddlewareRegistry()
        registry.add_middleware(ExecuteToolStage, review)
        tool = ProbeTool()
        state = InterruptState()
        text = error_text(await run(registry, tool, state))
        assert len(tool.calls) == 1
        assert "interrupt 'review'" in text and "after the tool ran" in text
        assert "before calling next_fn" in text
        assert dict(state.interrupts) == {}
        logged_failure(caplog)

    async def test_a_tools_own_interrupt_still_pauses_after_the_tool_started(self) -> None:
        state = InterruptState()
        events = await run(MiddlewareRegistry(), ProbeTool("interrupt"), state)
        assert isinstance(events[-1], ToolInterruptEvent)
        assert list(state.interrupts) == ["tool:1"]

    async def test_two_gates_sharing_an_interrupt_id_are_an_error_not_one_approval(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        registry = MiddlewareRegistry()
        registry.use(ToolApproval(), ToolApproval())
        tool = ProbeTool()
        state = InterruptState()
        [paused] = await run(registry, tool, state)
        assert isinstance(paused, ToolInterruptEvent)
        state.activate()
        state.resume(
            [{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "approve"}}]
        )
        text = error_text(await run(registry, tool, state))
        assert tool.calls == []
        assert "two handlers asked interrupt 'approve-tool-call'" in text
        assert "ToolApproval(name=...)" in text
        logged_failure(caplog)

    async def test_one_gate_asked_again_by_a_retry_keeps_its_answer(self) -> None:
        async def twice(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            async for _event in next_fn(context):
                pass
            async for event in next_fn(context):
                yield event

        registry = MiddlewareRegistry()
        registry.add_middleware(ExecuteToolStage, twice)
        registry.use(ToolApproval())
        tool = ProbeTool()
        state = InterruptState()
        [paused] = await run(registry, tool, state)
        assert isinstance(paused, ToolInterruptEvent)
        state.activate()
        state.resume(
            [{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "approve"}}]
        )
        events = await run(registry, tool, state)
        assert isinstance(events[-1], ToolResultEvent)
        assert events[-1].tool_result["status"] == "success"
        assert len(tool.calls) == 2
