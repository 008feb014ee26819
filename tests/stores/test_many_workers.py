"""Four worker processes on one redis-server share limits, budgets, a cache and paused runs.

Each test starts its workers fresh (``spawn``), lets them begin together, and checks what they
did between them. What a test measures is also reported under "measured figures" at the end of
the run; the assertions are the promises, with room where a figure depends on the machine.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncGenerator, Iterator
from concurrent.futures import ProcessPoolExecutor

import pytest

from strands_middleware import InvokeModelContext, InvokeModelStage, MiddlewareRegistry
from strands_middleware.agent import Agent
from strands_middleware.catalog import ConcurrencyLimit
from strands_middleware.events import TypedEvent
from strands_middleware.stores import PausedRun, SessionStore
from strands_middleware.stores.redis import RedisStore

from . import workers
from .agents import deletion_script, paused_agent_parts
from .redis_server import RedisServer

WORKERS = 4


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    """Four worker processes, started once for the tests of this module."""
    with workers.worker_pool(WORKERS) as executor:
        yield executor


def most_at_once(spans: list[tuple[float, float]]) -> int:
    """The most spans that overlap at any moment."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = most = 0
    for _, step in edges:
        running += step
        most = max(most, running)
    return most


def queued(server: RedisServer, queue: str) -> None:
    """Wait until a caller waits in ``queue``."""
    with server.client() as client:
        for _ in range(6000):
            if client.zcard(queue):
                return
            time.sleep(0.01)
    raise AssertionError(f"nobody queued in {queue}")


def test_four_workers_hold_a_shared_rate(
    pool: ProcessPoolExecutor, redis_server: RedisServer, prefix: str, figures: list[str]
) -> None:
    rate, calls = 40.0, 40
    started = sorted(
        time
        for times in workers.run_workers(
            pool, workers.rate_limited_calls, [(redis_server.url, prefix, rate, calls)] * WORKERS
        )
        for time in times
    )
    assert len(started) == WORKERS * calls
    # The first call takes the one token of the burst; every later one waited for its own.
    held = (len(started) - 1) / (started[-1] - started[0])
    figures.append(
        f"rate held: {held:.2f} calls/s by {WORKERS} processes under RateLimit(rate={rate:g}), "
        f"{held / rate:.3f}x the limit over {len(started)} calls in "
        f"{started[-1] - started[0]:.2f} s"
    )
    assert held <= rate * 1.05


def test_four_workers_never_run_more_calls_than_shared_slots(
    pool: ProcessPoolExecutor, redis_server: RedisServer, prefix: str, figures: list[str]
) -> None:
    limit, calls = 3, 12
    spans = [
        span
        for worker in workers.run_workers(
            pool, workers.limited_calls, [(redis_server.url, prefix, limit, calls, 0.02)] * WORKERS
        )
        for span in worker
    ]
    assert len(spans) == WORKERS * calls
    most = most_at_once(spans)
    figures.append(
        f"max holders: {most} of ConcurrencyLimit(limit={limit}) over {len(spans)} calls by "
        f"{WORKERS} processes with 2 agents each"
    )
    assert most <= limit


