"""One SDK model call through the chain: its terminals, and the SDK's own events passed back on.

The terminal of a streamed call reads the model's Responses events and yields this library's
events itself (the Converse chunk of each as a `ModelStreamEvent`, then its delta event), with no
generator between it and the model: a text delta, nearly every event of a stream, costs one
chunk, two events and no step of a message builder. The reply handlers get, and the result
carries, is the model's own ``response.completed`` output in Converse (what the SDK itself takes
a turn's output from), so the deltas need not be gathered into a message.

Each chunk that the model's events were turned into is noted with them, in stream order
(`pending`). When the chain passes that chunk on (the very chunk), those events go to the SDK:
all of them, in order, when handlers pass the stream through, at the cost of one identity test
per chunk. A chunk a handler withheld or replaced never sends its events; once one was withheld,
events repeating a whole item (``*.done``) wait for the result, and are dropped when a handler
changed it (`closing`), so what a guardrail or a redaction held back never reaches the caller.
"""

from __future__ import annotations

import json
import marshal
import time
from collections import deque
from collections.abc import AsyncGenerator, Sequence
from typing import Any, cast

from agents import Model, ModelResponse, Usage
from agents.items import TResponseStreamEvent
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseTextDeltaEvent,
    ResponseUsage,
)

from ...content import ContentBlock, Message, StreamEvent
from ...content import Usage as ConverseUsage
from ...events import (
    ModelMessageEvent,
    ModelStopReason,
    ModelStreamEvent,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolUseDeltaEvent,
    TypedEvent,
)
from ...exceptions import ModelStreamError
from ...host._tool_call import copy_containers
from ._converse import (
    converse_message,
    converse_usage,
    host_output,
    host_usage,
    response_usage,
    stop_reason_of,
)

__all__ = ["ModelRelay", "Noted"]

Noted = list[TResponseStreamEvent] | TResponseStreamEvent
"""The model's events a chunk was made from: one, as it is, or several in a list."""

_NOTHING: list[Any] = []
_NO_COMPLETION = (
    "the OpenAI Agents SDK model's stream ended without a response.completed event; a Model's "
    "stream_response must end with one (the SDK takes a turn's output from it)"
)


def _reply_events(
    blocks: list[ContentBlock],
    stop_reason: str,
    usage: ConverseUsage,
    *,
    start: bool,
    output: Sequence[Any] = (),
) -> list[TypedEvent]:
    """A reply's ``blocks`` as the events a model streaming them makes: each Converse chunk
    (the message's start first when ``start``), followed by its delta event, then its end.

    A tool call's input streams as the arguments text of its function call among ``output``
    (the items the blocks were made of), as the model wrote it, else as its JSON.
    """
    texts = {
        item.call_id: item.arguments
        for item in output
        if item.__class__ is ResponseFunctionToolCall and item.arguments
    }
    events: list[TypedEvent] = []
    if start:
        events.append(ModelStreamEvent({"messageStart": {"role": "assistant"}}))
    for block in blocks:
        if "toolUse" in block:
            use = block["toolUse"]
            tool_id, name, arguments = use["toolUseId"], use["name"], use["input"]
            text = texts.get(tool_id)
            if text is None:
                text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            opened: Any = {"toolUse": {"toolUseId": tool_id, "name": name}}
            events += (
                ModelStreamEvent({"contentBlockStart": {"start": opened}}),
                ModelStreamEvent({"contentBlockDelta": {"delta": {"toolUse": {"input": text}}}}),
                ToolUseDeltaEvent(tool_id, name, text),
            )
        elif "reasoningContent" in block:
            text = block["reasoningContent"].get("reasoningText", {}).get("text", "")
            events += (
                ModelStreamEvent({"contentBlockStart": {"start": {}}}),
                ModelStreamEvent(
                    {"contentBlockDelta": {"delta": {"reasoningContent": {"text": text}}}}
                ),
                ReasoningDeltaEvent(text=text),
            )
        else:
            text = block.get("text", "")
            events += (
                ModelStreamEvent({"contentBlockStart": {"start": {}}}),
                ModelStreamEvent({"contentBlockDelta": {"delta": {"text": text}}}),
                TextDeltaEvent(text),
            )
        events.append(ModelStreamEvent({"contentBlockStop": {}}))
    stop: Any = {"stopReason": stop_reason}
    events += (
        ModelStreamEvent({"messageStop": stop}),
        ModelStreamEvent({"metadata": {"usage": usage, "metrics": {"latencyMs": 0}}}),
    )
    return events


