"""Running ExecuteToolStage at a host's tool-call point.

The executor side of the spec lives here, so that every host gets it right the same way: tool
exceptions become error results inside the terminal, unknown tools still run the chain, the tool
gets the executor's cancel signal, and interrupts (from middleware or from the tool) are
registered here and nowhere else, then surfaced as one `ToolInterruptEvent`.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

from ..content import ToolUse
from ..engine.registry import MiddlewareRegistry, missing_result
from ..events import ToolInterruptEvent, ToolResultEvent, TypedEvent
from ..exceptions import InterruptException
from ..interrupts import Interrupt
from ..stages.execute_tool import ExecuteToolContext, ExecuteToolStage
from ..tools import AgentTool
from .interrupt_state import InterruptState

__all__ = ["make_tool_terminal", "run_tool_call", "tool_call_context"]


def tool_call_context(
    agent: Any,
    *,
    tool: AgentTool | None,
    tool_use: ToolUse,
    invocation_state: dict[str, Any],
    cancel_signal: threading.Event,
    interrupts: Mapping[str, Interrupt],
) -> ExecuteToolContext:
    """Build the context of one tool call; ``tool_use`` is shallow-copied (see the context)."""
    return ExecuteToolContext(
        agent=agent,
        tool=tool,
        tool_use=ToolUse(**tool_use),
        invocation_state=invocation_state,
        cancel_signal=cancel_signal,
        _interrupts=interrupts,
    )


def make_tool_terminal(
    cancel_signal: threading.Event,
) -> Callable[[ExecuteToolContext], AsyncGenerator[TypedEvent, None]]:
    """The tool call itself, bound to the executor's own cancel signal.

    The signal is captured here rather than read from the context, so a handler that replaces
    ``context.cancel_signal`` cannot cut the tool off from the agent's cancellation.
    """

    async def terminal(context: ExecuteToolContext) -> AsyncGenerator[TypedEvent, None]:
        tool_use = context.tool_use
        tool = context.tool
        if tool is None:
            yield ToolResultEvent.error(tool_use["toolUseId"], f"Unknown tool: {tool_use['name']}")
            return
        produced = False
        stream = tool.stream(tool_use, context.invocation_state, cancel_signal=cancel_signal)
        try:
            async for event in stream:
                if isinstance(event, ToolResultEvent):
                    produced = True
                yield event
        except InterruptException:
            raise
        except Exception as exc:  # the model should read a failure, not crash the loop
            yield ToolResultEvent.from_exception(tool_use["toolUseId"], exc)
            return
        finally:
            # A tool's stream is closed with the call, even when the call is abandoned early.
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
        if not produced:
            problem = RuntimeError(
                f"tool {tool_use['name']!r} ended without yielding a ToolResultEvent: a tool's "
                "stream must end with the ToolResultEvent that answers the call"
            )
            yield ToolResultEvent.from_exception(tool_use["toolUseId"], problem)

    return terminal


async def run_tool_call(
    registry: MiddlewareRegistry,
    context: ExecuteToolContext,
    interrupt_state: InterruptState,
    cancel_signal: threading.Event,
) -> AsyncGenerator[TypedEvent, None]:
    """Run the stage and yield its events, registering any interrupt it raises.

    Ends with either the result (the last `ToolResultEvent` yielded) or exactly one
    `ToolInterruptEvent` carrying the registered interrupts; nothing follows an interrupt.

    Raises:
        MissingResultError: the chain produced neither a result nor an interrupt.
    """
    stream = registry.invoke(ExecuteToolStage, context, make_tool_terminal(cancel_signal))
    found = False
    try:
        async for event in stream:
            if isinstance(event, ToolInterruptEvent):
                registered = [interrupt_state.register(i) for i in event.interrupts]
                yield ToolInterruptEvent(event.tool_use, registered)
                return
            if isinstance(event, ToolResultEvent):
                found = True
            yield event
    except InterruptException as exc:
        yield ToolInterruptEvent(context.tool_use, [interrupt_state.register(exc.interrupt)])
        return
    finally:
        await stream.aclose()
    if not found:
        raise missing_result(ExecuteToolStage)
