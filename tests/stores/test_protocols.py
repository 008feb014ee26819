"""Every store keeps the protocols' promises: the in-process store and Redis, the same tests.

Each test runs on an `InMemoryStore` and on a `RedisStore` against a real redis-server.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from strands_middleware.stores import InMemoryStore, Store
from strands_middleware.stores.redis import RedisStore

from .redis_server import RedisServer

SLOW = 0.01
"""A rate of one token per 100 s: nothing accrues while a test runs, so waits are exact."""


@pytest.fixture(params=["memory", "redis"])
async def store(
    request: pytest.FixtureRequest, redis_server: RedisServer, prefix: str
) -> AsyncIterator[Store]:
    if request.param == "memory":
        yield InMemoryStore()
        return
    redis_store = RedisStore.from_url(redis_server.url, prefix=prefix, timeout=2.0)
    yield redis_store
    await redis_store.aclose()


@pytest.fixture
def queued(store: Store, redis_server: RedisServer) -> Callable[[str, int], Awaitable[None]]:
    """Waits until ``count`` callers wait for a slot of ``name``, as the store sees it."""

    def waiting(name: str) -> int:
        if isinstance(store, InMemoryStore):
            return store.slot_counts(name)[1]
        assert isinstance(store, RedisStore)
        with redis_server.client() as client:
            return int(client.zcard(store.key("slots", name, "queue")))

    async def wait_for(name: str, count: int) -> None:
        for _ in range(2000):
            if waiting(name) >= count:
                return
            await asyncio.sleep(0.005)
        raise AssertionError(f"{count} waiter(s) never queued for {name!r}")

    return wait_for


# ---- cache ---------------------------------------------------------------------------------


async def test_a_cache_entry_is_read_back_until_it_expires(store: Store) -> None:
    assert await store.cache_get("k") is None
    await store.cache_set("k", b"\x00value", None)
    await store.cache_set("short", b"gone soon", 0.05)
    assert await store.cache_get("k") == b"\x00value"
    await asyncio.sleep(0.2)
    assert await store.cache_get("short") is None
    assert await store.cache_get("k") == b"\x00value"


# ---- rate ----------------------------------------------------------------------------------


async def test_a_burst_goes_at_once_and_the_next_token_is_reserved_with_its_wait(
    store: Store,
) -> None:
    waits = [await store.rate_reserve("r", rate=SLOW, burst=2) for _ in range(4)]
    assert waits[:2] == [0.0, 0.0]
    assert 99 < waits[2] <= 100  # one interval of 100 s
    assert 199 < waits[3] <= 200  # reserved behind it: waiters are served in order


async def test_a_refund_gives_the_next_caller_the_token_back(store: Store) -> None:
    await store.rate_reserve("r", rate=SLOW, burst=1)
    assert await store.rate_reserve("r", rate=SLOW, burst=1) > 99
    await store.rate_refund("r", rate=SLOW, burst=1)  # the waiter left
    await store.rate_refund("r", rate=SLOW, burst=1)  # the first call never happened
    assert await store.rate_reserve("r", rate=SLOW, burst=1) == 0.0


async def test_buckets_are_separate_by_name(store: Store) -> None:
    assert await store.rate_reserve("a", rate=SLOW, burst=1) == 0.0
    assert await store.rate_reserve("b", rate=SLOW, burst=1) == 0.0


# ---- slots ---------------------------------------------------------------------------------


async def test_slots_are_limited_and_a_release_hands_one_to_the_first_waiter(
    store: Store, queued: Callable[[str, int], Awaitable[None]]
) -> None:
    first = await store.slot_acquire("s", limit=2, lease=30)
    await store.slot_acquire("s", limit=2, lease=30)
    early = asyncio.create_task(store.slot_acquire("s", limit=2, lease=30))
    await queued("s", 1)
    late = asyncio.create_task(store.slot_acquire("s", limit=2, lease=30))
    await queued("s", 2)
    assert not early.done() and not late.done()
    await store.slot_release("s", first)
    token = await asyncio.wait_for(early, 10)
    assert not late.done()
    await store.slot_release("s", token)
    await asyncio.wait_for(late, 10)


async def test_a_release_frees_only_the_callers_own_slot(store: Store) -> None:
    token = await store.slot_acquire("s", limit=1, lease=30)
    await store.slot_release("s", "not-a-holder")
    assert await store.slot_renew("s", token, lease=30)
    await store.slot_release("s", token)
    assert not await store.slot_renew("s", token, lease=30)


async def test_a_cancelled_waiter_leaves_the_queue(
    store: Store, queued: Callable[[str, int], Awaitable[None]]
) -> None:
    token = await store.slot_acquire("s", limit=1, lease=30)
    waiter = asyncio.create_task(store.slot_acquire("s", limit=1, lease=30))
    await queued("s", 1)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    await store.slot_release("s", token)
    await asyncio.wait_for(store.slot_acquire("s", limit=1, lease=30), 10)


# ---- counters ------------------------------------------------------------------------------


async def test_counters_add_up_to_their_limit_and_never_past_it(store: Store) -> None:
    assert await store.counter_add("c", {"model": 2}, limits={"model": 3}) == {"model": 2}
    assert await store.counter_add("c", {"model": 2}, limits={"model": 3}) is None
    assert await store.counter_add("c", {"model": 1}, limits={"model": 3}) == {"model": 3}
    assert await store.counter_read("c", ["model", "never"]) == {"model": 3, "never": 0}


async def test_a_counter_add_is_all_or_nothing_across_fields(store: Store) -> None:
    await store.counter_add("c", {"tools": 1, "tool:x": 1})
    refused = await store.counter_add(
        "c", {"tools": 1, "tool:x": 1}, limits={"tools": 5, "tool:x": 1}
    )
    assert refused is None
    assert await store.counter_read("c", ["tools", "tool:x"]) == {"tools": 1, "tool:x": 1}
    assert await store.counter_add("c", {"tools": -1, "tool:x": -1}) == {"tools": 0, "tool:x": 0}


async def test_many_racing_adds_never_pass_the_limit(store: Store) -> None:
    outcomes = await asyncio.gather(
        *(store.counter_add("race", {"n": 1}, limits={"n": 7}) for _ in range(20))
    )
    assert sum(outcome is not None for outcome in outcomes) == 7
    assert await store.counter_read("race", ["n"]) == {"n": 7}


# ---- snapshots -----------------------------------------------------------------------------


async def test_snapshots_are_versioned_and_taken_once(store: Store) -> None:
    assert await store.snapshot_put("s", b"first", 60) == 1
    assert await store.snapshot_put("s", b"second", 60) == 2
    assert await store.snapshot_take("s", version=1) is None  # an answer to the earlier pause
    assert await store.snapshot_take("s", version=2) == (2, b"second")
    assert await store.snapshot_take("s") is None
    assert await store.snapshot_put("s", b"third", 60) == 3  # versions count on after a take
    assert await store.snapshot_take("s") == (3, b"third")


async def test_of_many_racing_takes_exactly_one_wins(store: Store) -> None:
    await store.snapshot_put("s", b"run", 60)
    outcomes = await asyncio.gather(*(store.snapshot_take("s") for _ in range(20)))
    assert [outcome for outcome in outcomes if outcome is not None] == [(1, b"run")]


async def test_an_unclaimed_snapshot_expires(store: Store) -> None:
    await store.snapshot_put("s", b"run", 0.05)
    await asyncio.sleep(0.2)
    assert await store.snapshot_take("s") is None


# ---- circuit breakers --------------------------------------------------------------------------

COOLDOWN = 0.2


async def test_a_circuit_opens_at_the_threshold_and_lets_one_probe_through_after_the_cooldown(
    store: Store,
) -> None:
    async def fail() -> None:
        await store.breaker_record("c", failed=True, threshold=2, cooldown=COOLDOWN)

    assert await store.breaker_admit("c", cooldown=COOLDOWN) == 0
    await fail()
    assert await store.breaker_admit("c", cooldown=COOLDOWN) == 0  # one failure: still closed
    await fail()
    wait = await store.breaker_admit("c", cooldown=COOLDOWN)
    assert 0 < wait <= COOLDOWN
    await asyncio.sleep(wait + 0.02)
    assert await store.breaker_admit("c", cooldown=COOLDOWN) == 0  # the probe
    assert await store.breaker_admit("c", cooldown=COOLDOWN) > 0  # only one at a time
    await store.breaker_record("c", failed=False, threshold=2, cooldown=COOLDOWN)
    assert await store.breaker_admit("c", cooldown=COOLDOWN) == 0  # closed again
    await fail()
    assert await store.breaker_admit("c", cooldown=COOLDOWN) == 0  # the count started over


async def test_a_failed_probe_opens_the_circuit_for_another_whole_cooldown(store: Store) -> None:
    await store.breaker_record("p", failed=True, threshold=1, cooldown=COOLDOWN)
    await asyncio.sleep(COOLDOWN + 0.02)
    assert await store.breaker_admit("p", cooldown=COOLDOWN) == 0
    await store.breaker_record("p", failed=True, threshold=1, cooldown=COOLDOWN)
    wait = await store.breaker_admit("p", cooldown=COOLDOWN)
    assert COOLDOWN / 2 < wait <= COOLDOWN


async def test_a_success_between_failures_keeps_a_circuit_closed(store: Store) -> None:
    for failed in (True, True, False, True, True):
        await store.breaker_record("s", failed=failed, threshold=3, cooldown=COOLDOWN)
    assert await store.breaker_admit("s", cooldown=COOLDOWN) == 0


async def test_circuits_of_different_names_are_apart(store: Store) -> None:
    await store.breaker_record("a", failed=True, threshold=1, cooldown=COOLDOWN)
    assert await store.breaker_admit("a", cooldown=COOLDOWN) > 0
    assert await store.breaker_admit("b", cooldown=COOLDOWN) == 0
