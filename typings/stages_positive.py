"""What a type checker infers on the built-in stages and hosts (type-checked, never run)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Literal

from typing_extensions import assert_type

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelResult,
    InvokeModelStage,
    Middleware,
    MiddlewareInterruptResult,
    MiddlewareNext,
    MiddlewareResult,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.agent import Agent
from strands_middleware.bridges.strands import StrandsBridge
from strands_middleware.events import EventLoopStopEvent
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage
from strands_middleware.testing import ScriptedModel

agent = Agent(model=ScriptedModel([]))

# Lambdas on the token form get the stage's context and result types.
agent.add_middleware(InvokeModelStage.Input, lambda context: context.replace(system_prompt="x"))
agent.add_middleware(ExecuteToolStage.Output, lambda result: result.replace(value=result.value))


@InvokeModelStage.wrap
async def timing(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    assert_type(context.replace(model=context.model), InvokeModelContext)
    async for event in next_fn(context):
        yield event


assert_type(timing, Middleware[InvokeModelContext, ModelStopReason, TypedEvent, InvokeModelResult])


@ExecuteToolStage.wrap
async def gate(
    context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    answer = context.interrupt("approve", reason={"tool": context.tool_use["name"]})
    assert_type(answer, MiddlewareInterruptResult)
    async for event in next_fn(context):
        yield event


def audit(result: MiddlewareResult[ToolResultEvent]) -> MiddlewareResult[ToolResultEvent]:
    assert_type(result.value.tool_result["status"], Literal["success", "error"])
    return result


@AgentStreamStage.output
def last_stop(result: MiddlewareResult[EventLoopStopEvent]) -> MiddlewareResult[EventLoopStopEvent]:
    return result


def passes(context: AgentStreamContext) -> AgentStreamContext:
    return context.replace(invocation_state={**context.invocation_state, "seen": True})


assert_type(agent.use(timing, gate, ExecuteToolStage.output(audit), last_stop), Agent)
agent.add_middleware(AgentStreamStage.Input, passes)

bridge = StrandsBridge.of(object())
assert_type(bridge.use(timing), StrandsBridge)
bridge.add_middleware(InvokeModelStage.Input, lambda context: context.replace(tool_choice=None))
