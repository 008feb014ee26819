"""Mistakes on the strands bridge a type checker must reject (type-checked, never run).

As in `engine_negative.py`, each case carries both checkers' ignore comments, and an unneeded
ignore is itself an error, so a case that stops failing fails the check.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from strands import Agent as StrandsAgent

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
from strands_middleware.bridges.strands import StrandsBridge

bridge = StrandsBridge.of(StrandsAgent())


def concise(context: InvokeModelContext) -> InvokeModelContext:
    return context


async def timing(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


def stop_reason(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
    return result


# A model-call handler on the tool stage.
bridge.add_middleware(ExecuteToolStage.Input, concise)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
bridge.add_middleware(ExecuteToolStage, timing)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
bridge.add_middleware(ExecuteToolStage.Output, stop_reason)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]

# A handler of one phase on another phase's token.
bridge.add_middleware(InvokeModelStage.Output, concise)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
bridge.add_middleware(InvokeModelStage.Input, timing)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
bridge.add_middleware(InvokeModelStage, concise)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]

# An Input lambda that returns something other than the context.
bridge.add_middleware(ExecuteToolStage.Input, lambda context: context.tool_use)  # type: ignore[arg-type,return-value]  # pyright: ignore[reportCallIssue, reportArgumentType]


# An Input handler for the right stage that takes the wrong context.
def tool_input(context: ExecuteToolContext) -> ExecuteToolContext:
    return context


bridge.add_middleware(InvokeModelStage.Input, tool_input)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]

# use() takes Middleware objects, not bare handlers.
bridge.use(concise)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
bridge.use(timing)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
