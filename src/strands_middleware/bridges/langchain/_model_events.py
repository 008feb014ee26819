"""The chain's side of a relayed model call: the real model's chunks as this library's events.

The relay (`_streaming`) hands the terminal the chat model's own chunks as it reads them. Here,
in the terminal's task, each chunk becomes its Converse chunks and those become the events
handlers see, in one loop: a `ModelStreamEvent` per Converse chunk, the delta event it gives
rise to, and at the end the message and the `ModelStopReason`, as `process_model_stream` yields
them. A chunk holding one more piece of the open text (most chunks of a streamed reply) takes a
short path: its Converse chunk is made and taken into the message without being read again.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Set
from typing import TYPE_CHECKING, Any, cast

from langchain.agents.middleware import ModelResponse
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.utils.utils import LC_AUTO_PREFIX

from ...content import Message, StopReason, StreamEvent
from ...events import (
    ModelMessageEvent,
    ModelStopReason,
    ModelStreamEvent,
    TextDeltaEvent,
    TypedEvent,
)
from ...host._model_stream import MessageBuilder
from ._converse import ai_message, converse_messages
from ._model_reply import Spare
from ._streaming import Handed, Relay

if TYPE_CHECKING:
    import asyncio

__all__ = [
    "STOP_REASON_KEY",
    "ConverseChunks",
    "events_fed",
    "rebuilt_response",
    "relayed_call",
    "response_of",
    "stop_of",
    "stop_reason_in",
]

STOP_REASON_KEY = "stop_reason"
"""Where a stop reason a handler set travels on LangChain: the AIMessage's response_metadata."""

# A chunk that is one piece of text and nothing else: pydantic's record of the fields set on it
# (by its constructor or an assignment since) names its content alone, and none of the default
# containers a model might fill in place after building it was filled. Read on every chunk of a
# reply: the record is one attribute, where comparing every field costs a C call and a tuple.
# Every other attribute read of a pydantic model goes through its ``__getattr__`` hook (about
# 200 machine instructions on CPython 3.11), so the test reads the chunk's class with `type()`
# and its fields from its dict.
_CONTENT_ONLY: Set[str] = frozenset({"content"})  # a set, as pydantic keeps the record


def _only_text(message: Any) -> bool:
    """Whether ``message`` is ``AIMessageChunk(content=its text)`` with a text, nothing else
    set (see `_CONTENT_ONLY`; `relayed_call` runs the same test inline)."""
    fields: dict[str, Any] = message.__dict__
    content = fields["content"]
    return (
        type(message) is AIMessageChunk
        and type(content) is str
        and content != ""
        and message.__pydantic_fields_set__ == _CONTENT_ONLY
        and not fields["response_metadata"]
        and not fields["additional_kwargs"]
        and not fields["tool_call_chunks"]
    )


