"""A model call no one watches: LangChain's handler called in the chain's own task.

When nothing but the agent itself reads the model's reply (`asked_whole`: no callback handler on
the run, so no stream mode showing tokens, no ``astream_events``, no tracer; the model streams
nothing by itself; no structured output; no LangChain middleware inside the bridge around the
model call), LangChain asks the chat model for its reply whole and hands it straight back. The
bridge then calls LangChain's handler from the chain's terminal, with the chat model itself, as
a LangChain middleware does: no relay model, no second task. The terminal turns the reply into
the events of a model streaming it in one chunk (`reply_events`), the same events the relay's
path gives for a reply asked whole, and the answer the agent keeps is the one the relay's path
keeps (`whole_call`): LangChain's own response when the handlers let it through unchanged and
it holds nothing they were not shown, else the reply built from what they let out.

Whatever the relay's path and this one would do differently is what `asked_whole` leaves to
the relay: a callback handler would see the model's own reply here (the relay's run reports
what handlers let out), structured output and LangChain middleware inside the bridge would act
on the model's reply before the handlers instead of after.

`asked_whole` reads two things of LangChain's that it does not publish: the name of the model
node's own handler (`_CALLS_THE_MODEL`) and the way LangChain decides to stream (a model's
``streaming`` field, a ``stream`` setting). ``tests/bridges/test_langchain_whole_call.py``
checks both against LangChain on each way to run an agent.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage
from langchain_core.runnables.config import var_child_runnable_config

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
from ._model_events import (
    ConverseChunks,
    events_fed,
    rebuilt_response,
    response_of,
    stop_reason_in,
)
from ._model_reply import WHOLE_WHEN_ASKED
from ._models import LibraryChatModel
from ._relay_chunks import reply_of
from ._streaming import Relay

__all__ = ["asked_whole", "reply_events", "whole_call"]

# The name of the handler LangChain gives the outermost model-call middleware when no other one
# wraps the model call inside it: the model node's own call (langchain.agents.factory).
_CALLS_THE_MODEL = "._execute_model_async"


def asked_whole(request: ModelRequest[Any], handler: object) -> bool:
    """Whether the model call of ``request`` is one no one watches (see the module's docstring),
    ``handler`` being what LangChain gave the bridge to call it with.

    False for this library's own chat model (the relay streams its Converse chunks to handlers)
    and on Python 3.10 (where the relay streams every model to handlers: see
    `WHOLE_WHEN_ASKED`).
    """
    model: Any = request.model
    if (
        not WHOLE_WHEN_ASKED
        or isinstance(model, LibraryChatModel)
        or model.callbacks
        or model.verbose
        or request.response_format is not None
        or not getattr(handler, "__qualname__", "").endswith(_CALLS_THE_MODEL)
    ):
        return False
    if "streaming" in model.model_fields_set and getattr(model, "streaming", None) is True:
        return False
    if request.model_settings.get("stream"):
        return False
    config = var_child_runnable_config.get()
    if config is None:
        return False
    # The callback manager of the node's run, whose handlers the model's run inherits (a tracer
    # set up from the environment among them), or a list of handlers.
    callbacks: Any = config.get("callbacks")
    handlers: Any = getattr(callbacks, "handlers", callbacks)
    return not handlers


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
    events = events_fed(builder, chunks)
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
    calls: list[_Call] = []
    current: list[_Call] = []

    async def terminal(ours: InvokeModelContext) -> AsyncGenerator[TypedEvent, None]:
        response = await handler(sent(ours))
        events = reply_events(response)
        call = _Call(response, events)
        calls.append(call)
        current[:] = (call,)
        for event in events:
            yield event

    def note(event: TypedEvent) -> None:
        # The deltas the chain let out, noted against the call streaming when they came out.
        if current and (event.__class__ is TextDeltaEvent or event.__class__ is ToolUseDeltaEvent):
            current[0].out.append(event)

    result = await point.result(terminal, note)
    produced = {id(call.stop): (call.stop, call.kept(result)) for call in calls}
    return response_of(result, produced)


class _Call:
    """One call of LangChain's handler: its response, the events handlers were shown, and the
    deltas the chain let out while it streamed (``out``)."""

    __slots__ = ("events", "out", "response", "stop")

    def __init__(self, response: ModelResponse[Any], events: list[TypedEvent]) -> None:
        self.response = response
        self.events = events
        stop: Any = events[-1]
        self.stop: ModelStopReason = stop
        self.out: list[TypedEvent] = []

    def kept(self, result: ModelStopReason) -> ModelResponse[Any]:
        """The answer the agent keeps for this call when ``result`` is the chain's result, as the
        relay's path keeps it: LangChain's response when the chain let out the very deltas it was
        shown and the reply holds nothing it was not shown; else the reply built from the deltas
        let out (text and tool calls only), with ``result``'s usage and stop reason."""
        shown = [e for e in self.events if e.__class__ in _DELTAS]
        ai: Any = self.response.result[-1]
        if (
            len(shown) == len(self.out)
            and all(mine is theirs for mine, theirs in zip(shown, self.out, strict=True))
            and _all_shown(ai)
        ):
            return self.response
        relay = Relay()
        for event in self.out:
            relay.let_out(event)
        metadata = dict(ai.response_metadata)
        rebuilt: Any = reply_of(relay.out, result, metadata)
        rebuilt.id = ai.id
        rebuilt.name = ai.name
        return rebuilt_response(rebuilt, self.response)


_DELTAS = (TextDeltaEvent, ToolUseDeltaEvent)


def _all_shown(ai: Any) -> bool:
    """Whether handlers were shown all of ``ai``: a text, tool calls, nothing else the relay's
    path would drop (content blocks of other kinds, calls that did not parse, provider extras)."""
    return ai.content.__class__ is str and not ai.invalid_tool_calls and not ai.additional_kwargs
