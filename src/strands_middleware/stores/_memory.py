"""`InMemoryStore`: every store protocol, in this process's memory.

It is what the catalog's items use when they are given no store (each item keeps a private
one), and what a program passes as ``store=`` to share limits between agents of one process by
name, or to test code written for a shared store without a server. Nothing leaves the process:
for limits shared between processes, use ``strands_middleware.stores.redis.RedisStore``.

It belongs to no event loop and is safe across threads, like the items built on it: every
``agent(...)`` call runs its own loop. Leases are accepted and ignored: a holder cannot die
without the whole process, and its slots, going with it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from ._breaker import Circuit
from ._bucket import TokenBucket
from ._lru import ExpiringLru
from ._slots import Slots

__all__ = ["InMemoryStore"]

_DEFAULT_MAX_ENTRIES = 1024
_FIRST_SWEEP = 64


class InMemoryStore:
    """Caches, token buckets, slots, counters, circuit breakers and snapshots, in this process.

    Example:
        ```python
        store = InMemoryStore()
        agent.use(RateLimit(rate=2, burst=5, store=store, name="bedrock"))
        other_agent.use(RateLimit(rate=2, burst=5, store=store, name="bedrock"))  # one bucket
        ```

    Args:
        max_entries: How many cache entries to hold; the least recently used go first.
        clock: A monotonic clock in seconds, for rates and expiry (tests pass a fake).
    """

    def __init__(
        self,
        *,
        max_entries: int = _DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        given = cast(object, max_entries)
        if isinstance(given, bool) or not isinstance(given, int) or given < 1:
            raise ValueError(
                f"InMemoryStore(max_entries=...) must be a whole number >= 1, got {max_entries!r}"
            )
        if not callable(clock):
            raise TypeError(
                f"InMemoryStore(clock=...) takes a function returning seconds, got {clock!r}"
            )
        self._clock = clock
        self._lock = threading.Lock()
        self._cache: ExpiringLru[bytes] = ExpiringLru(max_entries, clock)
        self._buckets: dict[str, TokenBucket] = {}
        self._slots: dict[str, Slots] = {}
        self._counters: dict[str, dict[str, int]] = {}
        self._circuits: dict[str, Circuit] = {}
        self._snapshots: dict[str, tuple[int, bytes | None, float]] = {}
        self._sweep_at = _FIRST_SWEEP

    def __repr__(self) -> str:
        return f"InMemoryStore(max_entries={self._cache.max_entries})"

    # ---- CacheStore ---------------------------------------------------------------------------

    async def cache_get(self, key: str) -> bytes | None:
        with self._lock:
            return self._cache.get(key)

    async def cache_set(self, key: str, value: bytes, ttl: float | None) -> None:
        with self._lock:
            self._cache.set(key, value, ttl)

    # ---- RateStore ----------------------------------------------------------------------------

    async def rate_reserve(self, name: str, *, rate: float, burst: int) -> float:
        return self._bucket(name, rate, burst).take(rate, burst)

    async def rate_refund(self, name: str, *, rate: float, burst: int) -> None:
        self._bucket(name, rate, burst).give_back(rate, burst)

    def rate_level(self, name: str) -> float | None:
        """Tokens in bucket ``name`` now (negative while callers wait); None if never used."""
        with self._lock:
            bucket = self._buckets.get(name)
        return None if bucket is None else bucket.level()

    def _bucket(self, name: str, rate: float, burst: int) -> TokenBucket:
        with self._lock:
            bucket = self._buckets.get(name)
            if bucket is None:
                bucket = self._buckets[name] = TokenBucket(rate, burst, self._clock)
            return bucket

    # ---- SlotStore ----------------------------------------------------------------------------

    async def slot_acquire(self, name: str, *, limit: int, lease: float) -> str:
        return await self._semaphore(name, limit).acquire(limit)

    async def slot_renew(self, name: str, token: str, *, lease: float) -> bool:
        with self._lock:
            slots = self._slots.get(name)
        return slots is not None and slots.holds(token)

    async def slot_release(self, name: str, token: str) -> None:
        with self._lock:
            slots = self._slots.get(name)
        if slots is not None:
            slots.release(token)

    def slot_counts(self, name: str) -> tuple[int, int]:
        """``(in use, waiting)`` for the slots of ``name``."""
        with self._lock:
            slots = self._slots.get(name)
        return (0, 0) if slots is None else (slots.in_use, slots.waiting)

    def _semaphore(self, name: str, limit: int) -> Slots:
        with self._lock:
            slots = self._slots.get(name)
            if slots is None:
                slots = self._slots[name] = Slots(limit)
            return slots

    # ---- CounterStore -------------------------------------------------------------------------

    async def counter_add(
        self, key: str, amounts: Mapping[str, int], *, limits: Mapping[str, int] | None = None
    ) -> dict[str, int] | None:
        limits = limits or {}
        with self._lock:
            counts = self._counters.setdefault(key, {})
            for field, limit in limits.items():
                if counts.get(field, 0) + amounts.get(field, 0) > limit:
                    return None
            for field, amount in amounts.items():
                counts[field] = counts.get(field, 0) + amount
            return {field: counts.get(field, 0) for field in (*amounts, *limits)}

    async def counter_read(self, key: str, fields: Sequence[str]) -> dict[str, int]:
        with self._lock:
            counts = self._counters.get(key, {})
            return {field: counts.get(field, 0) for field in fields}

    # ---- BreakerStore -------------------------------------------------------------------------

    async def breaker_admit(self, name: str, *, cooldown: float) -> float:
        with self._lock:
            circuit = self._circuits.get(name)
            return 0.0 if circuit is None else circuit.admit(self._clock(), cooldown)

    async def breaker_record(
        self, name: str, *, failed: bool, threshold: int, cooldown: float
    ) -> None:
        with self._lock:
            circuit = self._circuits.get(name)
            if not failed:
                # A closed circuit with no failures is the same as none: keep only the others.
                self._circuits.pop(name, None)
                return
            if circuit is None:
                circuit = self._circuits[name] = Circuit()
            circuit.record(self._clock(), failed=True, threshold=threshold, cooldown=cooldown)

    def breaker_state(self, name: str) -> str:
        """``"closed"``, ``"open"`` or ``"half-open"``: circuit ``name`` now, in this process."""
        with self._lock:
            circuit = self._circuits.get(name)
            return "closed" if circuit is None else circuit.state(self._clock())

    # ---- SnapshotStore ------------------------------------------------------------------------

    async def snapshot_put(self, key: str, value: bytes, ttl: float) -> int:
        with self._lock:
            if len(self._snapshots) >= self._sweep_at:
                self._sweep_snapshots()
            version = self._live_version(key) + 1
            self._snapshots[key] = (version, value, self._clock() + ttl)
            return version

    async def snapshot_take(self, key: str, version: int | None = None) -> tuple[int, bytes] | None:
        with self._lock:
            entry = self._snapshots.get(key)
            if entry is None or self._clock() >= entry[2]:
                return None
            stored_version, value, expires = entry
            if value is None or (version is not None and version != stored_version):
                return None
            # The version outlives the value, so a later put counts on from it and a caller
            # holding an old version can never take a newer snapshot.
            self._snapshots[key] = (stored_version, None, expires)
            return stored_version, value

    def _sweep_snapshots(self) -> None:
        # Expired entries are dropped in bulk once the table has doubled since the last sweep,
        # so a put costs O(1) amortised and the table stays within twice the live sessions.
        now = self._clock()
        for key in [key for key, entry in self._snapshots.items() if now >= entry[2]]:
            del self._snapshots[key]
        self._sweep_at = max(2 * len(self._snapshots), _FIRST_SWEEP)

    def _live_version(self, key: str) -> int:
        entry = self._snapshots.get(key)
        return 0 if entry is None or self._clock() >= entry[2] else entry[0]
