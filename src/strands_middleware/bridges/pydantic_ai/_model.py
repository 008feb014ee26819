"""``InvokeModelStage`` on pydantic-ai: a wrapper model around the model serving each request.

pydantic-ai asks a capability for a wrapper around the model of every request attempt
(``get_wrapper_model``); the bridge's wrapper runs this library's chain in ``request`` and
``request_stream``, with the wrapped model's own request as the chain's terminal, so a handler
may call ``next_fn`` as often as it likes (a retry asks the model again).

Handlers see the request as Converse (`_messages`), pydantic-ai's instructions as the system
prompt and its function tools as tool specs. The terminal streams: a streamed request's events
and a finished response alike reach handlers as this library's delta events, the finished
message and the `ModelStopReason`. What handlers pass on goes back as pydantic-ai's own: the very
``ModelResponse`` the model produced when the result is the one the terminal made, a rebuilt one
otherwise; in a streamed request, the deltas handlers yield are the stream's deltas.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator, AsyncIterator, Hashable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, cast

from pydantic_ai.messages import (
    InstructionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from ...content import StreamEvent, SystemPrompt, ToolChoice, ToolSpec
from ...engine._registry import MiddlewareRegistry
from ...events import (
    ModelStopReason,
    ModelStreamEvent,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolUseDeltaEvent,
    TypedEvent,
)
from ...host._model_call import ModelStagePoint, invoke_model_terminal
from ...host._model_stream import process_model_stream
from ...host._tool_call import copy_containers
from ...stages._invoke_model import InvokeModelContext
from ._messages import (
    StreamChunks,
    chunks_of_response,
    converse_messages,
    converse_usage,
    host_messages,
    host_response,
    same_message,
    stop_reason_of,
    tool_choice_of,
)
from ._tools import tool_spec_of
from .testing import ScriptedPydanticAIModel

__all__ = ["MiddlewareModel"]


def _instructions(messages: list[ModelMessage], params: ModelRequestParameters) -> SystemPrompt:
    """pydantic-ai's instructions as a system prompt: one part as its text, several as blocks."""
    parts = params.instruction_parts
    if parts is not None:
        if len(parts) > 1:
            return [{"text": part.content} for part in parts]
        return InstructionPart.join(parts) if parts else None
    for message in reversed(messages):
        if isinstance(message, ModelRequest) and message.instructions is not None:
            return message.instructions
    return None


def _instruction_parts(prompt: SystemPrompt) -> list[InstructionPart]:
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [InstructionPart(prompt)] if prompt else []
    return [InstructionPart(block["text"]) for block in prompt if "text" in block]


def _host_tool_choice(choice: ToolChoice | None) -> Any:
    if choice is None:
        return None
    if "any" in choice:
        return "required"
    if "tool" in choice:
        return [cast(Any, choice)["tool"]["name"]]
    return "auto"


def _tool_definitions(
    ours: list[ToolSpec], shown: list[ToolSpec], was: list[ToolSpec], hosts: list[ToolDefinition]
) -> list[ToolDefinition]:
    if ours is shown and ours == was:
        return hosts
    pairs = zip(hosts, was, strict=True)
    by_name = {definition.name: (definition, spec) for definition, spec in pairs}
    definitions: list[ToolDefinition] = []
    for spec in ours:
        found = by_name.get(spec["name"])
        if found is not None and found[1] == spec:
            definitions.append(found[0])
            continue
        schema: Any = spec["inputSchema"]["json"]
        if found is not None:
            definitions.append(
                dataclasses.replace(
                    found[0], description=spec["description"], parameters_json_schema=schema
                )
            )
        else:
            definitions.append(
                ToolDefinition(
                    name=spec["name"],
                    description=spec["description"],
                    parameters_json_schema=schema,
                )
            )
    return definitions


def _is_pydantic_ai_model(model: object) -> bool:
    return isinstance(model, Model)


