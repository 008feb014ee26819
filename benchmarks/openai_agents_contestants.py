"""The OpenAI Agents SDK contestants of ``bench_e2e.py``: the same conversation on its ``Agent``.

The model is an SDK ``Model`` playing the benchmark's pre-built turns: streamed, as Responses
stream events (one text delta event per text chunk, then ``response.completed``); asked, as the
finished ``ModelResponse``. Streamed runs (``Runner.run_streamed``, every event drained) carry
every delta across the bridge; plain runs (``Runner.run``) one response per turn. The SDK has
no middleware: the native contestant is what an SDK user writes by hand to wrap a call,
pass-through ``Model`` wrappers around the model (each passing on every streamed event) and
pass-through wrappers around the tool's invoker, as many as the row's handlers.

The floor contestant runs this library's Wrap handler functions themselves on the SDK's own
objects, nothing translated: one ``Model`` wrapper passing the model's streamed events (or its
whole response, asked) through them, and one wrapper around the tool's invoker calling them
around it (``floor_chain``).

The translating floor runs the same handler functions with each SDK event crossing as this
library's both ways and nothing else: a text delta as its Converse chunk in a `ModelStreamEvent`
and its `TextDeltaEvent` (the two events this library's handlers see per delta), any other event
as a `TypedEvent` holding it; on the way out the SDK's own event where the handlers left the
chunk as it was. A whole response (``Runner.run``) crosses as the events this library's handlers
see of a reply: the Converse chunks a model streaming it makes and each block's delta event,
then one event holding the SDK's response, which goes back as it is. No contexts, no chain
rules: what keeping this library's events costs on the SDK at the least.
"""

from __future__ import annotations

import dataclasses
import os

os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    Model,
    ModelResponse,
    RunConfig,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseCreatedEvent,
    ResponseFunctionToolCall,
    ResponseTextDeltaEvent,
)

from floor_chain import Handler, around, around_call, last
from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware
from strands_middleware.bridges.openai_agents._converse import (
    converse_messages,
    host_output,
    response_usage,
)
from strands_middleware.content import Message, Messages, StreamEvent
from strands_middleware.events import (
    ModelStreamEvent,
    TextDeltaEvent,
    ToolUseDeltaEvent,
    TypedEvent,
)

__all__ = [
    "bridged_openai_agents",
    "floor_openai_agents",
    "native_openai_agents",
    "translating_openai_agents",
]

set_tracing_disabled(True)
_CONFIG = RunConfig(tracing_disabled=True)


def _message(chunks: list[StreamEvent]) -> Message:
    text = ""
    content: list[Any] = []
    for chunk in chunks:
        delta: Any = chunk.get("contentBlockDelta", {}).get("delta", {})
        start: Any = chunk.get("contentBlockStart", {}).get("start", {})
        if "text" in delta:
            text += delta["text"]
        elif "toolUse" in start:
            content.append({"text": text})
            text = ""
            content.append({"toolUse": {**start["toolUse"], "input": {}}})
        elif "toolUse" in delta:
            content[-1]["toolUse"]["input"] = delta["toolUse"]["input"]
    if text:
        content.append({"text": text})
    return {"role": "assistant", "content": content}


def _response(chunks: list[StreamEvent]) -> Response:
    return Response(
        id="resp_bench",
        created_at=0,
        model="bench",
        object="response",
        output=list(host_output(_message(chunks))),
        parallel_tool_calls=False,
        tool_choice="auto",
        tools=[],
        status="completed",
        usage=response_usage({"inputTokens": 10, "outputTokens": 2, "totalTokens": 12}),
    )


def _events(chunks: list[StreamEvent]) -> list[Any]:
    """One turn as Responses stream events, built once and replayed."""
    response = _response(chunks)
    events: list[Any] = [
        ResponseCreatedEvent(type="response.created", response=response, sequence_number=0)
    ]
    for chunk in chunks:
        delta: Any = chunk.get("contentBlockDelta", {}).get("delta", {})
        if "text" in delta:
            events.append(
                ResponseTextDeltaEvent(
                    type="response.output_text.delta",
                    item_id="msg_0",
                    output_index=0,
                    content_index=0,
                    delta=delta["text"],
                    logprobs=[],
                    sequence_number=len(events),
                )
            )
    events.append(
        ResponseCompletedEvent(
            type="response.completed", response=response, sequence_number=len(events)
        )
    )
    return events


