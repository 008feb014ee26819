"""Stream events: dicts with a fixed payload, typed properties and the interrupt-control flag."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from strands_middleware.content import Message, Metrics, StreamEvent, ToolResult, ToolUse, Usage
from strands_middleware.events import (
    EventLoopStopEvent,
    ModelMessageEvent,
    ModelStopReason,
    ModelStreamEvent,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolInterruptEvent,
    ToolResultEvent,
    ToolStreamEvent,
    ToolUseDeltaEvent,
    TypedEvent,
)
from strands_middleware.interrupts import Interrupt

MESSAGE: Message = {"role": "assistant", "content": [{"text": "Hi"}]}
USAGE: Usage = {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4}
METRICS: Metrics = {"latencyMs": 12}
TOOL_USE: ToolUse = {"toolUseId": "t-1", "name": "weather", "input": {"city": "Paris"}}
TOOL_RESULT: ToolResult = {"toolUseId": "t-1", "status": "success", "content": [{"text": "sun"}]}


def _every_event() -> list[TypedEvent]:
    return [
        TypedEvent({"custom": 1}),
        ModelStopReason(stop_reason="end_turn", message=MESSAGE, usage=USAGE, metrics=METRICS),
        ToolResultEvent(TOOL_RESULT),
        ToolInterruptEvent(TOOL_USE, [Interrupt(id="i-1", name="approve")]),
        EventLoopStopEvent("end_turn", MESSAGE, USAGE, METRICS),
        ModelStreamEvent({"messageStop": {"stopReason": "end_turn"}}),
        TextDeltaEvent("Hi"),
        ToolUseDeltaEvent("t-1", "weather", '{"ci'),
        ReasoningDeltaEvent(text="hmm"),
        ModelMessageEvent(MESSAGE),
        ToolStreamEvent(TOOL_USE, {"progress": 0.5}),
    ]


class TestModelStopReason:
    def test_is_built_by_keywords_as_in_the_spec(self) -> None:
        event = ModelStopReason(
            stop_reason="end_turn", message=MESSAGE, usage=USAGE, metrics=METRICS
        )

        assert event.stop_reason == "end_turn"
        assert event.message is MESSAGE
        assert event.usage is USAGE
        assert event.metrics is METRICS

    def test_stop_payload_unpacks_as_a_four_tuple(self) -> None:
        event = ModelStopReason(
            stop_reason="max_tokens", message=MESSAGE, usage=USAGE, metrics=METRICS
        )

        stop_reason, message, usage, metrics = event["stop"]

        assert (stop_reason, message, usage, metrics) == ("max_tokens", MESSAGE, USAGE, METRICS)
        assert list(event) == ["stop"]

    def test_output_handler_can_rebuild_it_with_a_reason_of_its_own(self) -> None:
        # The spec's Output example: unpack the stop tuple and rebuild with a custom reason.
        original = ModelStopReason(
            stop_reason="end_turn", message=MESSAGE, usage=USAGE, metrics=METRICS
        )
        _, message, usage, metrics = original["stop"]

        rebuilt = ModelStopReason(
            stop_reason="custom", message=message, usage=usage, metrics=metrics
        )

        assert rebuilt.stop_reason == "custom"
        assert rebuilt.message is MESSAGE


class TestToolResultEvent:
    def test_is_built_from_a_tool_result_as_in_the_spec(self) -> None:
        result: ToolResult = {"toolUseId": "t-9", "status": "success", "content": []}

        event = ToolResultEvent(result)

        assert event.tool_result is result
        assert event.tool_use_id == "t-9"
        assert event.exception is None

    def test_exception_is_an_attribute_so_the_dict_stays_json_ready(self) -> None:
        error = RuntimeError("disk full")
        result: ToolResult = {"toolUseId": "t-1", "status": "error", "content": [{"text": "no"}]}

        event = ToolResultEvent(result, exception=error)

        assert event.exception is error
        assert dict(event) == {"tool_result": result}
        assert json.loads(json.dumps(event)) == {"tool_result": result}

    def test_exception_takes_no_part_in_equality(self) -> None:
        result: ToolResult = {"toolUseId": "t-1", "status": "error", "content": []}

        assert ToolResultEvent(result, exception=ValueError("a")) == ToolResultEvent(result)

    @pytest.mark.parametrize("duplicate", [copy.copy, copy.deepcopy])
    def test_copies_keep_class_and_exception(self, duplicate: Any) -> None:
        event = ToolResultEvent(TOOL_RESULT, exception=KeyError("x"))

        copied = duplicate(event)

        assert type(copied) is ToolResultEvent
        assert copied == event
        assert isinstance(copied.exception, KeyError)

    def test_pickling_keeps_class_and_exception(self) -> None:
        event = ToolResultEvent(TOOL_RESULT, exception=ValueError("bad"))

        restored = pickle.loads(pickle.dumps(event))

        assert type(restored) is ToolResultEvent
        assert restored == event
        assert str(restored.exception) == "bad"


class TestInterruptControl:
    def test_only_a_tool_interrupt_halts_its_stage(self) -> None:
        halting = [type(e).__name__ for e in _every_event() if e.is_interrupt]

        assert halting == ["ToolInterruptEvent"]

    def test_tool_interrupt_carries_the_call_and_its_interrupts(self) -> None:
        interrupts = [Interrupt(id="i-1", name="approve", reason="delete files?")]

        event = ToolInterruptEvent(TOOL_USE, interrupts)

        assert event.is_interrupt is True
        assert event.tool_use is TOOL_USE
        assert event.tool_use_id == "t-1"
        assert event.interrupts is interrupts
        assert event == {"tool_interrupt_event": {"tool_use": TOOL_USE, "interrupts": interrupts}}

    def test_a_pass_that_stopped_on_an_interrupt_is_still_a_result(self) -> None:
        # The agent pass ends with this event even when it paused for a human; treating it as an
        # interrupt-control event would leave the pass without a result.
        interrupts = [Interrupt(id="i-1", name="approve")]

        event = EventLoopStopEvent("interrupt", MESSAGE, USAGE, METRICS, interrupts)

        assert event.is_interrupt is False
        assert event.interrupts is interrupts


class TestEventLoopStopEvent:
    def test_stop_payload_is_a_five_tuple_ending_with_the_interrupts(self) -> None:
        event = EventLoopStopEvent(
            stop_reason="end_turn", message=MESSAGE, usage=USAGE, metrics=METRICS
        )

        assert event["stop"] == ("end_turn", MESSAGE, USAGE, METRICS, None)
        assert event.stop_reason == "end_turn"
        assert event.message is MESSAGE
        assert event.usage is USAGE
        assert event.metrics is METRICS
        assert event.interrupts is None


class TestStreamingEvents:
    def test_model_stream_event_holds_the_chunk_itself(self) -> None:
        chunk: StreamEvent = {"contentBlockDelta": {"delta": {"text": "Hi"}}}

        event = ModelStreamEvent(chunk)

        assert event.chunk is chunk
        assert event == {"event": chunk}

    def test_text_delta_uses_the_data_key_strands_handlers_print(self) -> None:
        event = TextDeltaEvent("Hel")

        assert event.text == "Hel"
        assert event == {"data": "Hel"}

    @pytest.mark.parametrize(
        ("cls", "argument", "key"),
        [
            (ModelStreamEvent, {"messageStop": {"stopReason": "end_turn"}}, "event"),
            (TextDeltaEvent, "Hel", "data"),
        ],
    )
    def test_a_chunk_or_text_event_is_its_one_key_nothing_else(
        self, cls: type[Any], argument: Any, key: str
    ) -> None:
        # The LangChain bridge makes these two per streamed text piece without calling their
        # ``__init__`` (``dict.__new__`` and the key): this is what makes that the same event.
        made = dict.__new__(cls)
        made[key] = argument

        event = cls(argument)

        assert type(event) is cls
        assert event == made
        assert list(event) == [key]
        assert not hasattr(event, "__dict__")

    def test_tool_use_delta_names_the_call_and_carries_the_fragment(self) -> None:
        event = ToolUseDeltaEvent("t-1", "weather", '{"city": ')

        assert (event.tool_use_id, event.name, event.input_fragment) == (
            "t-1",
            "weather",
            '{"city": ',
        )
        assert event == {
            "tool_use_delta": {"toolUseId": "t-1", "name": "weather", "input": '{"city": '}
        }

    def test_reasoning_delta_holds_only_the_parts_given(self) -> None:
        text = ReasoningDeltaEvent(text="Let me think")
        signature = ReasoningDeltaEvent(signature="sig")
        redacted = ReasoningDeltaEvent(redacted_content=b"\x00")

        assert text == {"reasoning": True, "reasoning_delta": {"text": "Let me think"}}
        assert (text.text, text.signature, text.redacted_content) == ("Let me think", None, None)
        assert signature["reasoning_delta"] == {"signature": "sig"}
        assert signature.signature == "sig"
        assert redacted["reasoning_delta"] == {"redactedContent": b"\x00"}
        assert redacted.redacted_content == b"\x00"

    def test_model_message_event_carries_the_message(self) -> None:
        event = ModelMessageEvent(MESSAGE)

        assert event.message is MESSAGE
        assert event == {"message": MESSAGE}

    def test_tool_stream_event_says_whose_progress_it_is(self) -> None:
        event = ToolStreamEvent(TOOL_USE, "50%")

        assert event.tool_use is TOOL_USE
        assert event.tool_use_id == "t-1"
        assert event.data == "50%"
        assert event == {"tool_stream_event": {"tool_use": TOOL_USE, "data": "50%"}}


class TestDictBehaviour:
    @pytest.mark.parametrize("event", _every_event(), ids=lambda e: type(e).__name__)
    def test_every_event_is_a_dict_equal_to_its_plain_payload(self, event: TypedEvent) -> None:
        assert isinstance(event, dict)
        assert event == dict(event)
        assert dict(event) == event

    def test_equality_is_dict_equality_whatever_the_class(self) -> None:
        assert TextDeltaEvent("x") == TypedEvent({"data": "x"})
        assert TextDeltaEvent("x") != TextDeltaEvent("y")

    def test_typed_event_starts_empty_or_from_a_mapping(self) -> None:
        assert TypedEvent() == {}
        assert TypedEvent({"a": 1}) == {"a": 1}

    def test_repr_names_the_class(self) -> None:
        assert repr(TextDeltaEvent("x")) == "TextDeltaEvent({'data': 'x'})"
