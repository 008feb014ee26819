"""Closing what a chain opened: the cleanup contract of `._chain` (read its module docstring)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["all_finished", "close_after_failure", "close_all", "close_unfinished"]

_logger = logging.getLogger("strands_middleware")

_Opened = list[AsyncIterator[Any]]


def all_finished(opened: _Opened) -> bool:
    """Whether every opened stream already ran to its end (the common, fully drained case).

    A finished native async generator has no frame left; closing it again would do nothing but
    cost an await per layer on every call.
    """
    # A loop, not all() over a generator expression: this runs at the end of every call.
    for stream in opened:  # noqa: SIM110
        if getattr(stream, "ag_frame", True) is not None:
            return False
    return True


async def close_all(opened: _Opened) -> BaseException | None:
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


async def close_unfinished(opened: _Opened) -> None:
    """Close what has not run to its end, innermost first; raise the first failure to close.

    Where the chain may have been drained (its normal end), callers test `all_finished` first
    and skip this coroutine altogether.
    """
    failure = await close_all(opened)
    if failure is not None:
        raise failure from None


async def close_after_failure(opened: _Opened) -> None:
    """Close what was opened while an error propagates: a failure to close is logged."""
    failure = await close_all(opened)
    if failure is not None:
        _logger.error("error while closing a middleware chain after a failure", exc_info=failure)