_new_event: Any = dict.__new__
"""An event of a class given, empty: what its class makes before its ``__init__`` runs."""


def _says(
    result: ModelStopReason, stop_reason: str, usage: ConverseUsage, message: Message
) -> bool:
    """Whether ``result`` holds this stop reason, usage and message."""
    return result.stop_reason == stop_reason and result.usage == usage and result.message == message


def _listed(noted: Noted) -> list[TResponseStreamEvent]:
    return noted if isinstance(noted, list) else [noted]


def _sdk_usage(usage: ResponseUsage | None) -> Usage:
    if usage is None:
        return Usage()
    return Usage(
        requests=1,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        input_tokens_details=usage.input_tokens_details,
        output_tokens_details=usage.output_tokens_details,
    )


class ModelRelay:
    """The model's side of one call: the terminals, and what goes back to the SDK.

    A relay made with ``streamed=True`` serves a streamed call (`streamed_events`, `passed`,
    `closing`); one made without serves a call the SDK asks whole (`events`, `response_of`)
    and holds none of a stream's bookkeeping.

    Attributes:
        response: The model's own response, once it answered.
        completed: The model's own ``response.completed`` event, in a streamed call.
        pending: The chunks made from the model's events not passed on yet, each with them.
    """

    __slots__ = (
        "_done",
        "_held",
        "_loose",
        "_result",
        "_shown",
        "_streamed",
        "_tool",
        "completed",
        "kwargs",
        "pending",
        "response",
    )

    def __init__(self, kwargs: dict[str, Any], *, streamed: bool = False) -> None:
        self.kwargs = kwargs
        self.response: ModelResponse | None = None
        self.completed: ResponseCompletedEvent | None = None
        if streamed:  # what only a streamed call's terminal and its way back use
            # A text delta's own event alone, as it is; the others' in a list. Made here (the
            # consumer holds it before the terminal runs), emptied as each model run begins.
            self.pending: deque[tuple[StreamEvent, Noted]] = deque()
            # The rest of a streamed run's bookkeeping is made as each run begins (`_begin`).
            self._loose: list[TResponseStreamEvent]
            self._held: list[TResponseStreamEvent]
            self._streamed: set[int]
            self._done: list[Any]
            self._tool: tuple[str, str]
            self._result: ModelStopReason | None
        # What the handlers were shown of the model's reply, copied (`_noted`).
        self._shown: tuple[str, ConverseUsage, Message] | None = None

    # ---- the terminals -----------------------------------------------------------------------

    async def events(self, model: Model, arguments: tuple[Any, ...]) -> AsyncGenerator[Any, None]:
        """The terminal of a call the SDK asks whole: the model's response as events."""
        response = await model.get_response(*arguments, **self.kwargs)
        message = converse_message(response.output)
        stop_reason = stop_reason_of(message)
        usage = converse_usage(response.usage)
        self._noted(response, stop_reason, usage, message)
        blocks = message["content"]
        for event in _reply_events(blocks, stop_reason, usage, start=True, output=response.output):
            yield event
        yield ModelMessageEvent(message)
        yield ModelStopReason(stop_reason, message, usage, {"latencyMs": 0})

    def _begin(self) -> None:
        """Start a streamed run's bookkeeping anew: a handler that asks the model again gets
        this run's reply, and the SDK this run's events, not an earlier run's."""
        self.pending.clear()
        # The model's events since the last chunk made: they go with the next chunk.
        self._loose = []
        # Events repeating a whole item (``*.done``) once a chunk before them was withheld.
        self._held = []
        # The output items streamed (by index) and finished, and the tool call streaming.
        self._streamed = set()
        self._done = []
        self._tool = ("", "")
        # The result the run ends with, made when the model's response completed.
        self._result = None
        self.response = self.completed = None
        self._shown = None

    def _chunk(self, chunk: StreamEvent) -> ModelStreamEvent:
        """``chunk`` as an event, noted with the model's events since the last chunk."""
        loose = self._loose
        if loose:
            self.pending.append((chunk, loose))
            self._loose = []
        return ModelStreamEvent(chunk)

    async def streamed_events(
        self, model: Model, arguments: tuple[Any, ...]
    ) -> AsyncGenerator[Any, None]:
        """The terminal of a streamed call: the model's events, as they arrive, as events."""
        self._begin()
        stream = aiter(model.stream_response(*arguments, **self.kwargs))
        try:
            # Nothing goes downstream before the model's first event: a model failing at once
            # fails before any event, so a handler may still ask again (Retry does).
            first = await anext(stream, None)
            yield ModelStreamEvent({"messageStart": {"role": "assistant"}})
            if first is None:
                raise ModelStreamError(_NO_COMPLETION)
            made_events, open_block = self._other(first, None)
            for each in made_events:
                yield each
            note = self.pending.append
            new = _new_event
            delta_class, chunk_class, text_class = (
                ResponseTextDeltaEvent,
                ModelStreamEvent,
                TextDeltaEvent,
            )
            event: Any
            async for event in stream:
                # A text delta of the open block is nearly every event: it takes the short
                # path, and its chunk carries it alone (what came before it went with its
                # block's start).
                if event.__class__ is delta_class and event.output_index == open_block:
                    text = event.delta
                    made: StreamEvent = {"contentBlockDelta": {"delta": {"text": text}}}
                    note((made, event))
                    # The two events filled in here rather than by their classes' __init__
                    # (which set the one key each, as here): no Python call per event.
                    chunk_event = new(chunk_class)
                    chunk_event["event"] = made
                    yield chunk_event
                    text_event = new(text_class)
                    text_event["data"] = text
                    yield text_event
                else:
                    made_events, open_block = self._other(event, open_block)
                    for each in made_events:
                        yield each
            if self._result is None:
                raise ModelStreamError(_NO_COMPLETION)
            yield ModelMessageEvent(self._result.message)
            yield self._result
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    def _other(self, event: Any, open_block: int | None) -> tuple[list[TypedEvent], int | None]:
        """The events any model's event but a text delta of the open block makes, and the
        block left open."""
        made: list[TypedEvent] = []
        if isinstance(event, ResponseTextDeltaEvent):
            index = event.output_index
            if index != open_block:
                if open_block is not None:
                    made.append(self._chunk({"contentBlockStop": {}}))
                made.append(self._chunk({"contentBlockStart": {"start": {}}}))
                self._streamed.add(index)
            chunk: StreamEvent = {"contentBlockDelta": {"delta": {"text": event.delta}}}
            self._loose.append(event)
            made += (self._chunk(chunk), TextDeltaEvent(event.delta))
            return made, index
        if isinstance(event, ResponseCompletedEvent) and self.completed is None:
            if open_block is not None:
                made.append(self._chunk({"contentBlockStop": {}}))
            made += self._completed(event)
            return made, None
        self._loose.append(event)
        if isinstance(event, ResponseFunctionCallArgumentsDeltaEvent):
            made.append(
                self._chunk({"contentBlockDelta": {"delta": {"toolUse": {"input": event.delta}}}})
            )
            tool_id, name = self._tool
            made.append(ToolUseDeltaEvent(tool_id, name, event.delta))
        elif isinstance(event, ResponseOutputItemAddedEvent) and isinstance(
            event.item, ResponseFunctionToolCall
        ):
            if open_block is not None:
                made.append(self._chunk({"contentBlockStop": {}}))
            call = event.item
            self._tool = (call.call_id, call.name)
            start: Any = {"toolUse": {"toolUseId": call.call_id, "name": call.name}}
            made.append(self._chunk({"contentBlockStart": {"start": start}}))
            open_block = event.output_index
            self._streamed.add(open_block)
        elif isinstance(event, ResponseOutputItemDoneEvent):
            self._done.append(event.item)
            if open_block is not None:
                made.append(self._chunk({"contentBlockStop": {}}))
                open_block = None
        return made, open_block

    def _completed(self, event: ResponseCompletedEvent) -> list[TypedEvent]:
        """The events of the output items not streamed yet; notes the model's response."""
        # Some backends leave the completed response's output empty, having sent each item in
        # its ``output_item.done`` event; the SDK then takes those, and so does the reply.
        output = list(event.response.output) or self._done
        response = ModelResponse(
            output=output, usage=_sdk_usage(event.response.usage), response_id=event.response.id
        )
        message = converse_message(output)
        stop_reason = stop_reason_of(message)
        usage = converse_usage(response.usage)
        self._noted(response, stop_reason, usage, message)
        self.completed = event
        self._result = ModelStopReason(stop_reason, message, usage, {"latencyMs": 0})
        # The blocks already streamed are in the message; the rest follows.
        rest = [item for index, item in enumerate(output) if index not in self._streamed]
        blocks = converse_message(rest)["content"]
        events = _reply_events(blocks, stop_reason, usage, start=False, output=rest)
        loose = self._loose
        if loose:  # they go with the first chunk made here (there is always one: messageStop)
            self.pending.append((events[0]["event"], loose))
            self._loose = []
        return events

    # ---- the way back ------------------------------------------------------------------------

    def passed(self, chunk: StreamEvent) -> list[TResponseStreamEvent]:
        """The model's events to send now that the chain passed ``chunk`` on, in turn or not."""
        pending = self.pending
        if pending and pending[0][0] is chunk:
            return _listed(pending.popleft()[1])
        return self.passed_late(chunk)

    def passed_late(self, chunk: StreamEvent) -> list[TResponseStreamEvent]:
        """The model's events to send now that the chain passed ``chunk`` on out of turn.

        A chunk before it was withheld (or replaced): an event repeating its whole item (the
        message's full text, a call's full arguments) would show it, so those wait for the
        result (`closing`). A chunk the model's events were never noted with sends nothing.
        """
        pending = self.pending
        for position, (noted, own) in enumerate(pending):
            if noted is chunk:
                del pending[position]
                events = _listed(own)
                if not position:
                    return events
                self._held += [each for each in events if each.type.endswith(".done")]
                return [each for each in events if not each.type.endswith(".done")]
        return _NOTHING

    def _noted(
        self, response: ModelResponse, stop_reason: str, usage: ConverseUsage, message: Message
    ) -> None:
        """Note the model's response, with a copy of the reply handlers get made of it (once
        it is all made: a model run that fails before then leaves no half of it noted), to
        tell a change they make.

        The message is copied by ``marshal``: one C call, where translating the response again
        would cost a Python pass. A value marshal cannot write (a ``str`` subclass in an item a
        model built without validation) has it copied in Python.
        """
        try:
            copied: Message = marshal.loads(marshal.dumps(cast(Any, message)))
        except ValueError:
            copied = copy_containers(message)
        self.response = response
        self._shown = (stop_reason, {**usage}, copied)

    def _unchanged(self, result: ModelStopReason, response: ModelResponse) -> bool:
        """Whether the chain's result is the model's ``response`` as handlers were shown it.

        Once per call, not per event. A result equal to the copy is; one that is not is
        compared with the response translated again, which tells a change from a value unequal
        to itself (a NaN in a tool's arguments: ``json`` gives the one NaN object every time,
        a copy another).
        """
        shown = self._shown
        if shown is not None and _says(result, *shown):
            return True
        message = converse_message(response.output)
        return _says(result, stop_reason_of(message), converse_usage(response.usage), message)

    def response_of(self, result: ModelStopReason) -> ModelResponse:
        """The SDK's response for the chain's result: the model's own when unchanged."""
        response = self.response
        if response is not None and self._unchanged(result, response):
            return response
        return ModelResponse(
            output=host_output(result.message),
            usage=host_usage(result.usage),
            response_id=None if response is None else response.response_id,
        )

    def closing(self, result: ModelStopReason) -> list[TResponseStreamEvent]:
        """What closes a streamed call for the chain's result, ``response.completed`` last.

        The model's own events not sent yet go first when the result is the model's own; when
        a handler changed it, they are dropped, as they may carry what the handler withheld.
        """
        response = self.response
        completed = self.completed
        if response is not None and completed is not None and self._unchanged(result, response):
            rest = [*self._held]
            for _chunk, own in self.pending:
                rest += _listed(own)
            return [*rest, *self._loose, completed]
        return [self._rebuilt(result)]

    def _rebuilt(self, result: ModelStopReason) -> ResponseCompletedEvent:
        """A ``response.completed`` event carrying the chain's result."""
        completed = self.completed
        usage = response_usage(result.usage)
        output: list[Any] = host_output(result.message)
        if completed is not None:
            rebuilt = completed.response.model_copy(update={"output": output, "usage": usage})
            number = completed.sequence_number
        else:
            rebuilt = Response(
                id="resp_middleware",
                created_at=time.time(),
                model="middleware",
                object="response",
                output=output,
                parallel_tool_calls=False,
                tool_choice="auto",
                tools=[],
                status="completed",
                usage=usage,
            )
            number = 0
        return ResponseCompletedEvent(
            type="response.completed", response=rebuilt, sequence_number=number
        )
