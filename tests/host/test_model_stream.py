"""process_model_stream: from Converse chunks to stream events, the message and the result."""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, cast

import pytest

from strands_middleware.content import StreamEvent
from strands_middleware.events import (
    ModelMessageEvent,
    ModelStopReason,
    ModelStreamEvent,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolUseDeltaEvent,
    TypedEvent,
)
from strands_middleware.exceptions import ModelStreamError
from strands_middleware.host._model_stream import process_model_stream

# -- chunk builders: each returns one Converse chunk, typed loosely so tests can also send the
# -- malformed shapes a buggy model would.


def message_start(role: str = "assistant") -> dict[str, Any]:
    return {"messageStart": {"role": role}}


def text(fragment: Any, index: int | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {"delta": {"text": fragment}}
    if index is not None:
        delta["contentBlockIndex"] = index
    return {"contentBlockDelta": delta}


def tool_start(tool_use_id: str, name: str, **extra: Any) -> dict[str, Any]:
    return {
        "contentBlockStart": {
            "start": {"toolUse": {"toolUseId": tool_use_id, "name": name, **extra}}
        }
    }


def tool_input(fragment: Any, **extra: Any) -> dict[str, Any]:
    return {"contentBlockDelta": {"delta": {"toolUse": {"input": fragment, **extra}}}}


def reasoning(**parts: Any) -> dict[str, Any]:
    return {"contentBlockDelta": {"delta": {"reasoningContent": parts}}}


def block_stop(index: int | None = None) -> dict[str, Any]:
    return {"contentBlockStop": {} if index is None else {"contentBlockIndex": index}}


def message_stop(stop_reason: str = "end_turn") -> dict[str, Any]:
    return {"messageStop": {"stopReason": stop_reason}}


def metadata(**fields: Any) -> dict[str, Any]:
    return {"metadata": fields}


class ScriptedStream:
    """An async chunk iterator that records whether the processor closed it."""

    def __init__(self, chunks: list[Any]) -> None:
        self.chunks = chunks
        self.closed = False
        self.generator = self._generate()

    async def _generate(self) -> AsyncGenerator[StreamEvent, None]:
        try:
            for chunk in self.chunks:
                yield cast(StreamEvent, chunk)
        finally:
            self.closed = True

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        return self.generator


async def run(*chunks: Any) -> list[TypedEvent]:
    return [event async for event in process_model_stream(ScriptedStream(list(chunks)))]


async def result_of(*chunks: Any) -> ModelStopReason:
    events = await run(*chunks)
    result = events[-1]
    assert isinstance(result, ModelStopReason)
    return result


async def error_of(*chunks: Any) -> str:
    with pytest.raises(ModelStreamError) as caught:
        await run(*chunks)
    return str(caught.value)


def kinds(events: list[TypedEvent]) -> list[str]:
    return [type(event).__name__ for event in events]


# -- well-formed streams ----------------------------------------------------------------------


class TestTextTurn:
    async def test_each_chunk_is_forwarded_then_its_delta_and_the_result_comes_last(self) -> None:
        chunks = [message_start(), text("Hel"), text("lo"), block_stop(), message_stop()]

        events = await run(*chunks)

        assert kinds(events) == [
            "ModelStreamEvent",
            "ModelStreamEvent",
            "TextDeltaEvent",
            "ModelStreamEvent",
            "TextDeltaEvent",
            "ModelStreamEvent",
            "ModelStreamEvent",
            "ModelMessageEvent",
            "ModelStopReason",
        ]
        raw = [event for event in events if isinstance(event, ModelStreamEvent)]
        assert [event.chunk for event in raw] == chunks
        assert all(event.chunk is chunk for event, chunk in zip(raw, chunks, strict=True))
        assert [e.text for e in events if isinstance(e, TextDeltaEvent)] == ["Hel", "lo"]

    async def test_text_fragments_join_into_one_text_block(self) -> None:
        result = await result_of(
            message_start(), text("Hel"), text("lo"), block_stop(), message_stop()
        )

        assert result.stop_reason == "end_turn"
        assert result.message == {"role": "assistant", "content": [{"text": "Hello"}]}

    async def test_message_event_and_result_share_one_message(self) -> None:
        events = await run(text("Hi"), block_stop(), message_stop())

        message_event, result = events[-2], events[-1]

        assert isinstance(message_event, ModelMessageEvent)
        assert isinstance(result, ModelStopReason)
        assert message_event.message is result.message

    async def test_a_text_block_may_start_with_an_empty_content_block_start(self) -> None:
        result = await result_of(
            {"contentBlockStart": {"start": {}}}, text("Hi"), block_stop(), message_stop()
        )

        assert result.message["content"] == [{"text": "Hi"}]

    async def test_a_block_without_text_adds_no_content(self) -> None:
        result = await result_of(
            {"contentBlockStart": {"start": {}}},
            block_stop(),
            text(""),
            block_stop(),
            message_stop(),
        )

        assert result.message["content"] == []

    async def test_role_defaults_to_assistant_without_message_start(self) -> None:
        result = await result_of(text("Hi"), message_stop())

        assert result.message["role"] == "assistant"

    async def test_role_comes_from_message_start(self) -> None:
        result = await result_of(message_start("user"), text("Hi"), message_stop())

        assert result.message["role"] == "user"

    async def test_a_block_left_open_at_message_stop_is_kept(self) -> None:
        result = await result_of(text("Hi"), message_stop("max_tokens"))

        assert result.stop_reason == "max_tokens"
        assert result.message["content"] == [{"text": "Hi"}]


class TestToolInput:
    async def test_tool_input_fragments_are_joined_and_parsed_as_json(self) -> None:
        result = await result_of(
            tool_start("t-1", "weather"),
            tool_input('{"city": '),
            tool_input('"Paris", "days": [1, 2]}'),
            block_stop(),
            message_stop("tool_use"),
        )

        assert result.stop_reason == "tool_use"
        assert result.message["content"] == [
            {
                "toolUse": {
                    "toolUseId": "t-1",
                    "name": "weather",
                    "input": {"city": "Paris", "days": [1, 2]},
                }
            }
        ]

    async def test_each_input_fragment_yields_a_delta_naming_the_call(self) -> None:
        events = await run(
            tool_start("t-1", "weather"),
            tool_input('{"a"'),
            tool_input(": 1}"),
            block_stop(),
            message_stop("tool_use"),
        )

        deltas = [e for e in events if isinstance(e, ToolUseDeltaEvent)]
        assert [(d.tool_use_id, d.name, d.input_fragment) for d in deltas] == [
            ("t-1", "weather", '{"a"'),
            ("t-1", "weather", ": 1}"),
        ]

    @pytest.mark.parametrize("fragments", [[], [""], ["  ", "\n"]], ids=["none", "empty", "blank"])
    async def test_empty_tool_input_means_an_empty_object(self, fragments: list[str]) -> None:
        result = await result_of(
            tool_start("t-1", "now"),
            *[tool_input(fragment) for fragment in fragments],
            block_stop(),
            message_stop("tool_use"),
        )

        assert result.message["content"] == [
            {"toolUse": {"toolUseId": "t-1", "name": "now", "input": {}}}
        ]

    async def test_reasoning_signature_on_the_tool_start_is_kept(self) -> None:
        result = await result_of(
            tool_start("t-1", "now", reasoningSignature="sig-1"),
            block_stop(),
            message_stop("tool_use"),
        )

        assert result.message["content"] == [
            {
                "toolUse": {
                    "toolUseId": "t-1",
                    "name": "now",
                    "input": {},
                    "reasoningSignature": "sig-1",
                }
            }
        ]

    async def test_id_and_name_on_the_first_delta_open_the_tool_block(self) -> None:
        # Some providers identify the call on its first delta instead of in contentBlockStart.
        result = await result_of(
            {"contentBlockStart": {"start": {}}},
            tool_input('{"x": ', toolUseId="t-7", name="calc"),
            tool_input("1}"),
            block_stop(),
            message_stop("tool_use"),
        )

        assert result.message["content"] == [
            {"toolUse": {"toolUseId": "t-7", "name": "calc", "input": {"x": 1}}}
        ]

    async def test_text_then_two_tool_calls_keep_their_order(self) -> None:
        result = await result_of(
            message_start(),
            text("Let me check.", index=0),
            block_stop(0),
            tool_start("t-1", "weather"),
            tool_input('{"city": "Paris"}'),
            block_stop(1),
            tool_start("t-2", "weather"),
            tool_input('{"city": "Oslo"}'),
            block_stop(2),
            message_stop("tool_use"),
        )

        assert result.message["content"] == [
            {"text": "Let me check."},
            {"toolUse": {"toolUseId": "t-1", "name": "weather", "input": {"city": "Paris"}}},
            {"toolUse": {"toolUseId": "t-2", "name": "weather", "input": {"city": "Oslo"}}},
        ]

    async def test_end_turn_with_tool_calls_is_reported_as_tool_use(self) -> None:
        # Otherwise the agent loop, which runs tools only on "tool_use", would drop the calls.
        result = await result_of(tool_start("t-1", "now"), block_stop(), message_stop("end_turn"))

        assert result.stop_reason == "tool_use"

    async def test_other_stop_reasons_with_tool_calls_are_kept(self) -> None:
        result = await result_of(tool_start("t-1", "now"), block_stop(), message_stop("max_tokens"))

        assert result.stop_reason == "max_tokens"


class TestReasoning:
    async def test_reasoning_text_and_signature_form_one_block(self) -> None:
        events = await run(
            reasoning(text="Think"),
            reasoning(text="ing"),
            reasoning(signature="si"),
            reasoning(signature="g"),
            block_stop(),
            text("Answer"),
            block_stop(),
            message_stop(),
        )

        result = events[-1]
        assert isinstance(result, ModelStopReason)
        assert result.message["content"] == [
            {"reasoningContent": {"reasoningText": {"text": "Thinking", "signature": "sig"}}},
            {"text": "Answer"},
        ]
        deltas = [e for e in events if isinstance(e, ReasoningDeltaEvent)]
        assert [(d.text, d.signature) for d in deltas] == [
            ("Think", None),
            ("ing", None),
            (None, "si"),
            (None, "g"),
        ]

    async def test_redacted_reasoning_is_kept_as_bytes(self) -> None:
        result = await result_of(
            reasoning(redactedContent=b"\x01"),
            reasoning(redactedContent=b"\x02"),
            block_stop(),
            message_stop(),
        )

        assert result.message["content"] == [{"reasoningContent": {"redactedContent": b"\x01\x02"}}]


class TestMetadata:
    async def test_usage_and_metrics_come_from_the_metadata_chunk(self) -> None:
        usage = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
        metrics = {"latencyMs": 250}

        result = await result_of(
            text("Hi"), block_stop(), message_stop(), metadata(usage=usage, metrics=metrics)
        )

        assert result.usage == usage
        assert result.metrics == metrics

    async def test_usage_and_metrics_are_zero_without_metadata(self) -> None:
        result = await result_of(text("Hi"), block_stop(), message_stop())

        assert result.usage == {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
        assert result.metrics == {"latencyMs": 0}

    async def test_metadata_may_omit_metrics(self) -> None:
        usage = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}

        result = await result_of(text("Hi"), message_stop(), metadata(usage=usage))

        assert result.usage == usage
        assert result.metrics == {"latencyMs": 0}

    async def test_metadata_is_forwarded_as_a_raw_chunk(self) -> None:
        chunk = metadata(usage={"inputTokens": 1, "outputTokens": 1, "totalTokens": 2})

        events = await run(text("Hi"), message_stop(), chunk)

        assert kinds(events)[-3:] == ["ModelStreamEvent", "ModelMessageEvent", "ModelStopReason"]
        assert events[-3] == {"event": chunk}


class TestLenience:
    async def test_unknown_chunk_kinds_are_forwarded_and_change_nothing(self) -> None:
        unknown = {"redactContent": {"redactAssistantContentMessage": "x"}}
        citation = {"contentBlockDelta": {"delta": {"citation": {"title": "doc"}}}}

        events = await run(text("Hi"), unknown, citation, block_stop(), message_stop())

        assert {"event": unknown} in events
        assert {"event": citation} in events
        result = events[-1]
        assert isinstance(result, ModelStopReason)
        assert result.message["content"] == [{"text": "Hi"}]

    async def test_a_chunk_with_several_kinds_is_read_in_stream_order(self) -> None:
        chunk = {**text("Hi"), "contentBlockStop": {}, "messageStop": {"stopReason": "end_turn"}}

        events = await run(chunk)

        assert kinds(events) == [
            "ModelStreamEvent",
            "TextDeltaEvent",
            "ModelMessageEvent",
            "ModelStopReason",
        ]
        result = events[-1]
        assert isinstance(result, ModelStopReason)
        assert result.message["content"] == [{"text": "Hi"}]

    async def test_a_stop_without_an_open_block_is_ignored(self) -> None:
        result = await result_of(
            block_stop(), text("Hi"), block_stop(), block_stop(), message_stop()
        )

        assert result.message["content"] == [{"text": "Hi"}]


class TestClosingTheSource:
    async def test_the_source_is_closed_when_the_consumer_stops_early(self) -> None:
        source = ScriptedStream([text("a"), text("b"), message_stop()])
        events = process_model_stream(source)

        await anext(events)
        await events.aclose()

        assert source.closed

    async def test_the_source_is_closed_when_a_chunk_is_malformed(self) -> None:
        source = ScriptedStream(["not a chunk", text("never read")])

        with pytest.raises(ModelStreamError):
            async for _ in process_model_stream(source):
                pass

        assert source.closed

    async def test_a_plain_async_iterable_without_aclose_is_accepted(self) -> None:
        class Chunks:
            def __init__(self) -> None:
                self.items = iter([text("Hi"), message_stop()])

            def __aiter__(self) -> Chunks:
                return self

            async def __anext__(self) -> StreamEvent:
                try:
                    return cast(StreamEvent, next(self.items))
                except StopIteration:
                    raise StopAsyncIteration from None

        events = [event async for event in process_model_stream(Chunks())]

        assert isinstance(events[-1], ModelStopReason)


# -- malformed streams -------------------------------------------------------------------------


class TestMalformedStreams:
    def test_model_stream_error_is_a_value_error(self) -> None:
        assert issubclass(ModelStreamError, ValueError)

    async def test_the_bad_chunk_is_not_forwarded(self) -> None:
        forwarded: list[TypedEvent] = []

        with pytest.raises(ModelStreamError):
            async for event in process_model_stream(ScriptedStream([text("Hi"), ["oops"]])):
                forwarded.append(event)

        assert kinds(forwarded) == ["ModelStreamEvent", "TextDeltaEvent"]

    async def test_a_chunk_that_is_not_a_dict_says_what_it_was(self) -> None:
        message = await error_of(text("Hi"), "hello")

        assert message == (
            "malformed model stream at chunk 2: the model yielded a str ('hello'), not a dict; "
            "a model must yield Converse StreamEvent dicts such as "
            "{'contentBlockDelta': {'delta': {'text': 'Hello'}}}"
        )

    async def test_a_tool_delta_before_any_tool_start_asks_for_the_start(self) -> None:
        message = await error_of(message_start(), tool_input('{"a": 1}'))

        assert message.startswith(
            "malformed model stream at chunk 2: a toolUse input delta arrived but no tool block "
            "is open; a model must first open the tool block with "
        )
        assert "{'contentBlockStart': {'start': {'toolUse': {'toolUseId':" in message

    async def test_a_tool_delta_inside_a_text_block_names_the_block(self) -> None:
        message = await error_of(text("Hi", index=0), tool_input("{}"))

        assert "a toolUse input delta arrived but block 0 is a text block" in message

    async def test_tool_input_that_is_not_json_names_the_tool(self) -> None:
        message = await error_of(
            tool_start("t-1", "weather"),
            tool_input('{"city": '),
            tool_input("Paris}"),
            block_stop(),
        )

        assert message.startswith(
            "malformed model stream at chunk 4: tool 'weather' (toolUseId 't-1') has input "
            "that is not valid JSON (Expecting value): '{\"city\": Paris}'; "
        )
        assert "must join into one JSON object" in message

    async def test_tool_input_that_is_not_json_chains_the_decode_error(self) -> None:
        with pytest.raises(ModelStreamError) as caught:
            await run(tool_start("t-1", "weather"), tool_input("{"), block_stop())

        assert isinstance(caught.value.__cause__, ValueError)

    async def test_a_very_long_bad_tool_input_is_shortened_in_the_message(self) -> None:
        message = await error_of(tool_start("t-1", "w"), tool_input("x" * 1000), block_stop())

        assert "... (1000 characters)" in message
        assert "x" * 201 not in message

    async def test_tool_input_that_is_json_but_not_an_object_is_refused(self) -> None:
        message = await error_of(tool_start("t-1", "weather"), tool_input("[1, 2]"), block_stop())

        assert (
            "tool 'weather' (toolUseId 't-1') has input that is a JSON list, not an object: "
            "'[1, 2]'" in message
        )

    async def test_an_open_tool_block_is_checked_at_message_stop(self) -> None:
        message = await error_of(tool_start("t-1", "weather"), tool_input('{"ci'), message_stop())

        assert "malformed model stream at chunk 3: tool 'weather' (toolUseId 't-1')" in message

    async def test_a_stream_without_message_stop_asks_for_one(self) -> None:
        message = await error_of(message_start(), text("Hi"), block_stop())

        assert message == (
            "malformed model stream: it ended after 3 chunks without a messageStop; a model must "
            "end its reply with {'messageStop': {'stopReason': 'end_turn'}} or another stop reason"
        )

    async def test_a_stream_cut_off_mid_block_says_the_block_was_open(self) -> None:
        message = await error_of(text("Hi"))

        assert "it ended after 1 chunks without a messageStop (block 0 was still open)" in message

    async def test_an_empty_stream_says_nothing_arrived(self) -> None:
        message = await error_of()

        assert message.startswith("malformed model stream: the model yielded no chunks at all")

    async def test_message_stop_without_a_stop_reason(self) -> None:
        message = await error_of(text("Hi"), {"messageStop": {}})

        assert message == (
            "malformed model stream at chunk 2: messageStop has no stopReason ({}); a model must "
            "send {'messageStop': {'stopReason': 'end_turn'}} or another stop reason"
        )

    @pytest.mark.parametrize(
        ("chunk", "key"),
        [
            (text("late"), "contentBlockDelta"),
            (tool_start("t-1", "w"), "contentBlockStart"),
            (block_stop(), "contentBlockStop"),
            (message_stop(), "messageStop"),
            (message_start(), "messageStart"),
        ],
    )
    async def test_content_after_message_stop_is_refused(
        self, chunk: dict[str, Any], key: str
    ) -> None:
        message = await error_of(text("Hi"), message_stop(), chunk)

        assert message == (
            f"malformed model stream at chunk 3: {key} arrived after messageStop; a model must "
            "send all of its message before messageStop (only metadata may follow it)"
        )

    async def test_a_block_start_while_a_block_is_open_asks_for_the_stop(self) -> None:
        message = await error_of(tool_start("t-1", "a"), tool_start("t-2", "b"))

        assert message == (
            "malformed model stream at chunk 2: contentBlockStart opens a tool block while "
            "block 0 (toolUse) is still open; a model must close each block with "
            "{'contentBlockStop': {...}} before starting the next"
        )

    @pytest.mark.parametrize(
        "tool",
        [{"name": "w"}, {"toolUseId": "t-1"}, {"toolUseId": "", "name": "w"}, {}],
        ids=["no-id", "no-name", "empty-id", "empty"],
    )
    async def test_a_tool_start_needs_an_id_and_a_name(self, tool: dict[str, Any]) -> None:
        message = await error_of({"contentBlockStart": {"start": {"toolUse": tool}}})

        assert message.startswith(
            "malformed model stream at chunk 1: contentBlockStart opens a tool block without a "
            f"toolUseId and a name ({tool!r}); a model must send "
        )

    async def test_a_delta_without_its_delta_wrapper(self) -> None:
        message = await error_of({"contentBlockDelta": {"text": "Hi"}})

        assert message == (
            "malformed model stream at chunk 1: contentBlockDelta has no 'delta' dict "
            "(it holds {'text': 'Hi'}); a model must wrap the new content, as in "
            "{'contentBlockDelta': {'delta': {'text': 'Hello'}}}"
        )

    @pytest.mark.parametrize(
        ("chunk", "key"),
        [
            ({"contentBlockDelta": "Hi"}, "contentBlockDelta"),
            ({"contentBlockStart": None}, "contentBlockStart"),
            ({"contentBlockStart": {"start": "x"}}, "contentBlockStart.start"),
            ({"contentBlockStop": 0}, "contentBlockStop"),
            ({"messageStart": "assistant"}, "messageStart"),
            ({"messageStop": "end_turn"}, "messageStop"),
            ({"metadata": []}, "metadata"),
            (
                {"contentBlockDelta": {"delta": {"toolUse": "{}"}}},
                "contentBlockDelta.delta.toolUse",
            ),
        ],
    )
    async def test_a_chunk_part_that_is_not_a_dict_is_named(
        self, chunk: dict[str, Any], key: str
    ) -> None:
        message = await error_of(chunk)

        assert re.match(
            rf"malformed model stream at chunk 1: {re.escape(key)} holds a \w+ \(.*\), not a "
            r"dict; a model must send ",
            message,
        ), message

    async def test_a_text_delta_that_is_not_a_string(self) -> None:
        message = await error_of(text(42))

        assert "a text delta holds a int, not a str" in message

    async def test_a_text_delta_that_is_not_a_string_inside_an_open_text_block(self) -> None:
        # The open text block's deltas take the short path; a bad one still gets the full check.
        message = await error_of(text("Hi"), text(42))

        assert message.startswith("malformed model stream at chunk 2: a text delta holds a int")

    async def test_a_tool_input_fragment_that_is_not_a_string_suggests_json_dumps(self) -> None:
        message = await error_of(tool_start("t-1", "w"), tool_input({"city": "Paris"}))

        assert "a toolUse delta holds input of type dict" in message
        assert "json.dumps a parsed input" in message

    async def test_reasoning_parts_of_the_wrong_type(self) -> None:
        message = await error_of(reasoning(text=b"bytes"))

        assert "a reasoningContent delta has parts of the wrong type" in message

    async def test_a_different_kind_of_delta_inside_an_open_block(self) -> None:
        message = await error_of(text("Hi"), reasoning(text="hmm"))

        assert message == (
            "malformed model stream at chunk 2: a reasoning delta arrived while block 0 is a "
            "text block; a model must close each block with contentBlockStop before streaming "
            "a different kind of content"
        )

    async def test_a_delta_for_another_block_than_the_open_one(self) -> None:
        message = await error_of(text("a", index=0), text("b", index=1))

        assert message.startswith(
            "malformed model stream at chunk 2: contentBlockDelta for block 1 arrived while "
            "block 0 is open"
        )

    async def test_a_stop_for_another_block_than_the_open_one(self) -> None:
        message = await error_of(text("a", index=0), block_stop(3))

        assert message == (
            "malformed model stream at chunk 2: contentBlockStop closes block 3 while block 0 "
            "is open; a model must close the block it opened last"
        )

    async def test_an_unknown_role(self) -> None:
        message = await error_of(message_start("system"))

        assert message == (
            "malformed model stream at chunk 1: messageStart has role 'system'; a model must "
            "send 'assistant' (or 'user')"
        )
