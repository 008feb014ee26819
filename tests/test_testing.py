"""The testing helpers: ScriptedModel and its turn builders, and the stage-context builders."""

from __future__ import annotations

import re
import threading
from collections.abc import AsyncIterable
from typing import Any

import pytest

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InterruptException,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareRegistry,
    ToolResultEvent,
)
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
from strands_middleware.host import invoke_model_terminal, make_tool_terminal
from strands_middleware.host._model_stream import process_model_stream
from strands_middleware.interrupts import execute_tool_interrupt_id
from strands_middleware.models import Model
from strands_middleware.testing import (
    TEST_TOOL_USE_ID,
    ModelRequest,
    ScriptedModel,
    ScriptExhaustedError,
    model_context,
    scripted,
    text_turn,
    tool_context,
    tool_turn,
)
from strands_middleware.tools import tool

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


# -- stage contexts -------------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_model_context_defaults_to_an_empty_request_and_a_model_with_no_turns() -> None:
    context = model_context()

    assert isinstance(context, InvokeModelContext)
    assert context.agent is None
    assert context.messages == []
    assert context.system_prompt is None
    assert context.tool_specs == []
    assert context.tool_choice is None
    assert context.invocation_state == {}
    assert isinstance(context.model, ScriptedModel)
    assert context.model.remaining == 0


def test_model_context_copies_the_request_and_shares_state_and_model_as_a_host_does() -> None:
    messages: Messages = [{"role": "user", "content": [{"text": "hi"}]}]
    specs: list[ToolSpec] = [add.tool_spec]
    state: dict[str, Any] = {"user": "ada"}
    model = scripted(text_turn("hello"))

    context = model_context(
        messages=messages,
        system_prompt="be brief",
        tool_specs=specs,
        tool_choice={"auto": {}},
        invocation_state=state,
        model=model,
        agent="the agent",
    )
    context.messages[0]["content"].append({"text": "edited"})
    context.tool_specs.clear()

    assert messages == [{"role": "user", "content": [{"text": "hi"}]}]
    assert specs == [add.tool_spec]
    assert (context.system_prompt, context.tool_choice) == ("be brief", {"auto": {}})
    assert context.invocation_state is state
    assert context.model is model
    assert context.agent == "the agent"


async def test_a_model_context_runs_through_the_stage_against_its_scripted_model() -> None:
    def concise(context: InvokeModelContext) -> InvokeModelContext:
        return context.replace(system_prompt="Answer in one sentence.")

    registry = MiddlewareRegistry()
    registry.use(InvokeModelStage.input(concise))
    model = scripted(text_turn("Paris."))

    stop = await registry.run(
        InvokeModelStage, model_context(model=model, messages=USER), invoke_model_terminal
    )

    assert stop.message == text_turn("Paris.")
    assert model.requests[0].system_prompt == "Answer in one sentence."


async def test_the_default_model_fails_the_test_when_the_code_under_test_calls_it() -> None:
    with pytest.raises(ScriptExhaustedError):
        await MiddlewareRegistry().run(InvokeModelStage, model_context(), invoke_model_terminal)


def test_tool_context_defaults_to_an_unknown_tool_called_without_arguments() -> None:
    context = tool_context()

    assert isinstance(context, ExecuteToolContext)
    assert context.agent is None
    assert context.tool is None
    assert context.tool_use == {"toolUseId": TEST_TOOL_USE_ID, "name": "tool", "input": {}}
    assert context.invocation_state == {}
    assert isinstance(context.cancel_signal, threading.Event)
    assert not context.cancel_signal.is_set()


def test_tool_context_builds_the_call_it_is_given() -> None:
    arguments = {"a": 1, "b": 2}
    state: dict[str, Any] = {}
    signal = threading.Event()

    context = tool_context(
        "add",
        arguments,
        tool_use_id="t-7",
        tool=add,
        invocation_state=state,
        cancel_signal=signal,
        agent="the agent",
    )
    arguments["a"] = 100

    assert context.tool_use == {"toolUseId": "t-7", "name": "add", "input": {"a": 1, "b": 2}}
    assert context.tool is add
    assert context.invocation_state is state
    assert context.cancel_signal is signal
    assert context.agent == "the agent"


def test_tool_context_names_the_call_after_its_tool_unless_told_otherwise() -> None:
    assert tool_context(tool=add).tool_use["name"] == "add"
    assert tool_context("sum", tool=add).tool_use["name"] == "sum"


def test_each_tool_context_gets_its_own_cancel_signal() -> None:
    assert tool_context().cancel_signal is not tool_context().cancel_signal


def test_interrupt_on_a_tool_context_raises_when_no_answer_was_supplied() -> None:
    with pytest.raises(InterruptException) as raised:
        tool_context("delete", tool_use_id="t-1").interrupt("approve", reason="rm -rf")

    assert raised.value.interrupt.id == execute_tool_interrupt_id("t-1", "approve")
    assert (raised.value.interrupt.name, raised.value.interrupt.reason) == ("approve", "rm -rf")


def test_interrupt_on_a_tool_context_returns_the_supplied_answer_as_a_resume_would() -> None:
    context = tool_context("delete", answers={"approve": {"ok": True}})

    assert context.interrupt("approve").response == {"ok": True}
    # The answer also wins over a preemptive response, as a human's does on a host.
    assert context.interrupt("approve", response="policy").response == {"ok": True}
    with pytest.raises(InterruptException):
        context.interrupt("another decision")


def test_an_answer_belongs_to_its_tool_call() -> None:
    answered = tool_context("delete", tool_use_id="t-1", answers={"approve": "yes"})
    resumed_elsewhere = answered.replace(tool_use={**answered.tool_use, "toolUseId": "t-2"})

    with pytest.raises(InterruptException):
        resumed_elsewhere.interrupt("approve")


def test_a_none_answer_is_refused_with_what_to_do_instead() -> None:
    with pytest.raises(ValueError, match="leave 'approve' out of answers"):
        tool_context(answers={"approve": None})


async def test_a_tool_context_runs_its_tool_through_the_stage() -> None:
    context = tool_context(tool=add, input={"a": 2, "b": 3})

    result = await MiddlewareRegistry().run(
        ExecuteToolStage, context, make_tool_terminal(context.cancel_signal)
    )

    assert isinstance(result, ToolResultEvent)
    assert result.tool_result["toolUseId"] == TEST_TOOL_USE_ID
    assert result.tool_result["status"] == "success"
    assert result.tool_result["content"] == [{"text": "5"}]
