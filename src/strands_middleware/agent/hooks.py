"""Lifecycle hooks of the reference agent: events, and the registry that dispatches them.

Hooks observe the loop from outside the middleware chains: they fire once per logical step, so a
middleware that calls ``next_fn`` three times is still one Before/After pair. The one exception
runs the other way: an `AfterToolCallEvent` that sets ``retry`` re-runs the whole tool chain,
so stateful tool middleware runs once per attempt.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..content import Message, ToolResult, ToolUse
from ..events import ModelStopReason
from ..tools import AgentTool
from .result import AgentResult

if TYPE_CHECKING:
    from .agent import Agent

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
    "THookEvent",
]


@dataclass
class HookEvent:
    """Base of every hook event.

    Attributes:
        agent: The agent whose loop fired the event.
    """

    agent: Agent


@dataclass
class BeforeInvocationEvent(HookEvent):
    """An invocation starts (before its input is appended to history)."""


@dataclass
class AfterInvocationEvent(HookEvent):
    """An invocation ended, however it ended; ``result`` is None when it failed."""

    result: AgentResult | None


@dataclass
class MessageAddedEvent(HookEvent):
    """A message was appended to the agent's history."""

    message: Message


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
    """A tool call is about to run; set ``cancel_tool`` (True or a message) to skip it.

    ``tool`` is None when the model asked for a tool the agent does not have; replacing it
    changes the tool the call runs.
    """

    tool_use: ToolUse
    tool: AgentTool | None
    invocation_state: dict[str, Any]
    cancel_tool: bool | str = False


@dataclass
class AfterToolCallEvent(HookEvent):
    """A tool call ended; set ``retry = True`` to run the tool chain again.

    ``result`` may be replaced to change what the model reads.
    """

    tool_use: ToolUse
    tool: AgentTool | None
    invocation_state: dict[str, Any]
    result: ToolResult
    exception: BaseException | None = None
    retry: bool = False


THookEvent = TypeVar("THookEvent", bound=HookEvent)
_After = (AfterInvocationEvent, AfterModelCallEvent, AfterToolCallEvent)


class HookRegistry:
    """Callbacks by event type; "after" events run their callbacks in reverse order.

    Running "after" callbacks last-registered-first pairs them with their "before" callbacks
    like nested scopes, the same way the middleware chain unwinds.
    """

    def __init__(self) -> None:
        # Each list holds callbacks for exactly its key's event type (``add`` pairs them), which
        # the dict's type cannot say; ``fire`` looks them up by ``type(event)``.
        self._callbacks: dict[type[HookEvent], list[Callable[[Any], object]]] = {}

    def add(self, event_type: type[THookEvent], callback: Callable[[THookEvent], object]) -> None:
        """Call ``callback`` with every event of ``event_type``.

        The callback may be a plain function or a coroutine function (its awaitable is awaited
        before the loop goes on); what it returns is otherwise ignored.

        Raises:
            TypeError: ``event_type`` is not a hook event class, or ``callback`` is not callable.
        """
        candidate = cast(object, event_type)
        if not (isinstance(candidate, type) and issubclass(candidate, HookEvent)):
            raise TypeError(f"add_hook() takes a hook event class, got {event_type!r}")
        if not callable(callback):
            raise TypeError(f"add_hook() takes a callable, got {callback!r}")
        self._callbacks.setdefault(event_type, []).append(callback)

    def has(self, event_type: type[HookEvent]) -> bool:
        """Whether any callback is registered for ``event_type`` (so firing it does something)."""
        return event_type in self._callbacks

    async def fire(self, event: THookEvent) -> THookEvent:
        """Run the callbacks for ``event`` and return it (callbacks may have changed it)."""
        callbacks = self._callbacks.get(type(event), [])
        if isinstance(event, _After):
            callbacks = list(reversed(callbacks))
        for callback in callbacks:
            outcome = callback(event)
            if inspect.isawaitable(outcome):
                await outcome
        return event
