"""What a type checker infers on the OpenAI Agents SDK bridge (type-checked, never run).

The bridge has the same per-phase ``add_middleware`` overloads as every host; ``wrap`` keeps
the agent's context type, ``run_config`` gives the SDK's ``RunConfig``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass

from agents import Agent, RunConfig, RunState
from typing_extensions import assert_type

from strands_middleware import (
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareResult,
    ModelStopReason,
    TypedEvent,
)
from strands_middleware.bridges.openai_agents import OpenAIAgentsMiddleware
from strands_middleware.bridges.openai_agents.testing import ScriptedOpenAIModel
from strands_middleware.catalog import Retry, ToolApproval
from strands_middleware.interrupts import Interrupt
from strands_middleware.stores import InMemoryStore
from strands_middleware.testing import text_turn

middleware = OpenAIAgentsMiddleware(Retry(), ToolApproval())
assert_type(middleware.use(Retry()), OpenAIAgentsMiddleware)
# A store (any SnapshotStore) records resumed calls for every process sharing it.
shared = OpenAIAgentsMiddleware(ToolApproval(), store=InMemoryStore(), store_ttl=3600.0)


@dataclass
class Session:
    user: str


agent = Agent[Session]("assistant", model=ScriptedOpenAIModel([text_turn("Hi.")]))
assert_type(middleware.wrap(agent), Agent[Session])
assert_type(middleware.run_config(), RunConfig)
assert_type(middleware.run_config(RunConfig(tracing_disabled=True)), RunConfig)


def concise(context: InvokeModelContext) -> InvokeModelContext:
    return context.replace(system_prompt="Answer in one sentence.")


async def timing(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


def stop_reason(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
    return result


middleware.add_middleware(InvokeModelStage.Input, concise)
middleware.add_middleware(InvokeModelStage, timing)
middleware.add_middleware(InvokeModelStage.Output, stop_reason)
middleware.add_middleware(
    ExecuteToolStage.Input, lambda context: context.replace(tool_use=context.tool_use)
)


def answer(state: RunState[Session], paused: object) -> None:
    assert_type(middleware.interrupts(paused), list[Interrupt])
    assert_type(middleware.interrupts(state), list[Interrupt])
    middleware.resume(state, {"v1:middleware_execute_tool:t1:x": "approve"})
    middleware.resume(
        state,
        [
            {
                "interruptResponse": {
                    "interruptId": "v1:middleware_execute_tool:t1:x",
                    "response": "approve",
                }
            }
        ],
    )
