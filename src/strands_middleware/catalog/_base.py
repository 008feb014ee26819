"""What catalog items share: the stages they may wrap, and the carrier ``use()`` accepts.

Every catalog item is written against the built-in stages only, so it runs on every host. An
item is an iterable of `Middleware` (one per stage and phase it needs), which is exactly what
``agent.use(...)`` and ``registry.use(...)`` accept: ``agent.use(Retry(attempts=5))``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any, TypeAlias

from ..engine.stage import Middleware, MiddlewareStage
from ..events import ModelStopReason, ToolResultEvent, TypedEvent
from ..stages.execute_tool import ExecuteToolContext, ExecuteToolStage
from ..stages.invoke_model import InvokeModelContext, InvokeModelStage

__all__ = ["CallStage", "CatalogMiddleware", "check_call_stage"]

ModelCallStage: TypeAlias = MiddlewareStage[InvokeModelContext, ModelStopReason, TypedEvent]
ToolCallStage: TypeAlias = MiddlewareStage[ExecuteToolContext, ToolResultEvent, TypedEvent]
CallStage: TypeAlias = ModelCallStage | ToolCallStage
"""``InvokeModelStage`` or ``ExecuteToolStage``: the stages a per-call item can wrap."""


def check_call_stage(item: str, stage: object) -> None:
    """Refuse a stage other than the model-call and tool-call stages, naming the item."""
    if stage is not InvokeModelStage and stage is not ExecuteToolStage:
        raise TypeError(f"{item} wraps InvokeModelStage or ExecuteToolStage; got {stage!r}")


class CatalogMiddleware(ABC):
    """Base of catalog items: iterating one yields the `Middleware` objects it registers."""

    @abstractmethod
    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        """The `Middleware` objects this item registers, in order."""

    def __iter__(self) -> Iterator[Middleware[Any, Any, Any]]:
        return iter(self.middleware())
