"""`Timeout`: bound a model call or a tool call by one deadline.

A hung provider or a tool stuck on the network should cost a bounded amount of time, not the
whole run. Five rules make the bound safe to put anywhere in a chain:

* **One deadline for the whole call.** It starts when the call starts and covers everything up
  to the result, so a stream that keeps trickling events, each well within the limit, still times
  out once the total runs over. The deadline is wall-clock: time the consumer spends on an event
  counts. The consumer itself is never interrupted, though: the deadline is enforced only while
  the handler waits for the inner chain, and a deadline that passed while the consumer held an
  event ends the call before it asks for the next one. The timer is the event loop's, as for
  ``asyncio.timeout``: it rings when the loop gets to run, so events an inner chain produces
  without ever suspending are not cut off mid-burst (a custom ``clock`` is read after each
  event instead, before the wait for the next).
* **Cancel where it waits, then close.** On expiry the inner chain is cancelled at the point it
  is waiting, in the task it runs in (no helper task is created, so none is left behind and
  context variables behave as without a timeout). The `asyncio.CancelledError` unwinds every
  layer innermost first, the order nested ``async with`` blocks unwind in; then the handler
  ``aclose()``s the inner stream, which also finishes any layer that swallowed the cancellation.
* **A model call raises, a tool call answers.** An expired model call raises `CallTimeout`, an
  `asyncio.TimeoutError` and a `TimeoutError`, naming the stage and the limit: ``Retry(on=
  TimeoutError)`` can retry it, and otherwise it fails the run like any provider error. An
  expired tool call yields an error result the model reads, ``"Tool call timed out after 30s"``,
  whose ``exception`` is the `CallTimeout`, just as a tool that raised would.
* **Control flow is never a timeout.** `InterruptException` passes through untouched. A
  cancellation from outside (the agent's task being cancelled) stays a cancellation, even when it
  lands in the same instant as the deadline. This relies on the task's cancellation count, which
  exists from Python 3.11; Python 3.10 cannot tell two cancellations that reach a task in the
  same event-loop step apart, and there the deadline's wins.
* **After the result, the deadline only trims.** Once the result (or an interrupt) has been
  forwarded, an expired deadline closes the inner stream and ends quietly, instead of failing a
  call that already succeeded.

Two consequences worth knowing. A synchronous ``@tool`` function runs in a worker thread, which
nothing can stop: its call gets the timeout result at the deadline while the thread finishes in
the background. And the order against `Retry` decides what is bounded: register ``Retry`` first
(outermost) and ``Timeout`` bounds each attempt; register ``Timeout`` first and it bounds all the
attempts together, back-off included.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncGenerator, Callable
from types import AsyncGeneratorType
from typing import Any, cast

from ..engine import halts_stage
from ..engine._stage import Middleware
from ..events import ToolResultEvent, TypedEvent
from ..stages._execute_tool import ExecuteToolStage
from ..stages._invoke_model import InvokeModelStage
from ._base import (
    CallStage,
    CatalogMiddleware,
    check_call_stage,
    check_function,
    check_positive_number,
)

__all__ = ["CallTimeout", "Timeout"]

if sys.version_info >= (3, 11):
    # asyncio.TimeoutError is the builtin TimeoutError from Python 3.11 on.
    _TimeoutBase = TimeoutError
else:

    class _TimeoutBase(asyncio.TimeoutError, TimeoutError):
        """Both timeout classes Python 3.10 has, so either ``except`` clause catches it."""


class CallTimeout(_TimeoutBase):
    """A model call or a tool call ran past its `Timeout`.

    It is an `asyncio.TimeoutError` and a `TimeoutError` on every supported Python, so existing
    ``except`` clauses and ``Retry(on=TimeoutError)`` catch it.

    Args:
        stage_name: The stage whose call timed out (``"invokeModel"``, ``"executeTool"``).
        seconds: The limit that ran out.

    Attributes:
        stage_name: The stage whose call timed out.
        seconds: The limit that ran out.
    """

    def __init__(self, stage_name: str, seconds: float) -> None:
        super().__init__(
            f"{stage_name} call timed out after {seconds:g}s (Timeout(seconds={seconds!r}) bounds "
            "the whole call, from its start to its result)"
        )
        self.stage_name = stage_name
        self.seconds = seconds

    def __reduce__(self) -> tuple[type[CallTimeout], tuple[str, float]]:
        return (type(self), (self.stage_name, self.seconds))


class Timeout(CatalogMiddleware):
    """Bounds a model call or a tool call, from its start to its result, by ``seconds``.

    Example:
        ```python
        agent.use(Timeout(seconds=60))                   # a model call raises CallTimeout
        agent.use(Timeout(ExecuteToolStage, seconds=5))  # a tool call answers with an error
        agent.use(Retry(on=TimeoutError), Timeout(seconds=20))  # bound and retry each attempt
        ```

    Args:
        stage: ``InvokeModelStage`` (the default) or ``ExecuteToolStage``.
        seconds: The limit for the whole call, a finite number above 0.
        clock: Where the deadline is read from: a monotonic clock in seconds. Tests pass a fake
            to move time on between events; waiting for the inner chain is always bounded by
            the event loop's own timer as well.
    """

    def __init__(
        self,
        stage: CallStage = InvokeModelStage,
        *,
        seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check_call_stage("Timeout", stage)
        check_positive_number("Timeout", "seconds", seconds, of="seconds")
        check_function("Timeout", "clock", clock, takes="a function returning seconds")
        self.stage = stage
        self.seconds = float(seconds)
        self._clock = clock
        # The default clock is the event loop's own, so the deadline's timer never needs moving.
        self._fixed_clock = clock is time.monotonic

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        timed = self._timed

        def timeout(
            context: Any, next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]]
        ) -> AsyncGenerator[TypedEvent, None]:
            # A plain function around the generator, so the alarm can be handed the generator
            # itself: whether it is waiting for the inner chain is then what Python already
            # records (see `_Alarm`), not a flag set and cleared around every event.
            alarm = _Alarm(self.seconds)
            call = timed(context, next_fn, alarm)
            alarm.call = cast("AsyncGeneratorType[TypedEvent, None]", call)
            return call

        timeout.__qualname__ = f"Timeout[{self.stage.name}]"
        return [self.stage.wrap(timeout)]

    async def _timed(
        self,
        context: Any,
        next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]],
        alarm: _Alarm,
    ) -> AsyncGenerator[TypedEvent, None]:
        """One call under the deadline (the rules are in the module docstring)."""
        # One timer for the whole call. With the default clock it is the event loop's own (both
        # are the monotonic clock), so it never needs moving; a custom clock may jump, so then
        # the timer is re-armed before each later wait from what that clock says is left (the
        # first wait is armed with the whole limit, just read from it).
        fixed = self._fixed_clock
        clock = self._clock
        deadline = 0.0 if fixed else clock() + self.seconds
        alarm.arm()
        cancelling = alarm.cancelling
        result_type = self.stage.result_event
        settled = False  # the result or an interrupt has been forwarded
        cause: BaseException | None = None
        stream = next_fn(context)
        try:
            # The only await in the loop is the ``async for``'s own wait for the next event, and
            # the alarm cancels only then, so a cancellation caught below is the alarm's only if
            # `take_back` says it rang. Any other (from outside, thrown in at the ``yield``, or
            # raised in the loop after `take_back` already withdrew the alarm's) goes on.
            try:
                async for event in stream:
                    if alarm.expired:
                        if alarm.take_back() and cancelling() > alarm.base:
                            # The inner chain swallowed the alarm's cancellation and carried
                            # on, and someone else asked to cancel the task meanwhile.
                            raise asyncio.CancelledError
                        break
                    if not settled and (isinstance(event, result_type) or halts_stage(event)):
                        settled = True
                    yield event
                    if alarm.expired:  # it rang while the consumer held the event
                        break
                    if not fixed:
                        remaining = deadline - clock()
                        if remaining <= 0:
                            break
                        alarm.rearm(remaining)
                else:
                    return
            except asyncio.CancelledError as cancelled:
                if not (alarm.take_back() and cancelling() <= alarm.base):
                    raise
                cause = cancelled
            except BaseException:
                alarm.take_back()
                raise
            alarm.disarm()
            await stream.aclose()
            if not settled:
                yield self._expired(context, cause)
        finally:
            alarm.disarm()
            await stream.aclose()

    def _expired(self, context: Any, cause: BaseException | None) -> ToolResultEvent:
        """What an expired call ends with: a model call raises, a tool call answers."""
        error = CallTimeout(self.stage.name, self.seconds)
        error.__cause__ = cause
        if self.stage is not ExecuteToolStage:
            raise error
        return ToolResultEvent.error(
            context.tool_use["toolUseId"], f"Tool call timed out after {self.seconds:g}s", error
        )


class _Alarm:
    """The deadline's timer: cancels the task when it rings, but only while the call waits.

    The call (the handler's generator, `call`) is waiting for the inner chain exactly when it is
    suspended in an ``await``; suspended at a ``yield`` the consumer holds an event. Python
    records which: ``call.ag_await`` is the awaited object in the first case and None in the
    second. A ring that lands while the consumer holds an event cancels nothing; it marks the
    deadline `expired`, and the handler stops before it waits again. The alarm is disarmed
    before the handler awaits anything else (closing the inner stream), so it never cancels
    that.

    Invariant: the alarm cancels the task at most once, only while the call waits, and
    `take_back` withdraws that cancellation, so the task's cancellation count after a call is
    what it was before, whatever the alarm did. A count above `base` (the count when the call
    began, as ``asyncio.timeout`` keeps it) means someone else asked to cancel the task: that
    request is passed on, never taken for the deadline. Reading the count once per call rather
    than once per wait is what ``asyncio.timeout`` does too; it misreads only a cancellation
    that consumer code caught without ``uncancel()`` earlier in the same call, which then wins
    over the deadline.
    """

    __slots__ = ("_delay", "_handle", "_task", "base", "call", "cancelling", "expired", "rang")

    def __init__(self, delay: float) -> None:
        self._delay = delay
        self.call: AsyncGeneratorType[Any, None] | None = None
        self.rang = False
        self.expired = False
        self._handle: asyncio.TimerHandle | None = None

    def arm(self) -> None:
        """Start the timer, from inside the call's task."""
        task = asyncio.current_task()
        if task is None:  # pragma: no cover - every asyncio coroutine runs in a task
            raise RuntimeError("Timeout must run inside an asyncio task")
        self._task = task
        self.cancelling = _cancelling_of(task)
        """The task's count of cancellation requests (always 0 on Python 3.10)."""
        self.base = self.cancelling()
        """The count when the call began (what ``asyncio.timeout`` also compares against)."""
        self._handle = asyncio.get_running_loop().call_later(self._delay, self._ring)

    def _ring(self) -> None:
        self.expired = True
        call = self.call
        if call is not None and call.ag_await is not None:
            self.rang = True
            self._task.cancel()

    def rearm(self, delay: float) -> None:
        """Ring ``delay`` seconds from now instead (for a clock other than the loop's)."""
        self.disarm()
        self._handle = asyncio.get_running_loop().call_later(delay, self._ring)

    def take_back(self) -> bool:
        """Withdraw the alarm's own cancellation, if it rang; return whether it did."""
        if not self.rang:
            return False
        self.rang = False
        _uncancel(self._task)
        return True

    def disarm(self) -> None:
        if self._handle is not None:
            self._handle.cancel()


if sys.version_info >= (3, 11):

    def _cancelling_of(task: asyncio.Task[Any]) -> Callable[[], int]:
        return task.cancelling

    def _uncancel(task: asyncio.Task[Any]) -> None:
        task.uncancel()

else:

    def _cancelling_of(task: asyncio.Task[Any]) -> Callable[[], int]:
        return lambda: 0  # Python 3.10 does not count cancellation requests

    def _uncancel(task: asyncio.Task[Any]) -> None:
        return None
