"""`RateLimit`: at most ``rate`` model calls (or tool calls) a second, with bursts of ``burst``.

Providers meter requests per second or per minute; going over earns throttling errors, and
retrying them only adds load. A token bucket keeps an agent (or many) under the limit by waiting
instead. The rules:

* **A token bucket.** The bucket holds up to ``burst`` tokens and refills at ``rate`` tokens a
  second. Each call takes one token before ``next_fn`` is called; when the bucket is empty the
  call waits until its token has accrued. Waiting callers reserve their tokens in arrival order,
  so they are served first come, first served and each sleeps exactly once.
* **The state lives on the object, or in a store.** Every agent that uses the same `RateLimit`
  draws from the same bucket, in one event loop or across threads (the bucket belongs to no
  loop). With ``store=`` and ``name=``, every process using that store and name draws from one
  bucket: a ``RedisStore`` keeps it as one number on the server (GCRA, on the server's clock),
  so four workers with ``RateLimit(rate=10, ...)`` start 10 calls a second between them, not
  40. Every process must give one name the same ``rate`` and ``burst``.
* **A token is spent when the call starts, and only given back if it never happened.** A caller
  that is cancelled while it waits returns its reservation, so the callers behind it are not
  delayed for nothing. A call that pauses for a human (an `InterruptException` raised
  inside the chain, or an interrupt event in its stream) also gets its token back: the call
  did not complete and runs again on resume, taking a token of its own then.
  Every other outcome keeps the token spent: a call that failed still hit the provider.
* **When the store fails.** By default the call raises `StoreError` naming the item and the
  store (a ``RedisStore`` gives up after its ``timeout``); ``on_store_error="allow"`` lets the
  call start without a token and warns (`StoreWarning`). A refund that fails only warns.
* **Register it after a cache.** A `Cache` registered before this item answers hits without
  spending a token; a `Retry` registered before it makes each attempt take a token of its own,
  which is what a provider's meter counts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, cast

from ..engine import halts_stage
from ..engine._stage import Middleware
from ..events import TypedEvent
from ..exceptions import InterruptException
from ..stages._invoke_model import InvokeModelStage
from ..stores._memory import InMemoryStore
from ..stores._protocols import RateStore
from ._base import (
    CallStage,
    CatalogMiddleware,
    OnStoreError,
    check_call_stage,
    check_function,
    check_on_store_error,
    check_positive_number,
    check_store,
    check_store_name,
    check_whole_number,
)
from ._store_calls import FAILED_OPEN, StoreCalls

__all__ = ["RateLimit"]


class RateLimit(CatalogMiddleware):
    """Keeps the calls of a stage under ``rate`` a second, across every agent using it.

    Example:
        ```python
        bedrock = RateLimit(rate=2, burst=5)      # 2 calls a second, up to 5 at once
        agent.use(bedrock)
        other_agent.use(bedrock)                  # the same bucket
        agent.use(RateLimit(ExecuteToolStage, rate=10 / 60, burst=1))  # 10 tool calls a minute
        store = RedisStore.from_url("redis://localhost:6379/0")
        agent.use(RateLimit(rate=10, burst=10, store=store, name="bedrock"))  # every worker
        ```

    Args:
        stage: ``InvokeModelStage`` (the default) or ``ExecuteToolStage``.
        rate: Tokens added per second, a finite number above 0.
        burst: How many tokens the bucket holds (at least 1): the calls that may start at once
            after a quiet spell. The bucket starts full.
        store: Where the bucket lives, shared by every process using it (a `RateStore`, such as
            ``RedisStore``); in this object when omitted.
        name: The bucket's name in ``store`` (required with it): every process that should
            share the bucket uses the same name.
        on_store_error: ``"raise"`` (the default) or ``"allow"``: see the module notes.
        clock: The in-process bucket's monotonic clock in seconds (tests pass a fake; not used
            with ``store``, whose clock is its own).
        sleep: How to wait (tests pass one that advances the fake clock).
    """

    def __init__(
        self,
        stage: CallStage = InvokeModelStage,
        *,
        rate: float,
        burst: int,
        store: RateStore | None = None,
        name: str | None = None,
        on_store_error: OnStoreError = "raise",
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        check_call_stage("RateLimit", stage)
        check_positive_number("RateLimit", "rate", rate, of="calls per second")
        check_whole_number("RateLimit", "burst", burst, minimum=1)
        check_function("RateLimit", "clock", clock, takes="a function returning seconds")
        check_function("RateLimit", "sleep", sleep, takes="an async function of seconds")
        check_on_store_error("RateLimit", on_store_error)
        check_store_name("RateLimit", "name", name, store=store, what="the bucket")
        if store is not None:
            check_store("RateLimit", store, RateStore, "async rate_reserve and rate_refund")
            if clock is not time.monotonic:
                raise ValueError(
                    "RateLimit(clock=...) is the in-process bucket's clock; with store=... the "
                    "store keeps time (a RedisStore uses the server's clock)"
                )
        self.stage = stage
        self.rate = float(rate)
        self.burst = burst
        self.name = name
        self.store: RateStore = store if store is not None else InMemoryStore(clock=clock)
        self._sleep = sleep
        self._bucket_name = name if name is not None else "bucket"
        label = f"RateLimit(name={name!r})" if name is not None else "RateLimit"
        self._calls = StoreCalls(label, self.store, on_store_error)

    @property
    def tokens(self) -> float:
        """Tokens in the bucket now; negative while callers wait for reserved tokens.

        Raises:
            RuntimeError: the bucket lives in a shared store, whose level is the store's.
        """
        store = cast(object, self.store)
        if isinstance(store, InMemoryStore):
            level = store.rate_level(self._bucket_name)
            return float(self.burst) if level is None else level  # untouched: still full
        raise RuntimeError(
            f"RateLimit(name={self.name!r}).tokens: the bucket lives in {store!r}, not in this "
            "process"
        )

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        store = self.store
        bucket = self._bucket_name
        rate = self.rate
        burst = self.burst
        calls = self._calls

        async def refund() -> None:
            await calls.settle(
                store.rate_refund(bucket, rate=rate, burst=burst), "give back a token"
            )

        async def rate_limit(
            context: Any, next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]]
        ) -> AsyncGenerator[TypedEvent, None]:
            wait = await calls.take(store.rate_reserve(bucket, rate=rate, burst=burst))
            spent = wait is not FAILED_OPEN
            if wait is not FAILED_OPEN and wait > 0:
                try:
                    await self._sleep(wait)
                except BaseException:
                    await refund()
                    raise
            try:
                async for event in next_fn(context):
                    if spent and halts_stage(event):
                        spent = False
                        await refund()
                    yield event
            except InterruptException:
                if spent:
                    await refund()
                raise

        rate_limit.__qualname__ = f"RateLimit[{self.stage.name}]"
        return [self.stage.wrap(rate_limit)]
