"""How a catalog item calls its store: one failure policy for every item that takes one.

* **Taking** (a token, a slot, a count, a cache entry) decides whether the call runs, so a
  failure there is the item's to report. By default it raises `StoreError` naming the item and
  the store and saying how to fail open; with ``on_store_error="allow"`` the call goes ahead
  without the store, and a `StoreWarning` says so.
* **Settling** (giving back a token, releasing a slot, counting what a call spent) never raises:
  it happens once the call ran or stopped, and the call's own outcome (its result, its error,
  its pause for a human) matters more than the bookkeeping. It warns instead; the store frees
  what it holds on its own (a slot's lease runs out).

Control flow (cancellation, an interrupt) passes through untouched: only ``Exception`` is a
store failure.
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Awaitable
from typing import Literal, TypeVar

from ..exceptions import StoreError, StoreWarning
from ._base import OnStoreError

__all__ = ["FAILED_OPEN", "StoreCalls"]

T = TypeVar("T")


class _FailedOpen(enum.Enum):
    FAILED_OPEN = "failed open"


FAILED_OPEN: Literal[_FailedOpen.FAILED_OPEN] = _FailedOpen.FAILED_OPEN
"""What `StoreCalls.take` returns when the store failed and the item lets the call through."""


class StoreCalls:
    """Calls to one item's store under its ``on_store_error`` policy.

    Args:
        item: The item as users wrote it, e.g. ``RateLimit(name='bedrock')``.
        store: The store, named in messages.
        on_error: ``"raise"`` or ``"allow"``.
    """

    __slots__ = ("item", "on_error", "store")

    def __init__(self, item: str, store: object, on_error: OnStoreError) -> None:
        self.item = item
        self.store = store
        self.on_error: OnStoreError = on_error

    async def take(self, operation: Awaitable[T]) -> T | Literal[_FailedOpen.FAILED_OPEN]:
        """The operation's answer, or `FAILED_OPEN` when it failed and the policy allows.

        Raises:
            StoreError: the store failed and the policy is ``"raise"``.
        """
        try:
            return await operation
        except Exception as error:
            detail = self._detail(error)
            if self.on_error == "allow":
                warnings.warn(
                    f"{self.item} let a call through without its store: {detail}",
                    StoreWarning,
                    stacklevel=2,
                )
                return FAILED_OPEN
            raise StoreError(
                f"{self.item} could not use its store: {detail}. To let calls through while the "
                "store is down, pass on_store_error='allow'"
            ) from error

    async def settle(self, operation: Awaitable[object], what: str) -> None:
        """Run a settling operation (``what`` says what it does); a failure warns, never raises."""
        try:
            await operation
        except Exception as error:
            warnings.warn(
                f"{self.item} could not {what}: {self._detail(error)}",
                StoreWarning,
                stacklevel=2,
            )

    def _detail(self, error: Exception) -> str:
        if isinstance(error, StoreError):
            detail = str(error)
        else:
            detail = f"{self.store!r} raised {type(error).__name__}: {error}"
        # Without a closing period: the messages go on after it (redis-py's errors end in one).
        return detail.rstrip(".")
