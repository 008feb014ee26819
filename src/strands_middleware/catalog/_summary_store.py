"""Where `Summarize` keeps the latest summary of a conversation for other processes to find.

One entry per conversation, under ``"summarize:" + <conversation key>`` in a
`strands_middleware.stores.CacheStore` (an ``InMemoryStore``, or a ``RedisStore`` every worker
shares). The entry is JSON: the summary, how many of the conversation's first messages it
covers, and a digest of those messages. A run resumed in another process (the same history,
given to a new agent) reads it and, when its own first messages have that digest, sends the
summary instead of writing it again. A digest that does not match (another conversation under
the same key, or a history edited since) is a miss, so a summary is never put in front of
messages it does not summarize.

The conversation key is ``key(context)`` when `Summarize` is given ``key=`` (a session id, say
``lambda context: context.invocation_state["session_id"]``), else a digest of the conversation's
first message and system prompt: stable for a history that only grows, with no set-up.

A summary store is a saving, never a gate: a store that fails or holds something unreadable is
a miss with a `StoreWarning`, and the call goes on.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from ..content import Messages, SystemPrompt
from ..exceptions import CONTROL_FLOW_EXCEPTIONS, StoreWarning
from ..stages._invoke_model import InvokeModelContext
from ..stores._protocols import CacheStore
from ._digest import message_bytes

__all__ = ["ConversationKey", "StoredSummary", "SummaryStore"]

ConversationKey = Callable[[InvokeModelContext], "str | None"]
"""Names the conversation of a model call; None keeps that call's summary out of the store."""

_VERSION = 1


@dataclass(frozen=True)
class StoredSummary:
    """A summary of the first ``covers`` messages of a conversation, whose digest is ``prefix``."""

    summary: str
    covers: int
    prefix: str


class SummaryStore:
    """Reads and writes a conversation's latest summary in a `CacheStore`."""

    def __init__(self, store: CacheStore, key: ConversationKey | None, ttl: float | None) -> None:
        self.store = store
        self.key = key
        self.ttl = ttl

    def conversation(self, context: InvokeModelContext) -> str | None:
        """The store key of ``context``'s conversation, or None to leave it out of the store."""
        if self.key is not None:
            named = cast(object, self.key(context))
            if named is None:
                return None
            if not isinstance(named, str) or not named:
                raise TypeError(
                    f"Summarize(key=...) must return a non-empty str or None, got {named!r}"
                )
            return "summarize:" + named
        return "summarize:" + _first(context.messages, context.system_prompt)

    async def read(self, name: str) -> StoredSummary | None:
        """The stored summary under ``name``, or None (nothing, unreadable, or a failed store)."""
        try:
            raw = await self.store.cache_get(name)
        except CONTROL_FLOW_EXCEPTIONS:
            raise
        except Exception as error:
            warnings.warn(
                f"Summarize could not read a summary from its store ({error!r}); writing one",
                StoreWarning,
                stacklevel=2,
            )
            return None
        if raw is None:
            return None
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or cast("dict[str, object]", data).get("v") != _VERSION:
                raise ValueError("not a summary entry")
            entry = cast("dict[str, object]", data)
            summary, covers, prefix = entry["summary"], entry["covers"], entry["prefix"]
            if not (
                isinstance(summary, str)
                and summary
                and isinstance(covers, int)
                and covers > 0
                and isinstance(prefix, str)
            ):
                raise ValueError("a summary entry with missing fields")
        except (ValueError, KeyError) as error:
            warnings.warn(
                f"Summarize found an entry it cannot read under {name!r} ({error}); it will be "
                "overwritten",
                StoreWarning,
                stacklevel=2,
            )
            return None
        return StoredSummary(summary, covers, prefix)

    async def write(self, name: str, entry: StoredSummary) -> None:
        """Keep ``entry`` under ``name``; a failed store only warns."""
        value = json.dumps(
            {
                "v": _VERSION,
                "summary": entry.summary,
                "covers": entry.covers,
                "prefix": entry.prefix,
            }
        ).encode()
        try:
            await self.store.cache_set(name, value, self.ttl)
        except CONTROL_FLOW_EXCEPTIONS:
            raise
        except Exception as error:
            warnings.warn(
                f"Summarize could not keep a summary in its store ({error!r}); other processes "
                "will write their own",
                StoreWarning,
                stacklevel=2,
            )


def _first(messages: Messages, system_prompt: SystemPrompt) -> str:
    """A digest of the conversation's first message and the system prompt."""
    digest = hashlib.sha256(json.dumps(system_prompt, default=str, sort_keys=True).encode())
    if messages:
        digest.update(b"\x00")
        digest.update(message_bytes(messages[0]))
    return digest.hexdigest()