class ConverseChunks:
    """One reply's chunks as Converse chunks: the blocks opened so far and the usage counted.

    The message starts at the model's first chunk, not before: a model that fails at once has
    streamed nothing, so a handler that retries or falls back on its error sees no output under
    way. Chunks that are not an `AIMessageChunk` are passed over.

    Attributes:
        text_open: A text block is open: the next text-only chunk is one more piece of it.
        index: The open block's Converse index.
    """

    __slots__ = ("_any_tool", "_open_kind", "_started", "_tool_index", "_usage", "index")

    def __init__(self) -> None:
        self._usage: dict[str, int] = {}
        self._open_kind: str | None = None
        self.index = -1
        self._tool_index: Any = None
        self._any_tool = False
        self._started = False

    @property
    def text_open(self) -> bool:
        """Whether a text block is open."""
        return self._open_kind == "text"

    def of(self, chunk: Any) -> list[StreamEvent]:
        """The Converse chunks of one LangChain chunk (its metadata was kept by the relay)."""
        if not isinstance(chunk, AIMessageChunk):
            return []
        return self.of_parts(chunk.content, chunk.usage_metadata, list(chunk.tool_call_chunks))

    def of_parts(self, content: Any, counted: Any, calls: list[Any]) -> list[StreamEvent]:
        """The Converse chunks of a chunk's parts: its content, its usage (or None), and its tool
        calls as LangChain's tool-call chunks (``index``, ``id``, ``name``, ``args`` a string)."""
        out: list[Any] = []
        if not self._started:
            self._started = True
            out.append({"messageStart": {"role": "assistant"}})
        if counted:
            for key, value in counted.items():
                if isinstance(value, int):
                    self._usage[key] = self._usage.get(key, 0) + value
        for text in _texts(content):
            if self._open_kind != "text":
                self._open("text", out)
                out.append({"contentBlockStart": {"contentBlockIndex": self.index, "start": {}}})
            out.append(
                {"contentBlockDelta": {"contentBlockIndex": self.index, "delta": {"text": text}}}
            )
        for call in calls:
            if self._open_kind != "toolUse" or call.get("index") != self._tool_index:
                self._open("toolUse", out)
                self._tool_index = call.get("index")
                self._any_tool = True
                use = {"toolUseId": call.get("id") or "", "name": call.get("name") or ""}
                out.append(
                    {
                        "contentBlockStart": {
                            "contentBlockIndex": self.index,
                            "start": {"toolUse": use},
                        }
                    }
                )
            args = call.get("args")
            if args:
                delta = {"toolUse": {"input": args}}
                out.append({"contentBlockDelta": {"contentBlockIndex": self.index, "delta": delta}})
        return out

    def _open(self, kind: str, out: list[Any]) -> None:
        if self._open_kind is not None:
            out.append({"contentBlockStop": {"contentBlockIndex": self.index}})
        self.index += 1
        self._open_kind = kind

    def ending(self, metadata: dict[str, Any]) -> list[StreamEvent]:
        """The reply's closing chunks: the open block's stop, the stop reason, the usage."""
        out: list[Any] = []
        if not self._started:
            out.append({"messageStart": {"role": "assistant"}})
        if self._open_kind is not None:
            out.append({"contentBlockStop": {"contentBlockIndex": self.index}})
        reason: StopReason = "tool_use" if self._any_tool else stop_reason_in(metadata)
        usage = self._usage
        out.append({"messageStop": {"stopReason": reason}})
        out.append(
            {
                "metadata": {
                    "usage": {
                        "inputTokens": usage.get("input_tokens", 0),
                        "outputTokens": usage.get("output_tokens", 0),
                        "totalTokens": usage.get("total_tokens", 0),
                    },
                    "metrics": {"latencyMs": 0},
                }
            }
        )
        return out


def stop_reason_in(metadata: dict[str, Any]) -> StopReason:
    """The stop reason of a reply without tool calls, read from its response metadata."""
    finish = str(metadata.get("finish_reason") or metadata.get("stop_reason") or "")
    return "max_tokens" if finish in ("length", "max_tokens") else "end_turn"


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content] if content else []
    texts: list[str] = []
    blocks: list[Any] = list(content)
    for block in blocks:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict):
            fields = cast("dict[str, Any]", block)
            if fields.get("type") == "text" and fields.get("text"):
                texts.append(str(fields["text"]))
    return texts


Started = tuple[Relay, "asyncio.Future[ModelResponse[Any]]", list[ModelStopReason]]
"""A LangChain model call under way: its relay, the call, and the results its stream gave."""


