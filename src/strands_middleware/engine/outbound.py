"""`Outbound`: how a chain's events and errors leave for a host loop that has types of its own.

A bridge runs this library's chain inside a host's agent loop: the chain yields this library's
events, the host expects its own. Translating in a generator of the bridge's around the chain
works, but costs a generator hop on every streamed event, and an event crosses every hop of the
host's loop too. Given to `MiddlewareRegistry.invoke`, an `Outbound` is applied by the chain's
own driver instead, where the event already passes.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from ._chain import translated_stream
from .stage import MiddlewareStage

__all__ = ["Outbound"]


@dataclass(frozen=True)
class Outbound:
    """The translations a host applies to what leaves a chain.

    Example:
        ```python
        outbound = Outbound(to_host_event, to_host_error)
        async for host_event in registry.invoke(stage, context, terminal, outbound=outbound):
            ...
        ```

    Args:
        event_out: Called with each event the chain yields, in order; what it returns is
            yielded instead, and ``None`` drops the event.
        error_out: Called with any exception leaving the chain (`asyncio.CancelledError` and
            one raised by ``event_out`` included), once every generator of the chain has been
            closed. An exception it returns other than the one it was given is raised instead,
            chained to it (``raise returned from error``); the same one or ``None`` lets the
            original go on unchanged. A failure while closing the chain is logged, as without
            an `Outbound`, never handed to it. Not called when the consumer closes the stream.
    """

    event_out: Callable[[Any], Any]
    error_out: Callable[[BaseException], BaseException | None] | None = None

    def raised(self, error: BaseException) -> BaseException:
        """What leaves in place of ``error``: its translation, or ``error`` itself."""
        if self.error_out is None:
            return error
        translated = self.error_out(error)
        return error if translated is None else translated

    def apply(self, stream: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
        """``stream`` with these translations applied, in a generator of its own.

        For a stream no chain driver translates (with Output handlers the driver's stream is
        translated this way too). The stream is closed once, when the generator ends, fails or
        is closed.
        """
        return translated_stream(_STREAM, lambda: stream, self)


_STREAM = MiddlewareStage[Any, Any, Any]("translated stream", result_type=object)
"""The stage `Outbound.apply` names in its errors (a stream that is not an async iterator)."""
