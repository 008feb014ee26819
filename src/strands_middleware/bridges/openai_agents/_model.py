"""``InvokeModelStage`` on the OpenAI Agents SDK: a ``Model`` around the model the SDK resolves.

The SDK asks one ``Model`` per turn: an agent's ``Model`` object, or the one its
``ModelProvider`` gives for a name (`MiddlewareModelProvider`). `MiddlewareModel` runs this
library's chain in ``get_response`` and ``stream_response`` with the wrapped model's own call as
the terminal, so a handler may call ``next_fn`` as often as it likes (a retry asks again).

Handlers see Converse (`_converse`). What they pass on goes back as the SDK's own: the very
``ModelResponse`` (or ``response.completed`` event) the model produced when the chain's result
is the one the terminal made, a copy carrying the handler's message and usage otherwise. In a
streamed call the model's own stream events reach the SDK as they arrive; the SDK takes a turn's
output and usage from the closing ``response.completed`` event only, which is the chain's result.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, cast

from agents import FunctionTool, Model, ModelProvider, ModelResponse, ModelSettings, Usage
from agents.items import TResponseInputItem, TResponseStreamEvent
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseTextDeltaEvent,
    ResponseUsage,
)

from ...content import Message, StreamEvent, ToolSpec
from ...engine._registry import MiddlewareRegistry
from ...events import ModelStopReason, ModelStreamEvent, TextDeltaEvent, TypedEvent
from ...host._model_call import ModelStagePoint, invoke_model_terminal
from ...host._model_stream import MessageBuilder
from ...stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._converse import (
    chunks_of_message,
    completed_response,
    converse_message,
    converse_messages,
    converse_usage,
    host_input,
    host_output,
    host_tool_choice,
    host_usage,
    instructions_of,
    response_usage,
    stop_reason_of,
    tool_choice_of,
    tool_spec_of,
)

__all__ = ["MiddlewareModel", "MiddlewareModelProvider"]

_NOTHING: list[Any] = []


def _function_tools(tools: list[Any]) -> list[FunctionTool]:
    return [tool for tool in tools if isinstance(tool, FunctionTool)]


class _Request:
    """The arguments of one SDK model call, as the terminal passes them on."""

    __slots__ = ("args", "input", "instructions", "settings", "tools")

    def __init__(
        self,
        instructions: str | None,
        items: str | list[TResponseInputItem],
        settings: ModelSettings,
        tools: list[Any],
        args: tuple[Any, ...],
    ) -> None:
        self.instructions = instructions
        self.input = items
        self.settings = settings
        self.tools = tools
        self.args = args  # output_schema, handoffs, tracing


class _ModelCall:
    """One SDK model call through the chain: its stage point, its terminal and the way back."""

    __slots__ = (
        "_message",
        "_request",
        "_shown_messages",
        "_specs",
        "completed",
        "kwargs",
        "marks",
        "point",
        "raw",
        "response",
        "wrapped",
    )

    def __init__(self, model: MiddlewareModel, request: _Request, kwargs: dict[str, Any]) -> None:
        self.wrapped = model.wrapped
        self._request = request
        self.kwargs = kwargs
        messages = converse_messages(request.input)
        # What the handlers were shown, kept apart: a handler may change their list in place.
        # The conversion made plain JSON data, so a JSON round trip copies it (in C).
        self._shown_messages = json.loads(json.dumps(messages))
        tools = _function_tools(request.tools)
        specs: list[ToolSpec] = [tool_spec_of(t) for t in tools]
        self._specs = [tool_spec_of(t) for t in tools]
        # The model's own stream events; each chunk made from them is noted (by its id) with
        # how many of them had arrived when it was made.
        self.raw: list[TResponseStreamEvent] = []
        self.marks: dict[int, tuple[StreamEvent, int]] = {}
        self.response: ModelResponse | None = None
        self._message: Message | None = None
        self.completed: ResponseCompletedEvent | None = None
        self.point = ModelStagePoint(
            model.registry,
            agent=model.agent,
            messages=messages,
            system_prompt=request.instructions,
            tool_specs=specs,
            tool_choice=tool_choice_of(request.settings.tool_choice),
            invocation_state={},
            # The SDK's own model: a handler may hand another one (or one of this library's).
            model=cast(Any, self.wrapped),
        )

    # ---- the terminal ------------------------------------------------------------------------

    def _arguments(self, ours: InvokeModelContext) -> tuple[Any, ...]:
        request = self._request
        items: str | list[TResponseInputItem] = request.input
        if ours.messages != self._shown_messages:
            items = host_input(ours.messages)
        settings = request.settings
        choice = host_tool_choice(ours.tool_choice)
        if choice != settings.tool_choice and ours.tool_choice != tool_choice_of(
            settings.tool_choice
        ):
            settings = settings.resolve(ModelSettings(tool_choice=choice))
        tools = request.tools
        if ours.tool_specs != self._specs:
            specs = {spec["name"]: spec for spec in ours.tool_specs}
            kept: list[Any] = []
            for tool in tools:
                if not isinstance(tool, FunctionTool):
                    kept.append(tool)
                elif tool.name in specs:
                    spec = specs[tool.name]
                    schema: Any = spec["inputSchema"]["json"]
                    kept.append(
                        dataclasses.replace(
                            tool, description=spec["description"], params_json_schema=schema
                        )
                    )
            tools = kept
        return (instructions_of(ours.system_prompt), items, settings, tools, *request.args)

    def terminal(self, ours: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        chosen: Any = ours.model
        if chosen is not self.wrapped and not isinstance(chosen, Model):
            return invoke_model_terminal(ours)  # a model of this library
        model: Model = chosen
        return self._response_events(model, ours)

    async def _response_events(
        self, model: Model, ours: InvokeModelContext
    ) -> AsyncGenerator[TypedEvent, None]:
        """The model's response as the chain's events (`process_model_stream`'s, done here)."""
        arguments = self._arguments(ours)
        response = await model.get_response(*arguments, **self.kwargs)
        message = converse_message(response.output)
        self.response, self._message = response, message
        builder = MessageBuilder()
        for chunk in chunks_of_message(message, response.usage):
            delta = builder.feed(chunk)
            yield ModelStreamEvent(chunk)
            if delta is not None:
                yield delta
        message_event, stop = builder.ending()
        yield message_event
        yield stop

    def streamed_terminal(self, ours: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        chosen: Any = ours.model
        if chosen is not self.wrapped and not isinstance(chosen, Model):
            return invoke_model_terminal(ours)
        model: Model = chosen
        return self._streamed_events(model, ours)

    async def _streamed_events(
        self, model: Model, ours: InvokeModelContext
    ) -> AsyncGenerator[TypedEvent, None]:
        """The model's stream as the chain's events: `process_model_stream`'s work, done here.

        Each of the model's events becomes its Converse chunks; every chunk is noted with how
        many of the model's events had arrived when it was made (`MiddlewareModel` sends those
        on once a handler passes the chunk), taken into the message, and yielded with the delta
        event it gives rise to. Folding the chunks here rather than in a generator of their own
        saves a generator hop on every streamed event.
        """
        arguments = self._arguments(ours)
        builder = MessageBuilder()
        feed = builder.feed
        marks = self.marks
        raw = self.raw
        streamed: set[int] = set()
        open_block: int | None = None
        stream = aiter(model.stream_response(*arguments, **self.kwargs))
        try:
            # Nothing goes downstream before the model's first event: a model failing at once
            # fails before any event, so a handler may still ask again (Retry does).
            first = await anext(stream, None)
            chunk: StreamEvent = {"messageStart": {"role": "assistant"}}
            marks[id(chunk)] = (chunk, 0)
            feed(chunk)
            yield ModelStreamEvent(chunk)
            event: TResponseStreamEvent | None = first
            next_event = stream.__anext__
            while event is not None:
                # A text delta continuing the open block is nearly every event: the short path.
                # (``isinstance`` answers an exact class without asking the metaclass.)
                if isinstance(event, ResponseTextDeltaEvent) and event.output_index == open_block:
                    raw.append(event)
                    chunk = {"contentBlockDelta": {"delta": {"text": event.delta}}}
                    marks[id(chunk)] = (chunk, len(raw))
                    delta = feed(chunk)
                    yield ModelStreamEvent(chunk)
                    if delta is not None:
                        yield delta
                else:
                    chunks, open_block = self._chunks_of(event, open_block, streamed)
                    made = len(raw)
                    for chunk in chunks:
                        marks[id(chunk)] = (chunk, made)
                        delta = feed(chunk)
                        yield ModelStreamEvent(chunk)
                        if delta is not None:
                            yield delta
                try:
                    event = await next_event()
                except StopAsyncIteration:
                    event = None
        finally:
            # Closed here, not left to the event loop's finalizer: a consumer that stops early
            # (or a handler that abandons the call) releases the model's connection at once.
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
        message_event, stop = builder.ending()
        yield message_event
        yield stop

    def _chunks_of(
        self, event: TResponseStreamEvent, open_block: int | None, streamed: set[int]
    ) -> tuple[list[StreamEvent], int | None]:
        """The chunks of one of the model's events, and the block left open after them.

        ``streamed`` gathers the output items whose blocks were opened; a text delta of the
        open block takes `_streamed_events`'s short path instead.
        """
        chunks: list[StreamEvent] = [] if open_block is None else [{"contentBlockStop": {}}]
        if isinstance(event, ResponseTextDeltaEvent):
            self.raw.append(event)
            chunks.append({"contentBlockStart": {"start": {}}})
            chunks.append({"contentBlockDelta": {"delta": {"text": event.delta}}})
            streamed.add(event.output_index)
            return chunks, event.output_index
        if isinstance(event, ResponseCompletedEvent):
            return chunks + self._completed(event, streamed), None
        self.raw.append(event)
        if isinstance(event, ResponseFunctionCallArgumentsDeltaEvent):
            delta: Any = {"toolUse": {"input": event.delta}}
            return [{"contentBlockDelta": {"delta": delta}}], open_block
        if isinstance(event, ResponseOutputItemAddedEvent) and isinstance(
            event.item, ResponseFunctionToolCall
        ):
            call = event.item
            start: Any = {"toolUse": {"toolUseId": call.call_id, "name": call.name}}
            chunks.append({"contentBlockStart": {"start": start}})
            streamed.add(event.output_index)
            return chunks, event.output_index
        if isinstance(event, ResponseOutputItemDoneEvent) and open_block is not None:
            return [{"contentBlockStop": {}}], None
        return [], open_block

    def _completed(self, event: ResponseCompletedEvent, streamed: set[int]) -> list[StreamEvent]:
        """The chunks of the output items not streamed yet; notes the model's response."""
        self.completed = event
        response = ModelResponse(
            output=list(event.response.output),
            usage=_sdk_usage(event.response.usage),
            response_id=event.response.id,
        )
        self.response, self._message = response, None
        rest = [item for index, item in enumerate(response.output) if index not in streamed]
        # The blocks already streamed are in the message; the rest follows.
        chunks = chunks_of_message(converse_message(rest), response.usage)
        return [chunk for chunk in chunks if "messageStart" not in chunk]

    # ---- the way back ------------------------------------------------------------------------

    def _unchanged(self, result: ModelStopReason, response: ModelResponse) -> bool:
        # Once per call, not per event: the result still says what the model's response does.
        message = self._message
        if message is None:
            message = converse_message(response.output)
        return (
            result.stop_reason == stop_reason_of(message)
            and result.usage == converse_usage(response.usage)
            and result.message == message
        )

    def response_of(self, result: ModelStopReason) -> ModelResponse:
        """The SDK's response for the chain's result: the model's own when unchanged."""
        response = self.response
        if response is not None and self._unchanged(result, response):
            return response
        return ModelResponse(
            output=host_output(result.message),
            usage=host_usage(result.usage),
            response_id=None if response is None else response.response_id,
        )

    def closing(self, result: ModelStopReason, sent: int) -> list[TResponseStreamEvent]:
        """What closes a streamed call for the chain's result, ``response.completed`` last.

        ``sent`` of the model's own events went on already. The others go first when the
        result is the model's own; when a handler changed it, they are dropped, as they may
        carry what the handler withheld.
        """
        response = self.response
        if response is not None and self._unchanged(result, response):
            rest = self.raw[sent:]
            completed = self.completed
            if completed is not None:
                return [*rest, completed]
            return [*rest, self._rebuilt(result)]
        return [self._rebuilt(result)]

    def _rebuilt(self, result: ModelStopReason) -> ResponseCompletedEvent:
        """A ``response.completed`` event carrying the chain's result."""
        completed = self.completed
        if completed is not None:
            update = {"output": host_output(result.message), "usage": response_usage(result.usage)}
            rebuilt = completed.response.model_copy(update=update)
            number = completed.sequence_number
        else:
            rebuilt = completed_response(
                result.message,
                result.usage,
                response_id="resp_middleware",
                model="middleware",
                created_at=time.time(),
            )
            number = 0
        return ResponseCompletedEvent(
            type="response.completed", response=rebuilt, sequence_number=number
        )


def _sdk_usage(usage: ResponseUsage | None) -> Usage:
    if usage is None:
        return Usage()
    return Usage(
        requests=1,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        input_tokens_details=usage.input_tokens_details,
        output_tokens_details=usage.output_tokens_details,
    )


class MiddlewareModel(Model):
    """The ``Model`` the SDK asks, running this library's InvokeModelStage around the real one.

    Args:
        wrapped: The SDK model every call goes to (the chain's terminal).
        registry: The middleware to run.
        agent: What handlers see as ``context.agent``.
    """

    def __init__(self, wrapped: Model, registry: MiddlewareRegistry, agent: Any) -> None:
        self.wrapped = wrapped
        self.registry = registry
        self.agent = agent

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
        """One model call through the chain."""
        if not self.registry.has_handlers(InvokeModelStage):
            return await self.wrapped.get_response(
                system_instructions,
                input,
                model_settings,
                tools,
                output_schema,
                handoffs,
                tracing,
                **kwargs,
            )
        request = _Request(
            system_instructions,
            input,
            model_settings,
            tools,
            (output_schema, handoffs, tracing),
        )
        call = _ModelCall(self, request, kwargs)
        return call.response_of(await call.point.result(call.terminal))

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
        """One streamed model call through the chain: the model's events, then the result."""
        if not self.registry.has_handlers(InvokeModelStage):
            async for own in self.wrapped.stream_response(
                system_instructions,
                input,
                model_settings,
                tools,
                output_schema,
                handoffs,
                tracing,
                **kwargs,
            ):
                yield own
            return
        request = _Request(
            system_instructions,
            input,
            model_settings,
            tools,
            (output_schema, handoffs, tracing),
        )
        call = _ModelCall(self, request, kwargs)
        result: ModelStopReason | None = None
        # The model's own events go on with the chunk made from them, once a handler lets that
        # chunk through: a handler holding the stream back (a guardrail checking the reply)
        # holds them back too. Inline, as this runs for every event of the stream.
        marks = call.marks
        raw = call.raw
        sent = 0
        async with call.point.open(call.streamed_terminal) as stream:
            async for event in stream:
                cls = event.__class__
                if cls is ModelStreamEvent:
                    chunk: Any = event["event"]
                    noted = marks.get(id(chunk))
                    if noted is not None and noted[0] is chunk and noted[1] > sent:
                        made = noted[1]
                        if made == sent + 1:
                            yield raw[sent]
                        else:
                            for own in raw[sent:made]:
                                yield own
                        sent = made
                elif cls is not TextDeltaEvent and isinstance(event, ModelStopReason):
                    result = event
        if result is None:
            raise call.point.missing()
        for own in call.closing(result, sent):
            yield own

    def get_retry_advice(self, request: Any) -> Any:
        """The wrapped model's retry advice."""
        return self.wrapped.get_retry_advice(request)

    async def close(self) -> None:
        """Close the wrapped model."""
        await self.wrapped.close()

    async def _cleanup_on_run_end(self, owner: object) -> None:
        cleanup = getattr(self.wrapped, "_cleanup_on_run_end", None)
        if cleanup is not None:
            await cleanup(owner)

    @property
    def _supports_default_prompt_cache_key(self) -> bool:
        return bool(getattr(self.wrapped, "_supports_default_prompt_cache_key", False))


class MiddlewareModelProvider(ModelProvider):
    """A ``ModelProvider`` whose models run this library's InvokeModelStage.

    Args:
        wrapped: The provider that resolves names (the SDK's ``MultiProvider`` by default).
        registry: The middleware to run.
        agent: What handlers see as ``context.agent``.
    """

    def __init__(self, wrapped: ModelProvider, registry: MiddlewareRegistry, agent: Any) -> None:
        self.wrapped = wrapped
        self.registry = registry
        self.agent = agent

    def get_model(self, model_name: str | None) -> Model:
        """The wrapped provider's model for ``model_name``, wrapped."""
        model = self.wrapped.get_model(model_name)
        if isinstance(model, MiddlewareModel):
            return model
        return MiddlewareModel(model, self.registry, self.agent)

    async def aclose(self) -> None:
        """Close the wrapped provider."""
        close = getattr(self.wrapped, "aclose", None)
        if close is not None:
            await close()
