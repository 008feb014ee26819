"""A small cache keyed by an object's identity, for objects that cannot be hashed.

A bridge keeps what it makes once per host object it meets: LangChain's chat models (pydantic
models without a hash) get one relay model and one handler view each; the OpenAI Agents SDK's
models and tools (tools are dataclasses without a hash) one wrapped copy each. Each entry holds
the object itself, so its id is not reused while the entry lives; the entry used longest ago is
let go first once ``size`` are held. Safe to share between threads: a miss is made outside the
lock (two threads may make one each; the later one is kept), the insertion and trimming inside
it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["KeptByIdentity"]

_Kept = TypeVar("_Kept")


class KeptByIdentity(Generic[_Kept]):
    """At most ``size`` values, one per owner object, looked up by the owner's identity."""

    __slots__ = ("_entries", "_lock", "_size")

    def __init__(self, size: int) -> None:
        self._entries: OrderedDict[int, tuple[object, _Kept]] = OrderedDict()
        self._lock = threading.Lock()
        self._size = size

    def get(self, owner: object, make: Callable[[], _Kept]) -> _Kept:
        """The value kept for ``owner``, made with ``make`` the first time."""
        entry = self._entries.get(id(owner))
        if entry is not None and entry[0] is owner:
            return entry[1]
        made = make()
        self.keep(owner, made)
        return made

    def find(self, owner: object) -> _Kept | None:
        """The value kept for ``owner``, or None."""
        entry = self._entries.get(id(owner))
        return entry[1] if entry is not None and entry[0] is owner else None

    def keep(self, owner: object, made: _Kept) -> None:
        """Keep ``made`` for ``owner`` (letting the oldest entry go once ``size`` are held)."""
        key = id(owner)
        with self._lock:
            self._entries[key] = (owner, made)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
