"""The model call's deltas on LangChain: `RelayChatModel` and the `Relay` between it and the chain.

LangChain calls the model inside ``awrap_model_call``'s handler; this library's chain runs around
that handler. For Wrap handlers to see each delta, and for LangChain to stream what they let
through, the bridge hands LangChain a `RelayChatModel` in place of the model it would call. When
LangChain calls it, the real model's reply reaches the chain's terminal (through the `Relay`)
and the relay streams on the deltas the chain let out meanwhile; LangChain's reply is their
aggregate, the last carrying the usage.

The reply reaches the terminal one of two ways:

* handed over: where the real model can be called itself (its own ``_astream``/``_agenerate``,
  `direct_pieces`), the relay opens its stream and hands the stream to the terminal, which reads
  it in the chain's task. The relay then only waits for deltas to stream: nothing crosses the
  two tasks per chunk but the deltas let out, and a delta let out wakes the relay, which streams
  it as soon as the chain's task waits (on the model's next chunk, or on anything a handler
  awaits) or ends;
* relayed: otherwise (LangChain's own ``astream`` of the model, a model of this library's own),
  the relay reads the stream in LangChain's call, as LangChain would, and passes each chunk to
  the terminal, streaming on the deltas let out after each chunk the chain caught up with, or
  once it is a few hundred chunks ahead.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.base import LanguageModelInput
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import ConfigDict

from ...events import ModelStopReason, TextDeltaEvent, ToolUseDeltaEvent, TypedEvent
from ._model_reply import (
    WHOLE_WHEN_ASKED,
    Spare,
    direct_pieces,
    host_stream,
    library_stream,
    public_pieces,
)
from ._models import LibraryChatModel
from ._relay_chunks import call_chunk, last_chunk, own_closing, reply_of, text_chunk

__all__ = [
    "END",
    "Handed",
    "Relay",
    "RelayChatModel",
    "calling_through",
    "relay_model_of",
]

_T = TypeVar("_T")

END: Any = object()
"""What closes a relay's chunks."""

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


class Handed:
    """The real model's stream, handed to the terminal to read (the first of a relay's chunks
    when the model is called itself): its `ChatGenerationChunk`s, or pieces of their shape."""

    __slots__ = ("stream",)

    def __init__(self, stream: AsyncIterator[Any]) -> None:
        self.stream = stream


# Chunks the relay may send ahead of the chain before it waits for the chain to ask for more:
# the chain still sees each one, and a handler that stops early leaves at most this many unread.
# Waiting on every chunk would cost two task switches a chunk.
_AHEAD = 256


