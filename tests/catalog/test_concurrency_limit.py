"""ConcurrencyLimit: shared slots, released on every exit path and before any pause."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator, Callable
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.catalog._concurrency_limit import ConcurrencyLimit
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


class Peak:
    """A Wrap handler (for inside the limit) that records how many calls run at once.

    With ``meet=n`` a call holds on until ``n`` calls are inside at once (or a second has
    passed): on a host whose run takes many event-loop steps to reach its model call (LangGraph
    schedules nodes as tasks), a few steps are not enough for the other agents' calls to arrive.
    """

    def __init__(self, meet: int = 0) -> None:
        self.active = 0
        self.peak = 0
        self.entered: list[str] = []
        self._meet = meet
        self._met = asyncio.Event()

    async def __call__(
        self, context: Any, next_fn: MiddlewareNext[Any, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        self.active += 1
        self.peak = max(self.peak, self.active)
        self.entered.append(getattr(context, "tag", ""))
        if self._meet and self.active >= self._meet:
            self._met.set()
        try:
            for _ in range(5):
                await asyncio.sleep(0)  # give every other call the chance to start
            if self._meet:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._met.wait(), 1.0)
            async for event in next_fn(context):
                yield event
        finally:
            self.active -= 1


class Held:
    """A model-call stream inside the limit that stays open until released."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def terminal(self, context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        yield TypedEvent({"started": True})
        await self.release.wait()
        yield TypedEvent({"done": True})


async def forever() -> None:
    await asyncio.Event().wait()


async def until(condition: Callable[[], bool]) -> None:
    """Let the other tasks run until ``condition`` holds (they need a few steps, not time)."""
    for _ in range(100):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the other tasks never got there")


def registry_with(*middleware: Any) -> MiddlewareRegistry:
    registry = MiddlewareRegistry()
    registry.use(*middleware)
    return registry


# ---- sharing -------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [1, 2, 3])
async def test_agents_sharing_one_object_share_its_slots(
    make_agent: AgentFactory, limit: int
) -> None:
    slots = ConcurrencyLimit(limit=limit)
    peak = Peak(meet=limit)
    agents = [
        make_agent(
            model=ScriptedModel([text_turn(f"answer {n}")]),
            middleware=[slots, InvokeModelStage.wrap(peak)],
        )
        for n in range(3)
    ]
    results = await asyncio.gather(*(agent.invoke_async("hi") for agent in agents))
    assert [str(result) for result in results] == ["answer 0", "answer 1", "answer 2"]
    assert peak.peak == limit
    assert (slots.in_use, slots.waiting) == (0, 0)


async def test_agents_with_objects_of_their_own_do_not_share(make_agent: AgentFactory) -> None:
    peak = Peak(meet=2)
    agents = [
        make_agent(
            model=ScriptedModel([text_turn("x")]),
            middleware=[ConcurrencyLimit(limit=1), InvokeModelStage.wrap(peak)],
        )
        for _ in range(2)
    ]
    await asyncio.gather(*(agent.invoke_async("hi") for agent in agents))
    assert peak.peak == 2


async def test_the_concurrent_tool_calls_of_one_turn_are_limited(make_agent: AgentFactory) -> None:
    @tool
    async def work(n: int) -> int:
        """Work."""
        return n

    peak = Peak()
    model = ScriptedModel(
        [
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": f"t{n}", "name": "work", "input": {"n": n}}}
                    for n in range(3)
                ],
            },
            text_turn("done"),
        ]
    )
    agent = make_agent(
        model=model,
        tools=[work],
        middleware=[ConcurrencyLimit(ExecuteToolStage, limit=1), ExecuteToolStage.wrap(peak)],
    )
    await agent.invoke_async("go")
    assert peak.peak == 1


