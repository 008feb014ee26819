"""Boundary translation between strands-agents' stream events and this library's.

Every strands event with a counterpart here reaches handlers as that typed event, with the same
fields as on the reference agent: raw chunks (`ModelStreamEvent`), text, tool-use and reasoning
deltas, the model message, the model call's `ModelStopReason`, tool progress, the tool result,
a tool's interrupt and the pass's `EventLoopStopEvent`. An event with no counterpart (strands'
lifecycle events, citations, tool cancellation, ...) is a `HostEvent` holding strands' items.

Each event is translated once, into an instance of a private subclass of the public class that
remembers the strands event it came from (``isinstance`` holds; the payload values are shared,
not copied). On the way out, an event the handler passed on unchanged goes back as that very
strands object; one it changed or built becomes a new strands event carrying every field it
set. "Unchanged" is decided by identity of the payload values, so an in-place edit of a nested
value (a message's blocks, a usage dict) is carried back by the shared object itself, and
reassigning a key is seen as a change. A text delta or a raw chunk is judged by its text or its
chunk alone, the one value strands' event holds: a key a handler adds to one has no place there
either way, so the event still goes back as strands' own.

Messages inside events are Converse views (see `_converse`). The pass's stop event maps its
usage and latency to the figures strands' ``AgentResult`` carries (`Crossing`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from strands.types import events as host_events

from ...events import (
    EventLoopStopEvent,
    ModelMessageEvent,
    ModelStopReason,
    ModelStreamEvent,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolInterruptEvent,
    ToolResultEvent,
    ToolStreamEvent,
    ToolUseDeltaEvent,
    TypedEvent,
)
from . import _seams as seams
from ._crossing import Crossing
from ._interrupts import (
    interrupt_exception_in,
    interrupt_exception_out,
    interrupt_in,
    interrupt_out,
    interrupts_out,
)

__all__ = [
    "INBOUND",
    "MODEL_OUTBOUND",
    "OUTBOUND",
    "ChunkIn",
    "Crossing",
    "HostEvent",
    "TextIn",
    "Translate",
    "chunk_out",
    "inbound",
    "interrupt_exception_in",
    "interrupt_exception_out",
    "interrupt_in",
    "interrupt_out",
    "model_stop_in",
    "new_chunk",
    "new_text",
    "outbound",
    "text_out",
    "translator",
]

Translate = Callable[[Any, "Crossing"], Any]
"""One direction of one event class: ``(event, crossing) -> translated`` (``None``: drop it)."""


class HostEvent(TypedEvent):
    """A strands stream event with no counterpart in this library, carried through handlers.

    Its items are strands' own, exactly as strands streams them; `host` is the strands event.
    Passed on unchanged it goes back to strands as that very object; changed in place, as a copy
    of it holding the new items.
    """

    __slots__ = ("host",)

    def __init__(self, host: Mapping[str, Any]) -> None:
        super().__init__(host)
        self.host = host


# --------------------------------------------------------------------------------------------
# strands events, as handlers see them
# --------------------------------------------------------------------------------------------
# Each class below is the public class plus the strands event it was made from. Most are filled
# in item by item from an empty instance (see `_blank`) rather than through the public
# constructors: this runs for every streamed chunk, and it saves the constructors' calls.

_E = TypeVar("_E", bound=TypedEvent)


def _blank(cls: type[_E]) -> Callable[[], _E]:
    """What makes an empty ``cls`` without its constructor: the translation fills the items.

    ``cls``, a private class only the translation makes, takes dict's own ``__init__``: a call
    runs no Python code (the public constructors set their arguments as items, which the
    translation does itself), and costs less than ``dict.__new__(cls)``, which checks ``cls``.
    """
    type.__setattr__(cls, "__init__", vars(dict)["__init__"])
    return cast("Callable[[], _E]", cls)


class _ChunkIn(ModelStreamEvent):
    __slots__ = ("host", "value")
    host: Any
    value: Any


new_chunk = _blank(_ChunkIn)
# What `_stream` imports; the classes' own names stay private (listings of public classes skip).
ChunkIn = _ChunkIn


class _TextIn(TextDeltaEvent):
    __slots__ = ("host", "value")
    host: Any
    value: Any


new_text = _blank(_TextIn)
TextIn = _TextIn


class _ToolUseDeltaIn(ToolUseDeltaEvent):
    __slots__ = ("delta", "host")
    delta: Any
    host: Any


_new_tool_use_delta = _blank(_ToolUseDeltaIn)


class _ReasoningIn(ReasoningDeltaEvent):
    __slots__ = ("delta", "host", "key", "part")
    delta: Any
    host: Any
    key: Any
    part: Any


_new_reasoning = _blank(_ReasoningIn)


class _MessageIn(ModelMessageEvent):
    __slots__ = ("host", "shown")
    host: Any
    shown: Any


_new_message = _blank(_MessageIn)


class _ModelStopIn(ModelStopReason):
    __slots__ = ("host", "stop")
    host: Any
    stop: Any


_new_model_stop = _blank(_ModelStopIn)


class _ToolStreamIn(ToolStreamEvent):
    __slots__ = ("host",)
    host: Any


_new_tool_stream = _blank(_ToolStreamIn)


class _ToolResultIn(ToolResultEvent):
    __slots__ = ("host",)
    host: Any


class _ToolInterruptIn(ToolInterruptEvent):
    __slots__ = ("host", "payload")
    host: Any
    payload: Any


class _LoopStopIn(EventLoopStopEvent):
    __slots__ = ("host", "stop")
    host: Any
    stop: Any


_new_loop_stop = _blank(_LoopStopIn)


def _host_event_in(host: Any, crossing: Crossing) -> Any:
    return HostEvent(host)


def _delta_in(new: Callable[[], Any], key: str) -> Translate:
    """The translation of a delta event whose one value strands holds under ``key``.

    The value is also kept in the event's ``value`` slot, so the way back tells whether a
    handler replaced it without reading strands' event again.
    """

    def delta_in(host: Any, crossing: Crossing) -> Any:
        value = host[key]
        event = new()
        event[key] = value
        event.host = host
        event.value = value
        return event

    return delta_in


_chunk_in = _delta_in(new_chunk, "event")
_text_in = _delta_in(new_text, "data")


def _tool_use_delta_in(host: Any, crossing: Crossing) -> Any:
    current = host["current_tool_use"]
    delta = {
        "toolUseId": current.get("toolUseId", ""),
        "name": current.get("name", ""),
        "input": host["delta"]["toolUse"].get("input", ""),
    }
    event = _new_tool_use_delta()
    event["tool_use_delta"] = delta
    event.host = host
    event.delta = delta
    return event


def _reasoning_in(key: str, part: str) -> Translate:
    def reasoning_in(host: Any, crossing: Crossing) -> Any:
        delta = {part: host[key]}
        event = _new_reasoning()
        event["reasoning"] = True
        event["reasoning_delta"] = delta
        event.host = host
        event.delta = delta
        event.key = key
        event.part = part
        return event

    return reasoning_in


def _message_in(host: Any, crossing: Crossing) -> Any:
    shown = crossing.message_view(host["message"])
    event = _new_message()
    event["message"] = shown
    event.host = host
    event.shown = shown
    return event


def model_stop_in(host: Any, crossing: Crossing) -> Any:
    stop_reason, message, usage, metrics = host["stop"]
    stop = (stop_reason, crossing.message_view(message), usage, metrics)
    event = _new_model_stop()
    event["stop"] = stop
    event.host = host
    event.stop = stop
    return event


def _tool_stream_in(host: Any, crossing: Crossing) -> Any:
    event = _new_tool_stream()
    event["tool_stream_event"] = host["tool_stream_event"]
    event.host = host
    return event


def _tool_result_in(host: Any, crossing: Crossing) -> Any:
    event = _ToolResultIn(host.tool_result, host.exception)
    event.host = host
    return event


def _tool_interrupt_in(host: Any, crossing: Crossing) -> Any:
    payload = host["tool_interrupt_event"]
    event = _ToolInterruptIn(payload["tool_use"], [interrupt_in(i) for i in payload["interrupts"]])
    event.host = host
    event.payload = event["tool_interrupt_event"]
    return event


def _loop_stop_in(host: Any, crossing: Crossing) -> Any:
    stop_reason, message, _figures, _state, interrupts, _structured, _checkpoint = host["stop"]
    usage, metrics = crossing.stop_in(host)
    ours = None if interrupts is None else [interrupt_in(i) for i in interrupts]
    stop = (stop_reason, crossing.message_view(message), usage, metrics, ours)
    event = _new_loop_stop()
    event["stop"] = stop
    event.host = host
    event.stop = stop
    return event


INBOUND: dict[type, Translate] = {
    host_events.TypedEvent: _host_event_in,
    seams.ModelStreamChunkEvent: _chunk_in,
    seams.TextStreamEvent: _text_in,
    seams.ToolUseStreamEvent: _tool_use_delta_in,
    seams.ReasoningTextStreamEvent: _reasoning_in("reasoningText", "text"),
    seams.ReasoningSignatureStreamEvent: _reasoning_in("reasoning_signature", "signature"),
    seams.ReasoningRedactedContentStreamEvent: _reasoning_in(
        "reasoningRedactedContent", "redactedContent"
    ),
    seams.ModelMessageEvent: _message_in,
    host_events.ModelStopReason: model_stop_in,
    seams.ToolStreamEvent: _tool_stream_in,
    host_events.ToolResultEvent: _tool_result_in,
    seams.ToolInterruptEvent: _tool_interrupt_in,
    seams.EventLoopStopEvent: _loop_stop_in,
}
"""strands event class -> its translation into this library's (by exact class; see `translator`)."""


