"""The pydantic-ai contestants of ``bench_e2e.py``: the same conversation on pydantic-ai's Agent.

The model is a ``FunctionModel`` streaming the benchmark's pre-built chunks as pydantic-ai
deltas, and runs stream (an event-stream handler is given), so every text delta crosses the
bridge. The native contestant is what a pydantic-ai user writes by hand: capabilities whose
``wrap_model_request`` and ``wrap_tool_execute`` hand the call on unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from pydantic_ai.tools import ToolDefinition

from strands_middleware.bridges.pydantic_ai import PydanticAIMiddleware
from strands_middleware.bridges.pydantic_ai._messages import converse_messages
from strands_middleware.content import Messages, StreamEvent

__all__ = ["bridged_pydantic_ai", "native_pydantic_ai"]


def _model(turns: Any) -> FunctionModel:
    """Streams ``turns.tool_turn`` until a tool result is in, then ``turns.text_turn``."""

    async def stream(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        last = messages[-1]
        answered = isinstance(last, ModelRequest) and any(
            getattr(part, "part_kind", "") == "tool-return" for part in last.parts
        )
        chunks: list[StreamEvent] = turns.text_turn if answered else turns.tool_turn
        for chunk in chunks:
            delta: Any = chunk.get("contentBlockDelta", {}).get("delta", {})
            start: Any = chunk.get("contentBlockStart", {}).get("start", {})
            if "text" in delta:
                yield delta["text"]
            elif "toolUse" in start:
                tool = start["toolUse"]
                yield {1: DeltaToolCall(name=tool["name"], tool_call_id=tool["toolUseId"])}
            elif "toolUse" in delta:
                yield {1: DeltaToolCall(json_args=delta["toolUse"]["input"])}

    return FunctionModel(stream_function=stream)


async def _drain(ctx: RunContext[Any], events: AsyncIterable[Any]) -> None:
    async for _event in events:
        pass


class _Session:
    """A pydantic-ai agent behind the benchmark's interface (``invoke_async``, ``messages``)."""

    def __init__(self, agent: Agent[None, str]) -> None:
        self.agent = agent
        self.history: list[ModelMessage] = []

    async def invoke_async(self, prompt: str) -> None:
        result = await self.agent.run(prompt, event_stream_handler=_drain)
        self.history = result.all_messages()

    @property
    def messages(self) -> Messages:
        return converse_messages(self.history)


class _Passthrough(AbstractCapability[Any]):
    """A native pydantic-ai capability handing every model request and tool call on as it is."""

    async def wrap_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: Any
    ) -> ModelResponse:
        response: ModelResponse = await handler(request_context)
        return response

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


def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


def native_pydantic_ai(turns: Any, capabilities: int = 0) -> Callable[[], Any]:
    model = _model(turns)
    return lambda: _Session(
        Agent(model, tools=[add], capabilities=[_Passthrough() for _ in range(capabilities)])
    )


def bridged_pydantic_ai(turns: Any, middleware: Callable[[], Sequence[Any]]) -> Callable[[], Any]:
    model = _model(turns)
    return lambda: _Session(
        Agent(model, tools=[add], capabilities=[PydanticAIMiddleware(*middleware())])
    )
