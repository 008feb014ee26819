"""Converse views of strands' request data, and the way back.

strands-agents keeps host-only keys in the dicts it hands middleware: every history message has
a ``tracking_id`` and assistant turns a ``metadata`` dict (usage of the call that produced
them), and a tool spec may carry ``outputSchema`` or MCP ``annotations``. The model never
receives the message keys (strands sends ``role`` and ``content`` only), so handlers must not
see them either: a cache key, a log line or a comparison would differ on every request.

Handlers get *views*: a new dict holding only this library's Converse keys, sharing their
values (a message's ``content`` list is the very list strands holds, so an in-place edit of a
block reaches strands as it would on the reference agent). On the way back a view the handler
left unchanged becomes the host's own dict again, keys and all; a changed view keeps the host's
extra keys with the handler's Converse values; anything new goes to strands as it is (a
Converse dict is a valid strands one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

__all__ = [
    "MESSAGE_KEYS",
    "TOOL_SPEC_KEYS",
    "converse_items",
    "converse_system_prompt",
    "host_item",
    "host_items",
    "host_system_prompt",
    "view",
]

MESSAGE_KEYS = ("role", "content")
"""What the model receives of a message."""

TOOL_SPEC_KEYS = ("name", "description", "inputSchema")
"""A tool spec in this library's Converse shape."""

_MISSING = object()


def view(item: Any, keys: tuple[str, ...]) -> Any:
    """A new dict with only ``keys`` of ``item`` (those it has), sharing their values."""
    if keys is MESSAGE_KEYS and "role" in item and "content" in item:
        # Every message of every model call takes this path: spelled out, it is several
        # times quicker than the loop below.
        return {"role": item["role"], "content": item["content"]}
    shown: dict[str, Any] = {}
    for key in keys:
        value = item.get(key, _MISSING)
        if value is not _MISSING:
            shown[key] = value
    return shown


def converse_items(items: Sequence[Any], keys: tuple[str, ...]) -> Any:
    """``items`` with each dict holding other keys replaced by its view.

    Returns ``items`` itself when none holds other keys, so a context costs no copy then.
    """
    allowed = frozenset(keys)
    converted: list[Any] | None = None
    for position, item in enumerate(items):
        if item.keys() <= allowed:
            continue
        if converted is None:
            converted = list(items)
        converted[position] = view(item, keys)
    return items if converted is None else converted


def _unchanged(ours: Any, host: Any, keys: tuple[str, ...]) -> bool:
    """Whether ``ours`` is still exactly the view of ``host`` it was made as."""
    if keys is MESSAGE_KEYS and "role" in host and "content" in host:
        return (
            len(ours) == 2
            and ours.get("content") is host["content"]
            and ours.get("role") is host["role"]
        )
    present = 0
    for key in keys:
        value = host.get(key, _MISSING)
        if value is _MISSING:
            continue
        present += 1
        if ours.get(key, _MISSING) is not value:
            return False
    return len(ours) == present


def host_item(ours: Any, host: Any, keys: tuple[str, ...]) -> Any:
    """What goes back to strands for ``ours``, a view made of ``host``."""
    if ours is host or _unchanged(ours, host, keys):
        return host
    merged = {key: value for key, value in host.items() if key not in keys}
    merged.update(ours)
    return merged


def host_items(
    ours: Any, views: Any, shown: Sequence[Any], hosts: Any, keys: tuple[str, ...]
) -> Any:
    """What goes back to strands for a list handed out as ``views`` (made of ``hosts``).

    ``shown`` is what ``views`` held when it was handed out (a handler may have changed the list
    in place since: appended, removed, reordered). The host's own list when the handler left the
    list and every view in it unchanged; otherwise a new list in the handler's order, each view
    mapped back with `host_item`.
    """
    if ours is hosts:
        return hosts
    if ours is views and len(views) == len(shown):
        for mine, was, host in zip(views, shown, hosts, strict=True):
            if mine is not was or (mine is not host and not _unchanged(mine, host, keys)):
                break
        else:
            return hosts
    origins = {id(mine): host for mine, host in zip(shown, hosts, strict=True) if mine is not host}
    result: list[Any] = []
    for item in ours:
        host = origins.get(id(item))
        result.append(item if host is None else host_item(item, host, keys))
    return result


def converse_system_prompt(system_prompt: Any) -> Any:
    """The prompt as a handler sees it: one text block is shown as its text.

    strands-agents keeps every system prompt as blocks, even one given as a string; the model
    receives both forms either way, so showing the string keeps a handler's view the same as on
    the reference agent (and a cache key the same for the same prompt).
    """
    if isinstance(system_prompt, list):
        blocks = cast("list[object]", system_prompt)
        if len(blocks) == 1 and isinstance(blocks[0], dict):
            block = cast("dict[str, object]", blocks[0])
            if len(block) == 1 and "text" in block:
                return block["text"]
    return cast(Any, system_prompt)


def host_system_prompt(ours: Any, shown: Any, host: Any) -> Any:
    """strands' own prompt when the handler kept the one it was shown, else the handler's."""
    return host if ours is shown else ours
