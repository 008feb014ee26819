"""What a store does, one small async protocol per concern.

The catalog's shared items are written against these protocols, not against Redis: `Cache`
against `CacheStore`, `RateLimit` against `RateStore`, `ConcurrencyLimit` against `SlotStore`,
`UsageBudget` and `CallLimit` against `CounterStore`, `CircuitBreaker` against `BreakerStore`, and
`SessionStore` against `SnapshotStore`.
`InMemoryStore` implements them all in one process (the items' defaults are built on it);
`strands_middleware.stores.redis.RedisStore` implements them all on Redis, shared by every
process that points at the same server. Any object with the methods of a protocol can stand in
for it.

Each protocol's methods carry its concern's prefix (``cache_``, ``rate_``, ``slot_``, ``counter_``,
``breaker_``, ``snapshot_``), so one object can implement them all without a clash, and a ``name``
or ``key`` argument says which limiter, budget or session a call is about. Every decision a method
makes is atomic: two processes calling at once can never both get the last token, the last slot or
the last count. A store that cannot answer raises (a `StoreError` for the stores of this library);
the catalog item decides what that means for the call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

__all__ = [
    "BreakerStore",
    "CacheStore",
    "CounterStore",
    "RateStore",
    "SlotStore",
    "SnapshotStore",
    "Store",
]


@runtime_checkable
class CacheStore(Protocol):
    """Bytes under keys, each with its own expiry: where a shared `Cache` keeps results.

    Values are opaque bytes: `Cache` encodes each result as JSON before it reaches the store
    (never pickle, so an entry read back can only ever be data).
    """

    async def cache_get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or ``None`` when there is none (or it expired)."""
        ...

    async def cache_set(self, key: str, value: bytes, ttl: float | None) -> None:
        """Store ``value`` under ``key`` for ``ttl`` seconds (``None``: until evicted)."""
        ...


@runtime_checkable
class RateStore(Protocol):
    """Token buckets by name: where a shared `RateLimit` takes its tokens.

    A bucket holds up to ``burst`` tokens and refills at ``rate`` a second; every caller of one
    name must pass the same ``rate`` and ``burst``. Callers reserve tokens ahead, so they are
    served in arrival order and each waits exactly once.
    """

    async def rate_reserve(self, name: str, *, rate: float, burst: int) -> float:
        """Take one token of bucket ``name``, or reserve the next one to accrue.

        Returns:
            The seconds to wait before the call may start: 0 when a token was there.
        """
        ...

    async def rate_refund(self, name: str, *, rate: float, burst: int) -> None:
        """Give back a token reserved or spent for a call that did not happen."""
        ...


@runtime_checkable
class SlotStore(Protocol):
    """Counting semaphores by name, with leases: where a shared `ConcurrencyLimit` holds slots.

    A holder keeps its slot by renewing the lease before it runs out; a holder that stops (its
    process died) loses the slot when the lease expires, so a crash never leaks a slot for
    longer than one lease. Waiters are served first come, first served.
    """

    async def slot_acquire(self, name: str, *, limit: int, lease: float) -> str:
        """Wait for one of the ``limit`` slots of ``name`` and hold it for ``lease`` seconds.

        Returns:
            The holder's token, which `slot_renew` and `slot_release` take.
        """
        ...

    async def slot_renew(self, name: str, token: str, *, lease: float) -> bool:
        """Extend the lease of ``token`` to ``lease`` seconds from now.

        Returns:
            False when ``token`` no longer holds a slot (its lease ran out): nothing is renewed.
        """
        ...

    async def slot_release(self, name: str, token: str) -> None:
        """Free the slot ``token`` holds; nothing happens if it holds none any more."""
        ...


@runtime_checkable
class CounterStore(Protocol):
    """Named integer counters grouped under a key: where shared budgets and call limits count.

    A key holds any number of fields (``"model"``, ``"total"``, ...), each starting at 0.
    """

    async def counter_add(
        self, key: str, amounts: Mapping[str, int], *, limits: Mapping[str, int] | None = None
    ) -> dict[str, int] | None:
        """Add ``amounts`` to the fields of ``key`` at once, unless one would pass its limit.

        The check and the addition are one atomic step: a field with a limit may reach it but
        never pass it, however many callers race. Negative amounts give counts back.

        Returns:
            Every field named in ``amounts`` or ``limits`` with its value after the addition;
            ``None`` when a field would have passed its limit, in which case nothing was added.
        """
        ...

    async def counter_read(self, key: str, fields: Sequence[str]) -> dict[str, int]:
        """The current value of each of ``fields`` under ``key`` (0 for one never counted)."""
        ...


@runtime_checkable
class BreakerStore(Protocol):
    """Circuit breakers by name: where a shared `CircuitBreaker` keeps its circuit.

    Closed while calls succeed; ``threshold`` failures in a row open it for ``cooldown``
    seconds; then one probe call is let through, whose success closes it and whose failure opens
    it again. Every caller of one name must pass the same ``threshold`` and ``cooldown``.
    """

    async def breaker_admit(self, name: str, *, cooldown: float) -> float:
        """Ask to make a call through circuit ``name``.

        Returns:
            0 when the call may go ahead (closed, or this call is the half-open circuit's probe);
            otherwise the seconds until the circuit lets a call through again.
        """
        ...

    async def breaker_record(
        self, name: str, *, failed: bool, threshold: int, cooldown: float
    ) -> None:
        """Count the outcome of a call that went ahead: a success closes the circuit."""
        ...


@runtime_checkable
class SnapshotStore(Protocol):
    """Versioned snapshots, each handed out once: where `SessionStore` keeps paused runs."""

    async def snapshot_put(self, key: str, value: bytes, ttl: float) -> int:
        """Store ``value`` under ``key`` for ``ttl`` seconds, replacing what was there.

        Returns:
            The snapshot's version: 1 for the first under ``key``, one more at every put.
        """
        ...

    async def snapshot_take(self, key: str, version: int | None = None) -> tuple[int, bytes] | None:
        """Take the snapshot under ``key`` and delete it, in one atomic step.

        Of any number of callers racing for one snapshot, exactly one gets it.

        Args:
            key: The snapshot's key.
            version: Take it only if this is its version (a stale caller gets nothing).

        Returns:
            ``(version, value)``, or ``None`` when there is none, it expired, it was taken
            already, or its version is not ``version``.
        """
        ...


@runtime_checkable
class Store(CacheStore, RateStore, SlotStore, CounterStore, BreakerStore, SnapshotStore, Protocol):
    """A store for every shared item: `InMemoryStore` and ``RedisStore`` are both one."""
