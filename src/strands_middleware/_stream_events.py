"""The events a model or tool call streams before its result (re-exported by `events`).

Each class also answers to strands' name for it (`TextStreamEvent` is `TextDeltaEvent`, ...) and
accepts strands' constructor form, so middleware written against strands builds them unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast, overload

from ._typed_event import TypedEvent
from .content import ContentBlockDelta, ContentBlockDeltaReasoning, Message, StreamEvent, ToolUse

__all__ = [
    "ModelMessageEvent",
    "ModelStreamChunkEvent",
    "ModelStreamEvent",
    "ReasoningDeltaEvent",
    "ReasoningRedactedContentStreamEvent",
    "ReasoningSignatureStreamEvent",
    "ReasoningTextStreamEvent",
    "TextDeltaEvent",
    "TextStreamEvent",
    "ToolStreamEvent",
    "ToolUseDeltaEvent",
    "ToolUseStreamEvent",
]

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
        # No ``super().__init__()``: the dict is empty already, and this runs for every chunk.
        self["event"] = chunk

    @property
    def chunk(self) -> StreamEvent:
        """The raw chunk."""
        value: StreamEvent = self["event"]
        return value


class TextDeltaEvent(TypedEvent):
    """The next piece of text the model produced: what a UI appends as it arrives.

    The payload is ``self["data"]``, the key Strands callback handlers print. strands' name
    `TextStreamEvent` is this class, and its form ``TextStreamEvent(delta, text)`` is accepted
    (the Converse delta is not kept: its text is ``text``).

    Args:
        text: The new text (a fragment, not the text so far).
    """

    __slots__ = ()

    @overload
    def __init__(self, text: str) -> None: ...

    @overload
    def __init__(self, delta: ContentBlockDelta, text: str, /) -> None: ...

    def __init__(self, text: Any, strands_text: Any = None) -> None:
        # No ``super().__init__()``, as in `ModelStreamEvent`: this runs for every text delta.
        # One argument is ours (the text); two are strands' (delta, text).
        self["data"] = text if strands_text is None else strands_text

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

    strands' name `ToolUseStreamEvent` is this class, and its form
    ``ToolUseStreamEvent(delta, current_tool_use)`` is accepted (the id and name are read from
    ``current_tool_use``, the fragment from ``delta["toolUse"]["input"]``).

    Args:
        tool_use_id: The id of the call being streamed.
        name: The tool being called.
        input_fragment: The next characters of the JSON input.
    """

    __slots__ = ()

    @overload
    def __init__(self, tool_use_id: str, name: str, input_fragment: str) -> None: ...

    @overload
    def __init__(
        self, delta: ContentBlockDelta, current_tool_use: Mapping[str, Any], /
    ) -> None: ...

    def __init__(self, tool_use_id: Any, name: Any, input_fragment: Any = None) -> None:
        # No ``super().__init__()``: the dict is empty already (see `ModelStreamEvent`).
        if input_fragment is None and isinstance(tool_use_id, Mapping):
            # strands' ToolUseStreamEvent(delta, current_tool_use).
            delta: Mapping[str, Any] = cast("Mapping[str, Any]", tool_use_id)
            current: Mapping[str, Any] = cast("Mapping[str, Any]", name)
            input_fragment = delta.get("toolUse", {}).get("input", "")
            tool_use_id, name = current.get("toolUseId", ""), current.get("name", "")
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

    strands' three names (`ReasoningTextStreamEvent`, `ReasoningSignatureStreamEvent`,
    `ReasoningRedactedContentStreamEvent`) are this class, and their form ``(delta, value)`` is
    accepted: which part ``value`` is, is read from the Converse ``delta``.

    Args:
        text: The next characters of the reasoning text.
        signature: The next characters of the signature authenticating the reasoning.
        redacted_content: Reasoning the provider encrypted.
    """

    __slots__ = ()

    @overload
    def __init__(
        self,
        *,
        text: str | None = None,
        signature: str | None = None,
        redacted_content: bytes | None = None,
    ) -> None: ...

    @overload
    def __init__(self, strands_delta: ContentBlockDelta, value: str | bytes | None, /) -> None: ...

    def __init__(
        self,
        strands_delta: Any = None,
        value: Any = None,
        *,
        text: str | None = None,
        signature: str | None = None,
        redacted_content: bytes | None = None,
    ) -> None:
        # No ``super().__init__()``: the dict is empty already (see `ModelStreamEvent`).
        if strands_delta is not None:
            text, signature, redacted_content = _reasoning_parts(strands_delta, value)
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


def _reasoning_parts(
    delta: Mapping[str, Any], value: Any
) -> tuple[str | None, str | None, bytes | None]:
    """Which reasoning part strands' ``(delta, value)`` form gives, read from the delta."""
    parts: Mapping[str, Any] = delta.get("reasoningContent", {})
    if "signature" in parts:
        return None, value, None
    if "redactedContent" in parts:
        return None, None, value
    return value, None, None


TextStreamEvent = TextDeltaEvent
"""strands' name for `TextDeltaEvent` (the same class)."""

ToolUseStreamEvent = ToolUseDeltaEvent
"""strands' name for `ToolUseDeltaEvent` (the same class)."""

ReasoningTextStreamEvent = ReasoningDeltaEvent
"""strands' name for `ReasoningDeltaEvent` carrying text (the same class)."""

ReasoningSignatureStreamEvent = ReasoningDeltaEvent
"""strands' name for `ReasoningDeltaEvent` carrying a signature (the same class)."""

ReasoningRedactedContentStreamEvent = ReasoningDeltaEvent
"""strands' name for `ReasoningDeltaEvent` carrying redacted content (the same class)."""


class ModelMessageEvent(TypedEvent):
    """The finished assistant message of a model call, streamed just before its result.

    It is the earliest point the whole message is known; the same object is the ``message`` of
    the `ModelStopReason` that follows. The payload is ``self["message"]``.

    Args:
        message: The assistant message.
    """

    __slots__ = ()

    def __init__(self, message: Message) -> None:
        # No ``super().__init__()``: the dict is empty already (see `ModelStreamEvent`).
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


ModelStreamChunkEvent = ModelStreamEvent
"""strands' name for `ModelStreamEvent`, the raw Converse chunk (the same class).

strands' own ``ModelStreamEvent`` is the base of its delta events; here the delta events are
`TextDeltaEvent`, `ToolUseDeltaEvent` and `ReasoningDeltaEvent`.
"""

# Their public home is `strands_middleware.events` (docs, pickling and the conformance kit name
# an event class by it), so they carry its name rather than this module's.
for _public in (
    ModelStreamEvent,
    TextDeltaEvent,
    ToolUseDeltaEvent,
    ReasoningDeltaEvent,
    ModelMessageEvent,
    ToolStreamEvent,
):
    _public.__module__ = "strands_middleware.events"
