"""Test helpers for the OpenAI Agents SDK bridge: a scripted SDK ``Model``, no network."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from agents import FunctionTool, Model, ModelResponse, ModelSettings
from agents.items import TResponseInputItem, TResponseStreamEvent
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseTextDeltaEvent,
)

from ...content import StreamEvent
from ...events import ModelStopReason
from ...host._model_stream import process_model_stream
from ...models import Model as LibraryModel
from ...stages._invoke_model import split_system_prompt
from ...testing import ScriptedModel, ScriptedTurn
from ._converse import (
    completed_response,
    converse_messages,
    host_output,
    host_usage,
    tool_choice_of,
    tool_spec_of,
)

__all__ = ["ScriptedOpenAIModel"]


class ScriptedOpenAIModel(Model):
    """An OpenAI Agents SDK ``Model`` playing a `strands_middleware.testing.ScriptedModel`.

    Both of the SDK's ways of asking are scripted: ``get_response`` gets the turn's finished
    ``ModelResponse`` (with the script's usage), ``stream_response`` the turn's text deltas as
    Responses stream events, then ``response.completed``. The script and its recorded requests
    are shared: ``model.script.requests`` shows, in Converse, what the SDK sent.

    Example:
        ```python
        model = ScriptedOpenAIModel([text_turn("hello")])
        agent = agents.Agent("assistant", model=model)
        ```

    Args:
        script: A `ScriptedModel` (or another model of this library), or the turns to build a
            `ScriptedModel` from.
    """

    def __init__(self, script: ScriptedModel | LibraryModel | Iterable[ScriptedTurn]) -> None:
        played: Any = script
        self.script: ScriptedModel | LibraryModel = (
            played if hasattr(played, "stream") else ScriptedModel(played)
        )

    def get_config(self) -> dict[str, Any]:
        """A fixed model id: two scripted models are the same model to a cache or a log."""
        return {"model_id": "scripted"}

    async def _turn(
        self,
        system_instructions: str | None,
        items: str | list[TResponseInputItem],
        settings: ModelSettings,
        tools: list[Any],
    ) -> tuple[ModelStopReason, list[StreamEvent]]:
        specs = [tool_spec_of(tool) for tool in tools if isinstance(tool, FunctionTool)]
        system_prompt, system_prompt_content = split_system_prompt(system_instructions)
        stream = self.script.stream(
            converse_messages(items),
            specs or None,
            system_prompt,
            tool_choice=tool_choice_of(settings.tool_choice),
            system_prompt_content=system_prompt_content,
        )
        chunks = [chunk async for chunk in stream]
        result: ModelStopReason | None = None
        async for event in process_model_stream(_replay(chunks)):
            if isinstance(event, ModelStopReason):
                result = event
        assert result is not None  # process_model_stream always ends with one
        return result, chunks

    async def get_response(  # noqa: PLR0917 - the SDK's own signature
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        """The script's next turn, finished."""
        result, _ = await self._turn(system_instructions, input, model_settings, tools)
        return ModelResponse(
            output=host_output(result.message),
            usage=host_usage(result.usage),
            response_id=None,
        )

    async def stream_response(  # noqa: PLR0917 - the SDK's own signature
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        **kwargs: Any,
    ) -> AsyncIterator[TResponseStreamEvent]:
        """The script's next turn as Responses stream events."""
        result, chunks = await self._turn(system_instructions, input, model_settings, tools)
        response = completed_response(
            result.message,
            result.usage,
            response_id="resp_scripted",
            model="scripted",
            created_at=0,
        )
        started = response.model_copy(update={"output": [], "status": "in_progress"})
        yield ResponseCreatedEvent(type="response.created", response=started, sequence_number=0)
        for number, event in enumerate(_block_events(chunks, response.output), start=1):
            # A network read between events, as the SDK's own models have.
            await asyncio.sleep(0)
            yield event.model_copy(update={"sequence_number": number})
        await asyncio.sleep(0)
        yield ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=len(chunks) + 1
        )


async def _replay(chunks: list[StreamEvent]) -> AsyncIterator[StreamEvent]:
    for chunk in chunks:
        yield chunk


def _block_events(chunks: list[StreamEvent], output: list[Any]) -> Iterator[Any]:
    """The script's chunks as the Responses events of its output items, block by block."""
    index = -1
    started = False
    for chunk in chunks:
        if "contentBlockStart" in chunk:
            index += 1
            started = True
            item = output[index] if index < len(output) else None
            if isinstance(item, ResponseFunctionToolCall):
                pending = item.model_copy(update={"arguments": "", "status": "in_progress"})
                yield ResponseOutputItemAddedEvent(
                    type="response.output_item.added",
                    item=pending,
                    output_index=index,
                    sequence_number=0,
                )
        elif "contentBlockDelta" in chunk:
            if not started:  # a text block the script opened without a start chunk
                index += 1
                started = True
            delta: Any = chunk["contentBlockDelta"].get("delta", {})
            if "text" in delta:
                yield ResponseTextDeltaEvent(
                    type="response.output_text.delta",
                    item_id=f"msg_{index}",
                    output_index=index,
                    content_index=0,
                    delta=delta["text"],
                    logprobs=[],
                    sequence_number=0,
                )
            elif "toolUse" in delta:
                yield ResponseFunctionCallArgumentsDeltaEvent(
                    type="response.function_call_arguments.delta",
                    item_id=str(getattr(output[index], "id", "")),
                    output_index=index,
                    delta=delta["toolUse"]["input"],
                    sequence_number=0,
                )
        elif "contentBlockStop" in chunk and started:
            started = False
            if 0 <= index < len(output):
                yield ResponseOutputItemDoneEvent(
                    type="response.output_item.done",
                    item=output[index],
                    output_index=index,
                    sequence_number=0,
                )
