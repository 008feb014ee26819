"""The Output handlers' driver: skipped for a call no Output handler can change, and letting the
event classes that are neither a result nor able to halt straight through."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from strands_middleware import MiddlewareRegistry, MiddlewareResult, MiddlewareStage
from strands_middleware.engine._phases import output_applies_when
from strands_middleware.events import TypedEvent

from .conftest import STAGE, Done, Event, collect, terminal


def _tagging(calls: list[str], tag: str) -> Any:
    def tag_result(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
        calls.append(tag)
        return result.replace(value=Done({**result.value, tag: True}))

    return tag_result


async def _opened_stream_name(registry: MiddlewareRegistry, context: str) -> tuple[str, list[Any]]:
    async with registry.open(STAGE, context, terminal) as stream:
        name = getattr(stream, "ag_code").co_name  # noqa: B009 (an async generator's code)
        return name, [event async for event in stream]


async def test_a_call_no_output_handler_applies_to_runs_without_the_driver(
    registry: MiddlewareRegistry,
) -> None:
    calls: list[str] = []
    asked: list[str] = []

    def applies(context: str) -> bool:
        asked.append(context)
        return context.endswith("changed!")

    registry.add_middleware(STAGE.Input, lambda context: context + "!")
    registry.add_middleware(STAGE.Output, output_applies_when(_tagging(calls, "a"), applies))
    # Skipped: the consumer iterates the terminal itself, and the result comes out unchanged.
    name, events = await _opened_stream_name(registry, "plain")
    assert name == "terminal"
    assert events == [Event(chunk=1), Event(chunk=2), Done(context="plain!")]
    assert await collect(registry.invoke(STAGE, "plain", terminal)) == events
    assert calls == []
    # Asked once per call, with the context the Input handlers made.
    assert asked == ["plain!", "plain!"]
    # A call it applies to runs it, through the driver.
    name, events = await _opened_stream_name(registry, "changed")
    assert name == "_drive"
    assert events[-1] == Done(context="changed!", a=True)
    assert calls == ["a"]


async def test_one_output_handler_without_a_condition_keeps_the_driver_for_every_call(
    registry: MiddlewareRegistry,
) -> None:
    calls: list[str] = []
    registry.add_middleware(
        STAGE.Output, output_applies_when(_tagging(calls, "a"), lambda c: False)
    )
    registry.add_middleware(STAGE.Output, _tagging(calls, "b"))
    events = await collect(registry.invoke(STAGE, "c", terminal))
    # Innermost (last registered) first; the marked one changes what it changes when run.
    assert calls == ["b", "a"]
    assert events[-1] == Done(context="c", a=True, b=True)


class _Chunk(TypedEvent):
    """A streamed event that can never halt a stage (it keeps TypedEvent's is_interrupt)."""


class _Result(TypedEvent):
    """The result event of the typed stage."""


class _Pause(TypedEvent):
    """An event that halts its stage."""

    @property
    def is_interrupt(self) -> bool:
        return True


TYPED = MiddlewareStage[str, _Result, TypedEvent]("typed", result_type=_Result)


async def test_known_event_classes_pass_at_once_and_results_and_halts_are_still_told_apart() -> (
    None
):
    calls: list[str] = []

    def tag(result: MiddlewareResult[_Result]) -> MiddlewareResult[_Result]:
        calls.append("tag")
        return result.replace(value=_Result({"tagged": True}))

    async def answers(context: str) -> AsyncGenerator[TypedEvent, None]:
        yield _Chunk({"n": 1})
        yield _Result({"first": True})
        yield _Chunk({"n": 2})
        yield _Result({"last": True})  # the last result is the one transformed

    async def pauses(context: str) -> AsyncGenerator[TypedEvent, None]:
        yield _Chunk({"n": 1})
        yield _Result({"held": True})
        yield _Pause({"why": "ask"})
        yield _Chunk({"n": 2})

    registry = MiddlewareRegistry()
    registry.add_middleware(TYPED.Output, tag)
    for _ in range(2):  # the second time every class is known to the driver
        events = [event async for event in registry.invoke(TYPED, "c", answers)]
        assert events == [_Chunk({"n": 1}), _Chunk({"n": 2}), _Result({"tagged": True})]
        events = [event async for event in registry.invoke(TYPED, "c", pauses)]
        held = [_Chunk({"n": 1}), _Result({"held": True}), _Pause({"why": "ask"}), _Chunk({"n": 2})]
        assert events == held
        assert [type(event) for event in events] == [_Chunk, _Result, _Pause, _Chunk]
    assert calls == ["tag", "tag"]
