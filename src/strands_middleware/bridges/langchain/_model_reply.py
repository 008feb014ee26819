"""The real chat model's reply, read for the relay as its own LangChain chunks.

Where it can (`_called_directly`), the relay calls the chat model's own ``_astream`` or
``_agenerate`` (the one private seam of the bridge: LangChain's ``astream``/``ainvoke`` around
them would report to callbacks and run the rate limiter a second time); otherwise its public
``astream``, kept out of every stream the caller reads. The chain's terminal turns the chunks
into Converse chunks (`_model_events`); a model of this library's own streams Converse chunks
itself (`library_stream`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from langchain_core.globals import get_llm_cache
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.runnables import Runnable, RunnableBinding
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.constants import TAG_NOSTREAM

from ...content import StreamEvent
from ._models import LibraryChatModel

__all__ = [
    "WHOLE_WHEN_ASKED",
    "Spare",
    "direct_pieces",
    "host_stream",
    "library_stream",
    "public_pieces",
    "reply_pieces",
]

# The model's own chunks that held one delta and nothing else, by that delta in the form the
# relay gets it back (`_streaming._Delta`: a text, or a tool call's index, id, name and input
# fragment): the relay hands LangChain the very chunk for a delta the chain let out unchanged (a
# chunk built afresh would be equal in every field, at the cost of two pydantic models, but for
# the id and name the relay gives its chunks where the model gave them on other chunks of the
# reply: the model's own chunk streams as it would without the bridge).
Spare = dict[str | tuple[int, str | None, str | None, str], ChatGenerationChunk]


def _bound(model: BaseChatModel, kwargs: dict[str, Any]) -> Runnable[LanguageModelInput, Any]:
    rest = {k: v for k, v in kwargs.items() if k not in ("bound_tools", "bound_tool_choice")}
    tools = kwargs.get("bound_tools")
    if tools:
        return model.bind_tools(tools, tool_choice=kwargs.get("bound_tool_choice"), **rest)
    return model.bind(**rest) if rest else model


# On 3.10 LangChain asks for a whole reply even under astream (tasks copy no context): stream it.
WHOLE_WHEN_ASKED = sys.version_info >= (3, 11)

# What LangChain's streaming takes out of the call's keywords before it calls ``_astream``.
_NOT_SENT = ("ls_structured_output_format", "structured_output_format")


def _called_directly(model: BaseChatModel, whole: bool) -> str | None:
    """How the relay may call ``model`` itself: ``"_astream"``, ``"_agenerate"`` or None.

    LangChain's own call would report to callbacks (the relay's run already did), wait for the
    rate limiter (done here), read a cache or rewrite the reply: a model with callbacks, a cache
    or rewriting goes through it (None). ``whole``: the reply was asked for whole."""
    kind = type(model)
    if (
        model.callbacks
        or model.verbose
        or getattr(model, "output_version", None) == "v1"
        or (whole and model.disable_streaming is True)
    ):
        return None
    streams = (
        kind._astream is not BaseChatModel._astream  # pyright: ignore[reportPrivateUsage]
        and not model.disable_streaming
    )
    always_streams = "streaming" in model.model_fields_set and getattr(model, "streaming", None)
    if streams and (not whole or always_streams is True):
        return "_astream"
    cached = model.cache is not False and (model.cache is not None or get_llm_cache() is not None)
    if not whole or cached:
        return None
    return "_agenerate"


async def direct_pieces(
    model: BaseChatModel, messages: list[BaseMessage], kwargs: dict[str, Any], whole: bool
) -> AsyncIterator[Any] | None:
    """The real model's reply from its own ``_astream``/``_agenerate`` (`_called_directly`), as
    `ChatGenerationChunk`s (or `_Piece`s of the same shape).

    The messages are what LangChain's call of the relay already normalised; the keywords are
    those the model's own ``bind_tools`` binds. None when the model cannot be called this way.
    """
    how = _called_directly(model, whole)
    if how is None:
        return None
    bound = _bound(model, kwargs)
    sent: dict[str, Any]
    if bound is model:
        sent = {}
    elif (
        isinstance(bound, RunnableBinding)
        and bound.bound is model
        and not bound.config
        and not bound.config_factories
    ):
        sent = {k: v for k, v in bound.kwargs.items() if k not in _NOT_SENT}
    else:
        return None
    if model.rate_limiter is not None:
        await model.rate_limiter.aacquire(blocking=True)
    if how == "_agenerate":
        return _own_reply(model, messages, sent)
    # The model's own stream itself, not a generator around it: one hop fewer on every chunk.
    streamed: AsyncIterator[ChatGenerationChunk] = model._astream(  # pyright: ignore[reportPrivateUsage]
        messages, stop=None, **sent
    )
    return streamed


class _Piece:
    """A chunk of the reply with no generation info: a `ChatGenerationChunk`'s shape, unbuilt."""

    __slots__ = ("message",)

    generation_info = None

    def __init__(self, message: Any) -> None:
        self.message = message


