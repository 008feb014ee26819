"""JSON that carries ``bytes``: how values travel to a store and back, never pickled.

Converse data is JSON except for ``bytes`` (images, documents, redacted reasoning), which are
written as ``{"__bytes__": "<base64>"}`` and read back as ``bytes``. Decoding builds nothing but
dicts, lists, strings, numbers, booleans, ``None`` and ``bytes``, so a value read from a shared
store can never run code, whoever wrote it.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, cast

__all__ = ["BYTES_KEY", "dumps", "json_default", "loads"]

BYTES_KEY = "__bytes__"
"""The one key of the object that stands for a ``bytes`` value."""


def json_default(value: object) -> object:
    """The ``default=`` of ``json.dumps``: ``bytes`` become ``{"__bytes__": <base64>}``."""
    if isinstance(value, (bytes, bytearray)):
        return {BYTES_KEY: base64.b64encode(value).decode("ascii")}
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(value: object, *, sort_keys: bool = False) -> bytes:
    """``value`` as compact UTF-8 JSON, ``bytes`` included.

    Raises:
        TypeError: ``value`` holds something JSON cannot encode (the message names its type).
        ValueError: ``value`` holds a circular reference or a non-finite float.
    """
    text = json.dumps(
        value, default=json_default, separators=(",", ":"), sort_keys=sort_keys, allow_nan=False
    )
    return text.encode("utf-8")


def loads(data: bytes) -> Any:
    """The value `dumps` wrote, ``bytes`` restored.

    Raises:
        ValueError: ``data`` is not UTF-8 JSON, or a ``__bytes__`` object is not valid base64.
    """
    return json.loads(data.decode("utf-8"), object_hook=_restore_bytes)


def _restore_bytes(obj: dict[str, Any]) -> object:
    if len(obj) == 1 and BYTES_KEY in obj:
        encoded = cast(object, obj[BYTES_KEY])
        if isinstance(encoded, str):
            try:
                return base64.b64decode(encoded, validate=True)
            except binascii.Error as error:
                raise ValueError(f"invalid base64 in a {BYTES_KEY!r} value: {error}") from error
    return obj
