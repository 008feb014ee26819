"""Running InvokeModelStage at a host's model-call point."""

from __future__ import annotations

import copy
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from ..content import Messages, StreamEvent, SystemPrompt, ToolChoice, ToolSpec
from ..engine._registry import MiddlewareRegistry, missing_result
from ..events import ModelStopReason, TypedEvent
from ..models import Model
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage, split_system_prompt
from ._model_stream import process_model_stream

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
    projected_input_tokens: int | None = None,
) -> InvokeModelContext:
    """Build the context of one model call, with the defensive copies the stage promises.

    The request fields are deep-copied so handlers cannot reach into the agent's history through
    them; ``invocation_state`` and ``model`` are passed by reference. ``projected_input_tokens``
    is what `project_input_tokens` gives for the host's history (None where a host cannot tell).
    """
    return InvokeModelContext(
        agent=agent,
        messages=copy.deepcopy(messages),
        system_prompt=copy.deepcopy(system_prompt),
        tool_specs=copy.deepcopy(tool_specs),
        tool_choice=copy.deepcopy(tool_choice),
        invocation_state=invocation_state,
        model=model,
        projected_input_tokens=projected_input_tokens,
    )


def invoke_model_terminal(context: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
    """The model call itself: stream ``context.model`` with what the context holds.

    The stream is aggregated into delta events, the finished message and, last, the
    `ModelStopReason`. Nothing happens until the stream is iterated: the model is asked when
    the first event is, as with any async generator. Closing the stream closes the model's
    stream too, so a consumer that stops early (or a handler that abandons this call) releases
    the model's connection at once.
    """
    # The aggregation is the terminal's stream itself rather than a generator around it: one
    # generator hop less on every streamed event of every model call.
    return process_model_stream(_ModelCall(context))


class _ModelCall:
    """The chunks of one model call, requested from the model when iteration begins."""

    __slots__ = ("_context",)

    def __init__(self, context: InvokeModelContext) -> None:
        self._context = context

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        context = self._context
        system_prompt, system_prompt_content = split_system_prompt(context.system_prompt)
        return aiter(
            context.model.stream(
                context.messages,
                context.tool_specs or None,
                system_prompt,
                tool_choice=context.tool_choice,
                system_prompt_content=system_prompt_content,
            )
        )


async def run_model_call(
    registry: MiddlewareRegistry, context: InvokeModelContext
) -> AsyncGenerator[TypedEvent, None]:
    """Run the stage and yield its events; the last `ModelStopReason` yielded is the result.

    Raises:
        MissingResultError: the chain produced no `ModelStopReason`.
    """
    found = False
    # This generator drives the chain itself (`MiddlewareRegistry.open`): no driver generator
    # between it and the outermost handler.
    async with registry.open(InvokeModelStage, context, invoke_model_terminal) as stream:
        async for event in stream:
            if isinstance(event, ModelStopReason):
                found = True
            yield event
    if not found:
        raise missing_result(InvokeModelStage)
