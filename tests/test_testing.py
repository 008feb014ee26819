"""ScriptedModel and the turn builders: a model double that streams like a real provider."""

from __future__ import annotations

import re
from collections.abc import AsyncIterable
from typing import Any

import pytest

from strands_middleware.content import (
    Message,
    Messages,
    StreamEvent,
    SystemContentBlock,
    ToolChoiceToolDict,
    ToolSpec,
)
from strands_middleware.events import (
    ModelStopReason,
    ModelStreamEvent,
    TextDeltaEvent,
    ToolUseDeltaEvent,
    TypedEvent,
)
from strands_middleware.host.model_stream import process_model_stream
from strands_middleware.models import Model
from strands_middleware.testing import (
    ModelRequest,
    ScriptedModel,
    ScriptExhaustedError,
    scripted,
    text_turn,
    tool_turn,
)

USER: Messages = [{"role": "user", "content": [{"text": "What is 1 + 2?"}]}]


async def play(model: Model, messages: Messages | None = None, **kwargs: Any) -> list[TypedEvent]:
    """One model call through the host's aggregation, as an InvokeModelStage terminal makes it."""
    return [event async for event in process_model_stream(model.stream(messages or USER, **kwargs))]


def result(events: list[TypedEvent]) -> ModelStopReason:
    assert isinstance(events[-1], ModelStopReason)
    return events[-1]


def chunks(events: list[TypedEvent]) -> list[StreamEvent]:
    return [event.chunk for event in events if isinstance(event, ModelStreamEvent)]


async def raw_chunks(model: ScriptedModel) -> list[StreamEvent]:
    stream: AsyncIterable[StreamEvent] = model.stream(USER)
    return [chunk async for chunk in stream]


# -- builders -----------------------------------------------------------------------------------


def test_text_turn_is_an_assistant_message_with_one_text_block() -> None:
    assert text_turn("hello") == {"role": "assistant", "content": [{"text": "hello"}]}


def test_tool_turn_is_an_assistant_message_calling_one_tool_after_optional_text() -> None:
    assert tool_turn("add", {"a": 1}, tool_use_id="tu1", text="Let me add.") == {
        "role": "assistant",
        "content": [
            {"text": "Let me add."},
            {"toolUse": {"toolUseId": "tu1", "name": "add", "input": {"a": 1}}},
        ],
    }


def test_tool_turn_invents_a_unique_provider_like_id_when_none_is_given() -> None:
    first = tool_turn("add", {})["content"][0].get("toolUse")
    second = tool_turn("add", {})["content"][0].get("toolUse")
    assert first is not None and second is not None
    assert re.fullmatch(r"tooluse_\w+", first["toolUseId"])
    assert first["toolUseId"] != second["toolUseId"]


# -- playback -------------------------------------------------------------------------------------


async def test_a_text_turn_round_trips_through_the_host_aggregation_exactly() -> None:
    turn = text_turn("Three.")
    events = await play(ScriptedModel([turn]))

    assert result(events).stop_reason == "end_turn"
    assert result(events).message == turn
    # The text arrives in more than one delta, as from a real provider.
    deltas = [event.text for event in events if isinstance(event, TextDeltaEvent)]
    assert len(deltas) >= 2
    assert "".join(deltas) == "Three."


async def test_a_tool_turn_round_trips_with_stop_reason_tool_use() -> None:
    turn = tool_turn("add", {"a": 1, "b": [2, {"c": None}]}, tool_use_id="tu1", text="Adding.")
    events = await play(ScriptedModel([turn]))

    assert result(events).stop_reason == "tool_use"
    assert result(events).message == turn
    fragments = [event.input_fragment for event in events if isinstance(event, ToolUseDeltaEvent)]
    assert len(fragments) >= 2, "tool input must arrive as JSON split across deltas"
    assert all(fragment != '{"a": 1, "b": [2, {"c": null}]}' for fragment in fragments)


async def test_a_message_with_several_blocks_and_parallel_tool_calls_round_trips() -> None:
    turn: Message = {
        "role": "assistant",
        "content": [
            {"reasoningContent": {"reasoningText": {"text": "Two lookups.", "signature": "sig"}}},
            {"reasoningContent": {"redactedContent": b"\x00secret"}},
            {"text": "Looking up both."},
            {"toolUse": {"toolUseId": "a", "name": "weather", "input": {"city": "Paris"}}},
            {
                "toolUse": {
                    "toolUseId": "b",
                    "name": "weather",
                    "input": {},
                    "reasoningSignature": "rs",
                }
            },
        ],
    }
    assert result(await play(ScriptedModel([turn]))).message == turn


