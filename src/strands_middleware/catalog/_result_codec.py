"""Stage results as bytes and back: how `Cache` keeps a result in a shared store.

A result is written as JSON (`strands_middleware.stores._codec`: ``bytes`` in base64), never
pickled, so what another process wrote can only ever be read back as data. The document names
the result class and holds the event's items::

    {"result": 1, "class": "ModelStopReason", "items": {"stop": [...], ...}}

Only the two stage results can be read back, rebuilt through their own constructors: a
`ModelStopReason` from its ``stop`` tuple, a `ToolResultEvent` from its ``tool_result`` (with no
exception: a result with one is never cached). Any other items of the event come back as they
were written (tuples as lists, as JSON has them).
"""

from __future__ import annotations

from typing import Any, cast

from ..events import ModelStopReason, ToolResultEvent, TypedEvent
from ..stores import _codec as codec

__all__ = ["UnreadableResult", "decode_result", "encode_result"]

_FORMAT_KEY = "result"
_FORMAT = 1


class UnreadableResult(ValueError):
    """Stored bytes that are not a result this version of the library wrote."""


def encode_result(result: TypedEvent) -> bytes:
    """``result`` (a `ModelStopReason` or a `ToolResultEvent`) as JSON bytes.

    Raises:
        TypeError: ``result`` is another class, or holds a value JSON cannot encode.
    """
    if not isinstance(result, (ModelStopReason, ToolResultEvent)):
        raise TypeError(
            f"only ModelStopReason and ToolResultEvent results can be stored, got "
            f"{type(result).__name__}"
        )
    # A subclass (a bridge's own view of the result) is stored as the library class it is, so
    # what one host kept is a hit on every other.
    kind = "ModelStopReason" if isinstance(result, ModelStopReason) else "ToolResultEvent"
    document = {_FORMAT_KEY: _FORMAT, "class": kind, "items": dict(result)}
    try:
        return codec.dumps(document)
    except ValueError as error:
        raise TypeError(str(error)) from error


def decode_result(data: bytes, result_type: type[TypedEvent]) -> TypedEvent:
    """The result `encode_result` wrote, as a new ``result_type`` event.

    Raises:
        UnreadableResult: ``data`` is not an encoded ``result_type``.
    """
    try:
        document = cast(object, codec.loads(data))
    except ValueError as error:
        raise UnreadableResult(f"not JSON: {error}") from error
    if not isinstance(document, dict):
        raise UnreadableResult(f"a {type(document).__name__}, not a stored result")
    fields = cast("dict[str, Any]", document)
    if fields.get(_FORMAT_KEY) != _FORMAT or fields.get("class") != result_type.__name__:
        raise UnreadableResult(
            f"not a stored {result_type.__name__} of format {_FORMAT} (got format "
            f"{fields.get(_FORMAT_KEY)!r}, class {fields.get('class')!r})"
        )
    items = cast(object, fields.get("items"))
    if not isinstance(items, dict):
        raise UnreadableResult("its items are not an object")
    values = dict(cast("dict[str, Any]", items))
    try:
        if result_type is ModelStopReason:
            stop_reason, message, usage, metrics = values.pop("stop")
            event: TypedEvent = ModelStopReason(stop_reason, message, usage, metrics)
        else:
            event = ToolResultEvent(values.pop("tool_result"))
    except (KeyError, TypeError, ValueError) as error:
        raise UnreadableResult(f"malformed {result_type.__name__}: {error!r}") from error
    event.update(values)
    return event
