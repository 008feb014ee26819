"""Many agents sharing one middleware object, and many concurrent invocations on one registry.

Every run here is bounded in count and in time (``asyncio.wait_for``), so a deadlock fails the
test instead of hanging it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

from strands_middleware import (
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    MiddlewareStage,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

AGENTS = 40
BOUND_SECONDS = 20


class SharedCounter:
    """One object registered on many agents: counts calls and watches how many overlap."""

    def __init__(self) -> None:
        self.calls = 0
        self.in_flight = 0
        self.peak = 0
        self.contexts: list[InvokeModelContext] = []

    def middleware(self) -> Any:
        @InvokeModelStage.wrap
        async def count(
            context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            self.calls += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.contexts.append(context)  # held, so no two can share an id
            try:
                await asyncio.sleep(0)
                async for event in next_fn(context):
                    yield event
            finally:
                self.in_flight -= 1

        return count


@tool
async def echo(text: str) -> str:
    """Echo after a pause."""
    await asyncio.sleep(0)
    return text


async def test_many_agents_sharing_one_middleware_stay_independent() -> None:
    shared = SharedCounter()
    counter = shared.middleware()
    agents = [
        Agent(
            model=ScriptedModel(
                [
                    tool_turn("echo", {"text": f"agent-{n}"}, tool_use_id=f"t{n}"),
                    text_turn(f"done-{n}"),
                ]
            ),
            tools=[echo],
            middleware=[counter],
        )
        for n in range(AGENTS)
    ]
    results = await asyncio.wait_for(
        asyncio.gather(*(agent.invoke_async(f"go {n}") for n, agent in enumerate(agents))),
        BOUND_SECONDS,
    )
    assert [str(result) for result in results] == [f"done-{n}" for n in range(AGENTS)]
    for n, agent in enumerate(agents):
        tool_result = agent.messages[2]["content"][0]["toolResult"]  # type: ignore[typeddict-item]
        assert tool_result["content"] == [{"text": f"agent-{n}"}]
        assert agent.messages[0]["content"] == [{"text": f"go {n}"}]
    assert shared.calls == 2 * AGENTS
    assert shared.in_flight == 0
    assert shared.peak > 1  # the runs really overlapped
    assert len({id(c) for c in shared.contexts}) == shared.calls  # each call, its own context


@dataclass(frozen=True)
class Job:
    number: int


class Answer(dict[str, Any]):
    pass


JOBS = MiddlewareStage[Job, Answer, Answer]("jobs", result_type=Answer)


async def test_many_concurrent_invocations_on_one_registry() -> None:
    registry = MiddlewareRegistry()
    log: list[int] = []

    async def double(job: Job) -> Job:
        await asyncio.sleep(0)
        return Job(job.number * 2)

    async def record(
        job: Job, next_fn: MiddlewareNext[Job, Answer]
    ) -> AsyncGenerator[Answer, None]:
        log.append(job.number)
        async for event in next_fn(job):
            await asyncio.sleep(0)
            yield event

    async def terminal(job: Job) -> AsyncGenerator[Answer, None]:
        for part in range(3):
            await asyncio.sleep(0)
            yield Answer(part=part, number=job.number)

    registry.add_middleware(JOBS.Input, double)
    registry.add_middleware(JOBS, record)

    async def one(n: int) -> list[Answer]:
        return [event async for event in registry.invoke(JOBS, Job(n), terminal)]

    results = await asyncio.wait_for(asyncio.gather(*(one(n) for n in range(500))), BOUND_SECONDS)
    for n, events in enumerate(results):
        assert events == [Answer(part=p, number=2 * n) for p in range(3)]
    assert sorted(log) == [2 * n for n in range(500)]