async def test_the_chunk_stream_is_well_formed_converse() -> None:
    turn = tool_turn("add", {"a": 1}, tool_use_id="tu1", text="Hi")
    played = await raw_chunks(ScriptedModel([turn]))

    assert played[0] == {"messageStart": {"role": "assistant"}}
    assert played[1] == {"contentBlockStart": {"contentBlockIndex": 0, "start": {}}}
    assert played[2:4] == [
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "H"}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "i"}}},
    ]
    assert played[4] == {"contentBlockStop": {"contentBlockIndex": 0}}
    assert played[5] == {
        "contentBlockStart": {
            "contentBlockIndex": 1,
            "start": {"toolUse": {"toolUseId": "tu1", "name": "add"}},
        }
    }
    assert [chunk.get("contentBlockDelta") for chunk in played[6:8]] == [
        {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"a"'}}},
        {"contentBlockIndex": 1, "delta": {"toolUse": {"input": ": 1}"}}},
    ]
    assert played[8:] == [
        {"contentBlockStop": {"contentBlockIndex": 1}},
        {"messageStop": {"stopReason": "tool_use"}},
        {
            "metadata": {
                "usage": {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
                "metrics": {"latencyMs": 0},
            }
        },
    ]


async def test_usage_and_metrics_are_reported_in_the_metadata_chunk() -> None:
    model = ScriptedModel(
        [text_turn("a")],
        usage={"inputTokens": 10, "outputTokens": 2, "totalTokens": 12},
        metrics={"latencyMs": 125},
    )
    stop = result(await play(model))
    assert stop.usage == {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12}
    assert stop.metrics == {"latencyMs": 125}


async def test_turns_are_played_in_order_one_per_call() -> None:
    model = scripted(tool_turn("add", {"a": 1}, tool_use_id="t"), text_turn("3"))
    assert model.remaining == 2

    first = result(await play(model))
    second = result(await play(model))

    assert (first.stop_reason, second.stop_reason) == ("tool_use", "end_turn")
    assert second.message == text_turn("3")
    assert model.remaining == 0


async def test_the_script_is_frozen_when_the_model_is_built() -> None:
    turn = text_turn("original")
    model = ScriptedModel([turn])
    turn["content"][0]["text"] = "edited afterwards"
    assert result(await play(model)).message == text_turn("original")


async def test_each_play_builds_a_fresh_message() -> None:
    # Editing the message the agent received must not rewrite the script (or a later replay).
    turn = text_turn("once")
    model = ScriptedModel([turn, turn])
    first = result(await play(model)).message
    first["content"][0]["text"] = "mutated"
    assert result(await play(model)).message == text_turn("once")


# -- exceptions and callables ----------------------------------------------------------------


async def test_an_exception_turn_is_raised_when_that_turn_is_requested() -> None:
    throttled = RuntimeError("throttled")
    model = ScriptedModel([throttled, text_turn("after the retry")])

    with pytest.raises(RuntimeError) as raised:
        await play(model)
    assert raised.value is throttled
    assert result(await play(model)).message == text_turn("after the retry")
    assert len(model.requests) == 2


async def test_an_exception_class_turn_is_raised_as_a_fresh_instance() -> None:
    model = ScriptedModel([TimeoutError])
    with pytest.raises(TimeoutError):
        await play(model)


async def test_a_callable_turn_answers_from_the_request() -> None:
    def echo_last(request: ModelRequest) -> Message:
        last = request.messages[-1]["content"][0].get("text", "")
        return text_turn(f"you said: {last}")

    events = await play(ScriptedModel([echo_last]))
    assert result(events).message == text_turn("you said: What is 1 + 2?")


async def test_a_callable_turn_may_return_an_exception_to_raise() -> None:
    def refuse(request: ModelRequest) -> BaseException:
        return ValueError(f"refused {len(request.messages)} message(s)")

    with pytest.raises(ValueError, match=re.escape("refused 1 message(s)")):
        await play(ScriptedModel([refuse]))


async def test_a_callable_returning_something_else_is_a_clear_type_error() -> None:
    def wrong(request: ModelRequest) -> Any:
        return "not a message"

    with pytest.raises(TypeError, match="reply of the callable for scripted turn 1 is a str"):
        await play(ScriptedModel([wrong]))


UNPLAYABLE: list[tuple[dict[str, Any], str]] = [
    ({"role": "assistant", "content": [{"image": {}}]}, "'image' block"),
    ({"role": "assistant", "content": [{"text": ""}]}, "empty text block"),
    (
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "t", "name": "x", "input": [1]}}],
        },
        "must be a JSON object",
    ),
    (
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "", "name": "x", "input": {}}}],
        },
        "without a 'toolUseId'",
    ),
    ({"role": "assistant", "content": "hello"}, "needs a 'content' list"),
    ({"role": "assistant", "content": [{"text": "a", "toolUse": {}}]}, "exactly one key"),
]


