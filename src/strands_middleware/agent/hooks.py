"""Lifecycle hooks of the reference agent: events, and the registry that dispatches them.

Hooks observe the loop from outside the middleware chains: they fire once per logical step, so a
middleware that calls ``next_fn`` three times is still one Before/After pair. The one exception
runs the other way: an `AfterToolCallEvent` that sets ``retry`` re-runs the whole tool chain,
so stateful tool middleware runs once per attempt.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from ..content import Message, ToolResult, ToolUse
from ..events import ModelStopReason
from ..tools import AgentTool

__all__ = [
    "AfterInvocationEvent",
    "AfterModelCallEvent",
    "AfterToolCallEvent",
    "BeforeInvocationEvent",
    "BeforeModelCallEvent",
    "BeforeToolCallEvent",
    "HookEvent",
    "HookRegistry",
    "MessageAddedEvent",
]


@dataclass
class HookEvent:
    """Base of every hook event."""

    agent: Any


@dataclass
class BeforeInvocationEvent(HookEvent):
    """An invocation starts (before its input is appended to history)."""


@dataclass
class AfterInvocationEvent(HookEvent):
    """An invocation ended, however it ended; ``result`` is None when it failed."""

    result: Any = None


@dataclass
class MessageAddedEvent(HookEvent):
    """A message was appended to the agent's history."""

    message: Message = field(default_factory=lambda: Message(role="user", content=[]))


@dataclass
class BeforeModelCallEvent(HookEvent):
    """A model call is about to run (once per call, whatever middleware retries inside it)."""


@dataclass
class AfterModelCallEvent(HookEvent):
    """A model call ended with ``stop_response`` or ``exception``."""

    stop_response: ModelStopReason | None = None
    exception: BaseException | None = None


@dataclass
class BeforeToolCallEvent(HookEvent):
    """A tool call is about to run; set ``cancel_tool`` (True or a message) to skip it."""

    tool_use: ToolUse = field(default_factory=lambda: ToolUse(toolUseId="", name="", input={}))
    tool: AgentTool | None = None
    invocation_state: dict[str, Any] = field(default_factory=dict[str, Any])
    cancel_tool: bool | str = False


@dataclass
class AfterToolCallEvent(HookEvent):
    """A tool call ended; set ``retry = True`` to run the tool chain again.

    ``result`` may be replaced to change what the model reads.
    """

    tool_use: ToolUse = field(default_factory=lambda: ToolUse(toolUseId="", name="", input={}))
    tool: AgentTool | None = None
    invocation_state: dict[str, Any] = field(default_factory=dict[str, Any])
    result: ToolResult | None = None
    exception: BaseException | None = None
    retry: bool = False


TEvent = TypeVar("TEvent", bound=HookEvent)
_After = (AfterInvocationEvent, AfterModelCallEvent, AfterToolCallEvent)


class HookRegistry:
    """Callbacks by event type; "after" events run their callbacks in reverse order.

    Running "after" callbacks last-registered-first pairs them with their "before" callbacks
    like nested scopes, the same way the middleware chain unwinds.
    """

    def __init__(self) -> None:
        self._callbacks: dict[type[HookEvent], list[Callable[[Any], Any]]] = {}

    def add(self, event_type: type[TEvent], callback: Callable[[TEvent], Any]) -> None:
        """Call ``callback`` (sync or async) with every event of ``event_type``."""
        candidate = cast(object, event_type)
        if not (isinstance(candidate, type) and issubclass(candidate, HookEvent)):
            raise TypeError(f"add_hook() takes a hook event class, got {event_type!r}")
        if not callable(callback):
            raise TypeError(f"add_hook() takes a callable, got {callback!r}")
        self._callbacks.setdefault(event_type, []).append(callback)

    async def fire(self, event: TEvent) -> TEvent:
        """Run the callbacks for ``event`` and return it (callbacks may have changed it)."""
        callbacks = self._callbacks.get(type(event), [])
        if isinstance(event, _After):
            callbacks = list(reversed(callbacks))
        for callback in callbacks:
            outcome = callback(event)
            if inspect.isawaitable(outcome):
                await outcome
        return event
