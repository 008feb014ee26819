"""`Retry`: run a model call or a tool call again when it fails.

A retry is a Wrap handler that calls ``next_fn`` again; each call opens a fresh inner chain. Three
rules keep it safe:

* **Never swallow control flow.** `InterruptException` (a pause for a human) and cancellation
  are re-raised at once, whatever ``on`` says: retrying a pause would ask the human again and
  retrying a cancellation would ignore it.
* **Never repeat what the consumer already saw.** Events stream through as they arrive; once one
  has been forwarded, a later failure is not retried (the consumer would see the first attempt's
  events followed by the second's), unless ``repeat_events=True`` says that is acceptable. A
  result that fails the ``when`` predicate is held back until the predicate has been asked, so a
  call whose only event is its result can always be retried. A model call always streams text
  before its result, so ``when`` on InvokeModelStage could never act on its own: it is refused
  unless ``repeat_events=True``.
* **Back off.** The delay before attempt ``n + 1`` is ``backoff * factor ** (n - 1)``, capped at
  ``max_delay``, then spread by up to ``jitter`` (a fraction) either way, so many agents retrying
  the same throttled service do not hit it in lockstep.

For a tool call, the terminal has already turned the tool's exception into an error result; the
result's ``exception`` is matched against ``on`` the same way a raised exception is.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from ..engine._stage import Middleware
from ..events import ToolResultEvent, TypedEvent
from ..exceptions import CONTROL_FLOW_EXCEPTIONS
from ..stages._invoke_model import InvokeModelStage
from ._base import (
    CallStage,
    CatalogMiddleware,
    check_call_stage,
    check_function,
    check_whole_number,
    exception_classes,
)

__all__ = ["Retry"]


class Retry(CatalogMiddleware):
    """Retries a model call or a tool call on chosen errors or results.

    Example:
        ```python
        agent.use(Retry(attempts=4, on=(ConnectionError, TimeoutError)))
        agent.use(Retry(ExecuteToolStage, when=lambda r: r.tool_result["status"] == "error"))
        ```

    Args:
        stage: ``InvokeModelStage`` (the default) or ``ExecuteToolStage``.
        attempts: Total tries, the first included (at least 1).
        on: Exception types that are retried. For tool calls, also matched against an error
            result's ``exception``.
        when: A predicate on the result event; True means "retry this result". On
            InvokeModelStage it needs ``repeat_events=True``.
        backoff: Delay in seconds before the second attempt.
        factor: Multiplier for each further delay.
        max_delay: Cap on any single delay, before jitter.
        jitter: Fraction of the delay added or removed at random (0 disables).
        repeat_events: Retry even after events reached the consumer.
        sleep: How to wait (tests pass a recorder).
        draw: Where jitter comes from: a function returning a float in ``[0, 1)``. Code that
            must replay the same delays (a Temporal workflow) passes a seeded source.
    """

    def __init__(
        self,
        stage: CallStage = InvokeModelStage,
        *,
        attempts: int = 3,
        on: type[BaseException] | tuple[type[BaseException], ...] = (Exception,),
        when: Callable[[Any], bool] | None = None,
        backoff: float = 0.5,
        factor: float = 2.0,
        max_delay: float = 30.0,
        jitter: float = 0.1,
        repeat_events: bool = False,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        draw: Callable[[], float] = random.random,
    ) -> None:
        check_call_stage("Retry", stage)
        check_whole_number("Retry", "attempts", attempts, minimum=1)
        errors = exception_classes("Retry", "on", on)
        for name, value in (("backoff", backoff), ("max_delay", max_delay), ("jitter", jitter)):
            if value < 0:
                raise ValueError(f"Retry({name}=...) must be >= 0, got {value!r}")
        if factor < 1:
            raise ValueError(f"Retry(factor=...) must be >= 1, got {factor!r}")
        if when is not None:
            check_function("Retry", "when", when, takes="a predicate on the result")
            if stage is InvokeModelStage and not repeat_events:
                raise ValueError(
                    "Retry(when=...) on InvokeModelStage would never retry: a model call streams "
                    "its text before its result, so by the time the predicate sees the result "
                    "those events have reached the consumer, and a retry would show them twice. "
                    "Pass repeat_events=True if the consumer can take a second attempt's events "
                    "after the first's (it then sees both), or retry on exceptions with on=..."
                )
        self.stage = stage
        self.attempts = attempts
        self.on = errors
        self.when = when
        self.backoff = backoff
        self.factor = factor
        self.max_delay = max_delay
        self.jitter = jitter
        self.repeat_events = repeat_events
        self._sleep = sleep
        self.draw = draw

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
        base = min(self.backoff * self.factor ** (attempt - 1), self.max_delay)
        if self.jitter:
            base *= 1 + self.jitter * (2 * self.draw() - 1)
        return max(base, 0.0)

    def _retryable(self, error: BaseException | None) -> bool:
        return (
            error is not None
            and isinstance(error, self.on)
            and not isinstance(error, CONTROL_FLOW_EXCEPTIONS)
        )

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        result_type: type[TypedEvent] = self.stage.result_event

        async def retry(
            context: Any, next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]]
        ) -> AsyncGenerator[TypedEvent, None]:
            forwarded = False
            for attempt in range(1, self.attempts + 1):
                last_try = attempt == self.attempts
                held: TypedEvent | None = None
                try:
                    async for event in next_fn(context):
                        if isinstance(event, result_type):
                            if held is not None:
                                yield held
                                forwarded = True
                            held = event
                            continue
                        yield event
                        forwarded = True
                except CONTROL_FLOW_EXCEPTIONS:
                    raise
                except Exception as error:
                    if (
                        last_try
                        or not self._retryable(error)
                        or (forwarded and not self.repeat_events)
                    ):
                        raise
                    await self._sleep(self.delay(attempt))
                    continue
                if held is None or last_try or not self._wants_retry(held):
                    if held is not None:
                        yield held
                    return
                if forwarded and not self.repeat_events:
                    yield held
                    return
                await self._sleep(self.delay(attempt))

        retry.__qualname__ = f"Retry[{self.stage.name}]"
        return [self.stage.wrap(retry)]

    def _wants_retry(self, result: TypedEvent) -> bool:
        if isinstance(result, ToolResultEvent) and self._retryable(result.exception):
            return True
        if self.when is not None:
            return bool(self.when(result))
        return False
