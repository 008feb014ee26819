"""Worker processes for the multi-process tests: each runs agents or stages on a shared RedisStore.

`run_workers` runs a worker function in each of several spawned processes, lets them all begin
at once, and returns what each returned. Every worker function takes the server's URL and a key
prefix first and returns plain data.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import time
import uuid
from collections.abc import AsyncGenerator, Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, wait
from typing import Any

import redis

from strands_middleware import InvokeModelContext, InvokeModelStage, MiddlewareRegistry
from strands_middleware.agent import Agent
from strands_middleware.catalog import (
    Cache,
    CallLimit,
    CallLimitExceeded,
    ConcurrencyLimit,
    RateLimit,
    UsageBudget,
    UsageBudgetExceeded,
)
from strands_middleware.events import ModelStopReason, TypedEvent
from strands_middleware.stores import SessionStore
from strands_middleware.stores.redis import RedisStore
from strands_middleware.testing import text_turn

from .agents import ConfiguredModel, approvals, deleted, paused_agent_parts

SPAWN = multiprocessing.get_context("spawn")
TOKENS_PER_CALL = 10
_BARRIER_TIMEOUT = 60


def worker_pool(size: int) -> ProcessPoolExecutor:
    """``size`` fresh interpreters (``spawn``), as separate hosts would be; reused across tests."""
    return ProcessPoolExecutor(max_workers=size, mp_context=SPAWN)


def run_workers(
    pool: ProcessPoolExecutor,
    target: Callable[..., Any],
    arguments: Sequence[tuple[Any, ...]],
    *,
    timeout: float = 60,
) -> list[Any]:
    """Run ``target(*args)`` once per ``args`` in the pool's processes, all starting together.

    Every ``args`` starts with the server's URL and a key prefix. The workers meet at a barrier
    kept in Redis before they start, so none has a head start; a worker blocked at the barrier
    cannot take a second task, so each task runs in a process of its own.

    Raises:
        AssertionError: the workers did not finish within ``timeout`` seconds.
    """
    url, prefix = arguments[0][0], arguments[0][1]
    barrier = f"{prefix}:barrier:{uuid.uuid4().hex}"
    futures = [
        pool.submit(_at_barrier, barrier, len(arguments), target, args) for args in arguments
    ]
    with _client(url) as client:
        deadline = time.monotonic() + _BARRIER_TIMEOUT
        while int(client.llen(f"{barrier}:ready")) < len(arguments):
            assert time.monotonic() < deadline, "the workers never all reached the barrier"
            time.sleep(0.01)
        client.rpush(f"{barrier}:go", *["go"] * len(arguments))
    done, _ = wait(futures, timeout=timeout)
    assert len(done) == len(futures), f"workers did not finish within {timeout} s"
    return [future.result() for future in futures]


def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url)


def _at_barrier(barrier: str, count: int, target: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    with _client(args[0]) as client:
        client.rpush(f"{barrier}:ready", os.getpid())
        assert client.blpop([f"{barrier}:go"], timeout=_BARRIER_TIMEOUT) is not None
    return target(*args)


def model_context() -> InvokeModelContext:
    return InvokeModelContext(
        agent=None,
        messages=[{"role": "user", "content": [{"text": "hi"}]}],
        system_prompt=None,
        tool_specs=[],
        tool_choice=None,
        invocation_state={},
        model=ConfiguredModel([]),
    )


def answer() -> ModelStopReason:
    tokens = TOKENS_PER_CALL
    return ModelStopReason(
        "end_turn",
        {"role": "assistant", "content": [{"text": "ok"}]},
        {"inputTokens": tokens // 2, "outputTokens": tokens - tokens // 2, "totalTokens": tokens},
        {"latencyMs": 0},
    )


# ---- workers -----------------------------------------------------------------------------------


def rate_limited_calls(url: str, prefix: str, rate: float, calls: int) -> list[float]:
    """Make ``calls`` model calls under a shared RateLimit; the times each one started."""

    async def main() -> list[float]:
        store = RedisStore.from_url(url, prefix=prefix)
        registry = MiddlewareRegistry()
        registry.use(RateLimit(rate=rate, burst=1, store=store, name="provider"))
        started: list[float] = []

        async def model(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
            started.append(time.time())
            yield answer()

        for _ in range(calls):
            await registry.run(InvokeModelStage, model_context(), model)
        return started

    return asyncio.run(main())


def limited_calls(
    url: str, prefix: str, limit: int, calls: int, hold: float
) -> list[tuple[float, float]]:
    """Make ``calls`` model calls under a shared ConcurrencyLimit; when each ran, start to end."""

    async def main() -> list[tuple[float, float]]:
        store = RedisStore.from_url(url, prefix=prefix)
        registry = MiddlewareRegistry()
        registry.use(ConcurrencyLimit(limit=limit, store=store, name="provider", lease=5))
        spans: list[tuple[float, float]] = []

        async def model(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
            start = time.time()
            await asyncio.sleep(hold)
            spans.append((start, time.time()))
            yield answer()

        async def agent_calls() -> None:  # two concurrent agents in each process
            for _ in range(calls // 2):
                await registry.run(InvokeModelStage, model_context(), model)

        await asyncio.gather(agent_calls(), agent_calls())
        return spans

    return asyncio.run(main())


def hold_a_slot_forever(url: str, prefix: str, lease: float, holding: Any) -> None:
    """Take the only slot and never give it back; reports when it holds it (then gets killed)."""

    async def main() -> None:
        store = RedisStore.from_url(url, prefix=prefix)
        registry = MiddlewareRegistry()
        registry.use(ConcurrencyLimit(limit=1, store=store, name="killed", lease=lease))

        async def model(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
            holding.put(time.time())
            await asyncio.sleep(3600)
            yield answer()

        await registry.run(InvokeModelStage, model_context(), model)

    asyncio.run(main())


def capped_calls(url: str, prefix: str, cap: int, attempts: int) -> tuple[int, int]:
    """Attempt model calls under a shared CallLimit; how many ran and how many were refused."""

    async def main() -> tuple[int, int]:
        store = RedisStore.from_url(url, prefix=prefix)
        registry = MiddlewareRegistry()
        registry.use(CallLimit(model_calls=cap, store=store, key="team"))
        ran = refused = 0

        async def model(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
            yield answer()

        for _ in range(attempts):
            try:
                await registry.run(InvokeModelStage, model_context(), model)
                ran += 1
            except CallLimitExceeded:
                refused += 1
        return ran, refused

    return asyncio.run(main())


def budgeted_calls(url: str, prefix: str, budget: int) -> int:
    """Make model calls under a shared UsageBudget until it stops them; how many ran."""

    async def main() -> int:
        store = RedisStore.from_url(url, prefix=prefix)
        registry = MiddlewareRegistry()
        registry.use(UsageBudget(max_total_tokens=budget, store=store, key="team"))
        ran = 0

        async def model(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
            await asyncio.sleep(random.uniform(0, 0.004))
            yield answer()

        while True:
            try:
                await registry.run(InvokeModelStage, model_context(), model)
            except UsageBudgetExceeded:
                return ran
            ran += 1

    return asyncio.run(main())


def cached_question(url: str, prefix: str) -> tuple[int, int, int]:
    """Ask an agent with a shared Cache one question; (hits, misses, model calls made)."""
    store = RedisStore.from_url(url, prefix=prefix)
    cache = Cache(store=store, ttl=60)
    model = ConfiguredModel([text_turn("Paris.")])
    agent = Agent(model=model, middleware=[cache])
    assert str(agent("What is the capital of France?")) == "Paris."
    return cache.hits, cache.misses, len(model.requests)


def claim_and_resume(url: str, prefix: str, session_ids: list[str]) -> dict[str, str]:
    """Race for every session; resume each one won. What each won session answered."""

    async def main() -> dict[str, str]:
        sessions = SessionStore(RedisStore.from_url(url, prefix=prefix), ttl=60)
        answers: dict[str, str] = {}
        for session_id in random.sample(session_ids, len(session_ids)):
            claimed = await sessions.claim(session_id)
            if claimed is None:
                continue
            run = claimed.run()
            tools, middleware = paused_agent_parts()
            agent = Agent(
                model=ConfiguredModel([text_turn("Done.")]),
                tools=tools,
                middleware=middleware,
                messages=run.messages,
                interrupt_state=run.interrupt_state,
            )
            result = await agent.invoke_async(approvals(list(run.interrupt_state.owed)))
            answers[session_id] = f"{result.stop_reason}: {result} ({len(deleted)} deleted)"
            deleted.clear()
        return answers

    return asyncio.run(main())
