"""`ConcurrencyLimit`: at most ``limit`` model calls (or tool calls) in flight at once.

A provider account or a fragile backend takes so many requests at a time; an agent that runs
tools concurrently, or many agents in one process, can easily send more. This is a semaphore
around the stage, with these rules:

* **The state lives on the object, or in a store.** Every agent that uses the same
  `ConcurrencyLimit` shares its slots, whether the agents run in one event loop or each in its
  own thread (``agent(...)`` runs its own loop). Waiters are served first come, first served.
  The slots belong to no event loop, so one object can outlive many ``asyncio.run`` calls.
  With ``store=`` and ``name=``, every process using that store and name shares the slots.
* **A slot is held from the start of the call to its end.** It is taken before ``next_fn`` is
  called and released when the inner stream finishes, on every exit path: normal end, exception,
  cancellation (while waiting for a slot or while holding one) and a consumer that stops reading
  early (closing the stream releases it; so does the registry when the invocation ends).
* **In a store, a slot is a lease.** The call renews its lease every third of ``lease``
  seconds while it runs, so a call may take as long as it needs; a process that dies stops
  renewing, and its slots come free within one lease. A lease that runs out while the call
  still runs (the event loop was blocked for a whole lease) is lost: the call finishes, a
  `StoreWarning` says so, and for that moment one more call may run than ``limit``.
* **Never hold a slot while waiting on a human.** An interrupt releases at once: an
  `InterruptException` raised inside the chain (a gate registered after this item) and an
  interrupt event in the stream (a tool asking a human) both free the slot before the pause
  reaches the consumer. A gate registered before this item asks before a slot is taken at all,
  which is the order to prefer.
* **A call counts once, whatever happens inside.** A `Retry` registered after this item retries
  inside the one slot; registered before it, each attempt queues for a slot of its own.
* **When the store fails.** By default the call raises `StoreError` naming the item and the
  store; ``on_store_error="allow"`` runs the call without a slot and warns (`StoreWarning`).
  A release that fails only warns: the lease frees the slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import warnings
from collections.abc import AsyncGenerator, Callable
from typing import Any, cast

from ..engine import halts_stage
from ..engine._stage import Middleware
from ..events import TypedEvent
from ..exceptions import StoreWarning
from ..stages._invoke_model import InvokeModelStage
from ..stores._memory import InMemoryStore
from ..stores._protocols import SlotStore
from ._base import (
    CallStage,
    CatalogMiddleware,
    OnStoreError,
    check_call_stage,
    check_on_store_error,
    check_positive_number,
    check_store,
    check_store_name,
    check_whole_number,
)
from ._store_calls import FAILED_OPEN, StoreCalls

__all__ = ["ConcurrencyLimit"]

_DEFAULT_LEASE = 15.0


class ConcurrencyLimit(CatalogMiddleware):
    """Lets at most ``limit`` calls of a stage run at once, across every agent using it.

    Example:
        ```python
        provider_slots = ConcurrencyLimit(limit=4)       # share one object between agents
        researcher = Agent(model=model, middleware=[provider_slots])
        writer = Agent(model=model, middleware=[provider_slots])
        agent.use(ConcurrencyLimit(ExecuteToolStage, limit=2))
        store = RedisStore.from_url("redis://localhost:6379/0")
        agent.use(ConcurrencyLimit(limit=4, store=store, name="bedrock", lease=30))  # every worker
        ```

    Args:
        stage: ``InvokeModelStage`` (the default) or ``ExecuteToolStage``.
        limit: How many calls may run at once (at least 1).
        store: Where the slots live, shared by every process using it (a `SlotStore`, such as
            ``RedisStore``); in this object when omitted.
        name: The slots' name in ``store`` (required with it).
        lease: Seconds a slot in ``store`` is held without renewal: how long the slots of a
            process that died stay taken. Renewed every third of it while the call runs.
        on_store_error: ``"raise"`` (the default) or ``"allow"``: see the module notes.
    """

    def __init__(
        self,
        stage: CallStage = InvokeModelStage,
        *,
        limit: int,
        store: SlotStore | None = None,
        name: str | None = None,
        lease: float = _DEFAULT_LEASE,
        on_store_error: OnStoreError = "raise",
    ) -> None:
        check_call_stage("ConcurrencyLimit", stage)
        check_whole_number("ConcurrencyLimit", "limit", limit, minimum=1)
        check_positive_number("ConcurrencyLimit", "lease", lease, of="seconds")
        check_on_store_error("ConcurrencyLimit", on_store_error)
        check_store_name("ConcurrencyLimit", "name", name, store=store, what="the slots")
        if store is not None:
            check_store(
                "ConcurrencyLimit",
                store,
                SlotStore,
                "async slot_acquire, slot_renew and slot_release",
            )
        self.stage = stage
        self.limit = limit
        self.name = name
        self.lease = float(lease)
        self.store: SlotStore = store if store is not None else InMemoryStore()
        self._slots_name = name if name is not None else "slots"
        label = f"ConcurrencyLimit(name={name!r})" if name is not None else "ConcurrencyLimit"
        self._calls = StoreCalls(label, self.store, on_store_error)

    @property
    def in_use(self) -> int:
        """How many slots are held right now."""
        return self._counts()[0]

    @property
    def waiting(self) -> int:
        """How many calls are waiting for a slot."""
        return self._counts()[1]

    def _counts(self) -> tuple[int, int]:
        store = cast(object, self.store)
        if isinstance(store, InMemoryStore):
            return store.slot_counts(self._slots_name)
        raise RuntimeError(
            f"ConcurrencyLimit(name={self.name!r}): the slots live in {store!r}, not in this "
            "process"
        )

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        store = self.store
        name = self._slots_name
        limit = self.limit
        lease = self.lease
        calls = self._calls
        # Leases matter where a holder can die alone: not in this process's own memory.
        leased = not isinstance(cast(object, store), InMemoryStore)

        async def concurrency_limit(
            context: Any, next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]]
        ) -> AsyncGenerator[TypedEvent, None]:
            token = await calls.take(store.slot_acquire(name, limit=limit, lease=lease))
            if token is FAILED_OPEN:
                async for event in next_fn(context):
                    yield event
                return
            renewal = (
                asyncio.create_task(_renew(store, name, token, lease, calls.item))
                if leased
                else None
            )

            async def release() -> None:
                if renewal is not None:
                    renewal.cancel()
                    # Whatever befell the renewal was reported when it happened; the call's own
                    # outcome is what the caller gets.
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await renewal
                await calls.settle(store.slot_release(name, token), "release its slot")

            held = True
            try:
                async for event in next_fn(context):
                    if held and halts_stage(event):
                        held = False
                        await release()
                    yield event
            finally:
                if held:
                    await release()

        concurrency_limit.__qualname__ = f"ConcurrencyLimit[{self.stage.name}]"
        return [self.stage.wrap(concurrency_limit)]


async def _renew(store: SlotStore, name: str, token: str, lease: float, item: str) -> None:
    """Keep a slot's lease alive while its call runs (cancelled when the call releases it)."""
    every = lease / 3
    while True:
        await asyncio.sleep(every)
        try:
            renewed = await store.slot_renew(name, token, lease=lease)
        except Exception as error:
            warnings.warn(
                f"{item} could not renew the lease of its slot ({error}); it tries again in "
                f"{every:g} s, and the slot is lost if that lasts {lease:g} s",
                StoreWarning,
                stacklevel=1,
            )
            continue
        if not renewed:
            warnings.warn(
                f"{item} lost its slot: its lease of {lease:g} s ran out before it was renewed "
                "(was the event loop blocked?). The call goes on without it",
                StoreWarning,
                stacklevel=1,
            )
            return