class _ModelCall:
    """One request through the chain: the context handed out, and the way back."""

    __slots__ = (
        "_choice",
        "_messages",
        "_model",
        "_params",
        "_prompt",
        "_response",
        "_run_context",
        "_settings",
        "_shown",
        "_shown_model",
        "_specs",
        "_streamed",
        "_was",
        "_was_specs",
        "point",
    )

    def __init__(
        self,
        model: MiddlewareModel,
        messages: list[ModelMessage],
        settings: ModelSettings | None,
        params: ModelRequestParameters,
        run_context: Any,
        *,
        streamed: bool,
    ) -> None:
        self._messages = messages
        self._settings = settings
        self._params = params
        self._run_context = run_context
        self._streamed = streamed
        # One conversion each: what handlers get; the untouched copies a handler's in-place
        # edits are found against are container copies, not conversions again.
        shown = converse_messages(messages)
        self._shown = tuple(shown)
        self._was = copy_containers(shown)
        specs = [tool_spec_of(definition) for definition in params.function_tools]
        self._specs = specs
        self._was_specs = copy_containers(specs)
        self._prompt = _instructions(messages, params)
        self._choice = tool_choice_of(settings)
        wrapped = model.wrapped
        self._model = wrapped
        played: Any = wrapped.script if isinstance(wrapped, ScriptedPydanticAIModel) else wrapped
        self._shown_model: Any = played
        # The message object of each result the terminal made, to the response it was made of.
        # The response of the terminal's latest model call.
        self._response: ModelResponse | None = None
        self.point = ModelStagePoint(
            model.registry,
            agent=model.agent,
            messages=shown,
            system_prompt=self._prompt,
            tool_specs=specs,
            tool_choice=self._choice,
            invocation_state=model.invocation_state,
            # pydantic-ai's own model (see README), or the model of this library it plays.
            model=self._shown_model,
            tracks_changes=False,  # the request is compared with its own translation
        )

    def terminal(self, ours: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        chosen: Any = ours.model
        if chosen is self._shown_model:
            return self._host_call(ours, self._model)
        if not _is_pydantic_ai_model(chosen):  # a model of this library
            return invoke_model_terminal(ours)
        return self._host_call(ours, chosen)  # another of pydantic-ai's models

    def _request(
        self, ours: InvokeModelContext
    ) -> tuple[list[ModelMessage], ModelRequestParameters, ModelSettings | None]:
        messages = host_messages(ours.messages, self._shown, self._was, self._messages)
        params = self._params
        if ours.system_prompt is not self._prompt and ours.system_prompt != self._prompt:
            parts = _instruction_parts(ours.system_prompt)
            params = dataclasses.replace(params, instruction_parts=parts)
        settings = self._settings
        if ours.tool_choice != self._choice:
            settings = cast(ModelSettings, {**(settings or {})})
            settings["tool_choice"] = _host_tool_choice(ours.tool_choice)
        definitions = _tool_definitions(
            ours.tool_specs, self._specs, self._was_specs, params.function_tools
        )
        if definitions is not params.function_tools:
            params = dataclasses.replace(params, function_tools=definitions)
        return messages, params, settings

    def _host_call(
        self, ours: InvokeModelContext, model: Model
    ) -> AsyncGenerator[TypedEvent, None]:
        # The aggregator is the terminal's stream itself: no generator hop of the bridge's own
        # on any event; the response the chunks came from is noted when they end.
        messages, params, settings = self._request(ours)
        if self._streamed:
            chunks = self._streamed_chunks(model, messages, settings, params)
        else:
            chunks = self._response_chunks(model, messages, settings, params)
        return process_model_stream(chunks)

    async def _response_chunks(
        self,
        model: Model,
        messages: list[ModelMessage],
        settings: ModelSettings | None,
        params: ModelRequestParameters,
    ) -> AsyncGenerator[StreamEvent, None]:
        response = await model.request(messages, settings, params)
        self._response = response
        for chunk in chunks_of_response(response):
            yield chunk

    async def _streamed_chunks(
        self,
        model: Model,
        messages: list[ModelMessage],
        settings: ModelSettings | None,
        params: ModelRequestParameters,
    ) -> AsyncGenerator[StreamEvent, None]:
        converter = StreamChunks()
        async with model.request_stream(messages, settings, params, self._run_context) as stream:
            yield converter.start()
            async for event in stream:
                for chunk in converter.of(event):
                    yield chunk
            response = stream.get()
            self._response = response
            for chunk in converter.end(response):
                yield chunk

    def response_of(self, result: ModelStopReason) -> ModelResponse:
        """pydantic-ai's response for the chain's result.

        The model's own response when the result still says what the terminal's last call
        made of it (the message, the stop reason, the usage); a rebuilt one otherwise.
        """
        response = self._response
        if response is None:
            return host_response(result.message, result.stop_reason, result.usage, None)
        if (
            result.stop_reason == stop_reason_of(response)
            and result.usage == converse_usage(response.usage)
            and same_message(result.message, response)
        ):
            return response
        return host_response(result.message, result.stop_reason, result.usage, response)


class MiddlewareModel(WrapperModel):
    """The model pydantic-ai asks, running this library's InvokeModelStage around the real one."""

    def __init__(
        self,
        wrapped: Model,
        registry: MiddlewareRegistry,
        agent: Any,
        invocation_state: dict[str, Any],
    ) -> None:
        super().__init__(wrapped)
        self.registry = registry
        self.agent = agent
        self.invocation_state = invocation_state

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        call = _ModelCall(
            self, messages, model_settings, model_request_parameters, None, streamed=False
        )
        return call.response_of(await call.point.result(call.terminal))

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: Any = None,
    ) -> AsyncGenerator[StreamedResponse, None]:
        call = _ModelCall(
            self, messages, model_settings, model_request_parameters, run_context, streamed=True
        )
        response = _ChainStream(model_request_parameters, self.registry, call, self.model_name)
        try:
            yield response
        finally:
            await response.close_chain()


