"""The stores' typing contract (type-checked, never run).

Both stores are every protocol; each shared item takes the protocol it needs, so a store
lacking it is refused by the checker, as are a bad ``on_store_error`` and a store of the wrong
concern.
"""

from __future__ import annotations

from typing_extensions import assert_type

from strands_middleware.catalog import Cache, CallLimit, ConcurrencyLimit, RateLimit, UsageBudget
from strands_middleware.stores import (
    CacheStore,
    ClaimedSession,
    CounterStore,
    InMemoryStore,
    PausedRun,
    RateStore,
    SessionStore,
    SlotStore,
    SnapshotStore,
    Store,
)
from strands_middleware.stores.redis import RedisStore

redis_store = RedisStore.from_url("redis://localhost:6379/0", prefix="app", timeout=0.5)
memory_store = InMemoryStore()

every: list[Store] = [redis_store, memory_store]
caches: list[CacheStore] = [redis_store, memory_store]
rates: list[RateStore] = [redis_store, memory_store]
slots: list[SlotStore] = [redis_store, memory_store]
counters: list[CounterStore] = [redis_store, memory_store]
snapshots: list[SnapshotStore] = [redis_store, memory_store]

Cache(store=redis_store, on_store_error="allow")
RateLimit(rate=1, burst=1, store=redis_store, name="provider")
ConcurrencyLimit(limit=2, store=redis_store, name="provider", lease=30)
UsageBudget(max_total_tokens=1000, store=redis_store, key="team")
CallLimit(model_calls=10, store=redis_store, key="team", scope="agent")

sessions = SessionStore(redis_store, ttl=3600)


async def hand_over(run: PausedRun) -> None:
    assert_type(await sessions.save("run", run), int)
    assert_type(await sessions.save("run", {"any": "json"}), int)
    claimed = await sessions.claim("run", version=1)
    assert_type(claimed, ClaimedSession | None)
    if claimed is not None:
        assert_type(claimed.run(), PausedRun)


# A policy that is neither "raise" nor "allow".
RateLimit(rate=1, burst=1, store=redis_store, name="p", on_store_error="ignore")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

# A store of another concern: a SnapshotStore holds no tokens, a RateStore no counts.
RateLimit(rate=1, burst=1, store=sessions.store, name="p")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
UsageBudget(max_total_tokens=1, store=rates[0], key="k")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
