"""`MiddlewareHostMixin`: ``use()`` and typed ``add_middleware()`` for any agent class."""

from __future__ import annotations

from typing import Any, TypeVar, overload

from typing_extensions import Self

from ..engine.handlers import MiddlewareHandler, MiddlewareInputHandler, MiddlewareOutputHandler
from ..engine.registry import MiddlewareRegistry, MiddlewareSource
from ..engine.stage import (
    MiddlewareInputPhase,
    MiddlewareOutputPhase,
    MiddlewareStage,
    MiddlewareWrapPhase,
)

__all__ = ["MiddlewareHostMixin"]

TContext = TypeVar("TContext")
TResult = TypeVar("TResult")
TEvent = TypeVar("TEvent")


class MiddlewareHostMixin:
    """Gives an agent class a middleware registry with ``use()`` and ``add_middleware()``.

    The registry is created on first use, so the mixin needs no ``__init__`` cooperation. The
    host's stage points then call the runners in `strands_middleware.host` with
    ``self.middleware_registry``.
    """

    _middleware_registry: MiddlewareRegistry | None = None

    @property
    def middleware_registry(self) -> MiddlewareRegistry:
        """This agent's registry."""
        registry = self._middleware_registry
        if registry is None:
            registry = self._middleware_registry = MiddlewareRegistry()
        return registry

    def use(self, *middleware: MiddlewareSource) -> Self:
        """Register `Middleware` objects (or iterables of them); returns the agent for chaining."""
        self.middleware_registry.use(*middleware)
        self._middleware_registered()
        return self

    @overload
    def add_middleware(
        self,
        stage_or_phase: MiddlewareInputPhase[TContext, TResult, TEvent],
        handler: MiddlewareInputHandler[TContext],
    ) -> None: ...

    @overload
    def add_middleware(
        self,
        stage_or_phase: MiddlewareOutputPhase[TContext, TResult, TEvent],
        handler: MiddlewareOutputHandler[TResult],
    ) -> None: ...

    @overload
    def add_middleware(
        self,
        stage_or_phase: (
            MiddlewareStage[TContext, TResult, TEvent]
            | MiddlewareWrapPhase[TContext, TResult, TEvent]
        ),
        handler: MiddlewareHandler[TContext, TEvent],
    ) -> None: ...

    def add_middleware(self, stage_or_phase: Any, handler: Any) -> None:
        """Register ``handler`` on a stage (its Wrap phase) or one of its phase sub-tokens."""
        self.middleware_registry.add_middleware(stage_or_phase, handler)
        self._middleware_registered()

    def _middleware_registered(self) -> None:
        """Called after every successful registration; a host may hook its stage points here."""