async def test_a_killed_holders_slot_comes_free_within_one_lease(
    redis_server: RedisServer, prefix: str, figures: list[str]
) -> None:
    lease = 1.0
    holding = workers.SPAWN.Queue()
    holder = workers.SPAWN.Process(
        target=workers.hold_a_slot_forever,
        args=(redis_server.url, prefix, lease, holding),
        daemon=True,
    )
    holder.start()
    try:
        await asyncio.to_thread(holding.get, True, 60)
        store = RedisStore.from_url(redis_server.url, prefix=prefix)
        registry = MiddlewareRegistry()
        registry.use(ConcurrencyLimit(limit=1, store=store, name="killed", lease=lease))
        entered: list[float] = []

        async def model(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
            entered.append(time.time())
            yield workers.answer()

        waiter = asyncio.create_task(registry.run(InvokeModelStage, workers.model_context(), model))
        await asyncio.to_thread(queued, redis_server, store.key("slots", "killed", "queue"))
        await asyncio.sleep(lease)  # the holder renews meanwhile: the waiter must keep waiting
        assert entered == []
        assert holder.pid is not None
        os.kill(holder.pid, signal.SIGKILL)
        killed = time.time()
        await asyncio.wait_for(waiter, 30)
        await store.aclose()
    finally:
        holder.kill()
        holder.join()
    recovered = entered[0] - killed
    figures.append(
        f"killed holder's slot free after {recovered:.3f} s (lease {lease:g} s; "
        "ConcurrencyLimit renews every lease/3)"
    )
    assert 0 < recovered < lease * 2


def test_four_workers_never_pass_a_shared_call_cap(
    pool: ProcessPoolExecutor, redis_server: RedisServer, prefix: str, figures: list[str]
) -> None:
    cap, attempts = 100, 40
    outcomes = workers.run_workers(
        pool, workers.capped_calls, [(redis_server.url, prefix, cap, attempts)] * WORKERS
    )
    ran = sum(made for made, _ in outcomes)
    refused = sum(refusals for _, refusals in outcomes)
    figures.append(
        f"call cap: {ran} of {WORKERS * attempts} model calls ran under "
        f"CallLimit(model_calls={cap}) shared by {WORKERS} processes; {refused} refused"
    )
    assert (ran, refused) == (cap, WORKERS * attempts - cap)


def test_four_workers_stop_at_a_shared_budget(
    pool: ProcessPoolExecutor, redis_server: RedisServer, prefix: str, figures: list[str]
) -> None:
    budget = 1000
    ran = sum(
        workers.run_workers(
            pool, workers.budgeted_calls, [(redis_server.url, prefix, budget)] * WORKERS
        )
    )
    spent = ran * workers.TOKENS_PER_CALL
    overshoot = spent - budget
    figures.append(
        f"budget overshoot: {overshoot} tokens past UsageBudget(max_total_tokens={budget}) "
        f"shared by {WORKERS} processes ({ran} calls of {workers.TOKENS_PER_CALL} tokens)"
    )
    # A call is let in only while the spending is under the budget, so past it go at most the
    # calls the other workers had in flight at that moment: one each.
    assert budget <= spent <= budget + (WORKERS - 1) * workers.TOKENS_PER_CALL


def test_a_cache_entry_one_worker_wrote_is_a_hit_in_the_others(
    pool: ProcessPoolExecutor, redis_server: RedisServer, prefix: str, figures: list[str]
) -> None:
    [writer] = workers.run_workers(pool, workers.cached_question, [(redis_server.url, prefix)])
    readers = workers.run_workers(
        pool, workers.cached_question, [(redis_server.url, prefix)] * (WORKERS - 1)
    )
    assert writer == (0, 1, 1)  # a miss: the model answered
    assert readers == [(1, 0, 0)] * (WORKERS - 1)  # hits: no model call at all
    figures.append(f"cache: 1 miss then {WORKERS - 1} hits in {WORKERS - 1} other processes")


async def test_racing_claims_resume_each_paused_session_exactly_once(
    pool: ProcessPoolExecutor, redis_server: RedisServer, prefix: str, figures: list[str]
) -> None:
    count = 200
    tools, middleware = paused_agent_parts()
    agent = Agent(model=deletion_script(), tools=tools, middleware=middleware)
    assert (await agent.invoke_async("Delete the report")).stop_reason == "interrupt"
    run = PausedRun.of(agent)
    store = RedisStore.from_url(redis_server.url, prefix=prefix)
    sessions = SessionStore(store, ttl=120)
    ids = [f"run-{n}" for n in range(count)]
    for session_id in ids:
        await sessions.save(session_id, run)
    await store.aclose()

    won = await asyncio.to_thread(
        workers.run_workers,
        pool,
        workers.claim_and_resume,
        [(redis_server.url, prefix, ids)] * WORKERS,
    )
    winners = [session_id for answers in won for session_id in answers]
    assert sorted(winners) == sorted(ids)  # every session claimed, none twice
    assert {answer for answers in won for answer in answers.values()} == {
        "end_turn: Done. (1 deleted)"  # each resume ran the approved tool once
    }
    figures.append(
        f"claims: {count} paused sessions raced by {WORKERS} processes, {len(winners)} claims "
        f"won, each once (per process: {[len(answers) for answers in won]})"
    )
