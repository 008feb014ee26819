"""Watching Wrap handlers: the before-part and after-part of a handler that only watches a call.

A Wrap handler that only watches its call (it admits or refuses it before, and afterwards
learns how it ended: its result, an exception, a halt, or a consumer that stopped reading)
changes no event, yet as a generator it re-yields every event of the call: one generator hop
per streamed event. Such a handler can say so with `watching`: it stays an ordinary Wrap
handler, run as a generator layer wherever it is, and it also gives the engine its watch, an
``enter`` coroutine function that the engine may run instead of it in one case: when the
handler is among the outermost Wrap handlers of a stage run through `OpenedChain` by a
consumer that reports what it sees (see `OpenedChain.reporting`), and no Output handler applies
to the call. There, nothing sits between the handler and the consumer, so the events the
handler would see are the consumer's: the consumer's loop reports them, ``enter`` runs on
entering the block, and what it returns (``leave``) runs on leaving it, after every stream the
chain opened has been closed, with the `Outcome` the handler would have seen as a generator.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "Enter",
    "Leave",
    "Outcome",
    "enter_all",
    "has_ended",
    "leave_all",
    "watch_of",
    "watching",
]


@dataclass(slots=True)
class Outcome:
    """How a watched call ended, as a generator layer in the watcher's place would have seen it.

    Attributes:
        error: The exception that came out of the call (or out of the after-part of a watcher
            inside this one): None when the call ran to its end, or was left unfinished.
        ended: False when the consumer stopped reading before the call ended (a generator layer
            would have been closed, ``GeneratorExit``): neither a success nor a failure.
        result: The last event of the stage's result class that went by, or None.
        halted: Whether an event that halts the stage (`halts_stage`) went by.
    """

    error: BaseException | None
    ended: bool
    result: Any
    halted: bool


Leave = Callable[[Outcome], Awaitable[None]]
"""A watcher's after-part for one call: told the call's `Outcome`; raising fails the call."""

Enter = Callable[[Any], Awaitable["Leave | None"]]
"""A watcher's before-part: given the call's context (which it does not change), it admits the
call (raising refuses it) and returns its after-part, or None when it has nothing to learn."""

_WATCH = "_strands_middleware_watch"

THandler = TypeVar("THandler", bound=Callable[..., Any])


def watching(handler: THandler, enter: Enter) -> THandler:
    """Mark the Wrap handler ``handler`` as one that only watches, with ``enter`` as its watch.

    ``enter`` and its ``leave`` must do what ``handler`` does, for the call's events passing
    untouched: the engine runs one or the other, never both.
    """
    setattr(handler, _WATCH, enter)
    return handler


def watch_of(handler: object) -> Enter | None:
    """The watch of a Wrap handler marked by `watching`, else None."""
    enter: Enter | None = getattr(handler, _WATCH, None)
    return enter


def has_ended(stream: object) -> bool:
    """Whether ``stream``, the one a consumer iterates, ran to its end or raised."""
    # A native async generator that returned or raised has no frame left.
    return getattr(stream, "ag_frame", True) is None


async def leave_all(leaves: list[Leave], outcome: Outcome) -> BaseException | None:
    """Run the watchers' after-parts, innermost first; return the error the outermost saw last.

    An after-part that raises passes its error on to the next watcher out, as an exception
    raised in a generator layer's ``finally`` reaches the layer around it.
    """
    for leave in reversed(leaves):
        try:
            await leave(outcome)
        except BaseException as raised:  # the next watcher out sees it, as a layer would
            outcome = Outcome(raised, True, outcome.result, outcome.halted)
    return outcome.error


async def enter_all(watchers: tuple[Enter, ...], context: Any) -> list[Leave]:
    """Run the watches' before-parts, outermost first; return their after-parts.

    A watch that refuses the call (raises) is the outcome of those already entered: they see
    the error come out of the call, as a generator layer sees one raised by a layer inside it.
    """
    leaves: list[Leave] = []
    for enter in watchers:
        try:
            leave = await enter(context)
        except BaseException as error:
            raised = await leave_all(leaves, Outcome(error, True, None, False))
            if raised is not error and raised is not None:
                raise raised from error
            raise
        if leave is not None:
            leaves.append(leave)
    return leaves
