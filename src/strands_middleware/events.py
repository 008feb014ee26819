"""The events an agent loop streams: model deltas, tool progress and the results of each stage.

Every event is a ``dict`` subclass. A consumer that only wants data (a callback handler, a
logger, a UI pushing JSON over a socket) reads keys; code that wants types uses the read-only
properties and ``isinstance``. Equality is plain dict equality, so an event equals another event
(or a plain dict) with the same keys and values, whatever the class.

The dict keys follow the ones Strands Agents callback handlers already read (``"data"`` for
text, ``"message"``, ``"stop"``, ``"tool_stream_event"``, ...), so handler code written for
Strands reads these events unchanged.

A stage's result is the last event of its result class in the stream: `ModelStopReason` for a
model call, `ToolResultEvent` for a tool call and `EventLoopStopEvent` for an agent pass. An
event whose `TypedEvent.is_interrupt` is true (`ToolInterruptEvent`) means the stage halted
without a result: the chain forwards it untransformed and runs no Output handler.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, cast, overload

from typing_extensions import override

from ._stream_events import (
    ModelMessageEvent,
    ModelStreamChunkEvent,
    ModelStreamEvent,
    ReasoningDeltaEvent,
    ReasoningRedactedContentStreamEvent,
    ReasoningSignatureStreamEvent,
    ReasoningTextStreamEvent,
    TextDeltaEvent,
    TextStreamEvent,
    ToolStreamEvent,
    ToolUseDeltaEvent,
    ToolUseStreamEvent,
)
from ._typed_event import TypedEvent
from .content import (
    Message,
    Metrics,
    StopReason,
    ToolResult,
    ToolUse,
    Usage,
)
from .interrupts import Interrupt

__all__ = [
    "EventLoopStopEvent",
    "InitEventLoopEvent",
    "ModelMessageEvent",
    "ModelStopReason",
    "ModelStreamChunkEvent",
    "ModelStreamEvent",
    "ReasoningDeltaEvent",
    "ReasoningRedactedContentStreamEvent",
    "ReasoningSignatureStreamEvent",
    "ReasoningTextStreamEvent",
    "TextDeltaEvent",
    "TextStreamEvent",
    "ToolInterruptEvent",
    "ToolResultEvent",
    "ToolStreamEvent",
    "ToolUseDeltaEvent",
    "ToolUseStreamEvent",
    "TypedEvent",
]


# --------------------------------------------------------------------------------------------
# Stage results
# --------------------------------------------------------------------------------------------


class _StopTuple(TypedEvent):
    """Typed reads of ``self["stop"]``, whose first four items both stop events share."""

    __slots__ = ()

    @property
    def stop_reason(self) -> StopReason | str:
        """Why the model (or the pass) stopped; ``"tool_use"`` asks for tool calls."""
        value: StopReason | str = self["stop"][0]
        return value

    @property
    def message(self) -> Message:
        """The (last) assistant message."""
        value: Message = self["stop"][1]
        return value

    @property
    def usage(self) -> Usage:
        """Tokens consumed."""
        value: Usage = self["stop"][2]
        return value

    @property
    def metrics(self) -> Metrics:
        """Timing."""
        value: Metrics = self["stop"][3]
        return value


class ModelStopReason(_StopTuple):
    """The result of one model call: why it stopped, the assistant message and its accounting.

    It is the last event of ``InvokeModelStage``. Middleware that short-circuits a model call
    (a cache, a mock) yields one of these directly. The payload is the 4-tuple
    ``self["stop"] == (stop_reason, message, usage, metrics)``, so Output handlers can unpack
    ``result.value["stop"]``.

    ``stop_reason`` accepts any string, not only `StopReason`, because Output middleware may
    rewrite it to a reason of its own (the spec's example sets ``"custom"``).
    """

    __slots__ = ()

    def __init__(
        self,
        stop_reason: StopReason | str,
        message: Message,
        usage: Usage,
        metrics: Metrics,
    ) -> None:
        # No ``super().__init__()``: the dict is empty already (see `ModelStreamEvent`).
        self["stop"] = (stop_reason, message, usage, metrics)


class ToolResultEvent(TypedEvent):
    """The result of one tool call.

    It is the last event of ``ExecuteToolStage``. Middleware that short-circuits a tool call
    yields one of these directly. The dict holds only ``"tool_result"``, which is JSON-ready and
    is what the model will see. The exception that produced an error result (if any) is kept as
    an attribute instead: it is for middleware and hooks that want to inspect or re-raise the
    failure, it is not serialisable, and it takes no part in equality.

    Args:
        tool_result: What the tool returned, or the error result built from its failure.
        exception: The exception the tool raised, when ``tool_result`` describes one.
    """

    __slots__ = ("_exception",)

    def __init__(self, tool_result: ToolResult, exception: Exception | None = None) -> None:
        # No ``super().__init__()``: the dict is empty already (see `ModelStreamEvent`).
        self["tool_result"] = tool_result
        self._exception = exception

    @classmethod
    def error(
        cls, tool_use_id: str, text: str, exception: Exception | None = None
    ) -> ToolResultEvent:
        """An error result the model reads as the tool's answer: ``text`` as its only content.

        Use it to refuse or fail a call from middleware (an approval denied, a limit reached);
        the model sees ``{"status": "error", "content": [{"text": text}]}``.
        """
        result: ToolResult = {
            "toolUseId": tool_use_id,
            "status": "error",
            "content": [{"text": text}],
        }
        return cls(result, exception=exception)

    @classmethod
    def from_exception(cls, tool_use_id: str, exception: Exception) -> ToolResultEvent:
        """The error result of a failed call: ``"Error: <message>"``, keeping the exception.

        An exception with an empty message (``raise ValueError()``) still says what went wrong by
        its type; "Error: " alone would tell the model nothing.
        """
        return cls.error(
            tool_use_id, f"Error: {str(exception) or type(exception).__name__}", exception
        )

    @property
    def tool_result(self) -> ToolResult:
        """The result sent back to the model."""
        value: ToolResult = self["tool_result"]
        return value

    @property
    def tool_use_id(self) -> str:
        """The id of the tool call this answers."""
        value: str = self["tool_result"]["toolUseId"]
        return value

    @property
    def exception(self) -> Exception | None:
        """The exception behind an error result, or ``None``."""
        return self._exception


class ToolInterruptEvent(TypedEvent):
    """A tool halted to ask a human: the call has no result until the run is resumed.

    Its `is_interrupt` is true, so the stage forwards it untransformed and never mistakes it for
    the result. The payload is
    ``self["tool_interrupt_event"] == {"tool_use": tool_use, "interrupts": interrupts}``.

    Args:
        tool_use: The tool call that halted.
        interrupts: What it asks the human; each needs a response before the call can resume.
    """

    __slots__ = ()

    def __init__(self, tool_use: ToolUse, interrupts: list[Interrupt]) -> None:
        super().__init__()
        self["tool_interrupt_event"] = {"tool_use": tool_use, "interrupts": interrupts}

    @property
    @override
    def is_interrupt(self) -> bool:
        """Always true: the tool call halted without a result."""
        return True

    @property
    def tool_use(self) -> ToolUse:
        """The tool call that halted."""
        value: ToolUse = self["tool_interrupt_event"]["tool_use"]
        return value

    @property
    def tool_use_id(self) -> str:
        """The id of the tool call that halted."""
        value: str = self["tool_interrupt_event"]["tool_use"]["toolUseId"]
        return value

    @property
    def interrupts(self) -> list[Interrupt]:
        """The interrupts waiting for a human's response."""
        value: list[Interrupt] = self["tool_interrupt_event"]["interrupts"]
        return value


class _LoopMetrics(Protocol):
    """strands' ``EventLoopMetrics`` as `EventLoopStopEvent` reads it: the run's totals."""

    @property
    def accumulated_usage(self) -> Usage: ...

    @property
    def accumulated_metrics(self) -> Metrics: ...


class EventLoopStopEvent(_StopTuple):
    """The result of one agent pass: everything the caller's final result is built from.

    It is the last `EventLoopStopEvent` of ``AgentStreamStage``; middleware may yield trailing
    events after it, which is why the host selects the last event of this class rather than the
    last event overall. The payload is the 5-tuple
    ``self["stop"] == (stop_reason, message, usage, metrics, interrupts)``.

    A pass that stopped for a human (``stop_reason == "interrupt"``) still ends with this event
    and it is still the pass's result, so `is_interrupt` stays false: the interrupts travel in
    `interrupts` for the caller to answer.

    strands' positional form is accepted too:
    ``EventLoopStopEvent(stop_reason, message, metrics, request_state, interrupts)``, where
    ``metrics`` is an object with strands' ``accumulated_usage`` and ``accumulated_metrics``
    (an ``EventLoopMetrics``); the event keeps those two figures. ``request_state`` is accepted
    and not kept (the pass's request state is the invocation's own); a ``structured_output``
    or ``checkpoint`` is refused, since no host here returns one through this event.

    Args:
        stop_reason: Why the pass stopped.
        message: The last assistant message of the pass.
        usage: Tokens the pass consumed.
        metrics: Timing of the pass.
        interrupts: The interrupts waiting for a response when the pass stopped on one.
    """

    __slots__ = ()

    @overload
    def __init__(
        self,
        stop_reason: StopReason | str,
        message: Message,
        usage: Usage,
        metrics: Metrics,
        interrupts: Sequence[Interrupt] | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        stop_reason: StopReason | str,
        message: Message,
        metrics: _LoopMetrics,
        request_state: Any,
        interrupts: Sequence[Interrupt] | None = None,
        structured_output: None = None,
        checkpoint: None = None,
        /,
    ) -> None: ...

    def __init__(  # noqa: PLR0917 - strands' form is seven positional arguments
        self,
        stop_reason: StopReason | str,
        message: Message,
        usage: Any,
        metrics: Any,
        interrupts: Sequence[Interrupt] | None = None,
        structured_output: object = None,
        checkpoint: object = None,
    ) -> None:
        super().__init__()
        if not isinstance(usage, Mapping):
            # strands' order: (stop_reason, message, metrics, request_state, interrupts, ...).
            usage, metrics = _strands_figures(usage)
        elif not isinstance(metrics, Mapping):
            raise TypeError(
                "EventLoopStopEvent takes (stop_reason, message, usage, metrics, interrupts) or "
                "strands' (stop_reason, message, metrics, request_state, interrupts) with an "
                f"EventLoopMetrics; got usage={usage!r}, metrics={metrics!r}"
            )
        if structured_output is not None or checkpoint is not None:
            raise TypeError(
                "EventLoopStopEvent carries no structured_output or checkpoint: no host here "
                "returns them through the stop event; leave them out"
            )
        if interrupts is not None and not isinstance(interrupts, list):
            interrupts = list(interrupts)
        self["stop"] = (stop_reason, message, usage, metrics, interrupts)

    @property
    def interrupts(self) -> list[Interrupt] | None:
        """The interrupts waiting for a response, or ``None`` when the pass did not stop on one."""
        value: list[Interrupt] | None = self["stop"][4]
        return value


def _strands_figures(loop_metrics: Any) -> tuple[Usage, Metrics]:
    """The usage and timing a strands ``EventLoopMetrics`` holds, for strands' stop-event form."""
    usage = getattr(loop_metrics, "accumulated_usage", None)
    metrics = getattr(loop_metrics, "accumulated_metrics", None)
    if not isinstance(usage, Mapping) or not isinstance(metrics, Mapping):
        raise TypeError(
            "in strands' form EventLoopStopEvent(stop_reason, message, metrics, request_state, "
            "...) metrics must be an EventLoopMetrics (with accumulated_usage and "
            f"accumulated_metrics); got {loop_metrics!r}. Or pass (stop_reason, message, usage, "
            "metrics) as dicts"
        )
    return cast(Usage, dict(cast("Mapping[str, Any]", usage))), cast(
        Metrics, dict(cast("Mapping[str, Any]", metrics))
    )


class InitEventLoopEvent(TypedEvent):
    """The first event of every invocation, before the pass runs (strands' spelling and payload).

    The reference agent yields it from ``stream_async`` ahead of the agent-stream chain, so it is
    a stream consumer's event: no stage's handlers see it. The payload is
    ``self["init_event_loop"] is True``.
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__()
        self["init_event_loop"] = True
