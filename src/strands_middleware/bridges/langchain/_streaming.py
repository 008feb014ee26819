"""The model call's deltas on LangChain: `RelayChatModel` and the `Relay` between it and the chain.

LangChain calls the model inside ``awrap_model_call``'s handler; this library's chain runs around
that handler. For Wrap handlers to see each delta, and for LangChain to stream what they let
through, the bridge hands LangChain a `RelayChatModel` in place of the model it would call. It
reads the real model (its own ``_astream``/``_agenerate`` where it can: `_called_directly`),
passes each Converse chunk to the chain's terminal (through the `Relay`), and streams on the
deltas the chain let out meanwhile, after each chunk the chain caught up with, or once it is a
few hundred chunks ahead. LangChain's reply is their aggregate, the last carrying the usage.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar, cast

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.globals import get_llm_cache
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LanguageModelInput
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    message_chunk_to_message,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableBinding
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.constants import TAG_NOSTREAM
from pydantic import ConfigDict

from ...content import StopReason, StreamEvent
from ...events import ModelStopReason, TextDeltaEvent, ToolUseDeltaEvent, TypedEvent
from ._models import LibraryChatModel

__all__ = ["Relay", "RelayChatModel", "calling_through"]

_T = TypeVar("_T")

_END: Any = object()

# The relay of the model call a task is making: set around the call's task when it is created.
_CALL_RELAY: ContextVar[Relay | None] = ContextVar("strands_middleware_call_relay", default=None)


def calling_through(relay: Relay, start: Callable[[], _T]) -> _T:
    """``start()``, with ``relay`` as the relay of what it starts (a task copies the context)."""
    token = _CALL_RELAY.set(relay)
    try:
        return start()
    finally:
        _CALL_RELAY.reset(token)


_Delta = str | tuple[int, str | None, str | None, str]

# Chunks the relay may send ahead of the chain before it waits for the chain to ask for more:
# the chain still sees each one, and a handler that stops early leaves at most this many unread.
# Waiting on every chunk would cost two task switches a chunk.
_AHEAD = 256


class Relay:
    """One model call's hand-off between the chat model LangChain calls and the chain's terminal.

    Two tasks share it: LangChain's model call (the relay, which `put`s chunks and waits on
    ``wake`` while ``ahead`` of them are unread) and the chain's terminal (which reads them
    through `source` and sets ``wake`` when it wants more). Only the terminal ever waits for a
    chunk, so one future (``_arrived``) is enough to wake it.

    Attributes:
        chunks: The Converse chunks on their way to the terminal (``_END`` closes them, an
            exception stands for the model call's failure).
        out: The deltas the chain let out, not streamed yet: a text, or a tool call's index,
            id and name (on its first) and input fragment.
        settled: The chain has its result (or failed): nothing more will come out of it.
        used: The relay has been streamed once (a second call of the model passes through).
    """

    __slots__ = (
        "_arrived",
        "_first",
        "_tools",
        "chunks",
        "out",
        "settled",
        "stop",
        "used",
        "wake",
    )

    def __init__(self) -> None:
        # A deque and one future rather than an asyncio.Queue: a chunk already there is taken
        # without a coroutine call, and this hand-off runs on every chunk of the model's reply.
        self.chunks: deque[Any] = deque()
        self.out: list[_Delta] = []
        self.wake = asyncio.Event()
        self.settled = False
        self.used = False
        self.stop: ModelStopReason | None = None
        self._tools: dict[str, int] = {}
        self._first: Any = _END
        self._arrived: asyncio.Future[None] | None = None

    def put(self, chunk: Any) -> None:
        """Hand a chunk (or ``_END``, or the failure) on to the terminal."""
        self.chunks.append(chunk)
        arrived = self._arrived
        if arrived is not None:
            self._arrived = None
            if not arrived.done():  # the waiting terminal may have been cancelled meanwhile
                arrived.set_result(None)

    async def _next(self) -> Any:
        """The next chunk, once there is one (`source` takes one already there without this)."""
        while not self.chunks:
            self._arrived = asyncio.get_running_loop().create_future()
            await self._arrived
        return self.chunks.popleft()

    async def begin(self) -> bool:
        """Wait for the model call's first chunk; False when it ended without one."""
        self.wake.set()
        first = await self._next()
        if isinstance(first, BaseException):
            raise first
        self._first = first
        return first is not _END

    async def source(self) -> AsyncGenerator[StreamEvent, None]:
        """The chunks for the terminal (after `begin`): each sent once the chain asks for it."""
        yield self._first
        chunks = self.chunks
        wake = self.wake
        while True:
            wake.set()
            chunk = chunks.popleft() if chunks else await self._next()
            if chunk is _END:
                return
            if isinstance(chunk, BaseException):
                raise chunk
            yield chunk

    def let_out(self, event: TypedEvent) -> None:
        """Note a delta the chain let out: its text, or its tool call's index, id, name, input."""
        if isinstance(event, TextDeltaEvent):
            self.out.append(event.text)
        elif isinstance(event, ToolUseDeltaEvent):
            index = self._tools.get(event.tool_use_id)
            if index is None:
                index = self._tools[event.tool_use_id] = len(self._tools)
                self.out.append((index, event.tool_use_id, event.name, event.input_fragment))
            else:
                self.out.append((index, None, None, event.input_fragment))
        elif isinstance(event, ModelStopReason):
            self.stop = event
            self.settle()

    def settle(self) -> None:
        """Nothing more will come out of the chain: the relay may finish."""
        self.settled = True
        self.wake.set()

    def close(self) -> None:
        """The model call ended (or never came): the terminal stops waiting for chunks."""
        self.put(_END)


class RelayChatModel(BaseChatModel):
    """The chat model LangChain calls on a bridged model call: the real one, through the chain.

    One is made per chat model and kept (building a LangChain chat model, and what LangChain
    derives from it on each call, costs more than the rest of a bridged call); each call's
    `Relay` reaches it through the context of the task making the call (`calling_through`).

    Attributes:
        inner: The chat model that answers.
        relay: A relay that serves every call of this model, when given (else the call's own).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    relay: Any = None

    def current_relay(self) -> Relay:
        """The relay of the call in progress."""
        relay: Relay | None = self.relay if self.relay is not None else _CALL_RELAY.get()
        if relay is None:
            raise RuntimeError(
                "RelayChatModel was called outside a bridged model call: it only streams "
                "through LangChainBridge's chain (give create_agent the chat model itself)"
            )
        return relay

    @property
    def _llm_type(self) -> str:
        return "strands-middleware-relay"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """The relay, with the tools passed on to the real model's own ``bind_tools``."""
        return self.bind(bound_tools=list(tools), bound_tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:  # pragma: no cover - LangChain's agents call models asynchronously
        raise NotImplementedError("the bridge's model call runs asynchronously only")

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        relay = self.current_relay()
        if relay.used:  # the model called again inside one call of the chain: no chain for it
            own = [chunk async for chunk in _host_stream(self.inner, messages, kwargs)]
            return generate_from_stream(ChatGenerationChunk(message=each) for each in own)
        metadata: dict[str, Any] = {}
        relayed = _relayed(self, messages, kwargs, metadata, _AHEAD, whole=_WHOLE_WHEN_ASKED)
        deltas = [delta async for delta in relayed]
        texts = [delta for delta in deltas if isinstance(delta, str)]
        calls: dict[int, dict[str, Any]] = {}
        for delta in deltas:
            if not isinstance(delta, str):
                index, tool_use_id, name, fragment = delta
                call = calls.setdefault(
                    index, {"name": name, "args": "", "id": tool_use_id, "index": index}
                )
                call["args"] += fragment
        whole = _last_chunk(relay.stop, metadata, "".join(texts), list(calls.values()))
        return ChatResult(generations=[ChatGeneration(message=message_chunk_to_message(whole))])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        relay = self.current_relay()
        if relay.used:  # the model called again inside one call of the chain: no chain for it
            async for own in _host_stream(self.inner, messages, kwargs):
                yield ChatGenerationChunk(message=own)
            return
        metadata: dict[str, Any] = {}
        async for delta in _relayed(self, messages, kwargs, metadata, _AHEAD, whole=False):
            if isinstance(delta, str):
                yield ChatGenerationChunk(message=AIMessageChunk(content=delta))
            else:
                index, tool_use_id, name, fragment = delta
                call: Any = {"name": name, "args": fragment, "id": tool_use_id, "index": index}
                yield ChatGenerationChunk(
                    message=AIMessageChunk(content="", tool_call_chunks=[call])
                )
        yield ChatGenerationChunk(message=_last_chunk(relay.stop, metadata, "", []))


async def _relayed(
    model: RelayChatModel,
    messages: list[BaseMessage],
    kwargs: dict[str, Any],
    metadata: dict[str, Any],
    ahead: int,
    *,
    whole: bool,
) -> AsyncGenerator[_Delta, None]:
    """Stream the real model through the chain; yield the deltas the chain let out.

    Up to ``ahead`` chunks go to the chain before the relay waits for it to ask for more.
    ``whole``: LangChain asked the relay for its reply whole, so the real model is asked the
    same way where it can be (see `_direct_stream`).
    """
    relay = model.current_relay()
    relay.used = True
    source = _converse_stream(model.inner, messages, kwargs, metadata, whole)
    try:
        chunks = relay.chunks
        async for chunk in source:
            relay.put(chunk)
            if len(chunks) >= ahead:
                relay.wake.clear()
                await relay.wake.wait()
            elif not relay.out and not relay.settled:
                continue
            # What the chain let out while the model was being read (a model waiting on its
            # connection lets the chain run) streams on at once.
            for out in _drain(relay):
                yield out
            if relay.settled:
                break
    except Exception as failure:
        relay.put(failure)
        raise
    finally:
        await source.aclose()
    relay.close()
    while not relay.settled:
        relay.wake.clear()
        await relay.wake.wait()
    for out in _drain(relay):
        yield out


def _drain(relay: Relay) -> list[_Delta]:
    out, relay.out = relay.out, []
    return out


def _last_chunk(
    stop: ModelStopReason | None, metadata: dict[str, Any], text: str, calls: list[Any]
) -> AIMessageChunk:
    """The call's closing chunk (with usage and stop reason), or the whole reply in one."""
    if stop is None:
        return AIMessageChunk(
            content=text, tool_call_chunks=calls, response_metadata=metadata, chunk_position="last"
        )
    usage = stop.usage
    if stop.stop_reason not in ("end_turn", "tool_use"):
        metadata = {**metadata, "stop_reason": stop.stop_reason}
    counted: Any = {
        "input_tokens": int(usage.get("inputTokens", 0)),
        "output_tokens": int(usage.get("outputTokens", 0)),
        "total_tokens": int(usage.get("totalTokens", 0)),
    }
    return AIMessageChunk(
        content=text,
        tool_call_chunks=calls,
        usage_metadata=counted,
        response_metadata=metadata,
        chunk_position="last",
    )


def _bound(model: BaseChatModel, kwargs: dict[str, Any]) -> Runnable[LanguageModelInput, Any]:
    rest = {k: v for k, v in kwargs.items() if k not in ("bound_tools", "bound_tool_choice")}
    tools = kwargs.get("bound_tools")
    if tools:
        return model.bind_tools(tools, tool_choice=kwargs.get("bound_tool_choice"), **rest)
    return model.bind(**rest) if rest else model


# On 3.10 LangChain asks for a whole reply even under astream (tasks copy no context): stream it.
_WHOLE_WHEN_ASKED = sys.version_info >= (3, 11)

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


async def _direct_stream(
    model: BaseChatModel, messages: list[BaseMessage], kwargs: dict[str, Any], whole: bool
) -> AsyncGenerator[AIMessageChunk, None] | None:
    """The real model's reply from its own ``_astream``/``_agenerate`` (`_called_directly`).

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
    return _own_chunks(model, messages, sent)


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
    yield AIMessageChunk(
        content=message.content,
        tool_call_chunks=calls,
        usage_metadata=message.usage_metadata,
        response_metadata=metadata,
        id=message.id,
    )


async def _own_chunks(model: BaseChatModel, messages: Any, sent: Any) -> AsyncGenerator[Any, None]:
    streamed: AsyncIterator[ChatGenerationChunk] = model._astream(  # pyright: ignore[reportPrivateUsage]
        messages, stop=None, **sent
    )
    async for generation in streamed:
        message = generation.message
        info = generation.generation_info
        if info:  # LangChain folds a chunk's generation info into its metadata
            message.response_metadata = {**info, **message.response_metadata}
        if isinstance(message, AIMessageChunk):
            yield message


async def _host_stream(
    model: BaseChatModel,
    messages: list[BaseMessage],
    kwargs: dict[str, Any],
    *,
    whole: bool = False,
) -> AsyncGenerator[AIMessageChunk, None]:
    """The real model's own chunks, kept out of every stream the caller reads (the relay's go):
    called directly (`_direct_stream`) it reports to no callbacks; otherwise the tag keeps them
    out of LangGraph's message stream and no inherited callbacks out of ``astream_events``,
    where the caller would see chunks a handler withheld."""
    direct = await _direct_stream(model, messages, kwargs, whole)
    if direct is not None:
        async for chunk in direct:
            yield chunk
        return
    config: Any = {"tags": [TAG_NOSTREAM], "callbacks": []}
    async for chunk in _bound(model, kwargs).astream(messages, config):
        if isinstance(chunk, AIMessageChunk):
            yield chunk
        elif isinstance(chunk, AIMessage):  # pragma: no cover - chat models stream chunks
            yield AIMessageChunk(**chunk.model_dump(exclude={"type"}))


def _converse_stream(
    model: BaseChatModel,
    messages: list[BaseMessage],
    kwargs: dict[str, Any],
    metadata: dict[str, Any],
    whole: bool,
) -> AsyncGenerator[StreamEvent, None]:
    """The real model's reply as Converse chunks (a model of this library's own, unchanged)."""
    if isinstance(model, LibraryChatModel):
        bound: list[Any] = kwargs.get("bound_tools") or []
        sent: dict[str, Any] = {}
        if bound:
            sent["tools"] = [convert_to_openai_tool(each) for each in bound]
            sent["tool_choice"] = kwargs.get("bound_tool_choice")
        # The model's own stream, not a generator around it: one hop fewer on every chunk.
        return model.stream_converse(messages, sent)
    return _host_converse(model, messages, kwargs, metadata, whole)


async def _host_converse(
    model: BaseChatModel,
    messages: list[BaseMessage],
    kwargs: dict[str, Any],
    metadata: dict[str, Any],
    whole: bool,
) -> AsyncGenerator[StreamEvent, None]:
    """A LangChain chat model's chunks as Converse chunks; its metadata is kept in ``metadata``.

    The message starts once the model has produced its first chunk, not before: a model that
    fails at once has streamed nothing, so a handler that retries or falls back on its error
    sees no output under way.
    """
    usage: dict[str, int] = {}
    open_kind: str | None = None
    index = -1
    tool_index: Any = None
    any_tool = False
    started = False
    async for chunk in _host_stream(model, messages, kwargs, whole=whole):
        if not started:
            started = True
            yield {"messageStart": {"role": "assistant"}}
        metadata.update(chunk.response_metadata)
        counted: Any = chunk.usage_metadata or {}
        if counted:
            for key, value in counted.items():
                if isinstance(value, int):
                    usage[key] = usage.get(key, 0) + value
        for text in _texts(chunk.content):
            if open_kind != "text":
                if open_kind is not None:
                    yield {"contentBlockStop": {"contentBlockIndex": index}}
                index += 1
                open_kind = "text"
                yield {"contentBlockStart": {"contentBlockIndex": index, "start": {}}}
            yield {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": text}}}
        calls: list[Any] = list(chunk.tool_call_chunks)
        for call in calls:
            if open_kind != "toolUse" or call.get("index") != tool_index:
                if open_kind is not None:
                    yield {"contentBlockStop": {"contentBlockIndex": index}}
                index += 1
                open_kind = "toolUse"
                tool_index = call.get("index")
                any_tool = True
                yield {
                    "contentBlockStart": {
                        "contentBlockIndex": index,
                        "start": {
                            "toolUse": {
                                "toolUseId": call.get("id") or "",
                                "name": call.get("name") or "",
                            }
                        },
                    }
                }
            args = call.get("args")
            if args:
                yield {
                    "contentBlockDelta": {
                        "contentBlockIndex": index,
                        "delta": {"toolUse": {"input": args}},
                    }
                }
    if not started:
        yield {"messageStart": {"role": "assistant"}}
    if open_kind is not None:
        yield {"contentBlockStop": {"contentBlockIndex": index}}
    finish = str(metadata.get("finish_reason") or metadata.get("stop_reason") or "")
    reason: StopReason = "max_tokens" if finish in ("length", "max_tokens") else "end_turn"
    if any_tool:
        reason = "tool_use"
    yield {"messageStop": {"stopReason": reason}}
    yield {
        "metadata": {
            "usage": {
                "inputTokens": usage.get("input_tokens", 0),
                "outputTokens": usage.get("output_tokens", 0),
                "totalTokens": usage.get("total_tokens", 0),
            },
            "metrics": {"latencyMs": 0},
        }
    }


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
