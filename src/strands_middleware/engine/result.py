"""What Output handlers receive and return, and how a stream signals that a stage halted."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, runtime_checkable

from typing_extensions import Self

from ..events import TypedEvent

__all__ = ["InterruptControlEvent", "MiddlewareResult", "halts_by_class", "halts_stage"]

T = TypeVar("T")


@dataclass(frozen=True)
class MiddlewareResult(Generic[T]):
    """The result event of a stage, wrapped for its Output handlers.

    Only the Output phase sees this wrapper; Wrap handlers and the call site see the plain result
    event. Wrapping gives Output the same room to grow that Input has through its context
    dataclass: a stage can subclass this with typed metadata, and handlers written against
    ``MiddlewareResult`` keep working.

    Attributes:
        value: The stage's result event (for example a ``ModelStopReason``).
    """

    value: T

    def replace(self, *, value: T) -> Self:
        """Return a new wrapper holding ``value``; a subclass keeps its type and other fields.

        Example:
            ```python
            def tag(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
                return result.replace(value=retagged(result.value))
            ```
        """
        return dataclasses.replace(self, value=value)


@runtime_checkable
class InterruptControlEvent(Protocol):
    """An event that halts the stage it passes through when ``is_interrupt`` is truthy.

    A halted stage has no result: its Output handlers do not run and every event, the interrupt
    included, is forwarded untransformed. The protocol lets the stage-agnostic engine recognise
    such events without importing any stage's event types.
    """

    @property
    def is_interrupt(self) -> bool:
        """True when this event means the stage stopped to wait for a human."""
        ...


def halts_stage(event: object) -> bool:
    """Whether ``event`` halts the stage it passes through (an `InterruptControlEvent`).

    The one test the chain and every catalog item use: a handler that counts, caches or times a
    call must treat a halted call as unfinished (no result, nothing to keep).
    """
    # Nearly every event is a library event whose class keeps the base "never halts" answer:
    # recognising that by the class is a fraction of the cost of calling the property.
    if getattr(type(event), "is_interrupt", None) is _NEVER_HALTS:
        return False
    return bool(getattr(event, "is_interrupt", False))


def halts_by_class(event_class: type) -> bool:
    """Whether an event of ``event_class`` may halt a stage: False only when none ever can.

    Only a class that keeps `TypedEvent`'s ``is_interrupt`` (which always answers false) is
    known never to halt; any other class may, through a property or an instance attribute. A
    handler that sees many events may remember the classes answered False here and skip
    `halts_stage` on their events.
    """
    return getattr(event_class, "is_interrupt", None) is not _NEVER_HALTS


_NEVER_HALTS: object = vars(TypedEvent)["is_interrupt"]
"""The base class's ``is_interrupt`` property, which always answers false."""
