"""strands' spelling of the engine and the events: result classes, the two-class stage form,
event names and constructor forms."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import pytest
from strands.telemetry import EventLoopMetrics
from strands.types import _events as host_events

from strands_middleware import (
    ExecuteToolResult,
    InvokeModelResult,
    MiddlewareRegistry,
    MiddlewareResult,
    MiddlewareStage,
    ModelStopReason,
    ToolResultEvent,
)
from strands_middleware import events as ours
from strands_middleware.experimental import AgentStreamResult
from strands_middleware.testing import text_turn

USAGE: Any = {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}
METRICS: Any = {"latencyMs": 7}
STOP = ModelStopReason("end_turn", text_turn("hi"), USAGE, METRICS)


class Event(dict[str, Any]):
    """Streamed by the test stage."""


class Done(Event):
    """The test stage's result event."""


class Found(MiddlewareResult[Done]):
    """The test stage's result class, strands' way."""


# ---- result classes --------------------------------------------------------------------------


def test_result_and_value_are_one_field_under_two_names() -> None:
    wrapped = InvokeModelResult(result=STOP)
    assert wrapped.result is wrapped.value is STOP
    assert InvokeModelResult(STOP) == wrapped
    assert isinstance(wrapped, MiddlewareResult)
    assert repr(wrapped).startswith("InvokeModelResult(value=")


def test_replace_takes_either_keyword_and_keeps_the_class() -> None:
    other = ModelStopReason("max_tokens", text_turn("cut"), USAGE, METRICS)
    for changed in (
        InvokeModelResult(STOP).replace(result=other),
        InvokeModelResult(STOP).replace(value=other),
    ):
        assert type(changed) is InvokeModelResult
        assert changed.result is other


def test_replace_keeps_a_subclass_with_fields_of_its_own() -> None:
    @dataclass(frozen=True)
    class Tagged(MiddlewareResult[ModelStopReason]):
        tag: str = "x"

    tagged = Tagged(STOP, tag="kept")  # type: ignore[call-arg]
    other = ModelStopReason("end_turn", text_turn("new"), USAGE, METRICS)
    changed = tagged.replace(result=other)
    assert (type(changed), changed.tag, changed.result) == (Tagged, "kept", other)


@pytest.mark.parametrize(
    "build",
    [
        InvokeModelResult,
        lambda: InvokeModelResult(STOP, result=STOP),  # type: ignore[call-overload]
        lambda: InvokeModelResult(STOP).replace(),  # type: ignore[call-overload]
        lambda: InvokeModelResult(STOP).replace(value=STOP, result=STOP),  # type: ignore[call-overload]
    ],
)
def test_the_event_is_given_once(build: Any) -> None:
    with pytest.raises(TypeError, match="takes the result event once"):
        build()


def test_results_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        InvokeModelResult(STOP).value = STOP  # type: ignore[misc]


def test_each_built_in_stage_hands_its_own_class() -> None:
    tool = ToolResultEvent.error("t1", "no")
    assert ExecuteToolResult(result=tool).result is tool
    stop = ours.EventLoopStopEvent("end_turn", text_turn("hi"), USAGE, METRICS)
    assert AgentStreamResult(result=stop).result is stop


# ---- stage tokens ---------------------------------------------------------------------------


async def _run(registry: MiddlewareRegistry, stage: MiddlewareStage[Any, Any, Any]) -> Any:
    async def terminal(context: str) -> AsyncGenerator[Event, None]:
        yield Event(step=1)
        yield Done(ok=True)

    return await registry.run(stage, "ctx", terminal)


async def test_the_two_class_form_hands_output_handlers_its_class() -> None:
    stage = MiddlewareStage[str, Done, Event, Found]("search", result_type=Found, result_event=Done)
    assert (stage.result_type, stage.result_event) == (Found, Done)
    seen: list[object] = []

    def found(result: Found) -> Found:
        seen.append(result)
        return result.replace(result=Done(ok=True, seen=True))

    registry = MiddlewareRegistry()
    registry.add_middleware(stage.Output, found)
    result = await _run(registry, stage)
    assert result == Done(ok=True, seen=True)
    assert [type(each) for each in seen] == [Found]


async def test_the_one_class_form_hands_a_plain_result() -> None:
    stage = MiddlewareStage[str, Done, Event]("search", result_type=Done)
    assert (stage.result_type, stage.result_event) == (Done, Done)
    seen: list[type] = []

    def look(result: MiddlewareResult[Done]) -> MiddlewareResult[Done]:
        seen.append(type(result))
        return result

    registry = MiddlewareRegistry()
    registry.add_middleware(stage.Output, look)
    await _run(registry, stage)
    assert seen == [MiddlewareResult]


