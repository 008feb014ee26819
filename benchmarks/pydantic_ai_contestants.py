"""The pydantic-ai contestants of ``bench_e2e.py``: the same conversation on pydantic-ai's Agent.

The model is a ``FunctionModel`` streaming the benchmark's pre-built chunks as pydantic-ai
deltas, and runs stream (an event-stream handler is given), so every text delta crosses the
bridge; unstreamed, the same model answers each turn whole (``Agent.run`` without a handler:
pydantic-ai calls the model's ``request``). The native contestant is what a pydantic-ai user
writes by hand: capabilities whose ``wrap_model_request`` and/or ``wrap_tool_execute`` hand the
call on unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    RequestUsage,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.tools import ToolDefinition

from strands_middleware.bridges.pydantic_ai import PydanticAIMiddleware
from strands_middleware.bridges.pydantic_ai._messages import converse_messages
from strands_middleware.content import Messages, StreamEvent

__all__ = ["bridged_pydantic_ai", "native_pydantic_ai"]


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
