"""A model call no one streams: LangChain's handler called in the chain's own task.

LangChain asks a chat model for its reply whole unless something takes its tokens as they come:
a streaming callback handler on the run (LangGraph's ``stream_mode="messages"``,
``astream_events``), the model's own ``streaming=True``, or a ``stream`` keyword. When none of
those is there (`asked_whole`: ``ainvoke``, or a stream mode that shows no tokens), the bridge
calls LangChain's handler from the chain's terminal, with the chat model LangChain would call,
as a LangChain middleware does: no relay model, no second task. The terminal turns the reply
into the events of a model streaming it in one chunk (`reply_events`), the same events the
relay's path gives for a reply asked whole; LangChain's own response goes back when handlers
let it through unchanged.

So the model's run, as LangChain's callbacks and traces record it, holds the model's own reply;
handlers' changes show in what the model node returns (the agent's state and output), as a
LangChain middleware's would. LangChain middleware registered inside the bridge sees the chat
model itself, and handlers see the reply those middleware return.

`asked_whole` reads the run's handlers as LangChain does when it decides whether to stream
(``BaseChatModel._should_stream``): this is a private seam of the bridge, checked by
``tests/bridges/test_langchain_whole_call.py`` against what LangChain does on each way to run
an agent. A streaming handler added through a LangChain configure hook is not seen here.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tracers import _streaming as _langchain_streaming

from ...events import (
    ModelMessageEvent,
    ModelStopReason,
    ModelStreamEvent,
    TextDeltaEvent,
    ToolUseDeltaEvent,
    TypedEvent,
)
from ...host._model_call import ModelStagePoint
from ...host._model_stream import MessageBuilder
from ...stages._invoke_model import InvokeModelContext
from ._model_events import ConverseChunks, response_of, stop_reason_in
from ._model_reply import WHOLE_WHEN_ASKED
from ._models import LibraryChatModel

__all__ = ["asked_whole", "reply_events", "whole_call"]

# What LangChain takes for a handler wanting the model's tokens: v1 ones match the protocol
# ``_StreamingCallbackHandler`` by their methods; v2 ones inherit a marker class (newer
# LangChain only).
_TAPS = ("tap_output_aiter", "tap_output_iter")
_V2_MARKER: Any = getattr(_langchain_streaming, "_V2StreamingCallbackHandler", None)

# Whether a handler class takes tokens, by class: looked up on every model call.
_TAKES_TOKENS: dict[type, bool] = {}


def _takes_tokens(kind: type) -> bool:
    found = _TAKES_TOKENS.get(kind)
    if found is None:
        found = all(hasattr(kind, name) for name in _TAPS) or (
            _V2_MARKER is not None and issubclass(kind, _V2_MARKER)
        )
        _TAKES_TOKENS[kind] = found
    return found


def asked_whole(request: ModelRequest[Any]) -> bool:
    """Whether LangChain will ask ``request``'s chat model for its reply whole (nothing streams).

    False for this library's own chat model (the relay streams its Converse chunks to handlers)
    and on Python 3.10 (where the relay streams every model to handlers: see
    `WHOLE_WHEN_ASKED`).
    """
    model: Any = request.model
    if not WHOLE_WHEN_ASKED or isinstance(model, LibraryChatModel) or model.callbacks:
        return False
    if "streaming" in model.model_fields_set and getattr(model, "streaming", None) is True:
        return False
    if request.model_settings.get("stream"):
        return False
    config = var_child_runnable_config.get()
    if config is None:
        return False
    callbacks: Any = config.get("callbacks")
    # The callback manager of the node's run, whose handlers the model's run inherits, or a
    # list of handlers.
    handlers: Any = getattr(callbacks, "handlers", callbacks) or ()
    return not any(_takes_tokens(handler.__class__) for handler in handlers)


def reply_events(response: ModelResponse[Any]) -> list[TypedEvent]:
    """The events of LangChain's reply as one streamed chunk, ending with the `ModelStopReason`.

    The reply is the response's last `AIMessage`: its text, its tool calls (each input the JSON
    of its arguments), its usage; the stop reason is read from its response metadata as for a
    streamed reply (`ConverseChunks.ending`). A reply of text and tool calls that each have an
    id and a name (nearly every reply) is translated here in one pass; any other is fed through
    the checks of `MessageBuilder` (`_checked_events`), which give the same events for these.

    Raises:
        TypeError: The response holds no `AIMessage`.
        ModelStreamError: A tool call has no id or no name.
    """
    ai = next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
    if ai is None:
        raise TypeError(f"LangChain's model call returned no AIMessage: {response!r}")
    content: Any = ai.content
    calls = ai.tool_calls
    if content.__class__ is not str or not all(
        call["id"].__class__ is str and call["id"] and call["name"] for call in calls
    ):
        return _checked_events(ai)
    events: list[TypedEvent] = [ModelStreamEvent({"messageStart": {"role": "assistant"}})]
    blocks: list[Any] = []
    index = 0
    if content:
        blocks.append({"text": content})
        events += (
            ModelStreamEvent({"contentBlockStart": {"contentBlockIndex": 0, "start": {}}}),
            ModelStreamEvent(
                {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": content}}}
            ),
            TextDeltaEvent(content),
            ModelStreamEvent({"contentBlockStop": {"contentBlockIndex": 0}}),
        )
        index = 1
    for call in calls:
        tool_use_id: Any = call["id"]  # a str: checked above
        name = call["name"]
        fragment = json.dumps(call["args"])
        # The input parsed from its JSON, as from a stream: a copy handlers may change.
        blocks.append(
            {"toolUse": {"toolUseId": tool_use_id, "name": name, "input": json.loads(fragment)}}
        )
        start: Any = {"toolUse": {"toolUseId": tool_use_id, "name": name}}
        delta: Any = {"toolUse": {"input": fragment}}
        events += (
            ModelStreamEvent({"contentBlockStart": {"contentBlockIndex": index, "start": start}}),
            ModelStreamEvent({"contentBlockDelta": {"contentBlockIndex": index, "delta": delta}}),
            ToolUseDeltaEvent(tool_use_id, name, fragment),
            ModelStreamEvent({"contentBlockStop": {"contentBlockIndex": index}}),
        )
        index += 1
    reason: Any = "tool_use" if calls else stop_reason_in(ai.response_metadata)
    counted: Any = ai.usage_metadata or {}
    usage: Any = {
        "inputTokens": counted.get("input_tokens", 0),
        "outputTokens": counted.get("output_tokens", 0),
        "totalTokens": counted.get("total_tokens", 0),
    }
    metrics: Any = {"latencyMs": 0}
    message: Any = {"role": "assistant", "content": blocks}
    events += (
        ModelStreamEvent({"messageStop": {"stopReason": reason}}),
        ModelStreamEvent({"metadata": {"usage": usage, "metrics": metrics}}),
        ModelMessageEvent(message),
        ModelStopReason(reason, message, usage, metrics),
    )
    return events


def _checked_events(ai: AIMessage) -> list[TypedEvent]:
    """`reply_events` for any reply: its chunks translated as a streamed one's, and checked."""
    calls: Any = [
        {"index": index, "id": call["id"], "name": call["name"], "args": json.dumps(call["args"])}
        for index, call in enumerate(ai.tool_calls)
    ]
    translation = ConverseChunks()
    chunks = translation.of_parts(ai.content, ai.usage_metadata, calls)
    chunks += translation.ending(ai.response_metadata)
    builder = MessageBuilder()
    events: list[TypedEvent] = []
    for chunk in chunks:
        delta = builder.feed(chunk)
        events.append(ModelStreamEvent(chunk))
        if delta is not None:
            events.append(delta)
    message_event, stop = builder.ending()
    events.append(message_event)
    events.append(stop)
    return events


async def whole_call(
    point: ModelStagePoint,
    handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    sent: Callable[[InvokeModelContext], ModelRequest[Any]],
) -> ModelResponse[Any]:
    """Run the model stage at ``point`` around LangChain's ``handler``, called with ``sent(ours)``
    (the request with what handlers changed), in this task; LangChain's response for the result.
    """
    produced: dict[int, tuple[ModelStopReason, ModelResponse[Any]]] = {}

    async def terminal(ours: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        response = await handler(sent(ours))
        events = reply_events(response)
        stop: Any = events[-1]
        produced[id(stop)] = (stop, response)
        for event in events:
            yield event

    result = await point.result(terminal)
    return response_of(result, produced)
