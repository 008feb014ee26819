"""The InvokeModelStage runner: defensive copies, the terminal, and the missing-result rule."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from strands_middleware import (
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareRegistry,
    ModelStopReason,
    TypedEvent,
)
from strands_middleware.events import TextDeltaEvent
from strands_middleware.host import model_call_context, run_model_call
from strands_middleware.testing import ScriptedModel, text_turn


def make_context(model: ScriptedModel, history: list[Any], **overrides: Any) -> InvokeModelContext:
    fields: dict[str, Any] = {
        "messages": history,
        "system_prompt": [{"text": "sys"}],
        "tool_specs": [{"name": "t", "description": "d", "inputSchema": {"json": {}}}],
        "tool_choice": {"auto": {}},
        "invocation_state": {"shared": True},
        "model": model,
    }
    fields.update(overrides)
    return model_call_context("agent", **fields)


async def drain(stream: AsyncGenerator[TypedEvent, None]) -> list[TypedEvent]:
    return [event async for event in stream]


def test_context_fields_are_deep_copies_except_state_and_model() -> None:
    history = [{"role": "user", "content": [{"text": "hi"}]}]
    state = {"shared": True}
    model = ScriptedModel([])
    context = make_context(model, history, invocation_state=state)
    context.messages[0]["content"][0]["text"] = "edited"
    assert history[0]["content"][0]["text"] == "hi"
    assert context.invocation_state is state
    assert context.model is model
    assert context.agent == "agent"


async def test_terminal_streams_context_model_with_the_split_system_prompt() -> None:
    model = ScriptedModel([text_turn("hello")])
    history = [{"role": "user", "content": [{"text": "hi"}]}]
    events = await drain(run_model_call(MiddlewareRegistry(), make_context(model, history)))
    assert isinstance(events[-1], ModelStopReason)
    assert events[-1].message == text_turn("hello")
    assert any(isinstance(event, TextDeltaEvent) for event in events)
    request = model.requests[0]
    assert request.system_prompt == "sys"
    assert request.system_prompt_content == [{"text": "sys"}]
    assert request.tool_choice == {"auto": {}}
    assert request.tool_specs is not None and request.tool_specs[0]["name"] == "t"


async def test_input_handler_replacements_reach_the_model() -> None:
    registry = MiddlewareRegistry()
    other = ScriptedModel([text_turn("from the other model")])
    registry.add_middleware(
        InvokeModelStage.Input,
        lambda context: context.replace(
            model=other, system_prompt="replaced", messages=[*context.messages, text_turn("x")]
        ),
    )
    agent_model = ScriptedModel([])
    history = [{"role": "user", "content": [{"text": "hi"}]}]
    events = await drain(run_model_call(registry, make_context(agent_model, history)))
    assert events[-1].message == text_turn("from the other model")  # type: ignore[attr-defined]
    assert agent_model.requests == []
    assert other.requests[0].system_prompt == "replaced"
    assert len(other.requests[0].messages) == 2


async def test_a_chain_that_drops_the_stop_reason_is_an_error_naming_the_stage() -> None:
    async def drop(
        context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
    ) -> AsyncGenerator[TypedEvent, None]:
        async for event in next_fn(context):
            if not isinstance(event, ModelStopReason):
                yield event

    registry = MiddlewareRegistry()
    registry.add_middleware(InvokeModelStage, drop)
    context = make_context(ScriptedModel([text_turn("x")]), [])
    with pytest.raises(RuntimeError, match="stage 'invokeModel' ended without a ModelStopReason"):
        await drain(run_model_call(registry, context))
