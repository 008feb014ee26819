"""What handlers changed in a stage context, derived from the context's own fields.

A bridge sends its host only what the handlers changed, so that what they left alone goes back
as the host's own objects. Which fields there are is read from the context's dataclass fields
(the public ones: a name starting with ``_`` is the host's bookkeeping), so a field added to a
context is covered here without a change.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
from collections.abc import Callable
from typing import Any, cast

__all__ = ["UNTRACKED", "Handed", "Untracked", "public_fields"]

_FIELDS: dict[type, tuple[str, ...]] = {}
_READERS: dict[type, tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]]] = {}


def public_fields(context_type: type) -> tuple[str, ...]:
    """The names of a context class's public dataclass fields, in declaration order."""
    names = _FIELDS.get(context_type)
    if names is None:
        names = tuple(
            each.name for each in dataclasses.fields(context_type) if not each.name.startswith("_")
        )
        _FIELDS[context_type] = names
    return names


def _reader(context_type: type) -> tuple[tuple[str, ...], Callable[[Any], tuple[Any, ...]]]:
    """A context class's public fields, and a function reading all of them at once (in C).

    A field whose descriptor keeps its value in another attribute (its ``stored_as``: a figure
    made on its first read, ``InvokeModelContext.projected_input_tokens``) is read there, so
    that keeping this record makes nothing a handler did not ask for.
    """
    found = _READERS.get(context_type)
    if found is None:
        names = public_fields(context_type)
        stored = [
            getattr(inspect.getattr_static(context_type, name, None), "stored_as", name)
            for name in names
        ]
        getter: Callable[[Any], Any] = operator.attrgetter(*stored)

        def one(context: Any, /) -> tuple[Any, ...]:
            # attrgetter of one name returns the value itself, not a one-item tuple.
            return (getter(context),)

        read: Callable[[Any], tuple[Any, ...]] = one if len(names) == 1 else getter
        found = (names, read)
        _READERS[context_type] = found
    return found


class Handed:
    """A context as it was handed to handlers: each field's object, and each list's items."""

    __slots__ = ("_items", "_names", "_read", "_values")

    def __init__(self, context: Any) -> None:
        self._names, self._read = _reader(cast("type[object]", type(context)))
        values = self._values = self._read(context)
        self._items: dict[int, tuple[object, ...]] = {
            at: tuple(cast("list[object]", value))
            for at, value in enumerate(values)
            if isinstance(value, list)
        }

    def changed(self, ours: Any) -> dict[str, Any]:
        """The public fields of ``ours`` that differ from what was handed out, by name.

        A field differs when it holds another object, or a list whose items were changed in
        place (added, removed, replaced: judged by identity, the items being the handed ones).
        """
        now = self._read(ours)
        values, items, names = self._values, self._items, self._names
        changes: dict[str, Any] = {}
        if all(map(operator.is_, now, values)):  # the common case: every field's object kept
            for at, before in items.items():
                value = now[at]
                if len(value) != len(before) or not all(map(operator.is_, value, before)):
                    changes[names[at]] = value
            return changes
        for at, value in enumerate(now):
            if value is not values[at]:
                changes[names[at]] = value
                continue
            kept = items.get(at)
            if kept is not None and (
                len(value) != len(kept) or not all(map(operator.is_, value, kept))
            ):
                changes[names[at]] = value
        return changes


class Untracked:
    """What a stage point made with ``tracks_changes=False`` keeps instead of a `Handed`: no
    record at all, so asked what changed it refuses (one object serves every such point)."""

    __slots__ = ()

    def changed(self, ours: Any) -> dict[str, Any]:
        """Refuse: nothing was recorded to compare ``ours`` with.

        Raises:
            RuntimeError: Always.
        """
        raise RuntimeError(
            f"this stage point (for a {type(ours).__name__}) was made with "
            "tracks_changes=False, so it kept no record of what it handed the handlers: make "
            "it with tracks_changes=True (the default) to ask what they changed"
        )


UNTRACKED = Untracked()
"""The record of every stage point made with ``tracks_changes=False``."""
