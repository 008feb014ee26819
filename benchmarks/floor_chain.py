"""The least a floor adapter does to run this library's Wrap handler functions on a host.

A floor contestant (``bench_e2e.py``) hands the very handler functions the bridge runs the
host's own objects and events: each handler is called with the host's request and a ``next_fn``
that opens the next handler, the innermost opening the host's own call. Each handler is one
generator hop and nothing else: no context object, no translation, no driver, no cleanup rules.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

__all__ = ["Handler", "around", "around_call", "last"]

Handler = Callable[[Any, Callable[[Any], AsyncIterator[Any]]], AsyncIterator[Any]]


def around(
    handlers: Sequence[Handler], context: Any, terminal: Callable[[Any], AsyncIterator[Any]]
) -> AsyncIterator[Any]:
    """The stream of ``handlers`` (outermost first) around ``terminal`` for ``context``."""
    inner = terminal
    for handler in reversed(handlers[1:]):
        inner = _bound(handler, inner)
    return handlers[0](context, inner)


def _bound(
    handler: Handler, inner: Callable[[Any], AsyncIterator[Any]]
) -> Callable[[Any], AsyncIterator[Any]]:
    return lambda context: handler(context, inner)


async def last(stream: AsyncIterator[Any]) -> Any:
    """The last event of ``stream`` (what a host wanting one result takes from the handlers)."""
    event = None
    async for event in stream:  # noqa: B007 - the last one is the answer
        pass
    return event


async def around_call(
    handlers: Sequence[Handler], request: Any, call: Callable[[Any], Awaitable[Any]]
) -> Any:
    """What ``call(request)`` returns with ``handlers`` around it, its result one event.

    How a host hook that hands over a whole call (no stream) runs the handlers.
    """
    if not handlers:
        return await call(request)

    async def terminal(given: Any) -> AsyncIterator[Any]:
        yield await call(given)

    return await last(around(handlers, request, terminal))
