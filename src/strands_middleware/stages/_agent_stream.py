"""`AgentStreamStage` (provisional): one pass of the agent loop, from input to stop event."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from typing_extensions import TypedDict, Unpack

from ..content import Messages
from ..engine._result import MiddlewareResult
from ..engine._stage import MiddlewareStage
from ..events import EventLoopStopEvent, TypedEvent
from ..interrupts import (
    Interrupt,
    MiddlewareInterruptResult,
    agent_stream_interrupt_id,
    resolve_middleware_interrupt,
)

__all__ = [
    "AgentStreamChanges",
    "AgentStreamContext",
    "AgentStreamResult",
    "AgentStreamStage",
]

_NO_INTERRUPTS: Mapping[str, Interrupt] = MappingProxyType({})


class AgentStreamChanges(TypedDict, total=False):
    """The fields ``AgentStreamContext.replace`` accepts."""

    messages: Messages
    invocation_state: dict[str, Any]


@dataclass
class AgentStreamContext:
    """What AgentStreamStage handlers receive: one pass of the agent loop.

    The two fields transform differently, on purpose:

    * ``invocation_state`` is fully transformable: the terminal runs the pass with the context's
      dict, so ``replace(invocation_state=...)`` reaches the loop, the model and the tools.
    * ``messages`` is this pass's input. The stage's terminal appends it to the agent's history
      (and announces it, ``MessageAddedEvent``) when the chain reaches it, as strands-agents
      1.62 and the TypeScript SDK do: a handler that short-circuits the pass leaves history
      untouched, and a handler that runs after ``next_fn`` finds the input in history. Editing
      those message dicts in place before ``next_fn`` reaches history, since the terminal appends
      the same objects, and ``replace(messages=[...])`` makes the new list the input appended
      (on the reference agent and on ``strands.Agent``; a host that cannot send a new list to
      its loop raises `ReplacedMessagesError` rather than drop it silently). A pass a gate
      pauses before ``next_fn`` keeps its input for the resumed pass on the reference agent
      (strands-agents 1.62 drops it).

    Attributes:
        agent: The host agent running the pass.
        messages: This pass's input messages (the dicts the terminal appends to history).
        invocation_state: Per-invocation state for the pass.
    """

    agent: Any
    messages: Messages
    invocation_state: dict[str, Any]
    _interrupts: Mapping[str, Interrupt] = field(default_factory=lambda: _NO_INTERRUPTS, repr=False)

    def interrupt(
        self, name: str, *, reason: Any = None, response: Any = None
    ) -> MiddlewareInterruptResult:
        """Ask a human before the pass runs; returns their answer once the run is resumed.

        Works like ``ExecuteToolContext.interrupt`` with a pass-wide id,
        ``v1:middleware_agent_stream:<uuid5(name)>``. Interrupt before ``next_fn``: a pass that
        has produced its stop event cannot be paused (the run loop refuses it), and pausing after
        the model's turn entered history would call the model a second time on resume. The answer
        lives for one interrupt cycle, so each decision needs its own stable name; and because the
        id has no agent in it, do not share one gate across agents that interrupt on the same name.

        Raises:
            InterruptException: no answer is available yet.
        """
        interrupt_id = agent_stream_interrupt_id(name)
        return resolve_middleware_interrupt(self._interrupts, interrupt_id, name, reason, response)

    def replace(self, **changes: Unpack[AgentStreamChanges]) -> AgentStreamContext:
        """Return a copy with only the given fields changed (see the notes on ``messages``)."""
        return dataclasses.replace(self, **changes)


class AgentStreamResult(MiddlewareResult[EventLoopStopEvent]):
    """What ``AgentStreamStage.Output`` handlers receive: the pass's `EventLoopStopEvent`.

    Read the event as ``result.result`` or ``result.value``; build a new one with
    ``result.replace(result=...)`` (or ``value=``) or ``AgentStreamResult(result=stop)``.
    """


AgentStreamStage = MiddlewareStage[
    AgentStreamContext, EventLoopStopEvent, TypedEvent, AgentStreamResult
]("agentStream", result_type=AgentStreamResult, result_event=EventLoopStopEvent)
"""One pass of the agent loop. Its result is the last `EventLoopStopEvent` the pass yields.

Provisional: its input contract may change, so it lives in ``strands_middleware.experimental``.
"""
