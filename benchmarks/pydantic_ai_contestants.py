"""The pydantic-ai contestants of ``bench_e2e.py``: the same conversation on pydantic-ai's Agent.

The model is a ``FunctionModel`` streaming the benchmark's pre-built chunks as pydantic-ai
deltas, and runs stream (an event-stream handler is given), so every text delta crosses the
bridge; unstreamed, the same model answers each turn whole (``Agent.run`` without a handler:
pydantic-ai calls the model's ``request``). The native contestant is what a pydantic-ai user
writes by hand: capabilities whose ``wrap_model_request`` and/or ``wrap_tool_execute`` hand the
call on unchanged.

The floor contestant is the least an adapter of this library's Wrap handlers can do through
pydantic-ai's public API: one capability running the same pass-through handler functions on
pydantic-ai's own objects and events, nothing translated. A handler sees every streamed delta,
which ``wrap_model_request`` never shows, so its model stage is a ``WrapperModel`` whose
``StreamedResponse`` passes the wrapped stream's events through the handlers and rebuilds the
response from them with its own parts manager (pydantic-ai's public way to stream a response);
unstreamed, the handlers run around the whole response (the bridge replays it as deltas, which
the floor leaves out). Its tool stage runs them around ``wrap_tool_execute``'s call.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    PartDeltaEvent,
    PartStartEvent,
    RequestUsage,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
)
from pydantic_ai.models import Model, ModelRequestContext, StreamedResponse
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.tools import ToolDefinition

from floor_chain import Handler, around, around_call
from strands_middleware.bridges.pydantic_ai import PydanticAIMiddleware
from strands_middleware.bridges.pydantic_ai._messages import converse_messages
from strands_middleware.content import Messages, StreamEvent

__all__ = ["bridged_pydantic_ai", "floor_pydantic_ai", "native_pydantic_ai"]


def _chunks(turns: Any, messages: list[ModelMessage]) -> list[StreamEvent]:
    """``turns.tool_turn`` until a tool result is in, then ``turns.text_turn``."""
    last = messages[-1]
    answered = isinstance(last, ModelRequest) and any(
        getattr(part, "part_kind", "") == "tool-return" for part in last.parts
    )
    chunks: list[StreamEvent] = turns.text_turn if answered else turns.tool_turn
    return chunks


def _model(turns: Any) -> FunctionModel:
    """Streams (or answers whole) the turn `_chunks` picks."""

    async def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        texts: list[str] = []
        calls: list[list[str]] = []
        for chunk in _chunks(turns, messages):
            delta: Any = chunk.get("contentBlockDelta", {}).get("delta", {})
            start: Any = chunk.get("contentBlockStart", {}).get("start", {})
            if "text" in delta:
                texts.append(delta["text"])
            elif "toolUse" in start:
                calls.append([start["toolUse"]["name"], "", start["toolUse"]["toolUseId"]])
            elif "toolUse" in delta:
                calls[-1][1] += delta["toolUse"]["input"]
        parts: list[ModelResponsePart] = [TextPart("".join(texts))]
        parts += [ToolCallPart(name, args, call_id) for name, args, call_id in calls]
        return ModelResponse(parts=parts, usage=RequestUsage(input_tokens=10, output_tokens=2))

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        for chunk in _chunks(turns, messages):
            delta: Any = chunk.get("contentBlockDelta", {}).get("delta", {})
            start: Any = chunk.get("contentBlockStart", {}).get("start", {})
            if "text" in delta:
                yield delta["text"]
            elif "toolUse" in start:
                tool = start["toolUse"]
                yield {1: DeltaToolCall(name=tool["name"], tool_call_id=tool["toolUseId"])}
            elif "toolUse" in delta:
                yield {1: DeltaToolCall(json_args=delta["toolUse"]["input"])}

    return FunctionModel(whole, stream_function=stream)


async def _drain(ctx: RunContext[Any], events: AsyncIterable[Any]) -> None:
    async for _event in events:
        pass


class _Session:
    """A pydantic-ai agent behind the benchmark's interface (``invoke_async``, ``messages``)."""

    def __init__(self, agent: Agent[None, str], streamed: bool) -> None:
        self.agent = agent
        self.streamed = streamed
        self.history: list[ModelMessage] = []

    async def invoke_async(self, prompt: str) -> None:
        handler = _drain if self.streamed else None
        result = await self.agent.run(prompt, event_stream_handler=handler)
        self.history = result.all_messages()

    @property
    def messages(self) -> Messages:
        return converse_messages(self.history)


class _ModelOnly(AbstractCapability[Any]):
    """A native pydantic-ai capability handing every model request on as it is."""

    async def wrap_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: Any
    ) -> ModelResponse:
        response: ModelResponse = await handler(request_context)
        return response


class _ToolOnly(AbstractCapability[Any]):
    """A native pydantic-ai capability handing every tool call on as it is."""

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: Any,
    ) -> Any:
        return await handler(args)


class _Passthrough(_ModelOnly, _ToolOnly):
    """A native pydantic-ai capability handing every model request and tool call on as it is."""


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


