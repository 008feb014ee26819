"""The hot path of the strands bridge: a strands stage's stream, both ways.

Every streamed delta crosses as two events, a raw chunk and its text, so the per-event cost of the
bridge is mostly these two. The two generators below translate them in line, as the tables of
`_translate` do (tests hold them to the same results), which saves a call in each direction on
every event; any other class goes through its table. The chunk and the text are spelled out in
branches of their own, not shared through a key and a class held in variables: each attribute
and item access then only ever sees one class, which keeps CPython's specializing interpreter
on its fast path.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from strands.interrupt import InterruptException as HostInterruptException

from ...events import EventLoopStopEvent, ModelMessageEvent, ModelStopReason
from ...exceptions import InterruptException
from . import _seams as seams
from ._crossing import Crossing
from ._interrupts import interrupt_exception_in, interrupt_exception_out
from ._translate import (
    INBOUND,
    ChunkIn,
    TextIn,
    Translate,
    chunk_out,
    model_stop_in,
    new_chunk,
    new_text,
    text_out,
    translator,
)

__all__ = ["events_in", "events_out"]


async def events_in(
    stream: Any, crossing: Crossing, *, model_call: bool = False
) -> AsyncGenerator[Any, None]:
    """The strands terminal's events as this library's, its interrupts as ours.

    For a model call (``model_call``) the finished message is also announced before the
    result: the reference agent's model stage streams a `ModelMessageEvent` just before its
    `ModelStopReason`, strands announces the message after the stage instead, so it is added
    here for handlers (and `MODEL_OUTBOUND` keeps it from reaching strands twice).
    """
    chunk_class = seams.ModelStreamChunkEvent
    text_class = seams.TextStreamEvent
    lookup = INBOUND.get
    try:
        async for event in stream:
            cls = event.__class__
            if cls is chunk_class:
                value = event["event"]
                chunk = new_chunk()
                chunk["event"] = value
                chunk.host = event
                chunk.value = value
                yield chunk
            elif cls is text_class:
                value = event["data"]
                text = new_text()
                text["data"] = value
                text.host = event
                text.value = value
                yield text
            else:
                translate = lookup(cls) or translator(INBOUND, cls)
                ours = translate(event, crossing)
                if model_call and translate is model_stop_in:
                    yield ModelMessageEvent(ours.message)
                yield ours
    except HostInterruptException as error:
        raise interrupt_exception_in(error) from error
    finally:
        await stream.aclose()


async def events_out(
    chain: AbstractAsyncContextManager[AsyncIterator[Any]],
    table: dict[type, Translate],
    crossing: Crossing,
    missing: Callable[[], Exception] | None = None,
) -> AsyncGenerator[Any, None]:
    """A stage call's chain, run: each event as strands gets it, an interrupt as strands' own.

    ``chain`` is entered here and left before an exception goes on, so everything the chain
    opened is closed by then (`OpenedChain`'s contract). An event whose translation is ``None``
    is not passed back. With ``missing`` (the stage point's), a stream that ended without its
    result raises what it returns.
    """
    lookup = table.get
    results = _RESULTS
    found = False
    try:
        async with chain as stream:
            async for event in stream:
                cls = event.__class__
                if cls is ChunkIn:
                    if event["event"] is event.value:
                        yield event.host
                    else:
                        yield chunk_out(event, crossing)
                elif cls is TextIn:
                    if event["data"] is event.value:
                        yield event.host
                    else:
                        yield text_out(event, crossing)
                else:
                    if isinstance(event, results):
                        found = True
                    back = (lookup(cls) or translator(table, cls))(event, crossing)
                    if back is not None:
                        yield back
    except InterruptException as error:
        raise interrupt_exception_out(error) from error
    if not found and missing is not None:
        raise missing()


# The result events of the stages whose streams `events_out` checks.
_RESULTS = (ModelStopReason, EventLoopStopEvent)
