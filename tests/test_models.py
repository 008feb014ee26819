"""Model: the structural shape a strands-agents provider and a plain async generator both have.

The assignments annotated ``Model`` are the point of these tests: the type checkers (run over
this file with ``mypy --strict`` and ``pyright``) prove the shapes match, and the calls prove the
host's way of calling a model works on each at run time.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator
from typing import Any, TypeVar, cast

from pydantic import BaseModel
from strands.models import Model as StrandsModel
from strands.models.bedrock import BedrockModel
from strands.types.content import Messages as StrandsMessages
from strands.types.content import SystemContentBlock as StrandsSystemContentBlock
from strands.types.streaming import StreamEvent as StrandsStreamEvent
from strands.types.tools import ToolChoice as StrandsToolChoice
from strands.types.tools import ToolSpec as StrandsToolSpec

from strands_middleware.content import (
    Message,
    Messages,
    StreamEvent,
    SystemContentBlock,
    ToolChoice,
    ToolChoiceAutoDict,
    ToolSpec,
)
from strands_middleware.events import ModelStopReason
from strands_middleware.host._model_stream import process_model_stream
from strands_middleware.models import Model

_T = TypeVar("_T")

CONVERSATION: Messages = [{"role": "user", "content": [{"text": "hi"}]}]
TOOL_SPECS: list[ToolSpec] = [
    {
        "name": "add",
        "description": "Add numbers.",
        "inputSchema": {"json": {"type": "object", "properties": {}}},
    }
]
SYSTEM_BLOCKS: list[SystemContentBlock] = [{"text": "Be brief."}]
TOOL_CHOICE: ToolChoiceAutoDict = {"auto": {}}
REPLY: Message = {"role": "assistant", "content": [{"text": "hello"}]}


def _reply_chunks() -> list[StreamEvent]:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"delta": {"text": "hel"}}},
        {"contentBlockDelta": {"delta": {"text": "lo"}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]


class StrandsProvider(StrandsModel):
    """A strands-agents provider, annotated with strands' own types exactly as Bedrock's is."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def update_config(self, **model_config: Any) -> None:
        del model_config

    def get_config(self) -> Any:
        return {}

    async def structured_output(
        self,
        output_model: type[_T],
        prompt: StrandsMessages,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[dict[str, _T | Any], None]:
        raise AssertionError("structured output is not used by these tests")
        yield {}

    async def stream(
        self,
        messages: StrandsMessages,
        tool_specs: list[StrandsToolSpec] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: StrandsToolChoice | None = None,
        system_prompt_content: list[StrandsSystemContentBlock] | None = None,
        invocation_state: dict[str, Any] | None = None,
        cancel_signal: threading.Event | None = None,
        structured_output_model: type[BaseModel] | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StrandsStreamEvent, None]:
        self.calls.append(
            {
                "messages": messages,
                "tool_specs": tool_specs,
                "system_prompt": system_prompt,
                "tool_choice": tool_choice,
                "system_prompt_content": system_prompt_content,
                "invocation_state": invocation_state,
                "kwargs": kwargs,
            }
        )
        for chunk in _reply_chunks():
            # Same dict, the other package's TypedDict.
            yield cast(StrandsStreamEvent, chunk)


class GeneratorModel:
    """A model of one's own: no base class; ``stream`` is an async generator of our types."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def stream(
        self,
        messages: Messages,
        tool_specs: list[ToolSpec] | None = None,
        system_prompt: str | None = None,
        *,
        tool_choice: ToolChoice | None = None,
        system_prompt_content: list[SystemContentBlock] | None = None,
        **kwargs: Any,
    ) -> AsyncGenerator[StreamEvent, None]:
        self.calls.append(
            {
                "messages": messages,
                "tool_specs": tool_specs,
                "system_prompt": system_prompt,
                "tool_choice": tool_choice,
                "system_prompt_content": system_prompt_content,
                "kwargs": kwargs,
            }
        )
        for chunk in _reply_chunks():
            yield chunk


def test_a_shipped_strands_agents_provider_is_a_model() -> None:
    # Constructing BedrockModel needs AWS configuration; the annotation alone makes the type
    # checkers prove that a shipped provider is a Model, and the attribute is there at run time.
    def as_model(bedrock: BedrockModel) -> Model:
        return bedrock

    assert callable(as_model)
    assert callable(BedrockModel.stream)


async def _call_as_host(model: Model) -> ModelStopReason:
    """Call ``model`` the way a host's model terminal does and return the stage result."""
    events = [
        event
        async for event in process_model_stream(
            model.stream(
                CONVERSATION,
                TOOL_SPECS,
                "Be brief.",
                tool_choice=TOOL_CHOICE,
                system_prompt_content=SYSTEM_BLOCKS,
                invocation_state={"request_id": "r1"},
            )
        )
    ]
    result = events[-1]
    assert isinstance(result, ModelStopReason)
    return result


async def test_a_strands_agents_provider_is_a_model() -> None:
    provider = StrandsProvider()
    model: Model = provider

    result = await _call_as_host(model)

    assert result.stop_reason == "end_turn"
    assert result.message == REPLY
    assert provider.calls == [
        {
            "messages": CONVERSATION,
            "tool_specs": TOOL_SPECS,
            "system_prompt": "Be brief.",
            "tool_choice": TOOL_CHOICE,
            "system_prompt_content": SYSTEM_BLOCKS,
            "invocation_state": {"request_id": "r1"},
            "kwargs": {},
        }
    ]


async def test_a_class_with_an_async_generator_stream_is_a_model() -> None:
    own = GeneratorModel()
    model: Model = own

    result = await _call_as_host(model)

    assert result.message == REPLY
    assert own.calls == [
        {
            "messages": CONVERSATION,
            "tool_specs": TOOL_SPECS,
            "system_prompt": "Be brief.",
            "tool_choice": TOOL_CHOICE,
            "system_prompt_content": SYSTEM_BLOCKS,
            # A host extra the model does not name arrives in **kwargs, where it may be ignored.
            "kwargs": {"invocation_state": {"request_id": "r1"}},
        }
    ]


async def test_a_model_may_be_called_with_the_conversation_alone() -> None:
    # Everything but the messages is optional, as for strands-agents providers.
    model: Model = GeneratorModel()

    chunks = [chunk async for chunk in model.stream(CONVERSATION)]

    assert chunks == _reply_chunks()