def native_pydantic_ai(
    turns: Any,
    capabilities: int = 0,
    *,
    model: bool = True,
    tools: bool = True,
    streamed: bool = True,
) -> Callable[[], Any]:
    """Agents with ``capabilities`` native pass-through capabilities on the chosen stages."""
    answering = _model(turns)
    kind = _Passthrough if model and tools else _ModelOnly if model else _ToolOnly
    return lambda: _Session(
        Agent(answering, tools=[add], capabilities=[kind() for _ in range(capabilities)]),
        streamed,
    )


def bridged_pydantic_ai(
    turns: Any, middleware: Callable[[], Sequence[Any]], *, streamed: bool = True
) -> Callable[[], Any]:
    """Agents with one `PydanticAIMiddleware` holding ``middleware()``."""
    answering = _model(turns)
    return lambda: _Session(
        Agent(answering, tools=[add], capabilities=[PydanticAIMiddleware(*middleware())]),
        streamed,
    )


# --------------------------------------------------------------------------------------------
# The floor: the same handler functions on pydantic-ai's own objects, through its public API
# --------------------------------------------------------------------------------------------


class _FloorStream(StreamedResponse):
    """The wrapped stream's events through the handlers, the response rebuilt from them."""

    def __init__(self, inner: StreamedResponse, handlers: Sequence[Handler], context: Any) -> None:
        super().__init__(inner.model_request_parameters)
        self._inner = inner
        self._handlers = handlers
        self._context = context

    async def _get_event_iterator(self) -> AsyncIterator[Any]:
        parts = self._parts_manager

        async def terminal(_context: Any) -> AsyncGenerator[Any, None]:
            async for event in self._inner:
                yield event

        async for event in around(self._handlers, self._context, terminal):
            # Part ends and the final-result event are this response's own iteration's to make.
            if isinstance(event, PartStartEvent):
                part = event.part
                if isinstance(part, TextPart):
                    for out in parts.handle_text_delta(
                        vendor_part_id=event.index, content=part.content
                    ):
                        yield out
                elif isinstance(part, ToolCallPart):
                    yield parts.handle_tool_call_part(
                        vendor_part_id=event.index,
                        tool_name=part.tool_name,
                        args=part.args,
                        tool_call_id=part.tool_call_id,
                    )
            elif isinstance(event, PartDeltaEvent):
                delta = event.delta
                if isinstance(delta, TextPartDelta):
                    for out in parts.handle_text_delta(
                        vendor_part_id=event.index, content=delta.content_delta
                    ):
                        yield out
                elif isinstance(delta, ToolCallPartDelta):
                    started = parts.handle_tool_call_delta(
                        vendor_part_id=event.index,
                        tool_name=delta.tool_name_delta,
                        args=delta.args_delta,
                        tool_call_id=delta.tool_call_id,
                    )
                    if started is not None:
                        yield started
        self._usage = self._inner.usage
        self.finish_reason = self._inner.finish_reason

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    @property
    def provider_name(self) -> str | None:
        return self._inner.provider_name

    @property
    def provider_url(self) -> str | None:
        return self._inner.provider_url

    @property
    def timestamp(self) -> datetime:
        return self._inner.timestamp


class _FloorModel(WrapperModel):
    """The wrapped model with the handlers around each request (see the module's docstring)."""

    def __init__(self, wrapped: Model, handlers: Sequence[Handler]) -> None:
        super().__init__(wrapped)
        self._handlers = handlers

    async def request(self, messages: list[ModelMessage], *args: Any) -> ModelResponse:
        response: ModelResponse = await around_call(
            self._handlers, messages, lambda given: self.wrapped.request(given, *args)
        )
        return response

    @asynccontextmanager
    async def request_stream(
        self, messages: list[ModelMessage], *args: Any, **kwargs: Any
    ) -> AsyncGenerator[StreamedResponse, None]:
        async with self.wrapped.request_stream(messages, *args, **kwargs) as inner:
            yield _FloorStream(inner, self._handlers, messages)


class _Floor(AbstractCapability[Any]):
    """One capability running this library's handler functions on pydantic-ai's own objects."""

    def __init__(self, model: Sequence[Handler], tools: Sequence[Handler]) -> None:
        super().__init__()
        self._model = model
        self._tools = tools

    def get_wrapper_model(self, model: Model) -> Model | None:
        return _FloorModel(model, self._model) if self._model else None

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: Any,
    ) -> Any:
        return await around_call(self._tools, args, handler)


def floor_pydantic_ai(
    turns: Any,
    handlers: Sequence[Handler],
    *,
    model: bool = True,
    tools: bool = True,
    streamed: bool = True,
) -> Callable[[], Any]:
    """Agents with one `_Floor` capability running ``handlers`` on the chosen stages."""
    answering = _model(turns)
    return lambda: _Session(
        Agent(
            answering,
            tools=[add],
            capabilities=[_Floor(handlers if model else (), handlers if tools else ())],
        ),
        streamed,
    )
