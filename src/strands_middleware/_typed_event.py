"""`TypedEvent`, the base of every event (re-exported by `strands_middleware.events`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from typing_extensions import override

__all__ = ["TypedEvent"]


class TypedEvent(dict[str, Any]):
    """Base of every event the library streams.

    Subclasses store their payload in the dict and expose it through properties. The empty
    ``__slots__`` keeps instances as small and quick to create as plain dicts, which matters
    because a model call creates several events per streamed chunk. For the same reason the
    properties type what they read with an annotated local, not ``typing.cast``: a cast is a
    function call, and handlers read these on every streamed event.

    Args:
        data: Initial keys, for ad-hoc events a host or middleware wants to stream.
    """

    __slots__ = ()

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        if data is None:
            super().__init__()
        else:
            super().__init__(data)

    @property
    def is_interrupt(self) -> bool:
        """Whether this event halts its stage without a result (the interrupt-control protocol).

        The engine checks this on every event instead of importing tool-specific classes, so
        any event, including a host's own, can halt a stage by returning true here.
        """
        return False

    @override
    def __repr__(self) -> str:
        # The class name is the most useful part of an event in a failing assertion or a log
        # line; the plain dict repr would hide it.
        return f"{type(self).__name__}({super().__repr__()})"


# Its public home is `strands_middleware.events` (see `_stream_events`).
TypedEvent.__module__ = "strands_middleware.events"
