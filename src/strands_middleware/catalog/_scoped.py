"""State kept per agent, or per invocation of each agent: where counting items keep their counts.

`CallLimit` and `UsageBudget` count per scope. An invocation is told apart by the identity of its
``invocation_state`` dict, the one object every stage of one invocation shares on every host; an
agent by its identity, held weakly so a dead agent's state goes with it. Given a store, they
count per key instead, across processes (`scope_with_store`).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeAlias, TypeVar

from ..host._mixin import RUN_STATE, MiddlewareHostMixin

__all__ = ["Scope", "ScopedState", "check_invocation_scope", "scope_with_store"]

T = TypeVar("T")

Scope: TypeAlias = Literal["invocation", "agent"]
"""What a counter counts in: each invocation of an agent, or the agent's whole lifetime."""

_SCOPES: tuple[Scope, ...] = ("invocation", "agent")


def scope_with_store(item: str, scope: Scope | None, store: object) -> Scope:
    """The scope an item counts in: with a store only ``"agent"``, the key's lifetime."""
    if store is None:
        return "invocation" if scope is None else scope
    if scope == "invocation":
        raise ValueError(
            f"{item}(store=...) counts per key, across processes, for as long as the key lives; "
            "an invocation runs in one process. Drop scope=... (or pass scope='agent'), or drop "
            "store=... to count per invocation"
        )
    if scope is not None and scope != "agent":
        raise ValueError(f"{item}(scope=...) must be 'invocation' or 'agent', got {scope!r}")
    return "agent"


def check_invocation_scope(item: str, counts: str, scope: Scope, host: MiddlewareHostMixin) -> None:
    """Refuse ``scope="invocation"`` on a host that keeps no state for a run (`RUN_STATE`).

    Such a host hands every call a dict of its own, so each call would look like a new
    invocation and a count per invocation would never pass one: a cap that never stops anything.

    Args:
        item: The item as its user wrote it, e.g. ``"CallLimit"``.
        counts: What it counts per invocation, for the message (``"model and tool calls"``).
        scope: The item's scope.
        host: The host it is registered on.

    Raises:
        ValueError: the scope is ``"invocation"`` and the host lacks run state.
    """
    why = host.lacks.get(RUN_STATE)
    if scope != "invocation" or why is None:
        return
    raise ValueError(
        f"{item}(scope='invocation') cannot run on {type(host).__name__}: {why}. It counts "
        f"{counts} per invocation by that dict, so every call would start a new count and the "
        f"limit would never be reached. Pass {item}(scope='agent', ...) to count for the "
        "agent's lifetime (a fresh agent per run counts per run), or a store and key to count "
        "per key"
    )


class ScopedState(Generic[T]):
    """State per agent, or per invocation of each agent: where `CallLimit` and `UsageBudget` count.

    Agents are told apart by identity, held weakly where they allow it, so a new agent that reuses
    a dead one's ``id()`` starts afresh and a dead agent's state is dropped. Invocations are told
    apart by the identity of their ``invocation_state`` dict (see the module notes).

    Example:
        ```python
        seen: ScopedState[list[str]] = ScopedState("Audit", "invocation", list)
        names = seen.get(context.agent, context.invocation_state)
        ```

    Args:
        item: The catalog item using it, for error messages.
        scope: ``"invocation"`` or ``"agent"``.
        factory: Makes the fresh state of a new scope.

    Raises:
        ValueError: ``scope`` is neither.
    """

    __slots__ = ("_entries", "_factory", "scope")

    def __init__(self, item: str, scope: Scope, factory: Callable[[], T]) -> None:
        if scope not in _SCOPES:
            raise ValueError(f"{item}(scope=...) must be 'invocation' or 'agent', got {scope!r}")
        self.scope: Scope = scope
        self._factory = factory
        self._entries: dict[int, _Entry[T]] = {}

    def get(self, agent: object, invocation_state: dict[str, Any]) -> T:
        """The state of the scope this call belongs to, made fresh if the scope is new."""
        key = id(agent)
        entry = self._entries.get(key)
        if (
            entry is not None
            and entry.agent() is agent
            and (self.scope == "agent" or entry.invocation is invocation_state)
        ):
            return entry.state
        invocation = invocation_state if self.scope == "invocation" else None
        entry = _Entry(self._watch(agent, key), invocation, self._factory())
        self._entries[key] = entry
        return entry.state

    def current(self, agent: object) -> T | None:
        """The state of the agent's current (or latest) scope, or None if it has made no call."""
        entry = self._entries.get(id(agent))
        if entry is None or entry.agent() is not agent:
            return None
        return entry.state

    def __len__(self) -> int:
        """How many agents have state."""
        return len(self._entries)

    def _watch(self, agent: object, key: int) -> Callable[[], object]:
        entries = self._entries

        def forget(ref: object) -> None:
            entry = entries.get(key)
            if entry is not None and entry.agent is ref:
                del entries[key]

        try:
            return weakref.ref(agent, forget)
        except TypeError:  # not weakly referenceable: keep it for the object's lifetime
            return lambda: agent


@dataclass
class _Entry(Generic[T]):
    agent: Callable[[], object]
    invocation: dict[str, Any] | None
    state: T