async def relayed_call(  # noqa: PLR0915 (one loop on every chunk, written out: a helper is a hop per event)
    start: Callable[[], Started],
    produced: dict[int, tuple[ModelStopReason, ModelResponse[Any]]],
) -> AsyncGenerator[TypedEvent, None]:
    """The terminal's stream: start LangChain's model call (``start``), then yield the events of
    the reply its relay hands over, ending with the `ModelStopReason` (also noted in the call's
    list of results).

    When LangChain answered without calling the model, its reply is the result, noted in
    ``produced`` against the reply.
    """
    started = time.perf_counter()
    relay, call, stops = start()
    if not await relay.begin():  # LangChain answered without calling the model
        for answer in _answered(await call, started, produced):
            yield answer
        return
    builder = MessageBuilder()
    event: Any
    if relay.converse:  # a model of this library's own: its Converse chunks, as they are
        async for event in _library_events(relay, builder, stops):
            yield event
        return
    # The model's chunks are read in this loop, from the stream the relay handed over (or the
    # chunks it relays), and translated here rather than in a generator of their own: two
    # generator hops fewer on every event. The pieces of the open text are kept here and given
    # to the builder as one delta when the block ends (the events still carry each piece): the
    # builder reads every delta it is fed.
    first: Any = relay.first
    handed = first.__class__ is Handed
    if handed:  # the stream is read here: the end of LangChain's call has nothing to close
        call.remove_done_callback(relay.call_done)
    pieces: AsyncIterator[Any] = first.stream if handed else relay.source()
    translation = ConverseChunks()
    text_open, index = False, -1
    texts: list[str] = []
    spare = relay.spare
    metadata = relay.metadata
    piece: Any = None
    new: Any = dict.__new__
    try:
        async for piece in pieces:
            message: Any = piece.message
            info: Any = piece.generation_info
            if info:  # LangChain folds a chunk's generation info into its metadata
                message.response_metadata = {**info, **message.response_metadata}
            # `type()`, not ``__class__``, and the content from the dict: see `_CONTENT_ONLY`.
            fields: dict[str, Any] = message.__dict__
            content: Any = fields["content"]
            if (  # one more piece of the open text: `_only_text`, inline
                text_open
                and type(message) is AIMessageChunk
                and type(content) is str
                and content
                and message.__pydantic_fields_set__ == _CONTENT_ONLY
                and not fields["response_metadata"]
                and not fields["additional_kwargs"]
                and not fields["tool_call_chunks"]
            ):
                if spare is not None and type(piece) is ChatGenerationChunk:
                    spare[content] = piece
                texts.append(content)
                # The two events made as their classes make them, without a call of their
                # ``__init__`` (which sets this one key: tests/test_events.py holds them to it).
                fragment: Any = {"text": content}
                event = new(ModelStreamEvent)
                event["event"] = {
                    "contentBlockDelta": {"contentBlockIndex": index, "delta": fragment}
                }
                yield event
                event = new(TextDeltaEvent)
                event["data"] = content
                yield event
                continue
            if texts:
                _take_text(builder, index, texts)
            if relay.reply_id is None:  # the chunks the relay builds carry the model's id
                relay.reply_id = _model_id(fields.get("id"))
            if relay.reply_name is None:  # and the name it gave them
                relay.reply_name = fields.get("name")
            for event in _piece_events(piece, builder, translation, metadata, spare):
                yield event
            text_open, index = translation.text_open, translation.index
    except Exception as failure:
        if handed:  # LangChain's call of the model fails with it, as it would have
            relay.fail(failure)
        raise
    finally:  # a chain that stops early closes the model's stream (or the relay's chunks)
        aclose = getattr(pieces, "aclose", None)
        if aclose is not None:
            await aclose()
    if spare is not None:  # streamed: the model's last chunk may close LangChain's stream too
        relay.closing = piece
    for closing in _ending(builder, translation, relay.metadata, texts):
        yield closing
    message_event, stop = builder.ending()
    stops.append(stop)
    yield message_event
    yield stop


def _answered(
    response: ModelResponse[Any],
    started: float,
    produced: dict[int, tuple[ModelStopReason, ModelResponse[Any]]],
) -> tuple[ModelMessageEvent, ModelStopReason]:
    """The events of a reply LangChain gave without calling the model (noted in ``produced``)."""
    stop = stop_of(response, int((time.perf_counter() - started) * 1000))
    produced[id(stop)] = (stop, response)
    return ModelMessageEvent(stop.message), stop


def _model_id(given: object) -> str | None:
    """A chunk's id when the model gave it; None for one LangChain made (a run's, ``lc_...``),
    which LangChain gives the relay's own chunks anyway."""
    return given if isinstance(given, str) and not given.startswith(LC_AUTO_PREFIX) else None