# --------------------------------------------------------------------------------------------
# Handlers' events, back to strands
# --------------------------------------------------------------------------------------------


def _typed_out(event: Any, crossing: Crossing) -> Any:
    return host_events.TypedEvent(event)


def _host_event_out(event: Any, crossing: Crossing) -> Any:
    host = event.host
    if event == host:
        return host
    changed = copy.copy(host)  # keeps strands' class (and what it holds besides the items)
    changed.clear()
    changed.update(event)
    return changed


def chunk_out(event: Any, crossing: Crossing) -> Any:
    return seams.ModelStreamChunkEvent(event["event"])


def text_out(event: Any, crossing: Crossing) -> Any:
    text = event["data"]
    return seams.TextStreamEvent(delta={"text": text}, text=text)


def _delta_in_out(key: str, out: Translate) -> Translate:
    """The way back of a `_delta_in` event: strands' own while ``key`` holds its value.

    Only that value reaches strands (``out`` builds its event from it alone), so it alone
    decides "unchanged".
    """

    def delta_in_out(event: Any, crossing: Crossing) -> Any:
        if event[key] is event.value:
            return event.host
        return out(event, crossing)

    return delta_in_out


_chunk_in_out = _delta_in_out("event", chunk_out)
_text_in_out = _delta_in_out("data", text_out)


