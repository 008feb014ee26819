"""A least-recently-used map whose entries expire: the in-process cache behind `Cache`."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["ExpiringLru"]

V = TypeVar("V")


class ExpiringLru(Generic[V]):
    """At most ``max_entries`` values, least recently used out first, each with its own TTL.

    Expired entries are dropped when they are read, or evicted like any other entry.
    """

    __slots__ = ("_clock", "_entries", "max_entries")

    def __init__(self, max_entries: int, clock: Callable[[], float]) -> None:
        self.max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[V, float | None]] = OrderedDict()

    def get(self, key: str) -> V | None:
        """The live value under ``key`` (now the most recently used), or ``None``."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        value, expires = entry
        if expires is not None and self._clock() >= expires:
            self._entries.pop(key, None)
            return None
        self._entries.move_to_end(key)
        return value

    def set(self, key: str, value: V, ttl: float | None) -> None:
        """Store ``value``, evicting the least recently used entries beyond ``max_entries``."""
        expires = None if ttl is None else self._clock() + ttl
        self._entries[key] = (value, expires)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