def _piece_events(
    piece: Any,
    builder: MessageBuilder,
    translation: ConverseChunks,
    metadata: dict[str, Any],
    spare: Spare | None,
) -> list[TypedEvent]:
    """The events of a chunk other than one more piece of the open text (its response metadata
    kept in ``metadata``; the chunk kept in ``spare`` when it holds one delta only, a text or a
    tool call's)."""
    message: Any = piece.message
    text: Any = message.content  # a str where the chunk is kept: `_only_text`
    kept: Any = message.response_metadata
    if kept and isinstance(message, AIMessageChunk):
        metadata.update(kept)
    if spare is not None and piece.__class__ is ChatGenerationChunk:
        if _only_text(message):
            spare[text] = piece
        else:
            delta = _one_call_delta(message)
            if delta is not None:
                spare[delta] = piece
    return events_fed(builder, translation.of(message))


# The fields set on a chunk holding one tool call's delta: its content (empty) and the call's
# chunk, from which LangChain's validator sets the two lists of parsed calls.
_ONE_CALL: Set[str] = frozenset({"content", "tool_call_chunks", "tool_calls", "invalid_tool_calls"})


def _one_call_delta(message: Any) -> tuple[int, str | None, str | None, str] | None:
    """The delta of a chunk that is one tool call's piece and nothing else, as the relay gets it
    back when the chain lets it out (its index, id, name and input fragment): the relay builds
    an equal chunk for that delta. None for any other chunk.

    The relay numbers a reply's tool calls from 0 as they come and gives the id and name on a
    call's first delta only, so a chunk numbered otherwise, or giving them on a later piece, or
    giving an id the chain's events would not carry as it is, is never looked for: it stays
    unused and the relay builds its chunk, as for a delta a handler changed.
    """
    if type(message) is not AIMessageChunk or not message.__pydantic_fields_set__ <= _ONE_CALL:
        return None
    fields: dict[str, Any] = vars(message)
    calls: Any = fields["tool_call_chunks"]
    if (
        fields["content"] != ""
        or len(calls) != 1
        or fields["response_metadata"]
        or fields["additional_kwargs"]
    ):
        return None
    call: Any = calls[0]
    index, args, name, tool_use_id = (
        call.get("index"),
        call.get("args"),
        call.get("name"),
        call.get("id"),
    )
    if type(index) is not int or type(args) is not str or not args:
        return None
    # As LangChain keeps the call of a chunk the relay builds for this delta (nothing added).
    built = {
        "name": name,
        "args": args,
        "id": tool_use_id,
        "index": index,
        "type": "tool_call_chunk",
    }
    return (index, tool_use_id, name, args) if call == built else None


def events_fed(builder: MessageBuilder, chunks: Iterable[StreamEvent]) -> list[TypedEvent]:
    """The events of Converse ``chunks``, each fed to ``builder``: the chunk's, then its delta's."""
    events: list[TypedEvent] = []
    for chunk in chunks:
        delta = builder.feed(chunk)
        events.append(ModelStreamEvent(chunk))
        if delta is not None:
            events.append(delta)
    return events


