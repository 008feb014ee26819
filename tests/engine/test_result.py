"""MiddlewareResult and the interrupt-control protocol."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass

import pytest

from strands_middleware import InterruptControlEvent, MiddlewareResult
from strands_middleware.events import TextDeltaEvent, ToolInterruptEvent, TypedEvent

from .conftest import Done, Event, Halt


class Paused(TypedEvent):
    """An event that halts its stage when it says it is paused."""

    @property
    def is_interrupt(self) -> bool:
        return bool(self.get("paused"))


class Flagged:
    """A plain object whose instance attribute says whether it halts."""

    def __init__(self, flag: bool) -> None:
        self.is_interrupt = flag


def test_replace_returns_a_new_wrapper_and_leaves_the_old_one() -> None:
    first = MiddlewareResult(Done(n=1))
    second = first.replace(value=Done(n=2))
    assert second is not first
    assert first.value == Done(n=1)
    assert second.value == Done(n=2)


def test_result_wrapper_is_frozen() -> None:
    result = MiddlewareResult(Done())
    with pytest.raises(FrozenInstanceError):
        result.value = Done(n=3)  # type: ignore[misc]


def test_replace_keeps_a_subclass_and_its_extra_fields() -> None:
    @dataclass(frozen=True)
    class TimedResult(MiddlewareResult[Done]):
        elapsed: float = 0.0

    timed = TimedResult(Done(n=1), elapsed=2.5)
    replaced = timed.replace(value=Done(n=2))
    assert isinstance(replaced, TimedResult)
    assert replaced.elapsed == 2.5
    assert replaced.value == Done(n=2)


def test_interrupt_control_protocol_is_structural() -> None:
    assert isinstance(Halt(), InterruptControlEvent)
    assert not isinstance(Event(), InterruptControlEvent)


def test_halts_stage_reads_is_interrupt_from_any_event_shape() -> None:
    from strands_middleware import halts_stage

    assert not halts_stage(TextDeltaEvent("x"))
    assert not halts_stage({"plain": "dict"})
    assert halts_stage(ToolInterruptEvent({"toolUseId": "t", "name": "n", "input": {}}, []))
    assert halts_stage(Paused({"paused": True})) and not halts_stage(Paused())
    assert halts_stage(Flagged(True)) and not halts_stage(Flagged(False))
    assert halts_stage(Halt()) and not halts_stage(Done())


def test_a_class_that_keeps_typed_events_answer_is_sorted_once_as_never_halting() -> None:
    from strands_middleware import halts_stage
    from strands_middleware.engine._result import _NEVER_BY_CLASS, NEVER_HALTING

    assert not halts_stage(TextDeltaEvent("x")) and _NEVER_BY_CLASS[TextDeltaEvent] is True
    assert TextDeltaEvent in NEVER_HALTING  # what a handler reads before calling halts_stage
    for may_halt in (Paused({"paused": True}), Paused(), Flagged(False), Halt()):
        halts_stage(may_halt)
        assert _NEVER_BY_CLASS[type(may_halt)] is False  # read event by event
        assert type(may_halt) not in NEVER_HALTING
    assert halts_stage(ToolInterruptEvent({"toolUseId": "t", "name": "n", "input": {}}, []))


def test_halts_stage_reads_each_event_of_a_class_it_has_seen_before() -> None:
    from strands_middleware import halts_stage

    class Plain(dict[str, object]):
        pass

    class Looked:
        def __getattr__(self, name: str) -> object:
            return name == "is_interrupt"

    class Slotted:
        __slots__ = ()

    assert not halts_stage(Plain())
    flagged = Plain()
    flagged.is_interrupt = True  # type: ignore[attr-defined]
    assert halts_stage(flagged)  # the class was seen before: its instances are still read
    assert halts_stage(Looked()) and halts_stage(Looked())
    assert not halts_stage(Slotted()) and not halts_stage({"is_interrupt": True})
