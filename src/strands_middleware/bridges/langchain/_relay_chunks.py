"""What the relay chat model streams to LangChain: chunks of the deltas the chain let out.

The relay (`_streaming.RelayChatModel`) hands LangChain the model's own chunk for a delta the
chain let out unchanged (`_model_reply.Spare`), and builds one here for any other: a text's
(`text_chunk`), a tool call's piece (`call_chunk`), and the call's closing chunk, which carries
the result's usage and the reply's response metadata (`last_chunk`), unless the model's own
last chunk is equal to it (`own_closing`). A reply LangChain asks for whole is the deltas
aggregated into one message (`reply_of`). Every chunk built carries the id and name the model
gave its reply.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessageChunk, BaseMessage, message_chunk_to_message
from langchain_core.outputs import ChatGenerationChunk

from ...content import Usage
from ...events import ModelStopReason

__all__ = ["call_chunk", "last_chunk", "own_closing", "reply_of", "text_chunk"]

# The stop reasons LangChain's reply carries no note of: the others travel in its metadata.
_UNNOTED = ("end_turn", "tool_use")


def reply_of(
    deltas: list[Any],
    stop: ModelStopReason | None,
    metadata: dict[str, Any],
    *,
    reply_id: str | None = None,
    reply_name: str | None = None,
) -> BaseMessage:
    """The whole reply the chain let out: its deltas (`Relay.out`'s form) aggregated, with the
    usage and stop reason of ``stop`` (the result the chain let out, if any) and the model's
    id and name for it (if it gave them)."""
    texts = [delta for delta in deltas if isinstance(delta, str)]
    calls: dict[int, dict[str, Any]] = {}
    for delta in deltas:
        if not isinstance(delta, str):
            index, tool_use_id, name, fragment = delta
            call = calls.setdefault(
                index, {"name": name, "args": "", "id": tool_use_id, "index": index}
            )
            call["args"] += fragment
    whole = last_chunk(
        stop,
        metadata,
        "".join(texts),
        list(calls.values()),
        reply_id=reply_id,
        reply_name=reply_name,
    )
    return message_chunk_to_message(whole)


def text_chunk(text: str, reply_id: str | None, reply_name: str | None) -> AIMessageChunk:
    """The chunk streaming a text delta the chain let out (changed, or of no chunk kept)."""
    return AIMessageChunk(content=text, id=reply_id, name=reply_name)


def call_chunk(
    delta: tuple[int, str | None, str | None, str],
    reply_id: str | None,
    reply_name: str | None,
) -> AIMessageChunk:
    """The chunk streaming a tool call's delta the chain let out (`Relay.out`'s form)."""
    index, tool_use_id, name, fragment = delta
    call: Any = {"name": name, "args": fragment, "id": tool_use_id, "index": index}
    return AIMessageChunk(content="", tool_call_chunks=[call], id=reply_id, name=reply_name)


def own_closing(
    piece: Any,
    stop: ModelStopReason | None,
    metadata: dict[str, Any],
    reply_id: str | None,
    reply_name: str | None,
) -> ChatGenerationChunk | None:
    """The model's own last chunk ``piece``, where it equals in every field the closing chunk
    `last_chunk` builds from the chain's result ``stop``: no content, no tool call, marked last,
    the reply's id and name, all of its response metadata (``metadata``), and the result's usage
    (its three counts alone: a provider's token details are not in the result). None otherwise.

    Building that chunk costs two pydantic models on every streamed call; handing on the
    model's own is what a call without the bridge streams.
    """
    if (
        stop is None
        or piece.__class__ is not ChatGenerationChunk
        or stop.stop_reason not in _UNNOTED
    ):
        return None
    fields: dict[str, Any] = piece.__dict__
    message: Any = fields["message"]
    if fields["generation_info"] or type(message) is not AIMessageChunk:
        return None
    own: dict[str, Any] = vars(message)
    same = (
        own["content"] == ""
        and own["chunk_position"] == "last"
        and not own["tool_call_chunks"]
        and not own["tool_calls"]
        and not own["invalid_tool_calls"]
        and not own["additional_kwargs"]
        and own["id"] == reply_id
        and own["name"] == reply_name
        and own["response_metadata"] == metadata
        and own["usage_metadata"] == _usage_metadata(stop.usage)
    )
    return piece if same else None


def last_chunk(
    stop: ModelStopReason | None,
    metadata: dict[str, Any],
    text: str,
    calls: list[Any],
    *,
    reply_id: str | None = None,
    reply_name: str | None = None,
) -> AIMessageChunk:
    """The call's closing chunk (with usage and stop reason), or the whole reply in one."""
    counted: dict[str, Any] = {}  # no usage field at all without a result
    if stop is not None:
        if stop.stop_reason not in _UNNOTED:
            metadata = {**metadata, "stop_reason": stop.stop_reason}
        counted["usage_metadata"] = _usage_metadata(stop.usage)
    return AIMessageChunk(
        content=text,
        tool_call_chunks=calls,
        response_metadata=metadata,
        chunk_position="last",
        id=reply_id,
        name=reply_name,
        **counted,
    )


def _usage_metadata(usage: Usage) -> dict[str, int]:
    """A result's usage as LangChain's ``usage_metadata``."""
    return {
        "input_tokens": int(usage.get("inputTokens", 0)),
        "output_tokens": int(usage.get("outputTokens", 0)),
        "total_tokens": int(usage.get("totalTokens", 0)),
    }
