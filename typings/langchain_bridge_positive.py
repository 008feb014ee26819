"""What a type checker infers on the LangChain bridge (type-checked, never run).

The bridge has the same per-phase ``add_middleware`` overloads as every host: the phase token
decides the handler's shape and binds the stage's context and result types.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

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
from strands_middleware.bridges.langchain import LangChainBridge, interrupts_of, resume_command
from strands_middleware.catalog import Retry, ToolApproval
from strands_middleware.interrupts import Interrupt

bridge = LangChainBridge(Retry(), ToolApproval())
assert_type(bridge.use(Retry()), LangChainBridge)


def concise(context: InvokeModelContext) -> InvokeModelContext:
    return context.replace(system_prompt="Answer in one sentence.")


async def timing(
    context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
) -> AsyncGenerator[TypedEvent, None]:
    async for event in next_fn(context):
        yield event


def stop_reason(result: MiddlewareResult[ModelStopReason]) -> MiddlewareResult[ModelStopReason]:
    return result


bridge.add_middleware(InvokeModelStage.Input, concise)
bridge.add_middleware(InvokeModelStage, timing)
bridge.add_middleware(InvokeModelStage.Output, stop_reason)
bridge.add_middleware(
    ExecuteToolStage.Input, lambda context: context.replace(tool_use=context.tool_use)
)
assert_type(interrupts_of({"__interrupt__": []}), list[Interrupt])
resume_command({"__interrupt__": []}, {"v1:middleware_execute_tool:t1:x": "yes"})
