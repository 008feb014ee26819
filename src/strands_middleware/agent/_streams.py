"""Running several event streams as one: the reference agent's concurrent tool round."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator

from ..events import TypedEvent

__all__ = ["closing", "merged"]


class closing:
    """``contextlib.aclosing`` for Python 3.10, typed for async generators."""

    def __init__(self, stream: AsyncGenerator[TypedEvent, None]) -> None:
        self._stream = stream

    async def __aenter__(self) -> AsyncGenerator[TypedEvent, None]:
        return self._stream

    async def __aexit__(self, *exc: object) -> None:
        await self._stream.aclose()


async def merged(
    streams: list[AsyncGenerator[TypedEvent, None]], *, sequential: bool
) -> AsyncIterator[TypedEvent]:
    """Yield the events of several streams, running them one by one or concurrently."""
    if sequential or len(streams) <= 1:
        for stream in streams:
            async with closing(stream) as events:
                async for event in events:
                    yield event
        return
    queue: asyncio.Queue[tuple[int, TypedEvent | BaseException | None]] = asyncio.Queue()

    async def pump(index: int, stream: AsyncGenerator[TypedEvent, None]) -> None:
        try:
            async with closing(stream) as events:
                async for event in events:
                    await queue.put((index, event))
        except BaseException as exc:
            await queue.put((index, exc))
            return
        await queue.put((index, None))

    tasks = [asyncio.create_task(pump(i, s)) for i, s in enumerate(streams)]
    try:
        remaining = len(tasks)
        while remaining:
            _index, item = await queue.get()
            if item is None:
                remaining -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield item
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
