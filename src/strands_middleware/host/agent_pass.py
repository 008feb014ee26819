"""Running AgentStreamStage around one pass of a host's agent loop.

The run-loop side of the spec: the pass's input is appended to history (and announced) before
the chain runs; the result is the last `EventLoopStopEvent`; an interrupt raised by agent-stream
middleware is registered here, activates the interrupt state and becomes an
``EventLoopStopEvent("interrupt", ...)``; an interrupt raised after the stop event is refused; and
a resumed pass that ends with nothing owed deactivates the state.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any

from ..content import Message, Messages
from ..engine._chain import OpenedChain
from ..engine.registry import MiddlewareRegistry, missing_result
from ..events import EventLoopStopEvent, TypedEvent
from ..exceptions import (
    InterruptException,
    InterruptMisuseError,
    MissingResultError,
    ReplacedMessagesError,
)
from ..interrupts import Interrupt
from ..stages.agent_stream import AgentStreamContext, AgentStreamStage
from .interrupt_state import InterruptState

__all__ = ["AgentPassPoint", "run_agent_pass"]

_NO_INTERRUPTS: Mapping[str, Interrupt] = {}


class AgentPassPoint:
    """One agent pass at a host's stage point, for a host that runs the pass loop itself.

    The host (a bridge) makes one per pass with the pass's input as Converse, and runs the chain
    around its own pass (`open`); a host whose contexts ask interrupts their own way passes its
    subclass of `AgentStreamContext` as ``context_type`` and that class's own fields in
    ``extra``. `run_agent_pass` is the whole stage point for a host built on this library.

    Attributes:
        context: The context the handlers receive.
    """

    __slots__ = ("_registry", "context")

    def __init__(
        self,
        registry: MiddlewareRegistry,
        *,
        agent: Any,
        messages: Messages,
        invocation_state: dict[str, Any],
        interrupts: Mapping[str, Interrupt] = _NO_INTERRUPTS,
        context_type: type[AgentStreamContext] = AgentStreamContext,
        **extra: Any,
    ) -> None:
        self._registry = registry
        self.context = context_type(
            agent=agent,
            messages=messages,
            invocation_state=invocation_state,
            _interrupts=interrupts,
            **extra,
        )

    def open(
        self, terminal: Callable[[AgentStreamContext], AsyncGenerator[TypedEvent, None]]
    ) -> OpenedChain[TypedEvent]:
        """The chain around ``terminal`` (refusing a replaced ``context.messages``)."""
        checked = _checked(terminal, self.context.messages)
        return self._registry.open(AgentStreamStage, self.context, checked)

    @staticmethod
    def missing() -> MissingResultError:
        """The error for a pass that ended without its `EventLoopStopEvent`."""
        return missing_result(AgentStreamStage)


def _checked(
    terminal: Callable[[AgentStreamContext], AsyncGenerator[TypedEvent, None]], messages: Messages
) -> Callable[[AgentStreamContext], AsyncGenerator[TypedEvent, None]]:
    def run(context: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
        if context.messages is not messages:
            raise ReplacedMessagesError
        return terminal(context)

    return run


async def run_agent_pass(
    registry: MiddlewareRegistry,
    *,
    agent: Any,
    messages: Messages,
    history: list[Message],
    invocation_state: dict[str, Any],
    interrupt_state: InterruptState,
    terminal: Callable[[AgentStreamContext], AsyncGenerator[TypedEvent, None]],
    on_message_added: Callable[[Message], Awaitable[object] | object],
) -> AsyncGenerator[TypedEvent, None]:
    """Run one pass through AgentStreamStage; the last `EventLoopStopEvent` yielded is its result.

    Args:
        registry: Where the agent's handlers are registered.
        agent: The host agent, for the context.
        messages: The pass's input (possibly empty on a resume).
        history: The agent's message list; the input is appended to it before the chain runs.
        invocation_state: Per-invocation state for the context.
        interrupt_state: The agent's interrupt state.
        terminal: The host's pass (its event loop), given the context.
        on_message_added: Called (and awaited, if it returns an awaitable) with each input
            message once it is in ``history``, before the chain runs.

    Raises:
        MissingResultError: the chain produced no `EventLoopStopEvent`.
        InterruptMisuseError: middleware interrupted after the `EventLoopStopEvent` (the state is
            cleared first, so the agent is not left paused).
        ReplacedMessagesError: a handler replaced ``context.messages``.
    """
    for message in messages:
        history.append(message)
        announced = on_message_added(message)
        if inspect.isawaitable(announced):
            await announced
    snapshot = interrupt_state.begin_pass()
    point = AgentPassPoint(
        registry,
        agent=agent,
        messages=messages,
        invocation_state=invocation_state,
        interrupts=snapshot,
    )
    stop: EventLoopStopEvent | None = None
    try:
        async with point.open(terminal) as stream:
            async for event in stream:
                if isinstance(event, EventLoopStopEvent):
                    stop = event
                yield event
    except InterruptException as exc:
        if stop is not None and not _is_tool_interrupt(stop):
            interrupt_state.deactivate()
            raise InterruptMisuseError(
                f"AgentStreamStage middleware raised interrupt {exc.interrupt.name!r} after the "
                "pass produced its EventLoopStopEvent; resuming would call the model again. "
                "Interrupt before calling next_fn (a post-hoc approval gate belongs before "
                "next_fn on the following pass).",
                [exc.interrupt],
            ) from exc
        registered = interrupt_state.register(exc.interrupt)
        interrupt_state.activate()
        yield EventLoopStopEvent(
            "interrupt",
            {"role": "assistant", "content": []},
            {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0},
            {"latencyMs": 0},
            interrupts=[registered],
        )
        return
    if stop is None:
        raise missing_result(AgentStreamStage)
    if (
        interrupt_state.activated
        and stop.stop_reason != "interrupt"
        and interrupt_state.pending_tool_execution is None
    ):
        interrupt_state.deactivate()
    interrupt_state.end_interrupt_cycle()


def _is_tool_interrupt(stop: EventLoopStopEvent) -> bool:
    # A tool pause is replayed on resume without a second model call, so gating on top of it
    # stays allowed.
    return stop.stop_reason == "interrupt"
