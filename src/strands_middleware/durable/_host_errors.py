"""The provider's exception back from Temporal's `ActivityError`, for handlers in workflow code.

On ``temporalio-strands-agents``' ``TemporalAgent`` the model call is an activity, so a model
error reaches workflow-side handlers as ``temporalio.exceptions.ActivityError``. Its cause is an
``ApplicationError`` that keeps only the original class's **name** (no module) and message: the
class itself is not rebuilt, so ``Retry(on=ModelThrottledException)`` would never match.

How the class is found again: by name, among the exception classes the registered items match on
(``Retry(on=...)``) and every subclass of them loaded in the worker, in that order (the classes
given first, then their subclasses breadth first; the first of a name wins). Matching a handler's
own classes is what it documents (``on=`` names classes, ``isinstance`` matches subclasses), and
the search needs no import of the provider: the class is already loaded wherever ``on=`` names it
or a base of it. A name that none of them carries leaves the `ActivityError` as it is.

What is raised instead: an instance of that class built with the error's message (its
constructor with the message alone, or, when that constructor wants other arguments, the
instance without running it, carrying the message as its only argument), chained to the
`ActivityError` (``raise ... from``) so Temporal's details (attempts, retry state, the activity)
stay reachable.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Any

from temporalio.exceptions import ActivityError, ApplicationError

from ..engine._stage import Middleware
from ..events import ToolResultEvent, TypedEvent
from ..stages._execute_tool import ExecuteToolStage
from ..stages._invoke_model import InvokeModelStage

__all__ = ["ProviderErrors"]


class ProviderErrors:
    """Rebuilds a provider's exception from an `ActivityError`, among classes a handler names."""

    def __init__(self, classes: Iterable[type[BaseException]]) -> None:
        self._roots = tuple(dict.fromkeys(classes))
        self._found: dict[str, type[BaseException] | None] = {}

    def find(self, name: str) -> type[BaseException] | None:
        """The class called ``name`` among the roots and their loaded subclasses, or None."""
        if name not in self._found:
            self._found[name] = self._search(name)
        return self._found[name]

    def _search(self, name: str) -> type[BaseException] | None:
        queue: list[type[BaseException]] = list(self._roots)
        seen: set[type[BaseException]] = set()
        while queue:
            cls = queue.pop(0)
            if cls in seen:
                continue
            seen.add(cls)
            if cls.__name__ == name:
                return cls
            queue.extend(cls.__subclasses__())
        return None

    def rebuild(self, error: BaseException) -> BaseException:
        """The provider's exception ``error`` stands for, or ``error`` itself."""
        if not isinstance(error, ActivityError):
            return error
        cause = error.__cause__
        if not isinstance(cause, ApplicationError) or not cause.type:
            return error
        cls = self.find(cause.type)
        if cls is None or isinstance(error, cls):
            return error
        try:
            rebuilt = cls(cause.message)
        except TypeError:  # a constructor that wants more than the message
            rebuilt = cls.__new__(cls)
            BaseException.__init__(rebuilt, cause.message)
        rebuilt.__cause__ = error
        return rebuilt

    async def _tool_events(
        self, events: AsyncGenerator[TypedEvent, None]
    ) -> AsyncGenerator[TypedEvent, None]:
        """``events`` with the exception of an error result rebuilt."""
        async for event in events:
            failure = event.exception if isinstance(event, ToolResultEvent) else None
            rebuilt = failure if failure is None else self.rebuild(failure)
            if rebuilt is not failure and isinstance(rebuilt, Exception):
                yield ToolResultEvent(event["tool_result"], rebuilt)
            else:
                yield event

    async def _raised(
        self, events: AsyncGenerator[TypedEvent, None]
    ) -> AsyncGenerator[TypedEvent, None]:
        """``events``, with a raised `ActivityError` rebuilt."""
        try:
            async for event in events:
                yield event
        except ActivityError as error:
            rebuilt = self.rebuild(error)
            if rebuilt is error:
                raise
            raise rebuilt from error

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        """Innermost handlers of both stages, which rebuild what the activity raised."""

        async def model_errors(
            context: Any, next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]]
        ) -> AsyncGenerator[TypedEvent, None]:
            async for event in self._raised(next_fn(context)):
                yield event

        async def tool_errors(
            context: Any, next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]]
        ) -> AsyncGenerator[TypedEvent, None]:
            # A tool's failure comes as an error result (strands' TemporalAgent) or raised
            # (pydantic-ai's TemporalDurability): both are rebuilt.
            async for event in self._raised(self._tool_events(next_fn(context))):
                yield event

        model_errors.__qualname__ = "ProviderErrors[invokeModel]"
        tool_errors.__qualname__ = "ProviderErrors[executeTool]"
        return [InvokeModelStage.wrap(model_errors), ExecuteToolStage.wrap(tool_errors)]