@pytest.mark.parametrize(("turn", "problem"), UNPLAYABLE)
def test_a_message_that_would_not_round_trip_is_refused_when_scripted(
    turn: Any, problem: str
) -> None:
    with pytest.raises((TypeError, ValueError), match=re.escape(problem)):
        ScriptedModel([turn])


# -- requests -------------------------------------------------------------------------------------


async def test_every_request_is_recorded_with_all_it_carried() -> None:
    specs: list[ToolSpec] = [
        {"name": "add", "description": "Add.", "inputSchema": {"json": {"type": "object"}}}
    ]
    blocks: list[SystemContentBlock] = [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]
    choice: ToolChoiceToolDict = {"tool": {"name": "add"}}
    state = {"user": "ada"}
    model = ScriptedModel([text_turn("ok")])

    await play(
        model,
        USER,
        tool_specs=specs,
        system_prompt="Be brief.",
        tool_choice=choice,
        system_prompt_content=blocks,
        invocation_state=state,
    )

    assert model.requests == [
        ModelRequest(
            messages=USER,
            system_prompt="Be brief.",
            system_prompt_content=blocks,
            tool_specs=specs,
            tool_choice=choice,
            kwargs={"invocation_state": state},
        )
    ]
    # Host extras are live objects: kept by reference, not copied.
    assert model.requests[0].kwargs["invocation_state"] is state


async def test_recorded_messages_are_deep_copies() -> None:
    history: Messages = [{"role": "user", "content": [{"text": "first"}]}]
    model = ScriptedModel([text_turn("one"), text_turn("two")])

    await play(model, history)
    history[0]["content"][0]["text"] = "edited in place"
    history.append(text_turn("one"))
    await play(model, history)

    assert model.requests[0].messages == [{"role": "user", "content": [{"text": "first"}]}]
    assert model.requests[0].messages[0] is not history[0]
    assert len(model.requests[1].messages) == 2


async def test_a_request_is_recorded_even_when_its_turn_raises() -> None:
    model = ScriptedModel([RuntimeError("boom")])
    with pytest.raises(RuntimeError):
        await play(model)
    assert [request.messages for request in model.requests] == [USER]


# -- exhaustion -----------------------------------------------------------------------------------


async def test_asking_for_more_turns_than_scripted_is_a_clear_assertion_error() -> None:
    model = ScriptedModel([text_turn("only one")])
    await play(model)
    follow_up: Messages = [
        *USER,
        text_turn("only one"),
        {"role": "user", "content": [{"text": "and?"}]},
    ]

    with pytest.raises(ScriptExhaustedError) as raised:
        await play(model, follow_up)

    assert isinstance(raised.value, AssertionError)
    assert str(raised.value) == (
        "ScriptedModel was asked for turn 2, but only 1 turn was scripted; the request's last "
        "message was: {'role': 'user', 'content': [{'text': 'and?'}]}"
    )
    assert len(model.requests) == 2


async def test_an_empty_script_is_exhausted_by_the_first_call() -> None:
    with pytest.raises(ScriptExhaustedError, match="turn 1, but only 0 turns were scripted"):
        await play(ScriptedModel([]))


async def test_the_exhaustion_message_shortens_a_huge_last_message() -> None:
    model = ScriptedModel([])
    with pytest.raises(ScriptExhaustedError) as raised:
        await play(model, [{"role": "user", "content": [{"text": "x" * 5000}]}])
    assert len(str(raised.value)) < 800
    assert "characters)" in str(raised.value)


def test_a_scripted_model_is_a_model() -> None:
    model: Model = ScriptedModel([])
    assert callable(model.stream)
