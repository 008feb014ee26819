"""The two activities of a durable run: one model call, one tool call, each with its chain.

Each runs the activity side of its stage (`DurableAgent.activity_registry`) around the real model
or tool, through the same adapter-layer functions every host uses, so the stage's rules hold
here too. ``context.agent`` is the `DurableAgent` (one object per worker process), and
``invocation_state`` is a fresh copy of the run's JSON state for each call: what a handler writes
there stays in that call.

While the chain runs, the activity heartbeats in the background (when the options give a
heartbeat timeout), so a worker that dies mid-call is noticed within that timeout and the call is
retried on another worker. A tool call is therefore run **at least once**: a call in flight when
its worker dies runs again from its start.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator
from contextlib import aclosing, asynccontextmanager
from typing import Any, cast

from temporalio import activity
from temporalio.exceptions import ApplicationError

from ..catalog._overflow import is_context_overflow
from ..content import Messages, SystemPrompt, ToolChoice, ToolSpec, ToolUse
from ..events import ModelStopReason, ToolInterruptEvent, ToolResultEvent
from ..exceptions import InterruptException
from ..host._model_call import model_call_context, run_model_call
from ..host._tool_call import make_tool_terminal, run_tool_stage, tool_call_context
from ._definition import registered_agent
from ._payloads import ModelCall, ModelReply, ToolCall, ToolReply

__all__ = ["execute_tool", "invoke_model"]

INVOKE_MODEL = "strands_middleware.invoke_model"
EXECUTE_TOOL = "strands_middleware.execute_tool"


@asynccontextmanager
async def _heartbeating(cancel_signal: threading.Event | None = None) -> AsyncGenerator[None, None]:
    """Heartbeat at a third of the heartbeat timeout while the body runs.

    A cancelled activity (its run was cancelled, or it timed out) sets ``cancel_signal`` so the
    tool learns it too.
    """
    timeout = activity.info().heartbeat_timeout
    if timeout is None or not timeout.total_seconds():
        yield
        return
    period = timeout.total_seconds() / 3

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(period)

    beating = asyncio.create_task(beat())
    try:
        yield
    except asyncio.CancelledError:
        if cancel_signal is not None:
            cancel_signal.set()
        raise
    finally:
        beating.cancel()


@activity.defn(name=INVOKE_MODEL)
async def invoke_model(call: ModelCall) -> ModelReply:
    """One model call: the activity side of InvokeModelStage around the agent's model."""
    agent = registered_agent(call.agent)
    context = model_call_context(
        agent,
        messages=cast(Messages, call.messages),
        system_prompt=cast(SystemPrompt, call.system_prompt),
        tool_specs=cast("list[ToolSpec]", call.tool_specs),
        tool_choice=cast("ToolChoice | None", call.tool_choice),
        invocation_state=dict(call.invocation_state),
        model=agent.model,
    )
    stop: ModelStopReason | None = None
    try:
        async with (
            _heartbeating(),
            aclosing(run_model_call(agent.activity_registry, context)) as events,
        ):
            async for event in events:
                if isinstance(event, ModelStopReason):
                    stop = event
    except Exception as error:
        if not is_context_overflow(error):
            raise
        # The same request overflows on every attempt: fail at once, as a type a workflow-side
        # ContextWindow recognises by name (whatever told the overflow here: a class, or a
        # message), so it asks again with less (a new activity) instead of Temporal retrying
        # this one to no end.
        raise ApplicationError(
            f"{type(error).__name__}: {error}",
            type="ContextWindowOverflowError",
            non_retryable=True,
        ) from error
    assert stop is not None  # run_model_call raises when the chain has no result
    stop_reason, message, usage, metrics = stop["stop"]
    return ModelReply(
        stop_reason=stop_reason,
        message=cast("dict[str, Any]", message),
        usage=cast("dict[str, Any]", usage),
        metrics=cast("dict[str, Any]", metrics),
    )


@activity.defn(name=EXECUTE_TOOL)
async def execute_tool(call: ToolCall) -> ToolReply:
    """One tool call: the activity side of ExecuteToolStage around the agent's tool."""
    agent = registered_agent(call.agent)
    tool_use = cast(ToolUse, call.tool_use)
    cancel_signal = threading.Event()
    context = tool_call_context(
        agent,
        tool=agent.tools.get(tool_use["name"]),
        tool_use=tool_use,
        invocation_state=dict(call.invocation_state),
        cancel_signal=cancel_signal,
        interrupts={},
    )
    result: ToolResultEvent | None = None
    try:
        async with (
            _heartbeating(cancel_signal),
            aclosing(
                run_tool_stage(agent.activity_registry, context, make_tool_terminal(cancel_signal))
            ) as events,
        ):
            async for event in events:
                if isinstance(event, ToolResultEvent):
                    result = event
                elif isinstance(event, ToolInterruptEvent):
                    result = _no_interrupts_here(tool_use, event.interrupts[0].name)
                    break
    except InterruptException as paused:
        result = _no_interrupts_here(tool_use, paused.interrupt.name)
    assert result is not None  # run_tool_stage ends with a result unless it paused
    return ToolReply(result=cast("dict[str, Any]", result.tool_result))


def _no_interrupts_here(tool_use: ToolUse, name: str) -> ToolResultEvent:
    # An activity cannot wait for a human (it would hold a worker slot for days, and its
    # retries would ask again), so an interrupt raised here ends the call instead of pausing.
    return ToolResultEvent.error(
        tool_use["toolUseId"],
        f"Not run: interrupt {name!r} was raised inside the tool activity, where a durable run "
        "cannot wait for an answer. Ask in workflow code: register the handler with "
        "in_workflow(...).",
    )
