"""Test helpers for the pydantic-ai bridge: a scripted pydantic-ai model, no network."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import (
    AgentInfo,
    DeltaThinkingCalls,
    DeltaThinkingPart,
    DeltaToolCall,
    DeltaToolCalls,
    FunctionModel,
)

from ...content import StreamEvent
from ...events import ModelStopReason
from ...host._model_stream import process_model_stream
from ...models import Model as LibraryModel
from ...testing import ScriptedModel, ScriptedTurn
from ._messages import converse_messages, host_response, tool_choice_of
from ._tools import tool_spec_of

__all__ = ["ScriptedPydanticAIModel", "scripted_function_model"]


class ScriptedPydanticAIModel(FunctionModel):
    """A pydantic-ai ``FunctionModel`` playing a `strands_middleware.testing.ScriptedModel`.

    Both of pydantic-ai's ways of asking are scripted: a request gets the turn's finished
    response (with the script's usage), a streamed request its chunks as pydantic-ai deltas. The
    script and its recorded requests are shared: ``model.script.requests`` shows, in Converse,
    what pydantic-ai sent, with its instructions as the system prompt.

    Example:
        ```python
        model = ScriptedPydanticAIModel([text_turn("hello")])
        agent = pydantic_ai.Agent(model)
        ```

    Any other model of this library's shape (anything with its ``stream``) is played the same
    way, so a test can run one model on every host.

    Args:
        script: A `ScriptedModel` (or another model of this library), or the turns to build a
            `ScriptedModel` from.
    """

    def __init__(self, script: ScriptedModel | LibraryModel | Iterable[ScriptedTurn]) -> None:
        played: Any = script
        self.script: ScriptedModel | LibraryModel = (
            played if hasattr(played, "stream") else ScriptedModel(played)
        )
        super().__init__(self._respond, stream_function=self._stream, model_name="scripted")

    def _chunks(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[StreamEvent]:
        specs = [tool_spec_of(definition) for definition in info.function_tools]
        parts = info.model_request_parameters.instruction_parts or []
        return aiter(
            self.script.stream(
                converse_messages(messages),
                specs or None,
                info.instructions,
                tool_choice=tool_choice_of(info.model_settings),
                system_prompt_content=[{"text": part.content} for part in parts] or None,
            )
        )

    def get_config(self) -> dict[str, Any]:
        """A fixed model id: two scripted models are the same model to a cache or a log."""
        return {"model_id": "scripted"}

    async def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        result: ModelStopReason | None = None
        async for event in process_model_stream(self._chunks(messages, info)):
            if isinstance(event, ModelStopReason):
                result = event
        assert result is not None  # process_model_stream always ends with one
        return host_response(result.message, result.stop_reason, result.usage, None)

    async def _stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls | DeltaThinkingCalls]:
        index = 0
        async for chunk in self._chunks(messages, info):
            if "contentBlockStart" in chunk:
                start: Any = chunk["contentBlockStart"].get("start", {})
                tool_use = start.get("toolUse")
                if tool_use is not None:
                    yield {
                        index: DeltaToolCall(
                            name=tool_use["name"], tool_call_id=tool_use["toolUseId"]
                        )
                    }
            elif "contentBlockDelta" in chunk:
                delta: Any = chunk["contentBlockDelta"].get("delta", {})
                if "text" in delta:
                    yield delta["text"]
                elif "toolUse" in delta:
                    yield {index: DeltaToolCall(json_args=delta["toolUse"]["input"])}
                elif "reasoningContent" in delta:
                    reasoning = delta["reasoningContent"]
                    yield {
                        index: DeltaThinkingPart(
                            content=reasoning.get("text"), signature=reasoning.get("signature")
                        )
                    }
            elif "contentBlockStop" in chunk:
                index += 1


def scripted_function_model(script: ScriptedModel | LibraryModel) -> FunctionModel:
    """pydantic-ai's own ``FunctionModel`` playing ``script``, as a user would write one.

    It answers as `ScriptedPydanticAIModel` does, but is not one: the bridge treats it as any
    pydantic-ai model (handlers see it as ``context.model``), where it knows a
    `ScriptedPydanticAIModel` by the script it plays. The conformance kit runs its model-stage
    clauses with it.
    """
    player = ScriptedPydanticAIModel(script)
    return FunctionModel(player._respond, stream_function=player._stream, model_name="function")  # pyright: ignore[reportPrivateUsage]
