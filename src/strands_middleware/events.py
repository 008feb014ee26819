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

from collections.abc import Mapping
from typing import Any

from typing_extensions import override

from .content import (
    ContentBlockDeltaReasoning,
    Message,
    Metrics,
    StopReason,
    StreamEvent,
    ToolResult,
    ToolUse,
    Usage,
)
from .interrupts import Interrupt

__all__ = [
    "EventLoopStopEvent",
    "ModelMessageEvent",
    "ModelStopReason",
    "ModelStreamEvent",
    "ReasoningDeltaEvent",
    "TextDeltaEvent",
    "ToolInterruptEvent",
    "ToolResultEvent",
    "ToolStreamEvent",
    "ToolUseDeltaEvent",
    "TypedEvent",
]


class TypedEvent(dict[str, Any]):
    """Base of every event the library streams.

    Subclasses store their payload in the dict and expose it through properties. The empty
    ``__slots__`` keeps instances as small and quick to create as plain dicts, which matters
    because a model call creates several events per streamed chunk. For the same reason the
    properties type what they read with an annotated local, not ``typing.cast``: a cast is a
    function call, and handlers read these on every streamed event.

    Args:
        data: Initial keys, for ad-hoc events a host or middleware wants to stream.
    """

    __slots__ = ()

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        if data is None:
            super().__init__()
        else:
            super().__init__(data)

    @property
    def is_interrupt(self) -> bool:
        """Whether this event halts its stage without a result (the interrupt-control protocol).

        The engine checks this on every event instead of importing tool-specific classes, so
        any event, including a host's own, can halt a stage by returning true here.
        """
        return False

    @override
    def __repr__(self) -> str:
        # The class name is the most useful part of an event in a failing assertion or a log
        # line; the plain dict repr would hide it.
        return f"{type(self).__name__}({super().__repr__()})"


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
        super().__init__()
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
        super().__init__()
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


class EventLoopStopEvent(_StopTuple):
    """The result of one agent pass: everything the caller's final result is built from.

    It is the last `EventLoopStopEvent` of ``AgentStreamStage``; middleware may yield trailing
    events after it, which is why the host selects the last event of this class rather than the
    last event overall. The payload is the 5-tuple
    ``self["stop"] == (stop_reason, message, usage, metrics, interrupts)``.

    A pass that stopped for a human (``stop_reason == "interrupt"``) still ends with this event
    and it is still the pass's result, so `is_interrupt` stays false: the interrupts travel in
    `interrupts` for the caller to answer.

    Args:
        stop_reason: Why the pass stopped.
        message: The last assistant message of the pass.
        usage: Tokens the pass consumed.
        metrics: Timing of the pass.
        interrupts: The interrupts waiting for a response when the pass stopped on one.
    """

    __slots__ = ()

    def __init__(
        self,
        stop_reason: StopReason | str,
        message: Message,
        usage: Usage,
        metrics: Metrics,
        interrupts: list[Interrupt] | None = None,
    ) -> None:
        super().__init__()
        self["stop"] = (stop_reason, message, usage, metrics, interrupts)

    @property
    def interrupts(self) -> list[Interrupt] | None:
        """The interrupts waiting for a response, or ``None`` when the pass did not stop on one."""
        value: list[Interrupt] | None = self["stop"][4]
        return value


# --------------------------------------------------------------------------------------------
# Streaming progress
# --------------------------------------------------------------------------------------------


class ModelStreamEvent(TypedEvent):
    """One raw Converse chunk exactly as the model yielded it.

    It is streamed before the delta event the chunk gives rise to, so a consumer that wants the
    provider's own view (metadata, stop chunks, fields this library does not interpret) sees
    every chunk. The payload is ``self["event"]``, the chunk itself, not a copy.

    Args:
        chunk: The chunk.
    """

    __slots__ = ()

    def __init__(self, chunk: StreamEvent) -> None:
        super().__init__()
        self["event"] = chunk

    @property
    def chunk(self) -> StreamEvent:
        """The raw chunk."""
        value: StreamEvent = self["event"]
        return value


class TextDeltaEvent(TypedEvent):
    """The next piece of text the model produced: what a UI appends as it arrives.

    The payload is ``self["data"]``, the key Strands callback handlers print.

    Args:
        text: The new text (a fragment, not the text so far).
    """

    __slots__ = ()

    def __init__(self, text: str) -> None:
        super().__init__()
        self["data"] = text

    @property
    def text(self) -> str:
        """The new text."""
        value: str = self["data"]
        return value


