"""What a type checker infers on the strands bridge's ``use`` and ``add_middleware``
(type-checked, never run).

The bridge has the same per-phase ``add_middleware`` overloads as every host: the phase token
decides the handler's shape and binds the stage's context and result types.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from strands import Agent as StrandsAgent
from typing_extensions import assert_type

from strands_middleware import (
    ExecuteToolContext,
    ExecuteToolStage,
    InvokeModelContext,
    InvokeModelStage,
    MiddlewareNext,
    MiddlewareResult,
    ModelStopReason,
    ToolResultEvent,
    TypedEvent,
)
from strands_middleware.bridges.strands import StrandsBridge
from strands_middleware.catalog import Retry, ToolApproval
from strands_middleware.experimental import AgentStreamContext, AgentStreamStage

bridge = StrandsBridge.of(StrandsAgent())
assert_type(bridge, StrandsBridge)


# Input: a function of the stage's context, sync or async.
def concise(context: InvokeModelContext) -> InvokeModelContext:
    return context.replace(system_prompt="Answer in one sentence.")


async def tag_state(context: ExecuteToolContext) -> ExecuteToolContext:
    return context.replace(invocation_state={**context.invocation_state, "seen": True})


bridge.add_middleware(InvokeModelStage.Input, concise)
bridge.add_middleware(ExecuteToolStage.Input, tag_state)


def mark_pass(context: AgentStreamContext) -> AgentStreamContext:
    return context.replace(invocation_state={**context.invocation_state, "pass": 1})


bridge.add_middleware(AgentStreamStage.Input, mark_pass)
# A lambda gets its parameter's type from the phase token.
bridge.add_middleware(InvokeModelStage.Input, lambda context: context.replace(tool_choice=None))


# Wrap: the stage itself or its Wrap token, with next_fn typed for the stage.
async def timing(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


async def gate(
    context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    context.interrupt("approve", reason=context.tool_use["input"])
    async for event in next_fn(context):
        yield event


bridge.add_middleware(InvokeModelStage, timing)
bridge.add_middleware(ExecuteToolStage.Wrap, gate)


# Output: the stage's result, wrapped.
def stop_reason(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
    assert_type(result.value, ModelStopReason)
    return result


async def audit(result: MiddlewareResult[ToolResultEvent]) -> MiddlewareResult[ToolResultEvent]:
    return result.replace(value=result.value)


bridge.add_middleware(InvokeModelStage.Output, stop_reason)
bridge.add_middleware(ExecuteToolStage.Output, audit)
bridge.add_middleware(ExecuteToolStage.Output, lambda result: result.replace(value=result.value))

# use() takes Middleware objects and catalog items, and returns the bridge for chaining.
assert_type(bridge.use(InvokeModelStage.wrap(timing)), StrandsBridge)
assert_type(
    bridge.use(Retry(), ToolApproval()).use(ExecuteToolStage.input(tag_state)), StrandsBridge
)
