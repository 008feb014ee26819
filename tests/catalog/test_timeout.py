"""Timeout: one deadline per call, a clean cancellation, and control flow left alone."""

from __future__ import annotations

import asyncio
import pickle
import sys
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
    testing,
)
from strands_middleware.agent import AfterModelCallEvent, Agent
from strands_middleware.catalog._retry import Retry
from strands_middleware.catalog._timeout import CallTimeout, Timeout
from strands_middleware.events import TextDeltaEvent, ToolInterruptEvent
from strands_middleware.interrupts import Interrupt
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

from ..conformance.drive import AGENTS, AgentFactory

SHORT = 0.01
"""A limit for calls that hang forever: it always runs out, and quickly."""


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def forever() -> None:
    await asyncio.Event().wait()


def hang_model(
    closed: list[str] | None = None,
) -> Any:
    """A model-call Wrap handler that never answers (and records when it is closed)."""

    async def hang(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            yield TextDeltaEvent("thinking")
            await forever()
            yield TypedEvent()  # pragma: no cover
        finally:
            if closed is not None:
                closed.append("hang")

    return InvokeModelStage.wrap(hang)


@tool
def echo(text: str) -> str:
    """Echo the text."""
    return text


def only_this_task() -> bool:
    return asyncio.all_tasks() == {asyncio.current_task()}


def not_cancelling() -> bool:
    task = asyncio.current_task()
    assert task is not None
    return sys.version_info < (3, 11) or task.cancelling() == 0


# ---- model calls ---------------------------------------------------------------------------


async def test_a_hung_model_call_raises_call_timeout_naming_the_stage_and_the_limit() -> None:
    seen: list[BaseException | None] = []
    agent = Agent(model=ScriptedModel([]), middleware=[Timeout(seconds=SHORT), hang_model()])
    agent.add_hook(AfterModelCallEvent, lambda event: seen.append(event.exception))
    with pytest.raises(CallTimeout) as caught:
        await agent.invoke_async("hi")
    assert str(caught.value).startswith("invokeModel call timed out after 0.01s")
    assert "Timeout(seconds=0.01)" in str(caught.value)
    assert caught.value.stage_name == "invokeModel"
    assert caught.value.seconds == SHORT
    assert isinstance(caught.value.__cause__, asyncio.CancelledError)  # where it was stuck
    assert seen == [caught.value]
    assert only_this_task()
    assert not_cancelling()


def test_call_timeout_is_both_kinds_of_timeout_error_and_pickles() -> None:
    error = CallTimeout("invokeModel", 2.5)
    assert isinstance(error, asyncio.TimeoutError)
    assert isinstance(error, TimeoutError)
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.stage_name, copy.seconds, str(copy)) == (
        CallTimeout,
        "invokeModel",
        2.5,
        str(error),
    )


