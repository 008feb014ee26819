"""Boundary translation between strands-agents' types and this library's.

Handlers only ever see this library's types, and what their annotations claim is what they get
at run time. Events coming out of the strands terminal are translated on the way in: the result
events become this library's `ModelStopReason`, `ToolResultEvent` and `EventLoopStopEvent`, a
strands ``ToolInterruptEvent`` becomes ours, and every other event is carried as a `HostEvent`
(a `TypedEvent` holding the same items). On the way out each is turned back into the host event
it came from, or, if a handler built it, into a new host event with the same meaning. Interrupts
cross the same way in both directions, so strands registers and resumes them as its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, cast

from strands.interrupt import Interrupt as HostInterrupt
from strands.interrupt import InterruptException as HostInterruptException
from strands.telemetry.metrics import EventLoopMetrics
from strands.types import _events as host_events
from strands.types import events as host_public_events

from ...events import (
    EventLoopStopEvent,
    ModelStopReason,
    ToolInterruptEvent,
    ToolResultEvent,
    TypedEvent,
)
from ...exceptions import InterruptException
from ...interrupts import Interrupt

__all__ = [
    "HostEvent",
    "HostInterrupts",
    "inbound",
    "interrupt_in",
    "interrupt_out",
    "outbound",
]


class HostEvent(TypedEvent):
    """A strands stream event with no counterpart here, carried through handlers unchanged."""

    __slots__ = ("host",)

    def __init__(self, host: Mapping[str, Any]) -> None:
        super().__init__(host)
        self.host = host


class _HostModelStop(ModelStopReason):
    __slots__ = ("host",)


class _HostToolResult(ToolResultEvent):
    __slots__ = ("backgrounded", "host")


class _HostLoopStop(EventLoopStopEvent):
    __slots__ = ("host",)


class _HostToolInterrupt(ToolInterruptEvent):
    __slots__ = ("host",)


def interrupt_in(interrupt: HostInterrupt) -> Interrupt:
    """A strands interrupt as this library's."""
    return Interrupt(
        id=interrupt.id, name=interrupt.name, reason=interrupt.reason, response=interrupt.response
    )


def interrupt_out(interrupt: Interrupt) -> HostInterrupt:
    """This library's interrupt as a strands one."""
    return HostInterrupt(
        id=interrupt.id, name=interrupt.name, reason=interrupt.reason, response=interrupt.response
    )


class HostInterrupts(Mapping[str, Interrupt]):
    """A read-only view of strands' interrupts that hands out this library's `Interrupt`.

    It reads through to the live strands dict (or snapshot), so a context resolves against the
    answers strands holds at the moment ``interrupt()`` is called.
    """

    __slots__ = ("_source",)

    def __init__(self, source: Mapping[str, HostInterrupt]) -> None:
        self._source = source

    def __getitem__(self, key: str) -> Interrupt:
        return interrupt_in(self._source[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._source)

    def __len__(self) -> int:
        return len(self._source)


def _usage_of(metrics: Any) -> Any:
    usage: Any = getattr(metrics, "accumulated_usage", None)
    if isinstance(usage, Mapping):
        return dict(cast("Mapping[str, Any]", usage))
    return {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


def _latency_of(metrics: Any) -> Any:
    accumulated: Any = getattr(metrics, "accumulated_metrics", None)
    if isinstance(accumulated, Mapping):
        return dict(cast("Mapping[str, Any]", accumulated))
    return {"latencyMs": 0}


def inbound(event: object) -> TypedEvent:
    """Translate one event coming out of the strands terminal."""
    host: Any = event
    translated: Any
    if isinstance(event, host_public_events.ModelStopReason):
        translated = _HostModelStop(*host["stop"])
    elif isinstance(event, host_public_events.ToolResultEvent):
        translated = _HostToolResult(host.tool_result, exception=host.exception)
        translated.backgrounded = host.backgrounded
    elif isinstance(event, host_events.EventLoopStopEvent):
        stop_reason, message, metrics, _state, interrupts, _structured, _checkpoint = host["stop"]
        translated = _HostLoopStop(
            stop_reason,
            message,
            _usage_of(metrics),
            _latency_of(metrics),
            interrupts=None if interrupts is None else [interrupt_in(i) for i in interrupts],
        )
    elif isinstance(event, host_events.ToolInterruptEvent):
        tool_use = host["tool_interrupt_event"]["tool_use"]
        translated = _HostToolInterrupt(tool_use, [interrupt_in(i) for i in host.interrupts])
    elif isinstance(event, Mapping):
        return HostEvent(cast("Mapping[str, Any]", event))
    else:
        raise TypeError(f"strands yielded {type(event).__name__}, not an event")
    translated.host = event
    result: TypedEvent = translated
    return result


def outbound(event: TypedEvent, last_loop_stop: Any = None) -> Any:
    """Translate one event a handler yields back into what strands expects.

    An event that came from strands and was passed on unchanged goes back as the very object;
    one a handler changed or built becomes a new host event with the same meaning.
    ``last_loop_stop`` supplies the host-only fields (metrics, request state) for an
    `EventLoopStopEvent` a handler built itself.
    """
    host: Any = getattr(event, "host", None)
    if host is not None and dict(event) == dict(host):
        return host
    ours: Any = event
    if isinstance(event, ModelStopReason):
        return host_public_events.ModelStopReason(
            ours.stop_reason, ours.message, ours.usage, ours.metrics
        )
    if isinstance(event, ToolResultEvent):
        return host_public_events.ToolResultEvent(
            ours.tool_result,
            ours.exception,
            backgrounded=bool(getattr(event, "backgrounded", False)),
        )
    if isinstance(event, EventLoopStopEvent):
        metrics: Any = EventLoopMetrics()
        request_state: Any = {}
        structured: Any = None
        if last_loop_stop is not None:
            _reason, _message, metrics, request_state, _i, structured, _c = last_loop_stop["stop"]
        interrupts: Any = ours.interrupts
        return host_events.EventLoopStopEvent(
            ours.stop_reason,
            ours.message,
            metrics,
            request_state,
            None if interrupts is None else [interrupt_out(i) for i in interrupts],
            structured,
        )
    if isinstance(event, ToolInterruptEvent):
        return host_events.ToolInterruptEvent(
            ours.tool_use, [interrupt_out(i) for i in ours.interrupts]
        )
    return host_public_events.TypedEvent(dict(event))


def to_host_interrupt(error: InterruptException) -> HostInterruptException:
    """Our interrupt exception as the one strands registers."""
    return HostInterruptException(interrupt_out(error.interrupt))


def from_host_interrupt(error: HostInterruptException) -> InterruptException:
    """A strands interrupt exception as the one handlers see."""
    return InterruptException(interrupt_in(error.interrupt))
