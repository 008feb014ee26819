"""Mistakes on the LangChain bridge a type checker must reject (type-checked, never run).

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
    TypedEvent,
)
from strands_middleware.bridges.langchain import LangChainBridge, resume_command

bridge = LangChainBridge()


def concise(context: InvokeModelContext) -> InvokeModelContext:
    return context


async def timing(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


# A model-call handler on the tool stage.
bridge.add_middleware(ExecuteToolStage.Input, concise)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
bridge.add_middleware(ExecuteToolStage, timing)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]


# An Input handler for the right stage that takes the wrong context.
def tool_input(context: ExecuteToolContext) -> ExecuteToolContext:
    return context


bridge.add_middleware(InvokeModelStage.Input, tool_input)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]

# use() takes Middleware objects, not bare handlers.
bridge.use(concise)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
# resume_command takes the answers as a list of blocks or a mapping, not a string.
resume_command({}, "yes")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