def _tool_use_delta_out(event: Any, crossing: Crossing, current: Any = None) -> Any:
    delta = event["tool_use_delta"]
    fragment = delta["input"]
    state: dict[str, Any] = {
        **(current or {}),
        "toolUseId": delta["toolUseId"],
        "name": delta["name"],
        "input": fragment,
    }
    return seams.ToolUseStreamEvent({"toolUse": {"input": fragment}}, state)


def _tool_use_delta_in_out(event: Any, crossing: Crossing) -> Any:
    host = event.host
    delta = event.delta
    current = host["current_tool_use"]
    if (
        len(event) == 1
        and event.get("tool_use_delta") is delta
        and len(delta) == 3
        and delta.get("input") is host["delta"]["toolUse"].get("input", "")
        and delta.get("toolUseId") is current.get("toolUseId", "")
        and delta.get("name") is current.get("name", "")
    ):
        return host
    return _tool_use_delta_out(event, crossing, current)


def _reasoning_out(event: Any, crossing: Crossing) -> Any:
    delta = event["reasoning_delta"]
    content = dict(delta)
    if "text" in delta:
        return seams.ReasoningTextStreamEvent(
            delta={"reasoningContent": content}, reasoning_text=delta["text"]
        )
    if "signature" in delta:
        return seams.ReasoningSignatureStreamEvent(
            delta={"reasoningContent": content}, reasoning_signature=delta["signature"]
        )
    return seams.ReasoningRedactedContentStreamEvent(
        delta={"reasoningContent": content}, redacted_content=delta.get("redactedContent")
    )


