"""A first-come, first-served semaphore that belongs to no event loop and no thread.

The in-process `SlotStore` keeps one per name. Holders are known by token, so a release can only
free the slot its caller holds.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections import deque

__all__ = ["Slots"]


class Slots:
    """``limit`` slots, handed to waiters in arrival order.

    A released slot is handed straight to the oldest waiter, through that waiter's own loop
    (``call_soon_threadsafe``), so a waiter in another thread wakes correctly and no newcomer
    can overtake it. A waiter that is cancelled after being handed a slot passes it on.
    """

    __slots__ = ("_holders", "_limit", "_lock", "_waiters")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._holders: set[str] = set()
        self._waiters: deque[tuple[asyncio.Future[None], str]] = deque()

    @property
    def in_use(self) -> int:
        return len(self._holders)

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def holds(self, token: str) -> bool:
        return token in self._holders

    async def acquire(self, limit: int) -> str:
        token = uuid.uuid4().hex
        with self._lock:
            self._limit = limit
            if len(self._holders) < self._limit and not self._waiters:
                self._holders.add(token)
                return token
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            entry = (waiter, token)
            self._waiters.append(entry)
        try:
            await waiter
        except BaseException:
            with self._lock:
                queued = entry in self._waiters
                if queued:
                    self._waiters.remove(entry)
            if not queued and waiter.done() and not waiter.cancelled():
                self.release(token)  # handed a slot, but leaving: pass it on
            raise
        return token

    def release(self, token: str) -> None:
        with self._lock:
            if token not in self._holders:
                return
            self._holders.discard(token)
        self._hand_on()

    def _hand_on(self) -> None:
        while True:
            with self._lock:
                if not self._waiters or len(self._holders) >= self._limit:
                    return
                waiter, token = self._waiters.popleft()
                self._holders.add(token)
            try:
                waiter.get_loop().call_soon_threadsafe(self._hand_over, waiter, token)
            except RuntimeError:  # the waiter's loop is closed: nobody is waiting there
                with self._lock:
                    self._holders.discard(token)
                continue

    def _hand_over(self, waiter: asyncio.Future[None], token: str) -> None:
        if waiter.cancelled():
            self.release(token)
        else:
            waiter.set_result(None)
