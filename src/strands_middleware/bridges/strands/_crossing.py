"""`Crossing`: what one stage call on strands carries across the boundary, both ways.

The agent and invocation a call belongs to, and the pass's figures: what strands' ``AgentResult``
reports (usage, cycles, latency) is kept here so a stop event a handler rewrites goes back with
the figures it set, on top of strands' own metrics.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from strands.telemetry import EventLoopMetrics

from ...events import (
    EventLoopStopEvent,
)
from . import _seams as seams
from ._converse import MESSAGE_KEYS, host_item, view
from ._interrupts import interrupts_out

__all__ = ["Crossing"]

_USAGE_KEYS = (
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "cacheReadInputTokens",
    "cacheWriteInputTokens",
)


def _usage_sum(base: Mapping[str, Any], change: Mapping[str, Any], sign: int = 1) -> Any:
    keys = [key for key in _USAGE_KEYS if key in base or key in change]
    return {key: base.get(key, 0) + sign * change.get(key, 0) for key in keys}


class Crossing:
    """What one stage invocation's translations share.

    * The Converse views of messages handed out in events, so a handler-built event that carries
      one returns strands' own message (`host_message`).
    * For the agent-stream stage, the pass's figures. strands' stop event carries the agent's
      ``EventLoopMetrics``, whose totals run over every invocation of the agent; handlers see
      what the pass itself consumed (as on the reference agent): the change of those totals
      since the pass began. A stop event a handler returns with other figures goes back with
      the totals (and this invocation's usage) moved by the difference, on a copy of the metrics,
      so ``AgentResult`` and telemetry report what the handler returned.
    """

    __slots__ = (
        "_latency_at_start",
        "_metrics_in",
        "_stop",
        "_usage_at_start",
        "_usage_in",
        "_views",
        "agent",
        "invocation_state",
    )

    def __init__(self, agent: Any, invocation_state: Any) -> None:
        self.agent = agent
        self.invocation_state = invocation_state
        self._views: dict[int, tuple[Any, Any]] = {}
        self._usage_at_start: Any = {}
        self._latency_at_start: Any = 0
        self._stop: Any = None
        self._usage_in: Any = {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
        self._metrics_in: Any = {"latencyMs": 0}

    def begin_pass(self) -> None:
        """Take the agent's totals before the pass runs."""
        metrics: Any = getattr(self.agent, "event_loop_metrics", None)
        if metrics is not None:
            self._usage_at_start = dict(metrics.accumulated_usage)
            self._latency_at_start = metrics.accumulated_metrics.get("latencyMs", 0)

    # -- messages ------------------------------------------------------------------------------

    def message_view(self, message: Any) -> Any:
        """A Converse view of a strands message, remembered for the way back."""
        shown = view(message, MESSAGE_KEYS)
        self._views[id(shown)] = (shown, message)
        return shown

    def host_message(self, message: Any) -> Any:
        """What goes back to strands for a message a handler passes on."""
        origin = self._views.get(id(message))
        if origin is None or origin[0] is not message:
            return message
        return host_item(message, origin[1], MESSAGE_KEYS)

    # -- the pass's figures --------------------------------------------------------------------

    def stop_in(self, host: Any) -> tuple[Any, Any]:
        """Remember the pass's stop event; return its usage and metrics as handlers see them."""
        self._stop = host
        metrics: Any = host["stop"][2]
        usage = _usage_sum(metrics.accumulated_usage, self._usage_at_start, -1)
        latency = {
            "latencyMs": metrics.accumulated_metrics.get("latencyMs", 0) - self._latency_at_start
        }
        self._usage_in = usage
        self._metrics_in = latency
        return dict(usage), dict(latency)

    def same_figures(self, usage: Any, metrics: Any) -> bool:
        """Whether ``usage`` and ``metrics`` are still what handlers were shown."""
        same: bool = usage == self._usage_in and metrics == self._metrics_in
        return same

    def stop_out(self, event: EventLoopStopEvent) -> Any:
        """A strands stop event for one a handler changed or built."""
        stop_reason, message, usage, metrics, interrupts = event["stop"]
        base = self._stop
        if base is not None:
            _r, _m, figures, request_state, host_interrupts, structured, checkpoint = base["stop"]
        else:
            figures = getattr(self.agent, "event_loop_metrics", None)
            request_state = self.invocation_state.get("request_state", {})
            host_interrupts = structured = checkpoint = None
        if figures is None or not self.same_figures(usage, metrics):
            figures = self._figures(figures, usage, metrics)
        return seams.EventLoopStopEvent(
            stop_reason,
            self.host_message(message),
            figures,
            request_state,
            interrupts_out(interrupts, host_interrupts),
            structured,
            checkpoint,
        )

    def _figures(self, figures: Any, usage: Any, metrics: Any) -> Any:
        """A copy of ``figures`` moved by the difference between what handlers saw and return."""
        if figures is None:
            figures = EventLoopMetrics()
        change = _usage_sum(usage, self._usage_in, -1)
        moved = copy.copy(figures)
        moved.accumulated_usage = _usage_sum(figures.accumulated_usage, change)
        moved.accumulated_metrics = {
            **figures.accumulated_metrics,
            "latencyMs": figures.accumulated_metrics.get("latencyMs", 0)
            + metrics.get("latencyMs", 0)
            - self._metrics_in.get("latencyMs", 0),
        }
        if figures.agent_invocations:
            invocation = copy.copy(figures.agent_invocations[-1])
            invocation.usage = _usage_sum(invocation.usage, change)
            moved.agent_invocations = [*figures.agent_invocations[:-1], invocation]
        return moved