class _BenchModel(Model):
    """Streams the tool turn until a tool result is in, then the text turn; stateless, shared."""

    def __init__(self, turns: Any) -> None:
        self._tool = _events(turns.tool_turn)
        self._text = _events(turns.text_turn)
        usage = Usage(requests=1, input_tokens=10, output_tokens=2, total_tokens=12)
        self._responses = {
            id(events): ModelResponse(
                output=list(events[-1].response.output), usage=usage, response_id=None
            )
            for events in (self._tool, self._text)
        }

    def _turn(self, items: Any) -> list[Any]:
        last: Any = items[-1] if isinstance(items, list) and items else {}
        kind = last.get("type") if isinstance(last, dict) else getattr(last, "type", None)
        return self._text if kind == "function_call_output" else self._tool

    async def get_response(  # noqa: PLR0917 - the SDK's own signature
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **kwargs: Any,
    ) -> ModelResponse:
        return self._responses[id(self._turn(input))]

    async def stream_response(  # noqa: PLR0917 - the SDK's own signature
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        for event in self._turn(input):
            yield event


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


ADD = function_tool(add)


class _Session:
    """An SDK agent behind the benchmark's interface (``invoke_async``, ``messages``)."""

    def __init__(self, agent: Agent[Any], streamed: bool) -> None:
        self.agent = agent
        self.streamed = streamed
        self.history: list[Any] = []

    async def invoke_async(self, prompt: str) -> None:
        if not self.streamed:
            done = await Runner.run(self.agent, prompt, run_config=_CONFIG)
            self.history = done.to_input_list()
            return
        result = Runner.run_streamed(self.agent, prompt, run_config=_CONFIG)
        async for _event in result.stream_events():
            pass
        self.history = result.to_input_list()

    @property
    def messages(self) -> Messages:
        return converse_messages(self.history)


class _PassModel(Model):
    """A hand-written pass-through ``Model`` wrapper: it passes on every call and event."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
        return await self.inner.get_response(*args, **kwargs)

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:  # type: ignore[override]
        async for event in self.inner.stream_response(*args, **kwargs):
            yield event


def _pass_tool(tool: FunctionTool) -> FunctionTool:
    """``tool`` with a hand-written pass-through wrapper around its invoker."""
    inner = tool.on_invoke_tool

    async def invoke(context: Any, arguments: str) -> Any:
        return await inner(context, arguments)

    return dataclasses.replace(tool, on_invoke_tool=invoke)


class _HandlersModel(Model):
    """The floor's ``Model`` wrapper: the model's events, or its response, through the handlers."""

    def __init__(self, inner: Model, handlers: Sequence[Handler]) -> None:
        self.inner = inner
        self.handlers = handlers

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
        inner = self.inner
        return await around_call(self.handlers, None, lambda _: inner.get_response(*args, **kwargs))

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:  # type: ignore[override]
        inner = self.inner
        return around(self.handlers, None, lambda _: inner.stream_response(*args, **kwargs))


def _handlers_tool(tool: FunctionTool, handlers: Sequence[Handler]) -> FunctionTool:
    """``tool`` with its invoker called through ``handlers`` (its result one event)."""
    inner = tool.on_invoke_tool

    async def invoke(context: Any, arguments: str) -> Any:
        return await around_call(handlers, None, lambda _: inner(context, arguments))

    return dataclasses.replace(tool, on_invoke_tool=invoke)


def native_openai_agents(
    turns: Any, count: int, *, model: bool = True, tools: bool = True, streamed: bool
) -> Callable[[], Any]:
    """Agents with ``count`` hand-written pass-through wrappers on the chosen calls (made once,
    as a module wrapping its model and tool once does; each agent holds them)."""
    wrapped: Model = _BenchModel(turns)
    tool = ADD
    for _ in range(count):
        if model:
            wrapped = _PassModel(wrapped)
        if tools:
            tool = _pass_tool(tool)
    return lambda: _Session(Agent("bench", model=wrapped, tools=[tool]), streamed)


def floor_openai_agents(
    turns: Any,
    handlers: Sequence[Handler],
    *,
    model: bool = True,
    tools: bool = True,
    streamed: bool,
) -> Callable[[], Any]:
    """Agents with the floor's wrappers running ``handlers`` on the chosen calls (made once)."""
    chosen: Model = _BenchModel(turns)
    if model:
        chosen = _HandlersModel(chosen, handlers)
    tool = _handlers_tool(ADD, handlers) if tools else ADD
    return lambda: _Session(Agent("bench", model=chosen, tools=[tool]), streamed)


def bridged_openai_agents(
    turns: Any, middleware: Callable[[], Sequence[Any]], *, streamed: bool
) -> Callable[[], Any]:
    """Agents wrapped by one `OpenAIAgentsMiddleware` holding ``middleware()`` (made once, as a
    module making its middleware once and wrapping each agent it makes with it does)."""
    model = _BenchModel(turns)
    bridge = OpenAIAgentsMiddleware(*middleware())
    return lambda: _Session(bridge.wrap(Agent("bench", model=model, tools=[ADD])), streamed)


# The translating floor: what any adapter that keeps this library's events pays per event.
class _Chunk(ModelStreamEvent):
    __slots__ = ("host", "value")


class _Text(TextDeltaEvent):
    __slots__ = ()


class _Other(TypedEvent):
    __slots__ = ("host",)


class _Call(ToolUseDeltaEvent):
    __slots__ = ()


for _class in (_Chunk, _Text, _Other, _Call):
    # dict's own __init__: making one runs no Python code, the cheapest way there is.
    type.__setattr__(_class, "__init__", dict.__init__)


async def _events_in(stream: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """The SDK's stream events as this library's: a text delta as its chunk and its delta
    event, the SDK's own kept with the chunk; any other event in a `TypedEvent` of its own."""
    async for event in stream:
        if event.__class__ is ResponseTextDeltaEvent:
            text = event.delta
            value: StreamEvent = {"contentBlockDelta": {"delta": {"text": text}}}
            chunk = _Chunk(event=value)
            chunk.host = event
            chunk.value = value
            yield chunk
            yield _Text(data=text)
        else:
            other = _Other()
            other.host = event
            yield other


async def _events_out(stream: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """The handlers' events back: the SDK's own where the handlers left the chunk as it was
    (a delta event's SDK event went with its chunk)."""
    async for ours in stream:
        cls = ours.__class__
        if cls is _Chunk:
            if ours["event"] is ours.value:
                yield ours.host
        elif cls is not _Text:
            yield ours.host


def _reply_in(response: ModelResponse) -> list[Any]:
    """A whole reply as the events this library's handlers see of one: the Converse chunks a
    model streaming it makes (the message's start, each item's block start, delta, delta event
    and stop, the message's stop and metadata), then one event holding the SDK's response."""
    events: list[Any] = [_Chunk(event={"messageStart": {"role": "assistant"}})]
    for item in response.output:
        if item.__class__ is ResponseFunctionToolCall:
            call: Any = item
            opened: Any = {"toolUse": {"toolUseId": call.call_id, "name": call.name}}
            fragment: Any = {"toolUse": {"input": call.arguments}}
            delta: Any = _Call(
                tool_use_delta={
                    "toolUseId": call.call_id,
                    "name": call.name,
                    "input": call.arguments,
                }
            )
        else:
            text = "".join(part.text for part in getattr(item, "content", ()))
            opened, fragment, delta = {}, {"text": text}, _Text(data=text)
        events += (
            _Chunk(event={"contentBlockStart": {"start": opened}}),
            _Chunk(event={"contentBlockDelta": {"delta": fragment}}),
            delta,
            _Chunk(event={"contentBlockStop": {}}),
        )
    usage: Any = {"inputTokens": 10, "outputTokens": 2, "totalTokens": 12}
    events += (
        _Chunk(event={"messageStop": {"stopReason": "end_turn"}}),
        _Chunk(event={"metadata": {"usage": usage, "metrics": {"latencyMs": 0}}}),
    )
    reply = _Other()
    reply.host = response
    events.append(reply)
    return events


class _TranslatingModel(Model):
    """``handlers`` around every call of ``inner``, its events crossing as this library's."""

    def __init__(self, inner: Model, handlers: Sequence[Handler]) -> None:
        self.inner = inner
        self.handlers = handlers

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:  # type: ignore[override]
        async def terminal(_given: Any) -> AsyncIterator[Any]:
            response = await self.inner.get_response(*args, **kwargs)
            for event in _reply_in(response):
                yield event

        answer: Any = await last(around(self.handlers, None, terminal))
        return answer.host  # type: ignore[no-any-return]

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:  # type: ignore[override]
        inner = self.inner

        def terminal(_given: Any) -> AsyncIterator[Any]:
            return _events_in(inner.stream_response(*args, **kwargs))

        return _events_out(around(self.handlers, None, terminal))


def _translating_tool(tool: FunctionTool, handlers: Sequence[Handler]) -> FunctionTool:
    """``tool`` with ``handlers`` around its invoker, its result crossing as a `TypedEvent`."""
    inner = tool.on_invoke_tool

    async def call(request: Any) -> Any:
        other = _Other()
        other.host = await inner(*request)
        return other

    async def invoke(context: Any, arguments: str) -> Any:
        answer: Any = await around_call(handlers, (context, arguments), call)
        return answer.host

    return dataclasses.replace(tool, on_invoke_tool=invoke)


def translating_openai_agents(
    turns: Any,
    handlers: Sequence[Handler],
    *,
    model: bool = True,
    tools: bool = True,
    streamed: bool,
) -> Callable[[], Any]:
    """The translating floor: ``handlers`` around the chosen calls, every event crossing as
    this library's both ways (see the module's docstring)."""
    chosen: Model = _BenchModel(turns)
    if model:
        chosen = _TranslatingModel(chosen, handlers)
    tool = _translating_tool(ADD, handlers) if tools else ADD
    return lambda: _Session(Agent("bench", model=chosen, tools=[tool]), streamed)
