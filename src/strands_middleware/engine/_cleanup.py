"""Closing what a chain (or a translated stream) opened, and what leaves after a failure.

One home for the rules both the chain's driver and `Outbound.apply` keep: every opened stream is
closed once, innermost first; a failure while closing never hides the error being handled (it is
logged), and with nothing else propagating the first one is raised by the caller.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .outbound import Outbound

__all__: list[str] = []

_logger = logging.getLogger("strands_middleware")

Opened = list[AsyncIterator[Any]]


async def close_all(opened: Opened) -> BaseException | None:
    """Close every opened stream, innermost (last opened) first; return the first failure."""
    first: BaseException | None = None
    for stream in reversed(opened):
        aclose = getattr(stream, "aclose", None)
        if aclose is None or getattr(stream, "ag_frame", True) is None:
            continue
        try:
            await aclose()
        except BaseException as exc:  # every stream gets closed even if one fails
            if first is None:
                first = exc
            else:
                _logger.error("a further error while closing a middleware chain", exc_info=exc)
    return first


async def after_failure(
    opened: Opened, error: BaseException, outbound: Outbound | None
) -> BaseException:
    """Close what was opened after ``error``; return what to raise: ``error`` or its translation."""
    failure = await close_all(opened)
    if failure is not None:
        _logger.error("error while closing a middleware chain after a failure", exc_info=failure)
    return error if outbound is None else outbound.raised(error)
