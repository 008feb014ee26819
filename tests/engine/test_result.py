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


def test_halts_by_class_clears_only_classes_that_keep_typed_events_answer() -> None:
    from strands_middleware.engine.result import halts_by_class

    assert not halts_by_class(TypedEvent) and not halts_by_class(TextDeltaEvent)
    assert halts_by_class(ToolInterruptEvent) and halts_by_class(Paused)
    assert halts_by_class(Flagged)  # an instance attribute may say yes
    assert halts_by_class(Halt)


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


def test_never_halting_holds_only_classes_none_of_whose_events_can_halt() -> None:
    from strands_middleware import halts_stage
    from strands_middleware.engine.result import NEVER_HALTING

    class Quiet(TypedEvent):
        pass

    assert not halts_stage(Quiet()) and Quiet in NEVER_HALTING
    for may_halt in (Paused({"paused": True}), Paused(), Flagged(False), Halt()):
        halts_stage(may_halt)
        assert type(may_halt) not in NEVER_HALTING
    assert halts_stage(Paused({"paused": True}))  # still read, event by event


def test_passes_through_is_false_for_the_result_and_for_events_that_may_halt() -> None:
    from strands_middleware.engine.result import passes_through

    assert passes_through(TextDeltaEvent, Done)
    assert not passes_through(Done, Done)
    assert not passes_through(type("LaterDone", (Done,), {}), Done)  # a subclass is a result
    assert not passes_through(Paused, Done) and not passes_through(ToolInterruptEvent, Done)


def test_classes_seen_is_shared_per_result_type_and_sorts_each_class_once_by_its_answer() -> None:
    from strands_middleware.engine.result import classes_seen

    seen = classes_seen(Done)
    assert classes_seen(Done) is seen and classes_seen(TypedEvent) is not seen
    seen.sort(TextDeltaEvent)
    seen.sort(Paused)
    seen.sort(Done)
    assert TextDeltaEvent in seen.passing
    assert Paused in seen.other and Done in seen.other
    assert Paused not in seen.passing and Done not in seen.passing
