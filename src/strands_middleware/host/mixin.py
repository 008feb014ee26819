"""`MiddlewareHostMixin`: ``use()`` and typed ``add_middleware()`` for any agent class."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, TypeVar, cast, overload

from typing_extensions import Self

from ..engine.handlers import MiddlewareHandler, MiddlewareInputHandler, StageOutputHandler
from ..engine.registry import MiddlewareRegistry, MiddlewareSource
from ..engine.result import MiddlewareResult
from ..engine.stage import (
    Middleware,
    MiddlewareInputPhase,
    MiddlewareOutputPhase,
    MiddlewareStage,
    MiddlewareWrapPhase,
)
from ..exceptions import UnsupportedStageError

__all__ = ["MiddlewareHostMixin"]

TContext = TypeVar("TContext")
TResult = TypeVar("TResult")
TEvent = TypeVar("TEvent")
TWrapped = TypeVar("TWrapped", bound=MiddlewareResult[Any])


class MiddlewareHostMixin:
    """Gives an agent class a middleware registry with ``use()`` and ``add_middleware()``.

    The registry is created on first use, so the mixin needs no ``__init__`` cooperation. The
    host's stage points then call the runners in `strands_middleware.host` with
    ``self.middleware_registry``.
    """

    _middleware_registry: MiddlewareRegistry | None = None

    refused_stages: ClassVar[Mapping[MiddlewareStage[Any, Any, Any], str]] = {}
    """Stages this host has no place to run, each with the message that refuses a handler there.

    A registration with a handler on one of them raises `UnsupportedStageError` and registers
    nothing: a handler that would never run is refused rather than kept. ``{names}`` in the
    message is replaced by the refused handlers' names.
    """

    @property
    def middleware_registry(self) -> MiddlewareRegistry:
        """This agent's registry."""
        registry = self._middleware_registry
        if registry is None:
            registry = self._middleware_registry = MiddlewareRegistry()
        return registry

    def use(self, *middleware: MiddlewareSource) -> Self:
        """Register `Middleware` objects (or iterables of them); returns the agent for chaining.

        Raises:
            UnsupportedStageError: one of them has a handler on a stage in `refused_stages`;
                nothing is registered.
        """
        if self.refused_stages:
            # An iterable argument is read once, here: the check and the registration see the
            # same handlers.
            middleware = tuple(
                source if isinstance(source, Middleware) else _listed(source)
                for source in middleware
            )
            probe = MiddlewareRegistry()
            probe.use(*middleware)
            self._refuse(probe)
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
        stage_or_phase: MiddlewareOutputPhase[TContext, TResult, TEvent, TWrapped],
        handler: StageOutputHandler[TWrapped, TResult],
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
        """Register ``handler`` on a stage (its Wrap phase) or one of its phase sub-tokens.

        Raises:
            UnsupportedStageError: the stage is in `refused_stages`.
        """
        if self.refused_stages:
            probe = MiddlewareRegistry()
            probe.add_middleware(stage_or_phase, handler)
            self._refuse(probe)
        self.middleware_registry.add_middleware(stage_or_phase, handler)
        self._middleware_registered()

    def _middleware_registered(self) -> None:
        """Called after every successful registration; a host may hook its stage points here."""

    def _refuse(self, probe: MiddlewareRegistry) -> None:
        for stage, message in self.refused_stages.items():
            if probe.has_handlers(stage):
                names = ", ".join(
                    getattr(handler, "__qualname__", repr(handler))
                    for _, handler in probe.handlers(stage)
                )
                raise UnsupportedStageError(message.replace("{names}", names))


def _listed(source: object) -> Any:
    """An iterable argument as a list (what the registry refuses stays as it was)."""
    if isinstance(source, Iterable) and not isinstance(source, (str, bytes)):
        return list(cast("Iterable[object]", source))
    return source
