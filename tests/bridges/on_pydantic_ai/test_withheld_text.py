"""What a Wrap handler withholds never reaches a pydantic-ai user's screen.

A guardrail or a streaming redaction holds deltas back and sends a replacement; a streamed run
read with ``Agent.run_stream(...).stream_text()`` must show the replacement only.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models.function import AgentInfo, FunctionModel

from strands_middleware import InvokeModelStage, ModelStopReason, TypedEvent
from strands_middleware.bridges.pydantic_ai import PydanticAIMiddleware
from strands_middleware.events import TextDeltaEvent

SECRET = "the password is hunter2"


async def leaky(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    for word in SECRET.split(" "):
        yield f"{word} "


@InvokeModelStage.wrap
async def withhold(context: Any, next_fn: Any) -> AsyncGenerator[TypedEvent, None]:
    """Lets no delta out; sends one replacement and the redacted result."""
    async for event in next_fn(context):
        if isinstance(event, TextDeltaEvent):
            continue
        if isinstance(event, ModelStopReason):
            message: Any = {"role": "assistant", "content": [{"text": "[redacted]"}]}
            yield TextDeltaEvent("[redacted]")
            yield ModelStopReason(event.stop_reason, message, event.usage, event.metrics)
            continue
        yield event


async def test_stream_text_shows_only_what_the_handler_let_out() -> None:
    agent = Agent(
        FunctionModel(stream_function=leaky), capabilities=[PydanticAIMiddleware(withhold)]
    )
    for delta in (False, True):
        async with agent.run_stream("hi") as run:
            shown = [text async for text in run.stream_text(delta=delta)]
        assert all("hunter2" not in text for text in shown), (delta, shown)
        assert (
            shown and shown[-1].endswith("[redacted]")
            if not delta
            else "".join(shown) == "[redacted]"
        )