def test_one_object_outlives_many_event_loops(make_agent: AgentFactory) -> None:
    @tool
    async def work(n: int) -> int:
        """Work."""
        await asyncio.sleep(0)
        return n

    slots = ConcurrencyLimit(ExecuteToolStage, limit=1)
    for _ in range(2):  # each agent(...) runs its own event loop; both contend for the slot
        model = ScriptedModel(
            [
                {
                    "role": "assistant",
                    "content": [
                        {"toolUse": {"toolUseId": "a", "name": "work", "input": {"n": 1}}},
                        {"toolUse": {"toolUseId": "b", "name": "work", "input": {"n": 2}}},
                    ],
                },
                text_turn("done"),
            ]
        )
        assert str(make_agent(model=model, tools=[work], middleware=[slots])("go")) == "done"
    assert slots.in_use == 0


def test_agents_in_different_threads_share_the_slots(make_agent: AgentFactory) -> None:
    slots = ConcurrencyLimit(limit=1)
    lock = threading.Lock()
    order: list[str] = []
    saw_a_waiter: list[bool] = []

    async def inside(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        with lock:
            first = not order
            order.append("in")
        if first:  # hold the slot until the other thread queues for it
            for _ in range(5000):
                if slots.waiting:
                    saw_a_waiter.append(True)
                    break
                await asyncio.sleep(0.001)
        assert slots.in_use == 1
        async for event in next_fn(context):
            yield event
        with lock:
            order.append("out")

    results: list[str] = []

    def run() -> None:
        agent = make_agent(
            model=ScriptedModel([text_turn("ok")]),
            middleware=[slots, InvokeModelStage.wrap(inside)],
        )
        results.append(str(agent("hi")))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert results == ["ok", "ok"]
    assert saw_a_waiter == [True]
    assert order == ["in", "out", "in", "out"]
    assert (slots.in_use, slots.waiting) == (0, 0)


async def test_waiters_are_served_first_come_first_served() -> None:
    slots = ConcurrencyLimit(limit=1)
    peak = Peak()
    held = Held()
    registry = registry_with(slots, InvokeModelStage.wrap(peak))
    holder = registry.invoke(InvokeModelStage, model_context(), held.terminal)
    await holder.__anext__()

    async def call(tag: str) -> None:
        context = model_context()
        context.tag = tag  # type: ignore[attr-defined]
        async for _ in registry.invoke(InvokeModelStage, context, held.terminal):
            pass

    waiters = [asyncio.create_task(call(tag)) for tag in ("first", "second", "third")]
    await until(lambda: slots.waiting == 3)
    held.release.set()
    async for _ in holder:
        pass
    await asyncio.gather(*waiters)
    assert peak.entered == ["", "first", "second", "third"]


# ---- every exit path releases --------------------------------------------------------------


def test_a_failing_call_releases_its_slot(make_agent: AgentFactory) -> None:
    slots = ConcurrencyLimit(limit=1)
    model = ScriptedModel([ConnectionError("throttled"), text_turn("ok")])
    agent = make_agent(model=model, middleware=[slots])
    with pytest.raises(ConnectionError):
        agent("hi")
    assert slots.in_use == 0
    assert str(agent("again")) == "ok"


async def test_a_call_cancelled_while_holding_a_slot_releases_it(make_agent: AgentFactory) -> None:
    slots = ConcurrencyLimit(limit=1)
    started = asyncio.Event()

    async def hang(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        started.set()
        await forever()
        yield TypedEvent()  # pragma: no cover

    agent = make_agent(model=ScriptedModel([]), middleware=[slots, InvokeModelStage.wrap(hang)])
    task = asyncio.create_task(agent.invoke_async("hi"))
    await started.wait()
    assert slots.in_use == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert slots.in_use == 0


async def test_a_call_cancelled_while_waiting_leaves_the_queue_and_takes_nothing() -> None:
    slots = ConcurrencyLimit(limit=1)
    held = Held()
    registry = registry_with(slots)
    holder = registry.invoke(InvokeModelStage, model_context(), held.terminal)
    await holder.__anext__()

    async def waits() -> None:
        async for _ in registry.invoke(InvokeModelStage, model_context(), held.terminal):
            pass  # pragma: no cover - cancelled while queued

    waiter = asyncio.create_task(waits())
    await until(lambda: slots.waiting == 1)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert (slots.in_use, slots.waiting) == (1, 0)
    await holder.aclose()
    assert slots.in_use == 0


@pytest.mark.parametrize("handed_over_first", [False, True])
async def test_a_waiter_cancelled_as_it_is_handed_a_slot_passes_it_on(
    handed_over_first: bool,
) -> None:
    slots = ConcurrencyLimit(limit=1)
    held = Held()
    registry = registry_with(slots)
    holder = registry.invoke(InvokeModelStage, model_context(), held.terminal)
    await holder.__anext__()

    async def waits() -> None:
        async for _ in registry.invoke(InvokeModelStage, model_context(), held.terminal):
            pass  # pragma: no cover - cancelled as the slot arrives

    waiter = asyncio.create_task(waits())
    await until(lambda: slots.waiting == 1)
    await holder.aclose()  # the slot goes to the waiter...
    if handed_over_first:
        await asyncio.sleep(0)  # ...which gets it, but is cancelled before it resumes
    waiter.cancel()  # ...or is cancelled before it gets it
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert (slots.in_use, slots.waiting) == (0, 0)


async def test_a_consumer_that_stops_reading_releases_the_slot_by_closing() -> None:
    slots = ConcurrencyLimit(limit=1)
    held = Held()
    stream = registry_with(slots).invoke(InvokeModelStage, model_context(), held.terminal)
    assert await stream.__anext__() == {"started": True}
    assert slots.in_use == 1
    await stream.aclose()
    assert slots.in_use == 0


# ---- never held while waiting on a human ---------------------------------------------------


def test_a_gate_inside_the_limit_releases_the_slot_when_it_pauses(make_agent: AgentFactory) -> None:
    @tool
    def delete(path: str) -> str:
        """Delete."""
        return path

    async def gate(
        context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        answer = context.interrupt("approve")
        assert answer.response == "yes"
        async for event in next_fn(context):
            yield event

    slots = ConcurrencyLimit(ExecuteToolStage, limit=1)
    agent = make_agent(
        model=ScriptedModel([tool_turn("delete", {"path": "a"}), text_turn("done")]),
        tools=[delete],
        middleware=[slots, ExecuteToolStage.wrap(gate)],
    )
    paused = agent("delete a")
    assert paused.stop_reason == "interrupt"
    assert slots.in_use == 0
    responses = [
        {"interruptResponse": {"interruptId": interrupt.id, "response": "yes"}}
        for interrupt in paused.interrupts
    ]
    assert str(agent(responses)) == "done"
    assert slots.in_use == 0


async def test_an_interrupt_event_releases_the_slot_before_the_consumer_sees_it() -> None:
    slots = ConcurrencyLimit(ExecuteToolStage, limit=1)
    tool_use: Any = {"toolUseId": "t1", "name": "ask", "input": {}}

    async def asks(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        yield TypedEvent({"progress": 1})
        yield ToolInterruptEvent(tool_use, [Interrupt(id="i", name="ask")])

    context = tool_context("ask", tool_use_id="t1")
    in_use_when_seen: list[int] = []
    async for event in registry_with(slots).invoke(ExecuteToolStage, context, asks):
        in_use_when_seen.append(slots.in_use)
        assert not isinstance(event, ToolResultEvent)
    assert in_use_when_seen == [1, 0]
    assert slots.in_use == 0


# ---- configuration -------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [0, -1, True, 1.5, "2", None])
def test_the_limit_must_be_a_whole_number_of_at_least_one(limit: Any) -> None:
    with pytest.raises(
        ValueError, match=r"ConcurrencyLimit\(limit=\.\.\.\) must be a whole number >= 1"
    ):
        ConcurrencyLimit(limit=limit)


def test_only_the_call_stages_can_be_wrapped() -> None:
    from strands_middleware.experimental import AgentStreamStage

    with pytest.raises(
        TypeError, match="ConcurrencyLimit wraps InvokeModelStage or ExecuteToolStage"
    ):
        ConcurrencyLimit(AgentStreamStage, limit=1)  # type: ignore[arg-type]


def test_it_is_one_wrap_middleware_on_its_stage() -> None:
    [middleware] = list(ConcurrencyLimit(ExecuteToolStage, limit=1))
    assert middleware.phase is ExecuteToolStage.Wrap
