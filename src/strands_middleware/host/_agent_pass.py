"""Running AgentStreamStage around one pass of a host's agent loop.

The run-loop side of the stage: the pass's input is appended to history (and announced) inside
the stage's terminal, as strands-agents (1.62) and the TypeScript SDK do, so a handler that
short-circuits the pass leaves history untouched and a list a handler puts in place with
``replace(messages=[...])`` is the input appended; the result is the last `EventLoopStopEvent`; an
interrupt raised by agent-stream middleware is registered here, activates the interrupt state and
becomes an ``EventLoopStopEvent("interrupt", ...)``; an interrupt raised after the stop event is
refused; and a resumed pass that ends with nothing owed deactivates the state.

A pass that an agent-stream gate pauses before its terminal ran has not appended its input yet:
the input is held in the interrupt state and becomes the resumed pass's input, so the prompt a
gate paused reaches the model once the gate lets it through.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any

from ..content import Message, Messages
from ..engine._chain import OpenedChain
from ..engine._registry import MiddlewareRegistry, missing_result
from ..events import EventLoopStopEvent, TypedEvent
from ..exceptions import (
    InterruptException,
    InterruptMisuseError,
    MissingResultError,
    ReplacedMessagesError,
)
from ..interrupts import Interrupt
from ..stages._agent_stream import AgentStreamContext, AgentStreamStage
from ._interrupt_state import InterruptState

__all__ = ["AgentPassPoint", "run_agent_pass"]

_NO_INTERRUPTS: Mapping[str, Interrupt] = {}


class AgentPassPoint:
    """One agent pass at a host's stage point, for a host that runs the pass loop itself.

    The host (a bridge) makes one per pass with the pass's input as Converse, and runs the chain
    around its own pass (`open`); a host whose contexts ask interrupts their own way passes its
    subclass of `AgentStreamContext` as ``context_type`` and that class's own fields in
    ``extra``. `run_agent_pass` is the whole stage point for a host built on this library.

    A host whose terminal sends its loop whatever list ``context.messages`` holds when the chain
    reaches it passes ``replaceable_input=True``; otherwise a handler that replaced the list is
    refused with `ReplacedMessagesError` when the chain reaches the terminal (before the pass
    runs), since the host would drop the new list (edits made in place still reach it).

    Attributes:
        context: The context the handlers receive.
    """

    __slots__ = ("_registry", "_replaceable", "context")

    def __init__(
        self,
        registry: MiddlewareRegistry,
        *,
        agent: Any,
        messages: Messages,
        invocation_state: dict[str, Any],
        interrupts: Mapping[str, Interrupt] = _NO_INTERRUPTS,
        context_type: type[AgentStreamContext] = AgentStreamContext,
        replaceable_input: bool = False,
        **extra: Any,
    ) -> None:
        self._registry = registry
        self._replaceable = replaceable_input
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
        """The chain around ``terminal`` (refusing a replaced ``context.messages`` unless the
        point was made with ``replaceable_input=True``)."""
        if not self._replaceable:
            terminal = _checked(terminal, self.context.messages)
        return self._registry.open(AgentStreamStage, self.context, terminal)

    @staticmethod
    def missing() -> MissingResultError:
        """The error for a pass that ended without its `EventLoopStopEvent`."""
        return missing_result(AgentStreamStage)


_HELD_INPUT = "agent_stream_input"
"""Where the interrupt state holds the input of a pass a gate paused before its terminal ran."""

_Terminal = Callable[[AgentStreamContext], AsyncGenerator[TypedEvent, None]]


def _checked(terminal: _Terminal, messages: Messages) -> _Terminal:
    """``terminal``, refusing a context whose ``messages`` a handler replaced."""

    def run(context: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
        if context.messages is not messages:
            raise ReplacedMessagesError
        return terminal(context)

    return run


def _appending(
    terminal: _Terminal,
    history: list[Message],
    on_message_added: Callable[[Message], Awaitable[object] | object],
    appended: list[bool],
) -> _Terminal:
    """``terminal``, first appending the pass's input to history (what reaching it means).

    The input is what ``context.messages`` holds there: a list a handler put in place of
    ``messages`` is the one appended.
    """

    def run(context: AgentStreamContext) -> AsyncGenerator[TypedEvent, None]:
        appended.append(True)
        messages = context.messages
        for index, message in enumerate(messages):
            history.append(message)
            announced = on_message_added(message)
            if inspect.isawaitable(announced):
                # An announcement to await: the rest happens in a generator ahead of the pass.
                rest = messages[index + 1 :]
                return _after_input(
                    context, terminal, history, on_message_added, announced=announced, rest=rest
                )
        # Nothing to await (nothing listens, or a resume with no input): the terminal's own
        # stream, with no generator around it.
        return terminal(context)

    return run


async def _after_input(
    context: AgentStreamContext,
    terminal: _Terminal,
    history: list[Message],
    on_message_added: Callable[[Message], Awaitable[object] | object],
    *,
    announced: Awaitable[object],
    rest: Messages,
) -> AsyncGenerator[TypedEvent, None]:
    await announced
    for message in rest:
        history.append(message)
        following = on_message_added(message)
        if inspect.isawaitable(following):
            await following
    stream = terminal(context)
    try:
        async for event in stream:
            yield event
    finally:
        await stream.aclose()


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
        history: The agent's message list; the input is appended to it when the chain reaches
            the terminal (not at all when a handler short-circuits the pass): the list
            ``context.messages`` holds there, which a handler may have replaced.
        invocation_state: Per-invocation state for the context.
        interrupt_state: The agent's interrupt state.
        terminal: The host's pass (its event loop), given the context; the input is already in
            ``history`` when it is called.
        on_message_added: Called (and awaited, if it returns an awaitable) with each input
            message once it is in ``history``, before the terminal runs.

    Raises:
        MissingResultError: the chain produced no `EventLoopStopEvent`.
        InterruptMisuseError: middleware interrupted after the `EventLoopStopEvent` (the state is
            cleared first, so the agent is not left paused).
    """
    held: Messages | None = interrupt_state.context.pop(_HELD_INPUT, None)
    if held:
        messages = [*held, *messages]
    appended: list[bool] = []
    snapshot = interrupt_state.begin_pass()
    point = AgentPassPoint(
        registry,
        agent=agent,
        messages=messages,
        invocation_state=invocation_state,
        interrupts=snapshot,
        replaceable_input=True,
    )
    stop: EventLoopStopEvent | None = None
    try:
        run = _appending(terminal, history, on_message_added, appended)
        async with point.open(run) as stream:
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
        if messages and not appended:
            # Paused before the terminal: the input is not in history; the resume sends it.
            interrupt_state.context[_HELD_INPUT] = messages
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