def _reasoning_in_out(event: Any, crossing: Crossing) -> Any:
    host = event.host
    delta = event.delta
    if (
        len(event) == 2
        and event.get("reasoning") is True
        and event.get("reasoning_delta") is delta
        and len(delta) == 1
        and delta.get(event.part) is host[event.key]
    ):
        return host
    return _reasoning_out(event, crossing)


def _message_out(event: Any, crossing: Crossing) -> Any:
    return seams.ModelMessageEvent(crossing.host_message(event["message"]))


def _message_in_out(event: Any, crossing: Crossing) -> Any:
    host = event.host
    if len(event) == 1 and event.get("message") is event.shown:
        back = crossing.host_message(event.shown)
        if back is host["message"]:
            return host
        return seams.ModelMessageEvent(back)
    return _message_out(event, crossing)


def _drop(event: Any, crossing: Crossing) -> Any:
    return None


def _model_stop_out(event: Any, crossing: Crossing) -> Any:
    stop_reason, message, usage, metrics = event["stop"]
    return host_events.ModelStopReason(stop_reason, crossing.host_message(message), usage, metrics)


def _model_stop_in_out(event: Any, crossing: Crossing) -> Any:
    if len(event) == 1 and event.get("stop") is event.stop:
        host = event.host
        if crossing.host_message(event.stop[1]) is host["stop"][1]:
            return host
    return _model_stop_out(event, crossing)


def _tool_stream_out(event: Any, crossing: Crossing) -> Any:
    payload = event["tool_stream_event"]
    return seams.ToolStreamEvent(payload["tool_use"], payload["data"])


def _tool_stream_in_out(event: Any, crossing: Crossing) -> Any:
    host = event.host
    if len(event) == 1 and event.get("tool_stream_event") is host["tool_stream_event"]:
        return host
    changed = copy.copy(host)  # keeps strands' class (an agent-as-tool's stream event, say)
    changed["tool_stream_event"] = event["tool_stream_event"]
    return changed


def _tool_result_out(event: Any, crossing: Crossing, backgrounded: bool = False) -> Any:
    return host_events.ToolResultEvent(
        event["tool_result"], event.exception, backgrounded=backgrounded
    )


def _tool_result_in_out(event: Any, crossing: Crossing) -> Any:
    host = event.host
    if (
        len(event) == 1
        and event.get("tool_result") is host.tool_result
        and event.exception is host.exception
    ):
        return host
    return _tool_result_out(event, crossing, host.backgrounded)


def _tool_interrupt_out(event: Any, crossing: Crossing, hosts: Any = None) -> Any:
    payload = event["tool_interrupt_event"]
    return seams.ToolInterruptEvent(
        payload["tool_use"], interrupts_out(payload["interrupts"], hosts)
    )


