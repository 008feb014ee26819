"""Four worker processes share limits, a budget, a cache and paused runs through one Redis server.

Each worker is a separate process with its own agents, as it would be behind a queue or a web
server. Between them they stay under one rate and one concurrency limit, spend one token
budget, answer a repeated question from one cache, and when a run pauses for approval, the
human's answer can reach any worker: exactly one claims the paused run and resumes it.

Needs the redis extra (``pip install "strands-middleware[redis]"``) and a Redis server:

Run: ``REDIS_URL=redis://localhost:6379/0 python examples/multi_worker.py``
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
import uuid
from collections.abc import AsyncGenerator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from strands_middleware import InvokeModelContext, InvokeModelStage, MiddlewareNext, TypedEvent
from strands_middleware.agent import Agent
from strands_middleware.catalog import (
    Cache,
    ConcurrencyLimit,
    RateLimit,
    ToolApproval,
    UsageBudget,
)
from strands_middleware.content import Usage
from strands_middleware.stores import PausedRun, SessionStore
from strands_middleware.stores.redis import RedisStore
from strands_middleware.testing import ScriptedModel, text_turn, tool_turn
from strands_middleware.tools import tool

WORKERS = 4
USAGE: Usage = {"inputTokens": 7, "outputTokens": 3, "totalTokens": 10}


class Model(ScriptedModel):
    """A scripted model configured like a provider's, so equal requests share cache entries."""

    def get_config(self) -> dict[str, Any]:
        return {"model_id": "example-model"}


@tool
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def store(prefix: str) -> RedisStore:
    url = os.environ.get("REDIS_URL", "redis://localhost:6379/0")
    return RedisStore.from_url(url, prefix=prefix)


def shared_middleware(redis: RedisStore, spans: list[tuple[float, float]]) -> list[Any]:
    """What every agent of every worker uses: the limits and the budget live in Redis."""

    @InvokeModelStage.wrap
    async def timed(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        start = time.time()
        await asyncio.sleep(0.05)  # a provider takes its time
        async for event in next_fn(context):
            yield event
        spans.append((start, time.time()))

    return [
        Cache(store=redis, ttl=300),  # first: a hit costs no token, no slot and no budget
        RateLimit(rate=20, burst=4, store=redis, name="provider"),
        ConcurrencyLimit(limit=2, store=redis, name="provider", lease=10),
        UsageBudget(max_total_tokens=10_000, store=redis, key="example-team"),
        timed,
    ]


def answer_questions(prefix: str, worker: int) -> list[tuple[float, float]]:
    """A worker answers two questions of its own; when each model call ran."""

    async def main() -> list[tuple[float, float]]:
        redis = store(prefix)
        spans: list[tuple[float, float]] = []
        for question in (f"Question {worker}a", f"Question {worker}b"):
            agent = Agent(
                model=Model([text_turn(f"Answer to {question}")], usage=USAGE),
                middleware=shared_middleware(redis, spans),
            )
            await agent.invoke_async(question)
        return spans

    return asyncio.run(main())


def repeat_a_question(prefix: str) -> int:
    """Ask what worker 0 asked first; how many model calls that took."""
    model = Model([text_turn("Answer to Question 0a")], usage=USAGE)
    agent = Agent(model=model, middleware=shared_middleware(store(prefix), []))
    agent("Question 0a")
    return len(model.requests)


def spent(prefix: str) -> int:
    budget = UsageBudget(max_total_tokens=10_000, store=store(prefix), key="example-team")
    return asyncio.run(budget.spent_in_store())["totalTokens"]


def pause_for_approval(prefix: str, run_id: str) -> str:
    """A worker's agent asks to delete a file; the run pauses and is saved for whoever resumes."""

    async def main() -> str:
        agent = Agent(
            model=Model([tool_turn("delete_file", {"path": "/tmp/report.txt"})]),
            tools=[delete_file],
            middleware=[ToolApproval(tools=["delete_file"])],
        )
        result = await agent.invoke_async("Delete the report")
        await SessionStore(store(prefix), ttl=3600).save(run_id, PausedRun.of(agent))
        [interrupt] = result.interrupts
        return f"{interrupt.reason['name']} {interrupt.reason['input']}"

    return asyncio.run(main())


def resume_if_claimed(prefix: str, run_id: str, answer: str) -> str | None:
    """The human's answer reached this worker: resume the run if this worker claims it."""

    async def main() -> str | None:
        claimed = await SessionStore(store(prefix), ttl=3600).claim(run_id)
        if claimed is None:
            return None  # another worker has it
        run = claimed.run()
        agent = Agent(
            model=Model([text_turn("Done.")]),
            tools=[delete_file],
            middleware=[ToolApproval(tools=["delete_file"])],
            messages=run.messages,
            interrupt_state=run.interrupt_state,
        )
        responses = [
            {"interruptResponse": {"interruptId": interrupt.id, "response": answer}}
            for interrupt in run.interrupt_state.owed
        ]
        return str(await agent.invoke_async(responses))

    return asyncio.run(main())


def most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = most = 0
    for _, step in edges:
        running += step
        most = max(most, running)
    return most


def main() -> None:
    prefix = f"example-{uuid.uuid4().hex[:8]}"  # a fresh set of keys for every run
    spawn = multiprocessing.get_context("spawn")  # fresh interpreters, like separate hosts
    with ProcessPoolExecutor(max_workers=WORKERS, mp_context=spawn) as workers:
        jobs = [workers.submit(answer_questions, prefix, n) for n in range(WORKERS)]
        spans = [span for job in jobs for span in job.result()]
        print(
            f"answered: {len(spans)} questions in {WORKERS} workers; "
            f"never more than 2 model calls at once: {most_at_once(spans) <= 2}"
        )
        calls = workers.submit(repeat_a_question, prefix).result()
        print(f"cache: a question asked again in another worker took {calls} model calls")
        print(f"budget: {workers.submit(spent, prefix).result()} tokens spent across workers")

        run_id = "run-42"
        asked = workers.submit(pause_for_approval, prefix, run_id).result()
        print(f"paused: {run_id} waits for approval of {asked}")
        outcomes = [
            job.result()
            for job in [
                workers.submit(resume_if_claimed, prefix, run_id, "approve") for _ in range(WORKERS)
            ]
        ]
        answers = [outcome for outcome in outcomes if outcome is not None]
        print(
            f"claims: {len(outcomes)} workers got the approval, {len(answers)} claimed {run_id} "
            f"and resumed it: {answers[0]}"
        )


if __name__ == "__main__":
    main()
