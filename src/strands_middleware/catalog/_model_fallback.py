"""`ModelFallback`: when a model call fails, run the same call on the next model in a list.

A fallback is a Wrap handler on InvokeModelStage that calls ``next_fn`` again with
``context.replace(model=...)``. The terminal streams whatever model the context holds, so the
switch lasts for this one call: ``agent.model`` is never touched, and the next call starts from
the agent's own model again. The order is the call's own model (``context.model``: the agent's,
or whatever an Input handler put there), then ``models`` in the order given, skipping any entry
that *is* the call's own model (so listing the primary first is harmless).

Three rules keep it safe, the same as `Retry`'s:

* **Never swallow control flow.** `InterruptException` and cancellation are re-raised at once,
  whatever ``on`` says.
* **Never repeat what the consumer already saw.** Events stream through as they arrive; once
  one has been forwarded (a text delta, say), a later failure is raised as it is: switching
  models then would show the consumer the start of one answer followed by another whole answer.
  Providers fail before their first chunk far more often than after it (throttling, a bad
  credential, an unavailable region), and that is the case this handles.
* **Fail with the real error.** When every model failed, the last model's error is raised, the
  same object, so the caller sees why the last resort failed; each earlier failure is logged as
  a warning on the ``strands_middleware`` logger when the next model takes over.

Hooks see one model call however many models were tried. Register `Retry` *inside* the fallback
(after it) to retry each model before moving on, or outside to retry the whole list.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Sequence
from typing import Any, cast

from ..engine._handlers import MiddlewareNext
from ..engine._stage import Middleware
from ..events import TypedEvent
from ..exceptions import CONTROL_FLOW_EXCEPTIONS
from ..models import Model
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ._base import CatalogMiddleware, exception_classes

__all__ = ["ModelFallback"]

_logger = logging.getLogger("strands_middleware")


class ModelFallback(CatalogMiddleware):
    """Runs a failed model call again on the next model of a list, without touching the agent.

    Example:
        ```python
        agent = Agent(model=primary, middleware=[ModelFallback([backup, last_resort])])
        agent.use(ModelFallback([backup], on=(ConnectionError, TimeoutError)))
        ```

    Args:
        models: The models to fall back to, in order, after the call's own model.
        on: Exception types that move the call to the next model. Anything else is raised at
            once.
    """

    def __init__(
        self,
        models: Sequence[Model],
        *,
        on: type[BaseException] | tuple[type[BaseException], ...] = (Exception,),
    ) -> None:
        given = cast(object, models)  # checked at run time: callers need not be type-checked
        if isinstance(given, (str, bytes)) or not isinstance(given, Sequence):
            raise TypeError(
                f"ModelFallback(models=...) takes a sequence of models, got {models!r}; "
                "write ModelFallback([backup])"
            )
        fallbacks = list(cast("Sequence[object]", given))
        if not fallbacks:
            raise ValueError("ModelFallback(models=...) needs at least one model to fall back to")
        for position, model in enumerate(fallbacks):
            if not callable(getattr(model, "stream", None)):
                raise TypeError(
                    f"ModelFallback(models=...) item {position} is not a model (it has no "
                    f"stream method): {model!r}"
                )
        errors = exception_classes("ModelFallback", "on", on)
        self.models: tuple[Model, ...] = tuple(cast("list[Model]", fallbacks))
        self.on = errors

    def _falls_back(self, error: BaseException) -> bool:
        return isinstance(error, self.on) and not isinstance(error, CONTROL_FLOW_EXCEPTIONS)

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        async def fallback(
            context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            own = context.model
            order = [own, *(model for model in self.models if model is not own)]
            for position, model in enumerate(order):
                attempt = context if model is own else context.replace(model=model)
                forwarded = False
                try:
                    async for event in next_fn(attempt):
                        yield event
                        forwarded = True
                except CONTROL_FLOW_EXCEPTIONS:
                    raise
                except Exception as error:
                    if forwarded or position == len(order) - 1 or not self._falls_back(error):
                        raise
                    _logger.warning(
                        "ModelFallback: model %d of %d (%s) failed with %r; trying the next one",
                        position + 1,
                        len(order),
                        type(model).__name__,
                        error,
                    )
                    continue
                return

        fallback.__qualname__ = f"ModelFallback[{InvokeModelStage.name}]"
        return [InvokeModelStage.wrap(fallback)]
