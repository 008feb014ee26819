"""The three handler shapes, as type aliases generic over a stage's parameters.

A stage is ``MiddlewareStage[TContext, TResult, TEvent]``: its handlers receive ``TContext``, its
stream carries ``TEvent`` and its result event is ``TResult``. Each alias binds the parameters a
handler of that phase touches, so a type checker can tell an Input handler from a Wrap handler and
a model-call handler from a tool-call one.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import TypeAlias, TypeVar

from ._result import MiddlewareResult

__all__ = [
    "MiddlewareHandler",
    "MiddlewareInputHandler",
    "MiddlewareNext",
    "MiddlewareOutputHandler",
]

TContext = TypeVar("TContext")
TResult = TypeVar("TResult")
TEvent = TypeVar("TEvent")

MiddlewareNext: TypeAlias = Callable[[TContext], AsyncGenerator[TEvent, None]]
"""The rest of the chain: call it with a context and iterate the events it yields.

Each call opens a fresh inner chain, so a handler may call it again to retry.
"""

MiddlewareHandler: TypeAlias = Callable[
    [TContext, MiddlewareNext[TContext, TEvent]], AsyncIterator[TEvent]
]
"""A Wrap handler: an async generator taking ``(context, next_fn)`` and yielding events.

It may pass events through, drop or inject events, call ``next_fn`` several times, or never call
it and yield the result event itself (a short-circuit).

A plain function returning an async iterator is a Wrap handler too, and one that returns
``next_fn(context)`` itself adds no layer: the chain hands the inner stream straight on, so a
handler that decides per call whether to do anything (a tracer with nothing to record, say)
costs nothing per event when it does not.
"""

MiddlewareInputHandler: TypeAlias = Callable[[TContext], TContext | Awaitable[TContext]]
"""An Input handler: takes the context and returns the context to run with (sync or async)."""

MiddlewareOutputHandler: TypeAlias = Callable[
    [MiddlewareResult[TResult]],
    MiddlewareResult[TResult] | Awaitable[MiddlewareResult[TResult]],
]
"""An Output handler: takes the wrapped result and returns a wrapped result (sync or async)."""

_W = TypeVar("_W")
_R = TypeVar("_R")

StageOutputHandler: TypeAlias = Callable[
    [_W], MiddlewareResult[_R] | Awaitable[MiddlewareResult[_R]]
]
"""An Output handler as a stage types it: ``StageOutputHandler[Wrapper, Event]`` receives the
stage's own result wrapper (``InvokeModelResult``...) and returns any `MiddlewareResult` of the
stage's result event (the same wrapper, or a plain one). `MiddlewareOutputHandler` is the
special case of a handler written against the plain wrapper."""