class ToolUseDeltaEvent(TypedEvent):
    """The next fragment of a tool call's JSON input, as the model streams it.

    Fragments are not valid JSON on their own; the parsed input arrives in the finished message
    (`ModelMessageEvent`). The payload is
    ``self["tool_use_delta"] == {"toolUseId": ..., "name": ..., "input": input_fragment}``.

    Args:
        tool_use_id: The id of the call being streamed.
        name: The tool being called.
        input_fragment: The next characters of the JSON input.
    """

    __slots__ = ()

    def __init__(self, tool_use_id: str, name: str, input_fragment: str) -> None:
        super().__init__()
        self["tool_use_delta"] = {"toolUseId": tool_use_id, "name": name, "input": input_fragment}

    @property
    def tool_use_id(self) -> str:
        """The id of the call being streamed."""
        value: str = self["tool_use_delta"]["toolUseId"]
        return value

    @property
    def name(self) -> str:
        """The tool being called."""
        value: str = self["tool_use_delta"]["name"]
        return value

    @property
    def input_fragment(self) -> str:
        """The next characters of the JSON input."""
        value: str = self["tool_use_delta"]["input"]
        return value


class ReasoningDeltaEvent(TypedEvent):
    """The next fragment of a reasoning model's thinking.

    Normally exactly one of the three parts is set per event. The payload is
    ``self["reasoning"] is True`` (so a handler can skip reasoning with one check) plus
    ``self["reasoning_delta"]``, holding only the parts that were given, in the Converse spelling
    (``text``, ``signature``, ``redactedContent``).

    Args:
        text: The next characters of the reasoning text.
        signature: The next characters of the signature authenticating the reasoning.
        redacted_content: Reasoning the provider encrypted.
    """

    __slots__ = ()

    def __init__(
        self,
        *,
        text: str | None = None,
        signature: str | None = None,
        redacted_content: bytes | None = None,
    ) -> None:
        super().__init__()
        delta: ContentBlockDeltaReasoning = {}
        if text is not None:
            delta["text"] = text
        if signature is not None:
            delta["signature"] = signature
        if redacted_content is not None:
            delta["redactedContent"] = redacted_content
        self["reasoning"] = True
        self["reasoning_delta"] = delta

    @property
    def text(self) -> str | None:
        """The new reasoning text, or ``None`` if this fragment carries none."""
        value: str | None = self["reasoning_delta"].get("text")
        return value

    @property
    def signature(self) -> str | None:
        """The new signature text, or ``None`` if this fragment carries none."""
        value: str | None = self["reasoning_delta"].get("signature")
        return value

    @property
    def redacted_content(self) -> bytes | None:
        """The encrypted reasoning, or ``None`` if this fragment carries none."""
        value: bytes | None = self["reasoning_delta"].get("redactedContent")
        return value


class ModelMessageEvent(TypedEvent):
    """The finished assistant message of a model call, streamed just before its result.

    It is the earliest point the whole message is known; the same object is the ``message`` of
    the `ModelStopReason` that follows. The payload is ``self["message"]``.

    Args:
        message: The assistant message.
    """

    __slots__ = ()

    def __init__(self, message: Message) -> None:
        super().__init__()
        self["message"] = message

    @property
    def message(self) -> Message:
        """The assistant message."""
        value: Message = self["message"]
        return value


class ToolStreamEvent(TypedEvent):
    """Progress a running tool reports before its result (a log line, a percentage, a partial).

    The payload is ``self["tool_stream_event"] == {"tool_use": tool_use, "data": data}``, so a
    consumer running several tools at once can tell whose progress it is.

    Args:
        tool_use: The tool call reporting progress.
        data: Whatever the tool yielded.
    """

    __slots__ = ()

    def __init__(self, tool_use: ToolUse, data: Any) -> None:
        super().__init__()
        self["tool_stream_event"] = {"tool_use": tool_use, "data": data}

    @property
    def tool_use(self) -> ToolUse:
        """The tool call reporting progress."""
        value: ToolUse = self["tool_stream_event"]["tool_use"]
        return value

    @property
    def tool_use_id(self) -> str:
        """The id of the tool call reporting progress."""
        value: str = self["tool_stream_event"]["tool_use"]["toolUseId"]
        return value

    @property
    def data(self) -> Any:
        """What the tool yielded."""
        return self["tool_stream_event"]["data"]