async def test_the_inner_chain_is_cancelled_and_closed_innermost_first(
    make_agent: AgentFactory,
) -> None:
    closed: list[str] = []

    async def middle(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            async for event in next_fn(context):
                yield event
        finally:
            closed.append("middle")

    async def outer(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            async for event in next_fn(context):
                yield event
        finally:
            closed.append("outer")

    agent = make_agent(
        model=ScriptedModel([]),
        middleware=[
            InvokeModelStage.wrap(outer),
            Timeout(seconds=SHORT),
            InvokeModelStage.wrap(middle),
            hang_model(closed),
        ],
    )
    with pytest.raises(CallTimeout):
        await agent.invoke_async("hi")
    assert closed == ["hang", "middle", "outer"]
    assert only_this_task()


async def test_the_deadline_bounds_the_whole_call_not_each_event() -> None:
    clock = FakeClock()
    forwarded: list[str] = []

    async def trickle(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        for word in ("one", "two", "three"):
            clock.now += 4  # each event well inside the 10 s limit
            yield TextDeltaEvent(word)
        async for event in next_fn(context):  # pragma: no cover - the deadline passed
            yield event

    registry = MiddlewareRegistry()
    registry.use(Timeout(seconds=10, clock=clock), InvokeModelStage.wrap(trickle))
    model = ScriptedModel([text_turn("late")])
    with pytest.raises(CallTimeout, match="after 10s"):
        async for event in registry.invoke(InvokeModelStage, model_context(model), never):
            forwarded.append(event["data"])
    assert forwarded == ["one", "two", "three"]  # 12 s in: nothing more is asked for
    assert model.requests == []


async def test_time_the_consumer_spends_on_an_event_counts_but_is_never_interrupted() -> None:
    clock = FakeClock()
    registry = MiddlewareRegistry()
    registry.use(Timeout(seconds=10, clock=clock))
    stream = registry.invoke(
        InvokeModelStage, model_context(ScriptedModel([text_turn("slow reader")])), model_terminal
    )
    first = await stream.__anext__()
    clock.now += 11
    await asyncio.sleep(0)  # the consumer's own await is not cancelled
    with pytest.raises(CallTimeout):
        await stream.__anext__()
    assert isinstance(first, TypedEvent)
    await stream.aclose()


async def test_a_deadline_passed_while_the_consumer_held_an_event_ends_the_call() -> None:
    # The default clock: the event loop's timer rings while the consumer awaits.
    registry = MiddlewareRegistry()
    registry.use(Timeout(seconds=SHORT))
    stream = registry.invoke(
        InvokeModelStage, model_context(ScriptedModel([text_turn("slow reader")])), model_terminal
    )
    first = await stream.__anext__()
    await asyncio.sleep(SHORT * 2)  # the timer rings meanwhile; this await is not cancelled
    with pytest.raises(CallTimeout):
        await stream.__anext__()
    assert isinstance(first, TypedEvent)
    assert not_cancelling()
    await stream.aclose()


async def test_a_call_that_finishes_in_time_is_untouched_and_leaves_no_timer(
    make_agent: AgentFactory,
) -> None:
    # Long enough for any host's own work around the call (LangChain's takes some
    # milliseconds on a busy machine), short enough to wait out.
    limit = 0.2
    model = ScriptedModel([text_turn("quick")])
    agent = make_agent(model=model, middleware=[Timeout(seconds=limit)])
    assert str(await agent.invoke_async("hi")) == "quick"
    await asyncio.sleep(limit * 3)  # a timer left armed would cancel this task here
    assert only_this_task()
    assert not_cancelling()


async def test_after_the_result_an_expired_deadline_ends_the_stream_quietly(
    make_agent: AgentFactory,
) -> None:
    closed: list[str] = []

    async def lingers(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            async for event in next_fn(context):
                yield event
            await forever()  # trailing work that never ends
        finally:
            closed.append("lingers")

    agent = make_agent(
        model=ScriptedModel([text_turn("done")]),
        middleware=[Timeout(seconds=SHORT), InvokeModelStage.wrap(lingers)],
    )
    assert str(await agent.invoke_async("hi")) == "done"
    assert closed == ["lingers"]
    assert not_cancelling()


async def test_an_inner_chain_that_swallows_the_cancellation_still_times_out(
    make_agent: AgentFactory,
) -> None:
    closed: list[str] = []

    async def stubborn(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            try:
                await forever()
            except asyncio.CancelledError:
                yield TextDeltaEvent("ignoring the cancellation")
            await forever()
            yield TypedEvent()  # pragma: no cover
        finally:
            closed.append("stubborn")

    agent = make_agent(
        model=ScriptedModel([]),
        middleware=[Timeout(seconds=SHORT), InvokeModelStage.wrap(stubborn)],
    )
    with pytest.raises(CallTimeout):
        await agent.invoke_async("hi")
    assert closed == ["stubborn"]  # closed by the timeout, not left suspended
    assert not_cancelling()


async def test_an_event_produced_after_the_deadline_is_not_forwarded() -> None:
    clock = FakeClock()  # never moves: only the event loop's timer can expire the call

    async def stubborn(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield TextDeltaEvent("in time")
        try:
            await forever()
        except asyncio.CancelledError:
            yield TextDeltaEvent("too late")
        await forever()
        yield TypedEvent()  # pragma: no cover

    registry = MiddlewareRegistry()
    registry.use(Timeout(seconds=SHORT, clock=clock), InvokeModelStage.wrap(stubborn))
    forwarded: list[str] = []
    with pytest.raises(CallTimeout):
        async for event in registry.invoke(
            InvokeModelStage, model_context(ScriptedModel([])), never
        ):
            forwarded.append(event["data"])
    assert forwarded == ["in time"]
    assert not_cancelling()


async def test_a_consumer_closing_the_call_closes_the_inner_chain_at_once(
    make_agent: AgentFactory,
) -> None:
    closed: list[str] = []

    async def inner(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            yield TextDeltaEvent("first")
            yield TextDeltaEvent("second")  # pragma: no cover - closed before this
        finally:
            closed.append("inner")

    async def abandons(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        stream = next_fn(context)
        await stream.__anext__()
        await stream.aclose()  # stop reading the Timeout layer early, as a retry would
        closed.append(f"after closing: {closed!r}")
        yield ModelStopReason(
            "end_turn",
            {"role": "assistant", "content": [{"text": "own answer"}]},
            {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
            {"latencyMs": 0},
        )

    agent = make_agent(
        model=ScriptedModel([]),
        middleware=[
            InvokeModelStage.wrap(abandons),
            Timeout(seconds=60),
            InvokeModelStage.wrap(inner),
        ],
    )
    assert str(await agent.invoke_async("hi")) == "own answer"
    assert closed == ["inner", "after closing: ['inner']"]


async def test_retry_outside_timeout_retries_each_timed_out_attempt(
    make_agent: AgentFactory,
) -> None:
    attempts: list[int] = []

    async def hangs_once(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        attempts.append(len(attempts) + 1)
        if len(attempts) == 1:
            await forever()
        async for event in next_fn(context):
            yield event

    async def no_sleep(delay: float) -> None:
        return None

    agent = make_agent(
        model=ScriptedModel([text_turn("second time lucky")]),
        middleware=[
            Retry(on=TimeoutError, sleep=no_sleep),
            Timeout(seconds=SHORT),
            InvokeModelStage.wrap(hangs_once),
        ],
    )
    assert str(await agent.invoke_async("hi")) == "second time lucky"
    assert attempts == [1, 2]


# ---- control flow --------------------------------------------------------------------------


async def test_an_outer_cancellation_stays_a_cancellation(make_agent: AgentFactory) -> None:
    started = asyncio.Event()

    async def waits(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        started.set()
        await forever()
        yield TypedEvent()  # pragma: no cover

    agent = make_agent(
        model=ScriptedModel([]), middleware=[Timeout(seconds=3600), InvokeModelStage.wrap(waits)]
    )
    task = asyncio.create_task(agent.invoke_async("hi"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_an_outer_cancellation_arriving_with_the_deadline_wins_from_python_3_11(
    make_agent: AgentFactory,
) -> None:
    # Python 3.10 has no cancellation count, so two cancellations landing in one event-loop step
    # cannot be told apart there and the deadline's wins (as the module documents).
    expected: type[BaseException] = (
        asyncio.CancelledError if sys.version_info >= (3, 11) else CallTimeout
    )
    if make_agent is AGENTS.get("langchain"):
        # LangGraph runs each node as a task of its own: the handler's current task is the
        # model node, whose cancellation LangGraph (from 1.2.x) reports as NodeCancelledError.
        # On 3.10 the node's cancellation lands after the deadline's error and is what ends it.
        import langgraph.errors

        expected = asyncio.CancelledError
        if sys.version_info >= (3, 11):
            expected = getattr(langgraph.errors, "NodeCancelledError", asyncio.CancelledError)

    async def cancelled_meanwhile(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        try:
            await forever()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            assert task is not None
            task.cancel()  # someone cancels the run while the timeout unwinds
            raise
        yield TypedEvent()  # pragma: no cover

    agent = make_agent(
        model=ScriptedModel([]),
        middleware=[Timeout(seconds=SHORT), InvokeModelStage.wrap(cancelled_meanwhile)],
    )
    task = asyncio.create_task(agent.invoke_async("hi"))
    with pytest.raises(expected):
        await task


async def test_an_interrupt_passes_through_untouched(make_agent: AgentFactory) -> None:
    async def gate(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        context.interrupt("approve")
        async for event in next_fn(context):  # pragma: no cover - paused
            yield event

    agent = make_agent(
        model=ScriptedModel([tool_turn("echo", {"text": "x"}, tool_use_id="t1")]),
        tools=[echo],
        middleware=[Timeout(ExecuteToolStage, seconds=SHORT), ExecuteToolStage.wrap(gate)],
    )
    result = await agent.invoke_async("hi")
    assert result.stop_reason == "interrupt"
    assert [interrupt.name for interrupt in result.interrupts] == ["approve"]
    await asyncio.sleep(SHORT * 3)  # no timer outlives the paused call
    assert only_this_task()
    assert not_cancelling()


async def test_an_interrupt_event_settles_the_call_like_a_result() -> None:
    halted = ToolInterruptEvent(
        {"toolUseId": "t1", "name": "echo", "input": {}}, [Interrupt(id="i", name="ask")]
    )

    async def tool_asks(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        yield halted
        await forever()  # a stage that does not end after halting

    registry = MiddlewareRegistry()
    registry.use(Timeout(ExecuteToolStage, seconds=SHORT), ExecuteToolStage.wrap(tool_asks))
    events = [
        event
        async for event in registry.invoke(ExecuteToolStage, tool_context("echo", "t1"), never)
    ]
    assert events == [halted]


# ---- tool calls ----------------------------------------------------------------------------


async def test_a_hung_tool_call_answers_with_an_error_result_and_the_run_goes_on(
    make_agent: AgentFactory,
) -> None:
    @tool
    async def stuck() -> str:
        """Never returns."""
        await forever()
        return "never"  # pragma: no cover

    model = ScriptedModel([tool_turn("stuck", {}, tool_use_id="t1"), text_turn("it timed out")])
    results: list[ToolResultEvent] = []

    async def watch(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if isinstance(event, ToolResultEvent):
                results.append(event)
            yield event

    agent = make_agent(
        model=model,
        tools=[stuck],
        middleware=[ExecuteToolStage.wrap(watch), Timeout(ExecuteToolStage, seconds=SHORT)],
    )
    assert str(await agent.invoke_async("go")) == "it timed out"
    [result] = results
    assert result.tool_result == {
        "toolUseId": "t1",
        "status": "error",
        "content": [{"text": "Tool call timed out after 0.01s"}],
    }
    assert isinstance(result.exception, CallTimeout)
    assert result.exception.stage_name == "executeTool"
    assert model.requests[1].messages[-1]["content"][0]["toolResult"] == result.tool_result
    assert only_this_task()
    assert not_cancelling()


async def test_concurrent_tool_calls_each_get_their_own_deadline(make_agent: AgentFactory) -> None:
    @tool
    async def slow() -> str:
        """Never returns."""
        await forever()
        return "never"  # pragma: no cover

    model = ScriptedModel(
        [
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "a", "name": "slow", "input": {}}},
                    {"toolUse": {"toolUseId": "b", "name": "echo", "input": {"text": "fast"}}},
                ],
            },
            text_turn("done"),
        ]
    )
    # Long enough for the fast call to finish with any host's own work around it (LangChain's
    # takes some milliseconds on a busy machine).
    limit = 0.2
    agent = make_agent(
        model=model, tools=[slow, echo], middleware=[Timeout(ExecuteToolStage, seconds=limit)]
    )
    await agent.invoke_async("go")
    results = {
        block["toolResult"]["toolUseId"]: block["toolResult"]
        for block in agent.messages[2]["content"]
    }
    assert results["a"]["status"] == "error"
    assert results["b"] == {"toolUseId": "b", "status": "success", "content": [{"text": "fast"}]}
    assert only_this_task()


async def test_the_tool_message_shows_whole_seconds_without_decimals() -> None:
    clock = FakeClock()

    async def progress(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        clock.now += 31
        yield TypedEvent({"progress": 1})
        async for event in next_fn(context):  # pragma: no cover - the deadline passed
            yield event

    registry = MiddlewareRegistry()
    registry.use(
        Timeout(ExecuteToolStage, seconds=30, clock=clock), ExecuteToolStage.wrap(progress)
    )
    events = [
        event
        async for event in registry.invoke(ExecuteToolStage, tool_context("echo", "t9"), never)
    ]
    assert events[0] == {"progress": 1}
    assert isinstance(events[-1], ToolResultEvent)
    assert events[-1].tool_result == {
        "toolUseId": "t9",
        "status": "error",
        "content": [{"text": "Tool call timed out after 30s"}],
    }


async def test_a_tool_error_result_in_time_is_passed_on_unchanged(make_agent: AgentFactory) -> None:
    @tool
    def broken() -> str:
        """Raises."""
        raise ValueError("nope")

    model = ScriptedModel([tool_turn("broken", {}, tool_use_id="t1"), text_turn("ok")])
    agent = make_agent(
        model=model, tools=[broken], middleware=[Timeout(ExecuteToolStage, seconds=5)]
    )
    await agent.invoke_async("go")
    result = agent.messages[2]["content"][0]["toolResult"]
    assert result["content"] == [{"text": "Error: nope"}]


# ---- configuration -------------------------------------------------------------------------


@pytest.mark.parametrize("seconds", [0, -1, True, "5", float("inf"), float("nan"), None])
def test_seconds_must_be_a_finite_positive_number(seconds: Any) -> None:
    with pytest.raises(
        ValueError, match=r"Timeout\(seconds=\.\.\.\) must be a finite number of seconds > 0"
    ):
        Timeout(seconds=seconds)


def test_the_clock_must_be_callable() -> None:
    with pytest.raises(TypeError, match=r"Timeout\(clock=\.\.\.\) takes a function"):
        Timeout(seconds=1, clock=5)  # type: ignore[arg-type]


def test_only_the_call_stages_can_be_wrapped() -> None:
    from strands_middleware.experimental import AgentStreamStage

    with pytest.raises(TypeError, match="Timeout wraps InvokeModelStage or ExecuteToolStage"):
        Timeout(AgentStreamStage, seconds=1)  # type: ignore[arg-type]


def test_it_is_one_wrap_middleware_on_its_stage() -> None:
    [middleware] = list(Timeout(ExecuteToolStage, seconds=1))
    assert middleware.phase is ExecuteToolStage.Wrap
    [middleware] = list(Timeout(seconds=1))
    assert middleware.phase is InvokeModelStage.Wrap


# ---- helpers -------------------------------------------------------------------------------


def model_context(model: ScriptedModel) -> InvokeModelContext:
    return testing.model_context(
        messages=[{"role": "user", "content": [{"text": "hi"}]}], model=model
    )


def tool_context(name: str, tool_use_id: str) -> ExecuteToolContext:
    return testing.tool_context(name, tool_use_id=tool_use_id)


async def model_terminal(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
    from strands_middleware.host._model_call import invoke_model_terminal

    async for event in invoke_model_terminal(context):
        yield event


async def never(context: object) -> AsyncGenerator[TypedEvent, None]:  # pragma: no cover
    raise AssertionError("the terminal should not run")
    yield TypedEvent()
