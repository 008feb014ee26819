"""What Output handlers receive and return, and how a stream signals that a stage halted."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, overload, runtime_checkable

from typing_extensions import Self

from ..events import TypedEvent

__all__ = ["InterruptControlEvent", "MiddlewareResult", "halts_stage"]

T = TypeVar("T")


_UNSET: Any = object()
"""The default of ``result=``/``value=``: tells "not given" from an explicit ``None``."""


@dataclass(frozen=True, init=False)
class MiddlewareResult(Generic[T]):
    """The result event of a stage, wrapped for its Output handlers.

    Only the Output phase sees this wrapper; Wrap handlers and the call site see the plain result
    event. Wrapping gives Output the same room to grow that Input has through its context
    dataclass. Each built-in stage hands its Output handlers a subclass of its own
    (``InvokeModelResult``, ``ExecuteToolResult``, ``AgentStreamResult``); a handler written
    against ``MiddlewareResult`` keeps working, and may return a plain one.

    The event is ``value``, also readable as ``result`` (the name strands' middleware gives it);
    the constructor takes it either way: ``MiddlewareResult(event)`` or
    ``InvokeModelResult(result=event)``.

    Attributes:
        value: The stage's result event (for example a ``ModelStopReason``).
    """

    value: T

    @overload
    def __init__(self, value: T) -> None: ...

    @overload
    def __init__(self, *, result: T) -> None: ...

    def __init__(self, value: T = _UNSET, *, result: T = _UNSET) -> None:
        # Built once per stage call with Output handlers: the common path is two comparisons.
        if result is not _UNSET:
            if value is not _UNSET:
                raise _given_twice(self)
            value = result
        elif value is _UNSET:
            raise _given_twice(self)
        # Frozen: the one assignment goes around the dataclass's __setattr__.
        _set_attribute(self, "value", value)

    @property
    def result(self) -> T:
        """The stage's result event: ``value`` under the name strands' middleware gives it."""
        return self.value

    @overload
    def replace(self, *, value: T) -> Self: ...

    @overload
    def replace(self, *, result: T) -> Self: ...

    def replace(self, *, value: T = _UNSET, result: T = _UNSET) -> Self:
        """Return a new wrapper holding ``value`` (or ``result=``); a subclass keeps its type.

        Example:
            ```python
            def tag(result: InvokeModelResult) -> InvokeModelResult:
                return result.replace(value=retagged(result.value))
            ```
        """
        if result is not _UNSET:
            if value is not _UNSET:
                raise _given_twice(self)
            value = result
        elif value is _UNSET:
            raise _given_twice(self)
        cls = type(self)
        if len(cls.__dataclass_fields__) == 1:
            # Nothing but the value to carry over: the constructor is what replace() would call.
            return cls(value)
        return dataclasses.replace(self, value=value)


_set_attribute = object.__setattr__


def _given_twice(result: object) -> TypeError:
    return TypeError(
        f"{type(result).__name__} takes the result event once: as value (the first argument, "
        "or value=) or as result=, not both and not neither"
    )


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
    call must treat a halted call as unfinished (no result, nothing to keep). It is cheap enough
    to call on every streamed event: whether an event's class can halt at all is worked out once
    per class, so for this library's own events (whose ``is_interrupt`` always answers false) the
    answer is one dictionary lookup.

    Example:
        ```python
        @InvokeModelStage.wrap
        async def counting(context, next_fn):
            async for event in next_fn(context):
                if halts_stage(event):
                    ...  # the call waits for a human: count nothing, keep nothing
                yield event
        ```
    """
    never = _NEVER_BY_CLASS.get(type(event))
    if never is None:
        never = _NEVER_BY_CLASS[type(event)] = _never_halts(type(event))
        if never:
            NEVER_HALTING.add(type(event))
    return False if never else bool(getattr(event, "is_interrupt", False))


def _never_halts(cls: type) -> bool:
    """Whether no event of ``cls`` can answer ``is_interrupt`` with anything but false.

    False for a class that keeps `TypedEvent`'s ``is_interrupt`` (which always answers false), or
    has no ``is_interrupt`` and instances with nowhere to hold one; any other class may halt,
    through a property or an instance attribute.
    """
    found = getattr(cls, "is_interrupt", _ABSENT)
    if found is not _ABSENT:
        # TypedEvent's property is a data descriptor: no instance attribute can shadow it.
        return found is _NEVER_HALTS
    # No class attribute: only an instance attribute can answer, or the class's own lookup code
    # (builtin bases such as object and dict use the generic lookup).
    for base in cls.__mro__:
        if base.__module__ != "builtins" and (
            "__getattr__" in vars(base) or "__getattribute__" in vars(base)
        ):
            return False
    return not cls.__dictoffset__  # instances with no dict hold no attribute of their own


_ABSENT = object()

NEVER_HALTING: set[type] = set()
"""The event classes `halts_stage` has found can never halt a stage, filled as it meets them.

A handler that tests every streamed event reads it first, so an event of such a class costs one
set lookup: ``event.__class__ not in NEVER_HALTING and halts_stage(event)``. Only ever added to.
"""

_NEVER_BY_CLASS: dict[type, bool] = {}
"""Per event class, whether its events never halt a stage, worked out on the first one seen.

One entry per event class ever seen; classes are few. An entry is never wrong, since whether a
class can halt does not change.
"""

_NEVER_HALTS: object = vars(TypedEvent)["is_interrupt"]
"""The base class's ``is_interrupt`` property, which always answers false."""