class _ChainStream(StreamedResponse):
    """The stream pydantic-ai reads: the deltas the chain yields, then the chain's result."""

    def __init__(
        self,
        params: ModelRequestParameters,
        registry: MiddlewareRegistry,
        call: _ModelCall,
        model_name: str,
    ) -> None:
        super().__init__(params)
        self._call = call
        self._chain = call.point.open(call.terminal)
        self._events: AsyncGenerator[ModelResponseStreamEvent, None] | None = None
        self._name = model_name
        self._started = datetime.now().astimezone()
        self._final: ModelResponse | None = None

    def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        # pydantic-ai asks for this once, when the response is first iterated. The generator is
        # kept so that `close_chain` can close it, and the chain's block with it, when the stream
        # is left before its end.
        self._events = self._translated()
        return self._events

    async def _translated(self) -> AsyncGenerator[ModelResponseStreamEvent, None]:
        # The chain is opened (`MiddlewareRegistry.open`), not invoked: this loop iterates the
        # outermost handler itself, one generator hop fewer on every event.
        parts = self._parts_manager
        block = 0
        result: ModelStopReason | None = None
        # A text delta and a raw chunk are nearly every event: their one item is read directly
        # (it is what `TextDeltaEvent.text` and `ModelStreamEvent.chunk` return), saving a
        # property call on each.
        async with self._chain as stream:
            async for event in stream:
                kind = event.__class__
                if kind is TextDeltaEvent:
                    text: str = event["data"]
                    for out in parts.handle_text_delta(vendor_part_id=block, content=text):
                        yield out
                elif kind is ToolUseDeltaEvent:
                    delta = cast(ToolUseDeltaEvent, event)
                    vendor: Hashable = (block, delta.tool_use_id)
                    started = parts.handle_tool_call_delta(
                        vendor_part_id=vendor,
                        tool_name=delta.name,
                        args=delta.input_fragment,
                        tool_call_id=delta.tool_use_id,
                    )
                    if started is not None:
                        yield started
                elif kind is ReasoningDeltaEvent:
                    thought = cast(ReasoningDeltaEvent, event)
                    for out in parts.handle_thinking_delta(
                        vendor_part_id=block, content=thought.text, signature=thought.signature
                    ):
                        yield out
                elif kind is ModelStreamEvent:
                    if "contentBlockStop" in event["event"]:
                        block += 1
                elif isinstance(event, ModelStopReason):
                    result = event
        if result is None:
            raise self._call.point.missing()
        self._call.point.finished(result)
        final = self._call.response_of(result)
        self._final = final
        self._usage = final.usage
        self.finish_reason = final.finish_reason

    def get(self) -> ModelResponse:
        final = self._final
        return final if final is not None else super().get()

    async def close_chain(self) -> None:
        # Closing the stream's generator leaves the chain's block, closing what the chain
        # opened; a stream never iterated opened nothing.
        if self._events is not None:
            await self._events.aclose()

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def provider_name(self) -> str | None:
        return None

    @property
    def provider_url(self) -> str | None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._started