async def _own_reply(model: BaseChatModel, messages: Any, sent: Any) -> AsyncGenerator[Any, None]:
    result = await model._agenerate(messages, stop=None, **sent)  # pyright: ignore[reportPrivateUsage]
    generation = result.generations[0]
    message = generation.message
    metadata = {**(generation.generation_info or {}), **message.response_metadata}
    if not isinstance(message, AIMessage):
        raise TypeError(f"the chat model answered with {type(message).__name__}, not AIMessage")
    calls: Any = [
        {"name": call["name"], "args": json.dumps(call["args"]), "id": call["id"], "index": index}
        for index, call in enumerate(message.tool_calls)
    ]
    yield _Piece(
        AIMessageChunk(
            content=message.content,
            tool_call_chunks=calls,
            usage_metadata=message.usage_metadata,
            response_metadata=metadata,
            id=message.id,
            name=message.name,
        )
    )


async def reply_pieces(
    model: BaseChatModel, messages: list[BaseMessage], kwargs: dict[str, Any], whole: bool
) -> AsyncIterator[Any]:
    """The real model's reply as `ChatGenerationChunk`s (or `_Piece`s), kept out of every stream
    the caller reads (the relay's go): called directly (`direct_pieces`) it reports to no
    callbacks; otherwise the tag keeps them out of LangGraph's message stream and no inherited
    callbacks out of ``astream_events``, where the caller would see chunks a handler withheld."""
    direct = await direct_pieces(model, messages, kwargs, whole)
    return direct if direct is not None else public_pieces(model, messages, kwargs)


async def host_stream(
    model: BaseChatModel, messages: list[BaseMessage], kwargs: dict[str, Any]
) -> AsyncGenerator[AIMessageChunk, None]:
    """The real model's own chunks (see `reply_pieces`), with their generation info folded in."""
    async for piece in await reply_pieces(model, messages, kwargs, whole=False):
        message = _message_of(piece)
        if message is not None:
            yield message


def _message_of(piece: Any) -> AIMessageChunk | None:
    message = piece.message
    info = piece.generation_info
    if info:  # LangChain folds a chunk's generation info into its metadata
        message.response_metadata = {**info, **message.response_metadata}
    return message if isinstance(message, AIMessageChunk) else None


async def public_pieces(
    model: BaseChatModel, messages: list[BaseMessage], kwargs: dict[str, Any]
) -> AsyncGenerator[_Piece, None]:
    """The real model's reply through LangChain's own ``astream`` of it, kept out of every
    stream the caller reads (the tag out of LangGraph's message stream, no inherited callbacks
    out of ``astream_events``): for a model `direct_pieces` cannot call itself."""
    config: Any = {"tags": [TAG_NOSTREAM], "callbacks": []}
    async for chunk in _bound(model, kwargs).astream(messages, config):
        if isinstance(chunk, AIMessageChunk):
            yield _Piece(chunk)
        elif isinstance(chunk, AIMessage):  # pragma: no cover - chat models stream chunks
            yield _Piece(AIMessageChunk(**chunk.model_dump(exclude={"type"})))


def library_stream(
    model: LibraryChatModel, messages: list[BaseMessage], kwargs: dict[str, Any]
) -> AsyncGenerator[StreamEvent, None]:
    """The reply of a model of this library's own, as its Converse chunks, unchanged."""
    bound: list[Any] = kwargs.get("bound_tools") or []
    sent: dict[str, Any] = {}
    if bound:
        sent["tools"] = [convert_to_openai_tool(each) for each in bound]
        sent["tool_choice"] = kwargs.get("bound_tool_choice")
    # The model's own stream, not a generator around it: one hop fewer on every chunk.
    return model.stream_converse(messages, sent)
