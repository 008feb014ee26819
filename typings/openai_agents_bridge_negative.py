"""Mistakes on the OpenAI Agents SDK bridge a type checker must reject (type-checked, never run).

As in `engine_negative.py`, each case carries both checkers' ignore comments, and an unneeded
ignore is itself an error, so a case that stops failing fails the check.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from agents import RunState

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    TypedEvent,
)
from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware

middleware = OpenAIAgentsMiddleware()


def concise(context: InvokeModelContext) -> InvokeModelContext:
    return context


async def timing(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


# A model-call handler on the tool stage.
middleware.add_middleware(ExecuteToolStage.Input, concise)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]
middleware.add_middleware(ExecuteToolStage, timing)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]


# An Input handler for the right stage that takes the wrong context.
def tool_input(context: ExecuteToolContext) -> ExecuteToolContext:
    return context


middleware.add_middleware(InvokeModelStage.Input, tool_input)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]

# The constructor and use() take Middleware objects, not bare handlers.
OpenAIAgentsMiddleware(concise)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
middleware.use(concise)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
# The store is a SnapshotStore, not its URL; its ttl is seconds, not a timedelta's text.
OpenAIAgentsMiddleware(store="redis://localhost")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
OpenAIAgentsMiddleware(store_ttl="7d")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
# wrap() takes an SDK Agent, not a name.
middleware.wrap("assistant")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
# run_config() takes the SDK's RunConfig, not a dict.
middleware.run_config({"tracing_disabled": True})  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def answer(state: RunState[None]) -> None:
    # resume() takes the answers as a list of blocks or a mapping, not a string.
    middleware.resume(state, "approve")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
