"""Linking a chain's Wrap handlers for one invocation: each handler's ``next_fn``.

Every stream a layer opens is recorded in ``opened``, for the cleanup of `._chain`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from types import AsyncGeneratorType
from typing import TYPE_CHECKING, Any, Protocol, cast

from ._registration import describe

if TYPE_CHECKING:
    from ._stage import MiddlewareStage

__all__ = ["link", "open_terminal"]


class _Chain(Protocol):
    """What linking reads of a `._chain.CompiledChain` (named so, not imported: no circle)."""

    @property
    def stage(self) -> MiddlewareStage[Any, Any, Any]: ...
    @property
    def wraps(self) -> tuple[Callable[[Any, Any], Any], ...]: ...
    @property
    def where(self) -> str: ...


_Opened = list[AsyncIterator[Any]]
_Next = Callable[[Any], AsyncIterator[Any]]


def adopt(stream: object, opener: object, where: str, opened: _Opened) -> AsyncGenerator[Any, None]:
    """Give a non-generator async iterator the generator interface ``next_fn`` promises.

    The iterator itself is recorded in ``opened`` (before the generator around it), so the
    driver closes it once, after that generator, with the cleanup rules every stream gets.
    """
    if not isinstance(stream, AsyncIterator):
        raise TypeError(
            f"{describe(opener)} ({where}) returned {type(stream).__name__}, not an async "
            "iterator: a Wrap handler must be an async generator function, and a terminal must "
            "return an async iterator of events"
        )
    iterator: AsyncIterator[Any] = cast(Any, stream)

    async def adopted() -> AsyncGenerator[Any, None]:
        async for event in iterator:
            yield event

    opened.append(iterator)
    return adopted()


_GENERATOR: Any = AsyncGeneratorType
"""What a Wrap handler or a terminal returns in the common case: a native async generator.
Tested for with ``type(stream) is not _GENERATOR`` in place, one comparison and no call."""


MISSING: Any = object()
"""The default of ``next_fn``'s context: a handler that calls ``next_fn()`` gets a clear error."""


def missing_context(caller: object, where: str) -> TypeError:
    return TypeError(
        f"{describe(caller)} ({where}) called next_fn() without the context: call "
        "next_fn(context), passing the context the handler received (or a replace() of it)"
    )


def link(
    chain: _Chain,
    terminal: Callable[[Any], AsyncIterator[Any]],
    opened: _Opened,
    start: int = 0,
) -> _Next:
    """Build the ``next_fn`` of every layer for one invocation, recording what each opens.

    ``start``: how many of the outermost Wrap handlers are left out (their watches run).
    """
    wraps = chain.wraps

    def innermost(context: Any = MISSING) -> AsyncIterator[Any]:
        if context is MISSING:
            raise missing_context(wraps[-1] if wraps else None, chain.where)
        return open_terminal(chain.stage, terminal, context, opened)

    next_fn: _Next = innermost
    for index in range(len(wraps) - 1, start - 1, -1):
        next_fn = layer(wraps[index], next_fn, opened, chain, index)
    return next_fn


def open_terminal(
    stage: MiddlewareStage[Any, Any, Any],
    terminal: Callable[[Any], AsyncIterator[Any]],
    context: Any,
    opened: _Opened,
) -> AsyncIterator[Any]:
    """Open the terminal's stream for ``context`` and record it in ``opened``."""
    stream = terminal(context)
    if type(stream) is not _GENERATOR:
        stream = adopt(stream, terminal, f"terminal of {stage.name}", opened)
    opened.append(stream)
    return stream


def layer(
    handler: Callable[[Any, Any], Any],
    inner: _Next,
    opened: _Opened,
    chain: _Chain,
    index: int,
) -> _Next:
    """The ``next_fn`` that calls ``handler``, the ``index``-th Wrap handler of ``chain``."""

    def next_fn(context: Any = MISSING) -> AsyncIterator[Any]:
        if context is MISSING:
            # Whoever called this next_fn: the handler outside this one (none: the driver).
            raise missing_context(chain.wraps[index - 1] if index else None, chain.where)
        stream: AsyncIterator[Any] = handler(context, inner)
        if type(stream) is not _GENERATOR:
            stream = adopt(stream, handler, chain.where, opened)
        opened.append(stream)
        return stream

    return next_fn