async def test_a_plain_result_returned_is_rewrapped_for_the_next_handler() -> None:
    stage = MiddlewareStage[str, Done, Event, Found]("search", result_type=Found, result_event=Done)
    seen: list[type] = []

    def outer(result: Found) -> Found:
        seen.append(type(result))
        return result

    def inner(result: Found) -> MiddlewareResult[Done]:
        seen.append(type(result))
        return MiddlewareResult(result.result)

    registry = MiddlewareRegistry()
    registry.add_middleware(stage.Output, outer)
    registry.add_middleware(stage.Output, inner)
    assert await _run(registry, stage) == Done(ok=True)
    assert seen == [Found, Found]


def test_the_two_class_form_needs_a_middleware_result_subclass() -> None:
    @dataclass
    class StrandsLike:
        result: Done

    with pytest.raises(TypeError, match=r"subclass MiddlewareResult\[YourEvent\]"):
        MiddlewareStage("x", result_type=StrandsLike, result_event=Done)  # type: ignore[type-var]
    with pytest.raises(TypeError, match="result_event of stage 'x' must be the class"):
        MiddlewareStage("x", result_type=Found, result_event=Done())  # type: ignore[call-overload]


# ---- events ---------------------------------------------------------------------------------


def test_strands_names_are_the_same_classes() -> None:
    assert ours.TextStreamEvent is ours.TextDeltaEvent
    assert ours.ToolUseStreamEvent is ours.ToolUseDeltaEvent
    assert ours.ModelStreamChunkEvent is ours.ModelStreamEvent
    assert (
        ours.ReasoningTextStreamEvent
        is ours.ReasoningSignatureStreamEvent
        is ours.ReasoningRedactedContentStreamEvent
        is ours.ReasoningDeltaEvent
    )
    assert ours.TextDeltaEvent.__module__ == "strands_middleware.events"


def test_text_in_strands_form_equals_ours() -> None:
    built = ours.TextStreamEvent({"text": "hi"}, "hi")
    assert isinstance(built, ours.TextDeltaEvent)
    assert built == ours.TextDeltaEvent("hi") == ours.TextDeltaEvent(text="hi")
    assert built.text == "hi"


def test_tool_use_in_strands_form_equals_ours() -> None:
    built = ours.ToolUseStreamEvent(
        {"toolUse": {"input": '{"a": '}}, {"toolUseId": "t1", "name": "add", "input": ""}
    )
    assert built == ours.ToolUseDeltaEvent("t1", "add", '{"a": ')


@pytest.mark.parametrize(
    ("delta", "value", "expected"),
    [
        ({"reasoningContent": {"text": "think"}}, "think", {"text": "think"}),
        ({"reasoningContent": {"signature": "sig"}}, "sig", {"signature": "sig"}),
        ({"reasoningContent": {"redactedContent": b"x"}}, b"x", {"redacted_content": b"x"}),
    ],
)
def test_reasoning_in_strands_form_equals_ours(
    delta: Any, value: Any, expected: dict[str, Any]
) -> None:
    assert ours.ReasoningTextStreamEvent(delta, value) == ours.ReasoningDeltaEvent(**expected)


def test_the_stop_event_takes_strands_positional_form() -> None:
    metrics = EventLoopMetrics()
    metrics.accumulated_usage = {"inputTokens": 4, "outputTokens": 1, "totalTokens": 5}
    metrics.accumulated_metrics = {"latencyMs": 9}
    message = text_turn("done")
    built = ours.EventLoopStopEvent("end_turn", message, metrics, {"state": 1}, None)
    assert built == ours.EventLoopStopEvent(
        "end_turn",
        message,
        {"inputTokens": 4, "outputTokens": 1, "totalTokens": 5},
        {"latencyMs": 9},
    )
    assert (built.usage["inputTokens"], built.metrics["latencyMs"], built.interrupts) == (
        4,
        9,
        None,
    )
    # The same arguments build strands' own event: the forms are one.
    host = host_events.EventLoopStopEvent("end_turn", message, metrics, {"state": 1}, None)
    assert host["stop"][:2] == built["stop"][:2]


def test_the_stop_event_refuses_what_it_cannot_carry() -> None:
    metrics = EventLoopMetrics()
    with pytest.raises(TypeError, match="no structured_output or checkpoint"):
        ours.EventLoopStopEvent("end_turn", text_turn("x"), metrics, {}, None, object())  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="must be an EventLoopMetrics"):
        ours.EventLoopStopEvent("end_turn", text_turn("x"), object(), {})  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="EventLoopStopEvent takes"):
        ours.EventLoopStopEvent("end_turn", text_turn("x"), USAGE, object())  # type: ignore[call-overload]


def test_init_event_loop_event_has_strands_payload() -> None:
    assert (
        ours.InitEventLoopEvent() == host_events.InitEventLoopEvent() == {"init_event_loop": True}
    )
