"""Retry: which failures are retried, how long it waits, and what it never does."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import AfterModelCallEvent, Agent, BeforeModelCallEvent
from strands_middleware.catalog import Retry
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

from ..conformance.drive import AgentFactory


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def test_retries_a_failing_model_call_until_it_succeeds() -> None:
    sleeps = Sleeps()
    model = ScriptedModel([ConnectionError("throttled"), ConnectionError("again"), text_turn("ok")])
    agent = Agent(model=model, middleware=[Retry(attempts=3, sleep=sleeps, jitter=0)])
    hooks: list[str] = []
    agent.add_hook(BeforeModelCallEvent, lambda event: hooks.append("before"))
    agent.add_hook(AfterModelCallEvent, lambda event: hooks.append("after"))
    assert str(agent("hi")) == "ok"
    assert len(model.requests) == 3
    assert sleeps.delays == [0.5, 1.0]
    assert hooks == ["before", "after"]  # middleware retries are invisible to hooks


def test_gives_up_after_the_last_attempt_with_the_last_error(make_agent: AgentFactory) -> None:
    last = ConnectionError("third")
    model = ScriptedModel([ConnectionError("1"), ConnectionError("2"), last])
    agent = make_agent(model=model, middleware=[Retry(attempts=3, sleep=Sleeps())])
    with pytest.raises(ConnectionError) as caught:
        agent("hi")
    assert caught.value is last


def test_errors_not_listed_in_on_are_not_retried(make_agent: AgentFactory) -> None:
    model = ScriptedModel([ValueError("bad request"), text_turn("never")])
    agent = make_agent(model=model, middleware=[Retry(on=ConnectionError, sleep=Sleeps())])
    with pytest.raises(ValueError, match="bad request"):
        agent("hi")
    assert len(model.requests) == 1


def test_an_interrupt_is_never_retried_even_when_on_catches_everything(
    make_agent: AgentFactory,
) -> None:
    asked: list[str] = []

    @ExecuteToolStage.wrap
    async def gate(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        asked.append(context.tool_use["toolUseId"])
        context.interrupt("approve")
        async for event in next_fn(context):
            yield event

    sleeps = Sleeps()
    agent = make_agent(
        model=ScriptedModel([tool_turn("echo", {}, tool_use_id="t1")]),
        middleware=[Retry(ExecuteToolStage, on=BaseException, sleep=sleeps), gate],
    )
    result = agent("hi")
    assert result.stop_reason == "interrupt"
    assert asked == ["t1"]
    assert sleeps.delays == []


async def test_cancellation_is_never_retried(make_agent: AgentFactory) -> None:
    started = asyncio.Event()

    async def hang(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        started.set()
        await asyncio.sleep(3600)
        yield TypedEvent()  # pragma: no cover

    sleeps = Sleeps()
    agent = make_agent(
        model=ScriptedModel([]),
        middleware=[Retry(on=BaseException, sleep=sleeps), InvokeModelStage.wrap(hang)],
    )
    task = asyncio.create_task(agent.invoke_async("hi"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sleeps.delays == []


def test_a_failure_after_events_reached_the_consumer_is_not_retried_by_default(
    make_agent: AgentFactory,
) -> None:
    seen: list[str] = []

    async def breaks_mid_stream(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        seen.append("attempt")
        yield TypedEvent({"data": "partial"})
        raise ConnectionError("dropped")

    agent = make_agent(
        model=ScriptedModel([text_turn("x")]),
        middleware=[Retry(sleep=Sleeps()), InvokeModelStage.wrap(breaks_mid_stream)],
    )
    with pytest.raises(ConnectionError):
        agent("hi")
    assert seen == ["attempt"]


def test_repeat_events_allows_retrying_after_events(make_agent: AgentFactory) -> None:
    attempts: list[int] = []

    async def flaky_stream(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        attempts.append(1)
        yield TypedEvent({"data": "partial"})
        if len(attempts) == 1:
            raise ConnectionError("dropped")
        async for event in next_fn(context):
            yield event

    agent = make_agent(
        model=ScriptedModel([text_turn("ok")]),
        middleware=[
            Retry(repeat_events=True, sleep=Sleeps()),
            InvokeModelStage.wrap(flaky_stream),
        ],
    )
    assert str(agent("hi")) == "ok"
    assert len(attempts) == 2


def test_tool_error_results_are_retried_by_exception_type(make_agent: AgentFactory) -> None:
    calls: list[int] = []

    @tool
    def flaky() -> str:
        """Fails twice."""
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("busy")
        return "fine"

    model = ScriptedModel([tool_turn("flaky", {}, tool_use_id="t"), text_turn("done")])
    agent = make_agent(
        model=model,
        tools=[flaky],
        middleware=[Retry(ExecuteToolStage, on=ConnectionError, sleep=Sleeps())],
    )
    agent("go")
    assert len(calls) == 3
    assert agent.messages[2]["content"][0]["toolResult"]["status"] == "success"  # type: ignore[typeddict-item]


def test_a_result_predicate_on_model_calls_needs_repeat_events() -> None:
    # A model call streams its text before its result, so without repeat_events the predicate
    # could never act: that is refused where the Retry is built.
    with pytest.raises(
        ValueError,
        match=r"Retry\(when=\.\.\.\) on InvokeModelStage would never retry.*repeat_events=True",
    ):
        Retry(when=lambda result: True)
    Retry(ExecuteToolStage, when=lambda result: True)


def test_a_result_predicate_retries_a_model_call_when_events_may_repeat(
    make_agent: AgentFactory,
) -> None:
    def refused(result: ModelStopReason) -> bool:
        return "cannot" in str(result.message)

    model = ScriptedModel([text_turn("I cannot"), text_turn("Here it is")])
    agent = make_agent(
        model=model, middleware=[Retry(when=refused, repeat_events=True, sleep=Sleeps())]
    )
    assert str(agent("hi")) == "Here it is"
    assert len(model.requests) == 2


def test_a_result_predicate_retries_a_tool_whose_only_event_is_its_result(
    make_agent: AgentFactory,
) -> None:
    calls: list[int] = []

    @tool
    def count() -> int:
        """Count calls."""
        calls.append(1)
        return len(calls)

    def too_small(result: ToolResultEvent) -> bool:
        return result.tool_result["content"][0].get("text") != "3"

    model = ScriptedModel([tool_turn("count", {}, tool_use_id="t"), text_turn("done")])
    agent = make_agent(
        model=model,
        tools=[count],
        middleware=[Retry(ExecuteToolStage, attempts=5, when=too_small, sleep=Sleeps())],
    )
    agent("go")
    assert len(calls) == 3


def test_backoff_grows_by_factor_and_is_capped() -> None:
    retry = Retry(backoff=1.0, factor=3.0, max_delay=5.0, jitter=0)
    assert [retry.delay(n) for n in (1, 2, 3, 4)] == [1.0, 3.0, 5.0, 5.0]


def test_jitter_spreads_the_delay_within_its_fraction() -> None:
    retry = Retry(backoff=1.0, jitter=0.5)
    delays = {retry.delay(1) for _ in range(50)}
    assert all(0.5 <= delay <= 1.5 for delay in delays)
    assert len(delays) > 1


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"attempts": 0}, ValueError, r"attempts=\.\.\.\) must be a whole number >= 1"),
        ({"attempts": True}, ValueError, "whole number"),
        ({"on": "ConnectionError"}, TypeError, r"on=\.\.\.\) takes exception classes"),
        ({"on": ()}, TypeError, "takes exception classes"),
        ({"backoff": -1}, ValueError, r"backoff=\.\.\.\) must be >= 0"),
        ({"factor": 0.5}, ValueError, r"factor=\.\.\.\) must be >= 1"),
        ({"when": 3}, TypeError, "predicate"),
    ],
)
def test_bad_configuration_is_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        Retry(**kwargs)


def test_only_the_call_stages_can_be_wrapped() -> None:
    from strands_middleware.experimental import AgentStreamStage

    with pytest.raises(TypeError, match="Retry wraps InvokeModelStage or ExecuteToolStage"):
        Retry(AgentStreamStage)  # type: ignore[arg-type]


def test_it_is_one_wrap_middleware_on_its_stage() -> None:
    [middleware] = list(Retry(ExecuteToolStage))
    assert middleware.phase is ExecuteToolStage.Wrap
