"""Stores: where shared items keep their state, in this process or on a server every worker uses.

One small async protocol per concern (`CacheStore`, `RateStore`, `SlotStore`, `CounterStore`,
`BreakerStore`, `SnapshotStore`; `Store` is all of them), `InMemoryStore` implementing them all in
this process, and `SessionStore`, which keeps paused runs so that any worker can resume them
exactly once. ``strands_middleware.stores.redis.RedisStore`` implements every protocol on Redis
(extra ``redis``). The catalog's `Cache`, `RateLimit`, `ConcurrencyLimit`, `UsageBudget`,
`CallLimit` and `CircuitBreaker` take one as ``store=``.
"""

from ._memory import InMemoryStore
from ._protocols import (
    BreakerStore,
    CacheStore,
    CounterStore,
    RateStore,
    SlotStore,
    SnapshotStore,
    Store,
)
from ._sessions import ClaimedSession, PausedRun, SessionStore

__all__ = [
    "BreakerStore",
    "CacheStore",
    "ClaimedSession",
    "CounterStore",
    "InMemoryStore",
    "PausedRun",
    "RateStore",
    "SessionStore",
    "SlotStore",
    "SnapshotStore",
    "Store",
]
