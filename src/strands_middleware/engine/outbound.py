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

__all__ = ["Outbound"]


def _unchanged(error: BaseException) -> BaseException:
    return error


@dataclass(frozen=True)
class Outbound:
    """The translations a host applies to what leaves a chain.

    Args:
        event: Called with each event the chain yields, in order; what it returns is yielded
            instead, and ``None`` drops the event.
        error: Called with an exception leaving the chain, once every generator of the chain has
            been closed; an exception it returns other than the one it was given is raised
            instead, chained to it (``raise returned from error``).
    """

    event: Callable[[Any], Any]
    error: Callable[[BaseException], BaseException] = _unchanged

    async def apply(self, stream: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
        """``stream`` with these translations applied, for a stream no chain drives.

        The stream is closed when the generator ends, fails or is closed.
        """
        translate = self.event
        try:
            async for event in stream:
                out = translate(event)
                if out is not None:
                    yield out
        except GeneratorExit:
            raise
        except BaseException as error:
            await _aclose(stream)
            mapped = self.error(error)
            if mapped is not error:
                raise mapped from error
            raise
        finally:
            await _aclose(stream)


async def _aclose(stream: AsyncIterator[Any]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()