class Relay:
    """One model call's hand-off between the chat model LangChain calls and the chain's terminal.

    Two tasks share it: LangChain's model call (the relay) and the chain's terminal. The relay
    `put`s the model's stream on ``chunks``: handed over whole (`Handed`, then the terminal
    reads it and `fail`s the relay if it fails), or chunk by chunk, sleeping (`sleep`) while
    ``ahead`` of them are unread (the terminal `wake`s it when it wants more). Only the terminal
    ever waits for a chunk, so one future (``_arrived``) is enough to wake it; only the relay
    sleeps, so one future (``_woken``) is enough to wake it too. The relay sleeps until the
    chain lets a delta out (``waiting`` set): the chain's driver wakes it as it notes one
    (`let_out`, `wake_relay`), `settle` and `fail` when the chain is done.

    Attributes:
        abandoned: LangChain's call, once the chain failed with the model's failure on this
            relay: the call ends with that failure, in LangChain's own model run, and is
            cancelled if LangChain asks the model again (a retrying LangChain middleware inside
            the bridge), since the chain reads no other reply.
        chunks: The chat model's chunks on their way to the terminal (``END`` closes them, an
            exception stands for the model call's failure): a `Handed` stream, or its
            `ChatGenerationChunk`s (or pieces of the same shape) one by one, or Converse chunks
            when ``converse`` is set.
        closing: The model's last chunk, noted by the terminal once it has read the whole
            stream (when streamed): the relay hands it LangChain as the call's closing chunk
            where it is the one the relay would build (`own_closing`).
        converse: The chat model is this library's own, which streams Converse chunks.
        failure: What the model's stream the terminal read failed with, for the relay to raise.
        first: The first chunk (`begin` waits for it).
        metadata: The reply's response metadata, kept from each chunk as the terminal reads it.
        spare: Where the terminal keeps the model's own chunks that hold one delta and nothing
            else, by that delta (a text, or a tool call's index, id, name and input fragment),
            for the relay to hand LangChain when the chain let it out unchanged (when streamed).
        out: The deltas the chain let out, not streamed yet: a text, or a tool call's index,
            id and name (on its first) and input fragment.
        reply_id: The id the model gave its reply's chunks (the first it gave), which every
            chunk the relay builds carries too, as the model's own chunks do.
        reply_name: The name the model gave its reply's chunks, carried the same way.
        settled: The chain has its result (or failed): nothing more will come out of it.
        used: The relay has been streamed once (a second call of the model passes through).
        waiting: The relay sleeps until the chain lets a delta out.
    """

    __slots__ = (
        "_arrived",
        "_tools",
        "_woken",
        "abandoned",
        "chunks",
        "closing",
        "converse",
        "failure",
        "first",
        "metadata",
        "out",
        "reply_id",
        "reply_name",
        "settled",
        "spare",
        "stop",
        "used",
        "waiting",
        "woke",
    )

    def __init__(self) -> None:
        # A deque and one future rather than an asyncio.Queue: a chunk already there is taken
        # without a coroutine call, and this hand-off runs on every chunk of the model's reply.
        self.chunks: deque[Any] = deque()
        self.out: list[_Delta] = []
        # Set when the relay is woken (`wake`); the future it sleeps on, while it sleeps.
        self.woke = False
        self._woken: asyncio.Future[None] | None = None
        self.settled = False
        self.used = False
        self.stop: ModelStopReason | None = None
        self._tools: dict[str, int] = {}
        self.first: Any = END
        self.closing: Any = None
        self.converse = False
        self.metadata: dict[str, Any] = {}
        self.reply_id: str | None = None
        self.reply_name: str | None = None
        self.spare: Spare | None = None
        self._arrived: asyncio.Future[None] | None = None
        self.waiting = False
        self.failure: BaseException | None = None
        self.abandoned: asyncio.Future[Any] | None = None

    def put(self, chunk: Any) -> None:
        """Hand a chunk (or ``END``, or the failure) on to the terminal."""
        self.chunks.append(chunk)
        self.wake_terminal()

    def wake_terminal(self) -> None:
        """Wake the terminal if it waits for a chunk (one was added to ``chunks``)."""
        arrived = self._arrived
        if arrived is not None:
            self._arrived = None
            _resolve(arrived)

    async def next(self) -> Any:
        """The next chunk, once there is one, asking the relay for more (it may be waiting,
        `ahead` chunks ahead); a chunk already there is taken without this."""
        self.wake()
        while not self.chunks:
            self._arrived = asyncio.get_running_loop().create_future()
            await self._arrived
        return self.chunks.popleft()

    def wake(self) -> None:
        """Wake the relay if it sleeps (`sleep`), or keep it from sleeping until it next asks."""
        self.woke = True
        woken = self._woken
        if woken is not None:
            self._woken = None
            _resolve(woken)

    async def sleep(self) -> None:
        """Sleep until woken (`wake`) after this call: a wake before it does not count."""
        self.woke = False
        while not self.woke:
            self._woken = asyncio.get_running_loop().create_future()
            await self._woken

    async def begin(self) -> bool:
        """Wait for the model call's first chunk; False when it ended without one."""
        first = await self.next()
        if isinstance(first, BaseException):
            raise first
        self.first = first
        return first is not END

    async def source(self) -> AsyncGenerator[Any, None]:
        """The chunks for the terminal (after `begin`), each once the chain asks for it."""
        yield self.first
        chunks = self.chunks
        while True:
            chunk = chunks.popleft() if chunks else await self.next()
            if chunk is END:
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
            return
        if self.waiting:
            self.wake_relay()

    def wake_relay(self) -> None:
        """Wake the relay waiting for deltas (``waiting``): the chain let one out."""
        self.waiting = False
        self.wake()

    def settle(self) -> None:
        """Nothing more will come out of the chain: the relay may finish."""
        self.settled = True
        self.wake()

    def fail(self, failure: BaseException) -> None:
        """The model's stream the terminal read failed: the relay raises ``failure``."""
        self.failure = failure
        self.wake()

    def close(self) -> None:
        """The model call ended (or never came): the terminal stops waiting for chunks."""
        self.put(END)

    def call_done(self, call: asyncio.Future[Any]) -> None:
        """`close`, as a done callback of LangChain's model call: a call that ends (or fails)
        before it streams through the relay must not leave the terminal waiting. The terminal
        takes it off once the model's stream is handed over, which it then reads itself."""
        self.close()


