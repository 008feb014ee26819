"""`RateLimit`: at most ``rate`` model calls (or tool calls) a second, with bursts of ``burst``.

Providers meter requests per second or per minute; going over earns throttling errors, and
retrying them only adds load. A token bucket keeps an agent (or many) under the limit by waiting
instead. The rules:

* **A token bucket.** The bucket holds up to ``burst`` tokens and refills at ``rate`` tokens a
  second. Each call takes one token before ``next_fn`` is called; when the bucket is empty the
  call waits until its token has accrued. Waiting callers reserve their tokens in arrival order,
  so they are served first come, first served and each sleeps exactly once.
* **The state lives on the object.** Every agent that uses the same `RateLimit` draws from the
  same bucket, in one event loop or across threads (the bucket belongs to no loop).
* **A token is spent when the call starts, and only given back if it never happened.** A caller
  that is cancelled while it waits returns its reservation, so the callers behind it are not
  delayed for nothing. A call that pauses for a human (an `InterruptException` raised
  inside the chain, or an interrupt event in its stream) also gets its token back: the call
  did not complete and runs again on resume, taking a token of its own then.
  Every other outcome keeps the token spent: a call that failed still hit the provider.
* **Register it after a cache.** A `Cache` registered before this item answers hits without
  spending a token; a `Retry` registered before it makes each attempt take a token of its own,
  which is what a provider's meter counts.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from ..engine.result import halts_stage
from ..engine.stage import Middleware
from ..events import TypedEvent
from ..exceptions import InterruptException
from ..stages.invoke_model import InvokeModelStage
from ._base import (
    CallStage,
    CatalogMiddleware,
    check_call_stage,
    check_function,
    check_positive_number,
    check_whole_number,
)

__all__ = ["RateLimit"]


class RateLimit(CatalogMiddleware):
    """Keeps the calls of a stage under ``rate`` a second, across every agent using it.

    Example:
        ```python
        bedrock = RateLimit(rate=2, burst=5)      # 2 calls a second, up to 5 at once
        agent.use(bedrock)
        other_agent.use(bedrock)                  # the same bucket
        agent.use(RateLimit(ExecuteToolStage, rate=10 / 60, burst=1))  # 10 tool calls a minute
        ```

    Args:
        stage: ``InvokeModelStage`` (the default) or ``ExecuteToolStage``.
        rate: Tokens added per second, a finite number above 0.
        burst: How many tokens the bucket holds (at least 1): the calls that may start at once
            after a quiet spell. The bucket starts full.
        clock: A monotonic clock in seconds (tests pass a fake).
        sleep: How to wait (tests pass one that advances the fake clock).
    """

    def __init__(
        self,
        stage: CallStage = InvokeModelStage,
        *,
        rate: float,
        burst: int,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        check_call_stage("RateLimit", stage)
        check_positive_number("RateLimit", "rate", rate, of="calls per second")
        check_whole_number("RateLimit", "burst", burst, minimum=1)
        check_function("RateLimit", "clock", clock, takes="a function returning seconds")
        check_function("RateLimit", "sleep", sleep, takes="an async function of seconds")
        self.stage = stage
        self.rate = float(rate)
        self.burst = burst
        self._sleep = sleep
        self._bucket = _Bucket(self.rate, burst, clock)

    @property
    def tokens(self) -> float:
        """Tokens in the bucket now; negative while callers wait for reserved tokens."""
        return self._bucket.level()

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        bucket = self._bucket

        async def rate_limit(
            context: Any, next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]]
        ) -> AsyncGenerator[TypedEvent, None]:
            wait = bucket.take()
            if wait > 0:
                try:
                    await self._sleep(wait)
                except BaseException:
                    bucket.give_back()
                    raise
            spent = True
            try:
                async for event in next_fn(context):
                    if spent and halts_stage(event):
                        spent = False
                        bucket.give_back()
                    yield event
            except InterruptException:
                if spent:
                    bucket.give_back()
                raise

        rate_limit.__qualname__ = f"RateLimit[{self.stage.name}]"
        return [self.stage.wrap(rate_limit)]


class _Bucket:
    """A token bucket whose callers reserve tokens ahead, so each waits exactly once."""

    __slots__ = ("_burst", "_clock", "_lock", "_rate", "_tokens", "_updated")

    def __init__(self, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self._rate = rate
        self._burst = burst
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._updated = clock()

    def _refill(self) -> None:
        now = self._clock()
        elapsed = max(now - self._updated, 0.0)
        self._tokens = min(float(self._burst), self._tokens + elapsed * self._rate)
        self._updated = now

    def level(self) -> float:
        with self._lock:
            self._refill()
            return self._tokens

    def take(self) -> float:
        """Reserve one token; return how many seconds to wait until it has accrued."""
        with self._lock:
            self._refill()
            self._tokens -= 1
            return 0.0 if self._tokens >= 0 else -self._tokens / self._rate

    def give_back(self) -> None:
        """Return a token that was reserved or spent on a call that did not happen."""
        with self._lock:
            self._refill()
            self._tokens = min(float(self._burst), self._tokens + 1)
