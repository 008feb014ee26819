"""Running InvokeModelStage at a host's model-call point."""

from __future__ import annotations

import copy
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

from ..content import Messages, SystemPrompt, ToolChoice, ToolSpec
from ..engine.registry import MiddlewareRegistry, demand_result
from ..events import TypedEvent
from ..models import Model
from ..stages.invoke_model import InvokeModelContext, InvokeModelStage, split_system_prompt
from .model_stream import process_model_stream

__all__ = ["invoke_model_terminal", "model_call_context", "run_model_call"]


def model_call_context(
    agent: Any,
    *,
    messages: Messages,
    system_prompt: SystemPrompt,
    tool_specs: list[ToolSpec],
    tool_choice: ToolChoice | None,
    invocation_state: dict[str, Any],
    model: Model,
) -> InvokeModelContext:
    """Build the context of one model call, with the defensive copies the stage promises.

    The request fields are deep-copied so handlers cannot reach into the agent's history through
    them; ``invocation_state`` and ``model`` are passed by reference.
    """
    return InvokeModelContext(
        agent=agent,
        messages=copy.deepcopy(messages),
        system_prompt=copy.deepcopy(system_prompt),
        tool_specs=copy.deepcopy(tool_specs),
        tool_choice=copy.deepcopy(tool_choice),
        invocation_state=invocation_state,
        model=model,
    )


async def invoke_model_terminal(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
    """The model call itself: stream ``context.model`` with what the context holds.

    The stream is aggregated into delta events, the finished message and, last, the
    `ModelStopReason`.
    """
    system_prompt, system_prompt_content = split_system_prompt(context.system_prompt)
    chunks = context.model.stream(
        context.messages,
        context.tool_specs or None,
        system_prompt,
        tool_choice=context.tool_choice,
        system_prompt_content=system_prompt_content,
    )
    # Closing the aggregation closes the model's stream too, so a consumer that stops early
    # (or a handler that abandons this call) releases the model's connection at once.
    async with aclosing(process_model_stream(chunks)) as events:
        async for event in events:
            yield event


async def run_model_call(
    registry: MiddlewareRegistry, context: InvokeModelContext
) -> AsyncGenerator[TypedEvent, None]:
    """Run the stage and yield its events; the last `ModelStopReason` yielded is the result.

    Raises:
        MissingResultError: the chain produced no `ModelStopReason`.
    """
    stream = registry.invoke(InvokeModelStage, context, invoke_model_terminal)
    async with aclosing(demand_result(InvokeModelStage, stream)) as events:
        async for event in events:
            yield event