def _resolve(waited: asyncio.Future[None]) -> None:
    """Wake the one task waiting on ``waited`` (`Relay`'s terminal or relay), unless that task
    was cancelled meanwhile, which cancelled the future."""
    if not waited.done():
        waited.set_result(None)


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
            await _unless_abandoned(relay)
            own = [chunk async for chunk in host_stream(self.inner, messages, kwargs)]
            return generate_from_stream(ChatGenerationChunk(message=each) for each in own)
        relayed = _relayed(self, messages, kwargs, _AHEAD, whole=WHOLE_WHEN_ASKED)
        deltas: list[_Delta] = []
        async for batch in relayed:
            deltas += batch
        message = reply_of(
            deltas,
            relay.stop,
            relay.metadata,
            reply_id=relay.reply_id,
            reply_name=relay.reply_name,
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        relay = self.current_relay()
        if relay.used:  # the model called again inside one call of the chain: no chain for it
            await _unless_abandoned(relay)
            async for own in host_stream(self.inner, messages, kwargs):
                yield ChatGenerationChunk(message=own)
            return
        spare: Spare = {}
        relay.spare = spare
        relayed = _relayed(self, messages, kwargs, _AHEAD, whole=False)
        async for batch in relayed:
            items: list[Any] = batch  # read by class below, not narrowed by isinstance
            for delta in items:
                kept = spare.pop(delta, None)  # the model's own chunk, for a delta unchanged
                if kept is not None:
                    yield kept
                else:
                    build = text_chunk if delta.__class__ is str else call_chunk
                    message = build(delta, relay.reply_id, relay.reply_name)
                    yield ChatGenerationChunk(message=message)
        reply_id, reply_name = relay.reply_id, relay.reply_name
        closing = own_closing(relay.closing, relay.stop, relay.metadata, reply_id, reply_name)
        if closing is None:
            last = last_chunk(
                relay.stop, relay.metadata, "", [], reply_id=reply_id, reply_name=reply_name
            )
            closing = ChatGenerationChunk(message=last)
        yield closing


async def _unless_abandoned(relay: Relay) -> None:
    """Cancel the call asking the model again once the chain has failed with the model's
    failure (`Relay.abandoned`): its reply would reach no one."""
    if relay.abandoned is not None:
        relay.abandoned.cancel()
        await asyncio.sleep(0)  # where the cancellation lands, before the model is asked


async def _relayed(
    model: RelayChatModel,
    messages: list[BaseMessage],
    kwargs: dict[str, Any],
    ahead: int,
    *,
    whole: bool,
) -> AsyncGenerator[list[_Delta], None]:
    """Stream the real model through the chain; yield the deltas the chain let out (in batches:
    those it let out since the last).

    The model's stream is handed to the terminal where the model is called itself (see the
    module's docstring); else its chunks go to the terminal one by one, up to ``ahead`` of them
    before the relay waits for the chain to ask for more. ``whole``: LangChain asked the relay
    for its reply whole, so the real model is asked the same way where it can be.
    """
    relay = model.current_relay()
    relay.used = True
    inner = model.inner
    source: Any = None  # the model's chunks: pieces, or Converse chunks (``relay.converse``)
    if isinstance(inner, LibraryChatModel):
        relay.converse = True
        source = library_stream(inner, messages, kwargs)
    try:
        if source is None:
            direct = await direct_pieces(inner, messages, kwargs, whole)
            if direct is not None:
                relay.put(Handed(direct))
                async for batch in _let_out(relay):
                    yield batch
                return
            source = public_pieces(inner, messages, kwargs)
        chunks = relay.chunks
        piece: Any
        async for piece in source:
            chunks.append(piece)  # `put`, inline: this runs on every chunk
            if relay._arrived is not None:  # pyright: ignore[reportPrivateUsage]
                relay.wake_terminal()
            if len(chunks) >= ahead:
                await relay.sleep()
            elif not relay.out and not relay.settled:
                continue
            # What the chain let out while the model was being read (a model waiting on its
            # connection lets the chain run) streams on at once.
            if relay.out:
                yield _drain(relay)
            if relay.settled:
                break
    except Exception as failure:
        relay.put(failure)
        raise
    finally:
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()
    relay.close()
    while not relay.settled:
        await relay.sleep()
    if relay.out:
        yield _drain(relay)


async def _let_out(relay: Relay) -> AsyncGenerator[list[_Delta], None]:
    """The deltas the chain lets out while the terminal reads the handed stream, in batches,
    until the chain settles (or the stream fails: its failure is raised)."""
    while True:
        if relay.failure is not None:
            raise relay.failure
        if relay.out:
            yield _drain(relay)
            continue
        if relay.settled:
            return
        relay.waiting = True
        await relay.sleep()
        relay.waiting = False


def _drain(relay: Relay) -> list[_Delta]:
    out, relay.out = relay.out, []
    return out


# The relay models in use, by their chat model's id: every bridge calling one chat model shares
# one, so what LangChain derives from a chat model once and keeps on it (its serialization, for
# the callbacks of each call) is derived once, not once per agent. A relay holds its chat model,
# so an id here names one model for as long as the entry lives; entries go with their relays.
_RELAYS: weakref.WeakValueDictionary[int, RelayChatModel] = weakref.WeakValueDictionary()


def relay_model_of(inner: BaseChatModel) -> RelayChatModel:
    """The relay chat model of ``inner``, shared while anything holds it."""
    relay = _RELAYS.get(id(inner))
    if relay is None or relay.inner is not inner:
        relay = _RELAYS[id(inner)] = RelayChatModel(inner=inner)
    return relay
