"""`ConcurrencyLimit`: at most ``limit`` model calls (or tool calls) in flight at once.

A provider account or a fragile backend takes so many requests at a time; an agent that runs
tools concurrently, or many agents in one process, can easily send more. This is a semaphore
around the stage, with four rules:

* **The state lives on the object.** Every agent that uses the same `ConcurrencyLimit` shares its
  slots, whether the agents run in one event loop or each in its own thread (``agent(...)`` runs
  its own loop). Waiters are served first come, first served. The slots belong to no event loop,
  so one object can outlive many ``asyncio.run`` calls.
* **A slot is held from the start of the call to its end.** It is taken before ``next_fn`` is
  called and released when the inner stream finishes, on every exit path: normal end, exception,
  cancellation (while waiting for a slot or while holding one) and a consumer that stops reading
  early (closing the stream releases it; so does the registry when the invocation ends).
* **Never hold a slot while waiting on a human.** An interrupt releases at once: an
  `InterruptException` raised inside the chain (a gate registered after this item) and an
  interrupt event in the stream (a tool asking a human) both free the slot before the pause
  reaches the consumer. A gate registered before this item asks before a slot is taken at all,
  which is the order to prefer.
* **A call counts once, whatever happens inside.** A `Retry` registered after this item retries
  inside the one slot; registered before it, each attempt queues for a slot of its own.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import AsyncGenerator, Callable
from typing import Any

from ..engine.result import halts_stage
from ..engine.stage import Middleware
from ..events import TypedEvent
from ..stages.invoke_model import InvokeModelStage
from ._base import CallStage, CatalogMiddleware, check_call_stage, check_whole_number

__all__ = ["ConcurrencyLimit"]


class ConcurrencyLimit(CatalogMiddleware):
    """Lets at most ``limit`` calls of a stage run at once, across every agent using it.

    Example:
        ```python
        provider_slots = ConcurrencyLimit(limit=4)       # share one object between agents
        researcher = Agent(model=model, middleware=[provider_slots])
        writer = Agent(model=model, middleware=[provider_slots])
        agent.use(ConcurrencyLimit(ExecuteToolStage, limit=2))
        ```

    Args:
        stage: ``InvokeModelStage`` (the default) or ``ExecuteToolStage``.
        limit: How many calls may run at once (at least 1).
    """

    def __init__(self, stage: CallStage = InvokeModelStage, *, limit: int) -> None:
        check_call_stage("ConcurrencyLimit", stage)
        check_whole_number("ConcurrencyLimit", "limit", limit, minimum=1)
        self.stage = stage
        self.limit = limit
        self._slots = _Slots(limit)

    @property
    def in_use(self) -> int:
        """How many slots are held right now."""
        return self._slots.in_use

    @property
    def waiting(self) -> int:
        """How many calls are waiting for a slot."""
        return self._slots.waiting

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        slots = self._slots

        async def concurrency_limit(
            context: Any, next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]]
        ) -> AsyncGenerator[TypedEvent, None]:
            await slots.acquire()
            held = True
            try:
                async for event in next_fn(context):
                    if held and halts_stage(event):
                        held = False
                        slots.release()
                    yield event
            finally:
                if held:
                    slots.release()

        concurrency_limit.__qualname__ = f"ConcurrencyLimit[{self.stage.name}]"
        return [self.stage.wrap(concurrency_limit)]


class _Slots:
    """A first-come, first-served semaphore that belongs to no event loop and no thread.

    A released slot is handed straight to the oldest waiter, through that waiter's own loop
    (``call_soon_threadsafe``), so a waiter in another thread wakes correctly and no newcomer
    can overtake it. A waiter that is cancelled after being handed a slot passes it on.
    """

    __slots__ = ("_free", "_limit", "_lock", "_waiters")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._free = limit
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def in_use(self) -> int:
        return self._limit - self._free

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> None:
        with self._lock:
            if self._free > 0:
                self._free -= 1
                return
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:
            with self._lock:
                queued = waiter in self._waiters
                if queued:
                    self._waiters.remove(waiter)
            if not queued and waiter.done() and not waiter.cancelled():
                self.release()  # handed a slot, but leaving: pass it on
            raise

    def release(self) -> None:
        while True:
            with self._lock:
                if not self._waiters:
                    self._free += 1
                    return
                waiter = self._waiters.popleft()
            try:
                waiter.get_loop().call_soon_threadsafe(self._hand_over, waiter)
            except RuntimeError:  # the waiter's loop is closed: nobody is waiting there
                continue
            return

    def _hand_over(self, waiter: asyncio.Future[None]) -> None:
        if waiter.cancelled():
            self.release()
        else:
            waiter.set_result(None)
