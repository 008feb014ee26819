"""`RetriedStart`: a Wrap handler's stream that may try its call once more, without a hop.

A handler that only needs to catch an error raised before the first event (and then call
``next_fn`` once more) would otherwise be a generator re-yielding every event of the call: one
generator hop per streamed event for a decision made before the first. `RetriedStart` is that
handler's stream instead: its first ``__anext__`` opens the inner stream and awaits its first
event, trying once more if ``again`` says so; every later ``__anext__`` hands the consumer the
inner stream's own awaitable, so an event is passed on by one plain method call, not by a
generator frame resumed and suspended.

The chain (see `._chain`) takes it as a handler's stream as it is: it neither wraps it in a
generator nor records it, since it holds nothing of its own to release; the streams it opens
through ``next_fn`` are recorded as they open, and closed by the chain's cleanup like any.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine
from typing import Any, cast

__all__ = ["RetriedStart"]


class RetriedStart(AsyncGenerator[Any, None]):
    """The events of ``next_fn(context)``; an error before the first event may open it again.

    Args:
        next_fn: The handler's ``next_fn``; called on the first ``__anext__``, as a generator
            handler would call it when first iterated.
        context: The context of the first try.
        again: Called with an `Exception` raised before the first event: the context of the
            one more try, or None to let the error go on (it decides what a control-flow
            exception does, too). It is called at most once; an error of the second try goes
            on as it is.
    """

    __slots__ = ("_again", "_context", "_next", "_next_fn", "_stream")

    def __init__(
        self,
        next_fn: Callable[[Any], AsyncIterator[Any]],
        context: Any,
        again: Callable[[Exception], Any | None],
    ) -> None:
        self._next_fn = next_fn
        self._context = context
        self._again = again
        self._stream: AsyncIterator[Any] | None = None
        self._next: Callable[[], Coroutine[Any, Any, Any]] = _ended

    @property
    def current(self) -> AsyncIterator[Any] | None:
        """The inner stream now handed on (None before the first ``__anext__``)."""
        return self._stream

    def __aiter__(self) -> RetriedStart:
        return self

    def __anext__(self) -> Coroutine[Any, Any, Any]:
        return self._start()

    async def _start(self) -> Any:
        stream = self._stream = self._next_fn(self._context)
        try:
            event = await stream.__anext__()
        except StopAsyncIteration:
            self._relay(stream)
            raise
        except Exception as error:
            context = self._again(error)
            if context is None:
                raise
            stream = self._stream = self._next_fn(context)
            self._relay(stream)
            return await stream.__anext__()
        self._relay(stream)
        return event

    def _relay(self, stream: AsyncIterator[Any]) -> None:
        # From now on every event is the inner stream's own: the class swap spares each later
        # __anext__ the test of whether the first has been made.
        # An async generator's __anext__ gives an awaitable that is not a coroutine object,
        # but it is awaited only, as one is.
        self._next = cast(Callable[[], Coroutine[Any, Any, Any]], stream.__anext__)
        _set_attribute(self, "__class__", _Relaying)

    async def asend(self, value: None) -> Any:
        """Take the next event (a chain's stream is sent nothing but None)."""
        return await self.__anext__()

    async def athrow(self, *args: Any) -> Any:
        """Throw into the inner stream, if one is open; else raise the exception here."""
        stream = self._stream
        if isinstance(stream, AsyncGenerator):
            return await stream.athrow(*args)
        raise args[0] if len(args) == 1 else args[1]

    async def aclose(self) -> None:
        """Close the inner stream now (the chain closes it too; closing twice is harmless)."""
        stream = self._stream
        self._next = _ended
        _set_attribute(self, "__class__", _Relaying)
        if isinstance(stream, AsyncGenerator):
            await stream.aclose()


class _Relaying(RetriedStart):
    """A `RetriedStart` past its first event: each event is the inner stream's own awaitable."""

    __slots__ = ()

    def __anext__(self) -> Coroutine[Any, Any, Any]:
        return self._next()


async def _ended() -> Any:
    raise StopAsyncIteration


_set_attribute = object.__setattr__
"""Swaps an instance's class (the type checkers refuse a plain ``__class__`` assignment)."""
