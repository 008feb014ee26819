"""One redis-py asyncio client per event loop, closed when its loop shuts down.

A ``redis.asyncio`` client's connections belong to the loop that opened them: used from a
second loop they fail ("Event loop is closed", or "attached to a different loop"). Every
synchronous ``agent(...)`` call runs its own loop (``asyncio.run``), and a store outlives many of
them, so the store keeps one client per running loop.

Closing: a client is closed by an async generator started on its loop and parked at its first
``yield``. ``asyncio.run`` (and ``asyncio.Runner``, and pytest-asyncio's loops) finish with
``loop.shutdown_asyncgens()``, which closes every generator still parked on the loop, so the
generator's ``finally`` closes the client on that loop while it still runs. A loop closed
without that step loses its entry when the next loop makes a client (its sockets close when
they are collected).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["LoopClients"]

C = TypeVar("C")


@dataclass
class _Entry(Generic[C]):
    client: C
    closer: AsyncGenerator[None, None]


class LoopClients(Generic[C]):
    """The client of the running loop, made by ``connect`` on first use in that loop.

    Args:
        connect: Makes a new client (called with the loop running).
        close: Closes a client.
    """

    def __init__(self, connect: Callable[[], C], close: Callable[[C], Awaitable[object]]) -> None:
        self._connect = connect
        self._close = close
        self._entries: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Entry[C]] = (
            weakref.WeakKeyDictionary()
        )

    async def get(self) -> C:
        """This loop's client."""
        loop = asyncio.get_running_loop()
        entry = self._entries.get(loop)
        if entry is not None:
            return entry.client
        for stale in [old for old in self._entries if old.is_closed()]:
            del self._entries[stale]
        client = self._connect()
        closer = self._closer(loop, client)
        # Recorded before the first await, so a task asking meanwhile shares this client. The
        # entry holds the generator strongly (the loop only holds it weakly); parking it at its
        # yield makes the loop close it at shutdown.
        self._entries[loop] = _Entry(client, closer)
        await closer.asend(None)
        return client

    async def aclose(self) -> None:
        """Close this loop's client now (a new one is made on next use)."""
        entry = self._entries.get(asyncio.get_running_loop())
        if entry is not None:
            await entry.closer.aclose()

    def __len__(self) -> int:
        """How many loops hold a client."""
        return len(self._entries)

    async def _closer(
        self, loop: asyncio.AbstractEventLoop, client: C
    ) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            # The entry goes first: the client refers to its loop, so the weak key alone would
            # never let go of it.
            self._entries.pop(loop, None)
            await self._close(client)