def _tool_interrupt_in_out(event: Any, crossing: Crossing) -> Any:
    host = event.host
    payload = event.payload
    hosts = host["tool_interrupt_event"]["interrupts"]
    if (
        len(event) == 1
        and event.get("tool_interrupt_event") is payload
        and len(payload) == 2
        and payload.get("tool_use") is host["tool_interrupt_event"]["tool_use"]
        and interrupts_out(payload.get("interrupts"), hosts) is hosts
    ):
        return host
    return _tool_interrupt_out(event, crossing, hosts)


def _loop_stop_out(event: Any, crossing: Crossing) -> Any:
    return crossing.stop_out(event)


def _loop_stop_in_out(event: Any, crossing: Crossing) -> Any:
    host = event.host
    stop = event.stop
    if len(event) == 1 and event.get("stop") is stop:
        _reason, message, usage, metrics, interrupts = stop
        host_stop = host["stop"]
        if (
            crossing.host_message(message) is host_stop[1]
            and crossing.same_figures(usage, metrics)
            and interrupts_out(interrupts, host_stop[4]) is host_stop[4]
        ):
            return host
    return crossing.stop_out(event)


OUTBOUND: dict[type, Translate] = {
    TypedEvent: _typed_out,
    HostEvent: _host_event_out,
    ModelStreamEvent: chunk_out,
    _ChunkIn: _chunk_in_out,
    TextDeltaEvent: text_out,
    _TextIn: _text_in_out,
    ToolUseDeltaEvent: _tool_use_delta_out,
    _ToolUseDeltaIn: _tool_use_delta_in_out,
    ReasoningDeltaEvent: _reasoning_out,
    _ReasoningIn: _reasoning_in_out,
    ModelMessageEvent: _message_out,
    _MessageIn: _message_in_out,
    ModelStopReason: _model_stop_out,
    _ModelStopIn: _model_stop_in_out,
    ToolStreamEvent: _tool_stream_out,
    _ToolStreamIn: _tool_stream_in_out,
    ToolResultEvent: _tool_result_out,
    _ToolResultIn: _tool_result_in_out,
    ToolInterruptEvent: _tool_interrupt_out,
    _ToolInterruptIn: _tool_interrupt_in_out,
    EventLoopStopEvent: _loop_stop_out,
    _LoopStopIn: _loop_stop_in_out,
}
"""This library's event class -> its translation back to strands (see `translator`)."""

MODEL_OUTBOUND: dict[type, Translate] = {
    **OUTBOUND,
    ModelMessageEvent: _drop,
    _MessageIn: _drop,
}
"""`OUTBOUND` for the model stage. strands announces the message of the stage's result itself
once the stage ends, so a `ModelMessageEvent` inside the stage (the one the bridge adds for
parity with the reference agent, or one a handler yields) is not passed back a second time."""


def translator(table: dict[type, Translate], cls: type) -> Translate:
    """The translation of ``cls`` in ``table``: its own, or that of its nearest base class.

    The answer is stored in ``table``, so a subclass is looked up once.
    """
    for base in cls.__mro__:
        found = table.get(base)
        if found is not None:
            table[cls] = found
            return found
    raise TypeError(
        f"the strands bridge cannot translate a {cls.__name__}: events on a strands.Agent must "
        "be TypedEvent instances (this library's in handlers, strands' in the strands loop)"
    )


def inbound(event: Any, crossing: Crossing) -> Any:
    """One strands event as handlers see it (the bridge inlines this on its hot path)."""
    translate = INBOUND.get(event.__class__) or translator(INBOUND, event.__class__)
    return translate(event, crossing)


def outbound(event: Any, crossing: Crossing, table: dict[type, Translate] = OUTBOUND) -> Any:
    """One handler event as strands gets it; ``None`` when it is not passed back."""
    translate = table.get(event.__class__) or translator(table, event.__class__)
    return translate(event, crossing)
