"""RateLimit: a shared token bucket; reservations in order, refunds only for calls not made."""

from __future__ import annotations

import asyncio
import threading
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
    TypedEvent,
)
from strands_middleware.catalog._rate_limit import RateLimit
from strands_middleware.events import ToolInterruptEvent
from strands_middleware.interrupts import Interrupt
from strands_middleware.testing import (
    ScriptedModel,
    model_context,
    text_turn,
    tool_context,
    tool_turn,
)
from strands_middleware.tools import tool

from ..conformance.drive import AgentFactory


class FakeTime:
    """A clock and a sleep: sleeping records the delay and (optionally) moves the clock on."""

    def __init__(self, *, advance: bool = True) -> None:
        self.now = 0.0
        self.advance = advance
        self.delays: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        self.delays.append(delay)
        if self.advance:
            self.now += delay
        await asyncio.sleep(0)


def limited(time: FakeTime, **kwargs: Any) -> RateLimit:
    return RateLimit(clock=time.clock, sleep=time.sleep, **kwargs)


async def answer(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
    yield ModelStopReason(
        "end_turn",
        {"role": "assistant", "content": [{"text": "ok"}]},
        {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
        {"latencyMs": 0},
    )


async def calls(registry: MiddlewareRegistry, count: int) -> None:
    for _ in range(count):
        await registry.run(InvokeModelStage, model_context(), answer)


def registry_with(*middleware: Any) -> MiddlewareRegistry:
    registry = MiddlewareRegistry()
    registry.use(*middleware)
    return registry


# ---- the bucket ----------------------------------------------------------------------------


async def test_a_burst_starts_at_once_and_later_calls_wait_for_their_token() -> None:
    time = FakeTime()
    await calls(registry_with(limited(time, rate=2, burst=3)), 5)
    assert time.delays == [0.5, 0.5]
    assert time.now == 1.0


async def test_the_bucket_refills_while_quiet_but_never_beyond_the_burst() -> None:
    time = FakeTime()
    bucket = limited(time, rate=1, burst=2)
    registry = registry_with(bucket)
    await calls(registry, 2)
    assert bucket.tokens == 0
    time.now += 1.5
    assert bucket.tokens == 1.5
    time.now += 100
    assert bucket.tokens == 2
    await calls(registry, 3)
    assert time.delays == [1.0]


async def test_waiting_callers_reserve_in_order_and_each_sleeps_once() -> None:
    time = FakeTime(advance=False)
    bucket = limited(time, rate=1, burst=1)
    registry = registry_with(bucket)
    await asyncio.gather(*(registry.run(InvokeModelStage, model_context(), answer) for _ in "abc"))
    assert time.delays == [1.0, 2.0]
    assert bucket.tokens == -2  # the clock never moved: both reservations are still owed


async def test_agents_sharing_one_object_share_its_bucket(make_agent: AgentFactory) -> None:
    time = FakeTime()
    bucket = limited(time, rate=1, burst=1)
    agents = [make_agent(model=ScriptedModel([text_turn("x")]), middleware=[bucket]) for _ in "ab"]
    await asyncio.gather(*(agent.invoke_async("hi") for agent in agents))
    assert time.delays == [1.0]

    time = FakeTime()
    agents = [
        make_agent(
            model=ScriptedModel([text_turn("x")]), middleware=[limited(time, rate=1, burst=1)]
        )
        for _ in "ab"
    ]
    await asyncio.gather(*(agent.invoke_async("hi") for agent in agents))
    assert time.delays == []


def test_agents_in_different_threads_share_the_bucket(make_agent: AgentFactory) -> None:
    time = FakeTime(advance=False)
    bucket = limited(time, rate=1, burst=2)

    def run() -> None:
        agent = make_agent(
            model=ScriptedModel([text_turn("a"), text_turn("b")]), middleware=[bucket]
        )
        agent("one")
        agent("two")

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(time.delays) == [1.0, 2.0]  # four calls, a burst of two: two waited


def test_tool_calls_can_be_limited_too(make_agent: AgentFactory) -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    time = FakeTime()
    model = ScriptedModel(
        [tool_turn("ping", {}), tool_turn("ping", {}), tool_turn("ping", {}), text_turn("done")]
    )
    agent = make_agent(
        model=model,
        tools=[ping],
        middleware=[limited(time, stage=ExecuteToolStage, rate=0.5, burst=2)],
    )
    agent("ping thrice")
    assert time.delays == [2.0]


# ---- what gives a token back ---------------------------------------------------------------


async def test_a_caller_cancelled_while_waiting_gives_its_reservation_back() -> None:
    time = FakeTime(advance=False)
    waiting = asyncio.Event()

    async def sleep(delay: float) -> None:
        waiting.set()
        await asyncio.Event().wait()

    bucket = RateLimit(rate=1, burst=1, clock=time.clock, sleep=sleep)
    registry = registry_with(bucket)
    await calls(registry, 1)
    task = asyncio.create_task(calls(registry, 1))
    await waiting.wait()
    assert bucket.tokens == -1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert bucket.tokens == 0


def test_a_call_that_pauses_for_a_human_gets_its_token_back(make_agent: AgentFactory) -> None:
    @tool
    def delete(path: str) -> str:
        """Delete."""
        return path

    async def gate(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        context.interrupt("approve")
        async for event in next_fn(context):
            yield event

    time = FakeTime(advance=False)
    bucket = limited(time, stage=ExecuteToolStage, rate=1, burst=1)
    agent = make_agent(
        model=ScriptedModel([tool_turn("delete", {"path": "a"}), text_turn("done")]),
        tools=[delete],
        middleware=[bucket, ExecuteToolStage.wrap(gate)],
    )
    paused = agent("delete a")
    assert paused.stop_reason == "interrupt"
    assert bucket.tokens == 1
    agent(
        [
            {"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}
            for interrupt in paused.interrupts
        ]
    )
    assert bucket.tokens == 0  # the resumed call took a token of its own
    assert time.delays == []


async def test_an_interrupt_event_gives_the_token_back_once() -> None:
    time = FakeTime(advance=False)
    bucket = limited(time, stage=ExecuteToolStage, rate=1, burst=3)
    tool_use: Any = {"toolUseId": "t1", "name": "ask", "input": {}}

    async def asks(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        yield ToolInterruptEvent(tool_use, [Interrupt(id="i", name="ask")])
        yield ToolInterruptEvent(tool_use, [Interrupt(id="j", name="again")])

    context = tool_context("ask", tool_use_id="t1")
    seen = [
        bucket.tokens async for _ in registry_with(bucket).invoke(ExecuteToolStage, context, asks)
    ]
    assert seen == [3, 3]


def test_a_failed_call_keeps_its_token_spent(make_agent: AgentFactory) -> None:
    time = FakeTime(advance=False)
    bucket = limited(time, rate=1, burst=2)
    agent = make_agent(model=ScriptedModel([ConnectionError("throttled")]), middleware=[bucket])
    with pytest.raises(ConnectionError):
        agent("hi")
    assert bucket.tokens == 1


async def test_a_call_closed_early_keeps_its_token_spent() -> None:
    time = FakeTime(advance=False)
    bucket = limited(time, rate=1, burst=2)

    async def streams(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        yield TypedEvent({"data": "partial"})
        yield TypedEvent({"data": "more"})

    stream = registry_with(bucket).invoke(InvokeModelStage, model_context(), streams)
    await stream.__anext__()
    await stream.aclose()
    assert bucket.tokens == 1


# ---- configuration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"rate": 0, "burst": 1}, ValueError, r"RateLimit\(rate=\.\.\.\) must be a finite number"),
        ({"rate": -1, "burst": 1}, ValueError, r"rate=\.\.\.\) must be a finite number"),
        ({"rate": float("inf"), "burst": 1}, ValueError, r"rate=\.\.\.\) must be a finite"),
        ({"rate": float("nan"), "burst": 1}, ValueError, r"rate=\.\.\.\) must be a finite"),
        ({"rate": True, "burst": 1}, ValueError, r"rate=\.\.\.\) must be a finite"),
        ({"rate": "1", "burst": 1}, ValueError, r"rate=\.\.\.\) must be a finite"),
        ({"rate": 1, "burst": 0}, ValueError, r"RateLimit\(burst=\.\.\.\) must be a whole number"),
        ({"rate": 1, "burst": True}, ValueError, r"burst=\.\.\.\) must be a whole number >= 1"),
        ({"rate": 1, "burst": 1.5}, ValueError, r"burst=\.\.\.\) must be a whole number >= 1"),
        ({"rate": 1, "burst": 1, "clock": 0}, TypeError, r"RateLimit\(clock=\.\.\.\) takes a"),
        ({"rate": 1, "burst": 1, "sleep": 0}, TypeError, r"RateLimit\(sleep=\.\.\.\) takes an"),
    ],
)
def test_bad_configuration_is_refused(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        RateLimit(**kwargs)


def test_only_the_call_stages_can_be_wrapped() -> None:
    from strands_middleware.experimental import AgentStreamStage

    with pytest.raises(TypeError, match="RateLimit wraps InvokeModelStage or ExecuteToolStage"):
        RateLimit(AgentStreamStage, rate=1, burst=1)  # type: ignore[arg-type]


def test_it_is_one_wrap_middleware_on_its_stage() -> None:
    [middleware] = list(RateLimit(ExecuteToolStage, rate=1, burst=1))
    assert middleware.phase is ExecuteToolStage.Wrap