def _take_text(builder: MessageBuilder, index: int, texts: list[str]) -> None:
    """Give ``builder`` the pieces of text kept since its last delta, as one delta."""
    builder.feed(
        {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": "".join(texts)}}}
    )
    texts.clear()


def _ending(
    builder: MessageBuilder,
    translation: ConverseChunks,
    metadata: dict[str, Any],
    texts: list[str],
) -> list[TypedEvent]:
    """The events of the reply's closing chunks (the text kept is given to the builder first)."""
    if texts:
        _take_text(builder, translation.index, texts)
    return events_fed(builder, translation.ending(metadata))


async def _library_events(
    relay: Relay, builder: MessageBuilder, stops: list[ModelStopReason]
) -> AsyncGenerator[TypedEvent, None]:
    """The events of a library model's Converse chunks, as `process_model_stream` gives them."""
    async for chunk in relay.source():
        delta = builder.feed(chunk)
        yield ModelStreamEvent(chunk)
        if delta is not None:
            yield delta
    message_event, stop = builder.ending()
    stops.append(stop)
    yield message_event
    yield stop


def stop_of(response: ModelResponse[Any], latency_ms: int) -> ModelStopReason:
    """The result of a reply LangChain gave without calling the model (its last AIMessage)."""
    ai = next(
        (m for m in reversed(response.result) if isinstance(m, AIMessage)),
        None,
    )
    if ai is None:
        raise TypeError(f"LangChain's model call returned no AIMessage: {response!r}")
    message, _ = converse_messages([ai])
    converse: Message = message[0] if message else {"role": "assistant", "content": []}
    usage: Any = ai.usage_metadata or {}
    metadata = ai.response_metadata
    if STOP_REASON_KEY in metadata:  # set by a handler earlier, on this or another host
        stop_reason = str(metadata[STOP_REASON_KEY])
    else:
        stop_reason = "tool_use" if ai.tool_calls else stop_reason_in(metadata)
    return ModelStopReason(
        stop_reason,
        converse,
        {
            "inputTokens": int(usage.get("input_tokens", 0)),
            "outputTokens": int(usage.get("output_tokens", 0)),
            "totalTokens": int(usage.get("total_tokens", 0)),
        },
        {"latencyMs": latency_ms},
    )


def response_of(
    result: ModelStopReason, produced: dict[int, tuple[ModelStopReason, ModelResponse[Any]]]
) -> ModelResponse[Any]:
    """LangChain's response for the chain's result: its own when a handler left it as it was.

    LangChain has no stop reason; one a handler set travels in the message's
    ``response_metadata["stop_reason"]``.
    """
    entry = produced.get(id(result))
    if entry is not None and entry[0] is result:
        return entry[1]
    stop_reason, message, usage, _metrics = result["stop"]
    for stop, response in produced.values():
        if stop.message == message and stop.usage == usage:
            if stop.stop_reason == stop_reason:
                return response  # only the metrics changed: LangChain keeps none
            return ModelResponse(
                result=[_with_stop_reason(m, stop_reason) for m in response.result],
                structured_response=response.structured_response,
            )
    ai = ai_message(message, usage)
    # The reply a handler rebuilt takes the id of the one LangChain streamed for this call, so
    # a UI streaming messages shows the new content in place of the old, not a second answer.
    streamed = [
        m.id
        for _, response in produced.values()
        for m in response.result
        if isinstance(m, AIMessage)
    ]
    if streamed and streamed[-1] is not None:
        ai.id = streamed[-1]
    if stop_reason not in ("end_turn", "tool_use"):
        ai = _with_stop_reason(ai, stop_reason)
    responses = [response for _, response in produced.values()]
    return rebuilt_response(ai, responses[-1] if responses else None)


def rebuilt_response(ai: AIMessage, original: ModelResponse[Any] | None) -> ModelResponse[Any]:
    """The response of a reply a handler rebuilt (``ai``), in place of LangChain's ``original``.

    What LangChain made of the model's tool calls beyond the reply (with a `ToolStrategy`: the
    structured response, and the tool message answering its call or telling the model to try
    again) is kept when ``ai`` makes the same calls (names, ids, arguments): it answers them.
    Otherwise it is left out, as LangChain would not have made it of this reply; a structured
    response LangChain parsed from a reply's text (a `ProviderStrategy`) goes with the text.
    """
    if original is not None and (len(original.result) > 1 or original.structured_response):
        first = original.result[0]
        if isinstance(first, AIMessage) and first.tool_calls and _calls(first) == _calls(ai):
            return ModelResponse(
                result=[ai, *original.result[1:]],
                structured_response=original.structured_response,
            )
    return ModelResponse(result=[ai])


def _calls(message: AIMessage) -> list[tuple[str, str | None, dict[str, Any]]]:
    return [(call["name"], call["id"], call["args"]) for call in message.tool_calls]


def _with_stop_reason(message: Any, stop_reason: str) -> Any:
    if not isinstance(message, AIMessage):
        return message
    metadata = {**message.response_metadata, STOP_REASON_KEY: stop_reason}
    return message.model_copy(update={"response_metadata": metadata})
