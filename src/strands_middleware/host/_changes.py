"""What handlers changed in a stage context, derived from the context's own fields.

A bridge sends its host only what the handlers changed, so that what they left alone goes back
as the host's own objects. Which fields there are is read from the context's dataclass fields
(the public ones: a name starting with ``_`` is the host's bookkeeping), so a field added to a
context is covered here without a change.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

__all__ = ["Handed", "public_fields"]

_FIELDS: dict[type, tuple[str, ...]] = {}


def public_fields(context_type: type) -> tuple[str, ...]:
    """The names of a context class's public dataclass fields, in declaration order."""
    names = _FIELDS.get(context_type)
    if names is None:
        names = tuple(
            each.name for each in dataclasses.fields(context_type) if not each.name.startswith("_")
        )
        _FIELDS[context_type] = names
    return names


class Handed:
    """A context as it was handed to handlers: each field's object, and each list's items."""

    __slots__ = ("_items", "_values")

    def __init__(self, context: Any) -> None:
        values: list[tuple[str, object]] = []
        items: dict[str, tuple[object, ...]] = {}
        context_type = cast("type[object]", type(context))
        for name in public_fields(context_type):
            value: object = getattr(context, name)
            values.append((name, value))
            if isinstance(value, list):
                items[name] = tuple(cast("list[object]", value))
        self._values = tuple(values)
        self._items = items

    def changed(self, ours: Any) -> dict[str, Any]:
        """The public fields of ``ours`` that differ from what was handed out, by name.

        A field differs when it holds another object, or a list whose items were changed in
        place (added, removed, replaced: judged by identity, the items being the handed ones).
        """
        changes: dict[str, Any] = {}
        items = self._items
        for name, was in self._values:
            value: object = getattr(ours, name)
            if value is not was:
                changes[name] = value
                continue
            before = items.get(name)
            if before is not None:
                now = cast("list[object]", value)
                if len(now) != len(before) or any(
                    a is not b for a, b in zip(now, before, strict=True)
                ):
                    changes[name] = value
        return changes
