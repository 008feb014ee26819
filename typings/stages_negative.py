"""Mistakes on the built-in stages a type checker must reject (type-checked, never run).

As in `engine_negative.py`, each case carries both checkers' ignore comments, and an unneeded
ignore is itself an error, so a case that stops failing fails the check.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareResult,
    ModelStopReason,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.testing import ScriptedModel

agent = Agent(model=ScriptedModel([]))


async def model_wrap(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


def model_output(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
    return result


# A model-call handler on the tool stage.
agent.add_middleware(ExecuteToolStage, model_wrap)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
ExecuteToolStage.output(model_output)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]

# The tool stage's Output phase wants a tool result, not a model result.
agent.add_middleware(InvokeModelStage.Output, model_output)
agent.add_middleware(ExecuteToolStage.Output, model_output)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]


# replace() only takes the context's fields, with their types.
def bad_replace(context: InvokeModelContext, tool: ExecuteToolContext) -> None:
    context.replace(system_prompt=3)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
    context.replace(no_such_field=1)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
    tool.replace(tool_use="not a tool use")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


# A model call is not interruptible.
def no_interrupt(context: InvokeModelContext) -> None:
    context.interrupt("approve")  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
