"""`CircuitBreaker`: stop calling a model or a tool that keeps failing, and try it again later.

A circuit is **closed** while calls succeed: they go through, and failures in a row are counted.
At ``failures`` failures in a row it **opens** for ``cooldown`` seconds: every call is refused at
once, without reaching the model or the tool, so a failing provider is not hammered and the
caller learns at once instead of after a timeout. Then it is **half-open**: one call, the probe,
goes through (the others are still refused); its success closes the circuit, its failure opens it
for another cooldown.

* **What fails.** An exception of a class in ``on`` (``Exception`` by default) raised through
  the call; for a tool call, also an error result (``status == "error"``), whose ``exception``
  is matched against ``on`` when it has one. Control flow is neither a success nor a failure:
  a pause for a human, a cancellation, or a consumer that stopped reading leave the count as
  it was (a probe that ends so is released when its lease, one cooldown, runs out).
* **What a refused call does.** A model call raises `CircuitOpen` (a `RuntimeError` with
  ``retry_after`` in seconds), which a `ModelFallback` registered before this item (outside it)
  catches like any model error, so the next model answers. A tool call is answered with an error
  result saying the tool is unavailable and when to try again, which the model reads; the tool
  is not run.
* **One circuit per model, one per tool.** On ``InvokeModelStage`` each model has its own
  circuit, known by the ``model_id`` its ``get_config()`` reports (every strands provider has
  one), else by its class (and, without a store, by the object itself), so a `ModelFallback`'s
  next model is not refused with the one that failed. On ``ExecuteToolStage`` each tool has its
  own circuit, by name, so a failing tool does not cut the others off.
* **Shared through a store.** With ``store=`` (a ``RedisStore``) and ``name=``, every process
  using that store and name shares the circuits: when one worker sees the provider fail, the
  others stop calling it too. Decisions are atomic and timed by the server's clock. When the
  store fails, the call raises `StoreError` by default, or goes through uncounted with
  ``on_store_error="allow"`` (a `StoreWarning` says so).

Register it inside `Retry` (after it) so each attempt counts, or outside (before it) so a call
counts once whatever its retries did; inside `ModelFallback` (after it) so a refused call falls
back.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, Callable
from typing import Any, cast

from ..engine import halts_stage
from ..engine._result import NEVER_HALTING
from ..engine._stage import Middleware
from ..engine._watch import Enter, Leave, Outcome, watching
from ..events import ToolResultEvent, TypedEvent
from ..exceptions import CONTROL_FLOW_EXCEPTIONS
from ..stages._execute_tool import ExecuteToolContext
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ..stores._memory import InMemoryStore
from ..stores._protocols import BreakerStore
from ._base import (
    CallStage,
    CatalogMiddleware,
    OnStoreError,
    check_call_stage,
    check_on_store_error,
    check_positive_number,
    check_store,
    check_store_name,
    check_whole_number,
    exception_classes,
)
from ._models_known import model_id as _model_id
from ._store_calls import FAILED_OPEN, StoreCalls

__all__ = ["CircuitBreaker", "CircuitOpen"]


class CircuitOpen(RuntimeError):
    """A model call refused by an open `CircuitBreaker`, without reaching the model.

    Attributes:
        circuit: The circuit's name (the item's ``name`` or stage, then the model).
        retry_after: Seconds until the circuit lets a call through again.
    """

    def __init__(self, circuit: str, retry_after: float) -> None:
        super().__init__(
            f"the circuit {circuit!r} is open after repeated failures: the call was not made; "
            f"try again in {retry_after:.1f} s (a ModelFallback registered before the "
            "CircuitBreaker answers with the next model meanwhile)"
        )
        self.circuit = circuit
        self.retry_after = retry_after


class CircuitBreaker(CatalogMiddleware):
    """Refuses calls to a model or tool that keeps failing, until a cooldown has passed.

    Example:
        ```python
        agent.use(ModelFallback([backup]), CircuitBreaker(failures=3, cooldown=30))
        agent.use(CircuitBreaker(ExecuteToolStage, failures=5, cooldown=60))  # per tool
        store = RedisStore.from_url("redis://localhost:6379/0")
        shared = CircuitBreaker(store=store, name="bedrock")  # one circuit for every worker
        ```

    Args:
        stage: ``InvokeModelStage`` (the default) or ``ExecuteToolStage``.
        failures: Failures in a row that open the circuit (at least 1).
        cooldown: Seconds an open circuit refuses calls before it lets a probe through.
        on: The exception classes that count as failures (``Exception`` by default).
        store: Where the circuits live, shared by every process using it (a `BreakerStore`,
            such as ``RedisStore``); an in-process `InMemoryStore` when omitted.
        name: The circuit's name in ``store`` (required with it, refused without it).
        on_store_error: ``"raise"`` (the default) or ``"allow"``: see the module notes.
        clock: The in-process store's monotonic clock in seconds (tests pass a fake; not with
            ``store``, whose clock is its own).

    Raises:
        TypeError: a stage other than the model and tool stages, or arguments of the wrong kind.
        ValueError: a number out of range, or ``store`` and ``name`` not given together.
    """

    def __init__(
        self,
        stage: CallStage = InvokeModelStage,
        *,
        failures: int = 5,
        cooldown: float = 30.0,
        on: type[BaseException] | tuple[type[BaseException], ...] = (Exception,),
        store: BreakerStore | None = None,
        name: str | None = None,
        on_store_error: OnStoreError = "raise",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        check_call_stage("CircuitBreaker", stage)
        check_whole_number("CircuitBreaker", "failures", failures, minimum=1)
        check_positive_number("CircuitBreaker", "cooldown", cooldown, of="seconds")
        errors = exception_classes("CircuitBreaker", "on", on)
        check_on_store_error("CircuitBreaker", on_store_error)
        check_store_name("CircuitBreaker", "name", name, store=store, what="the circuit")
        if store is not None:
            check_store(
                "CircuitBreaker", store, BreakerStore, "async breaker_admit and breaker_record"
            )
            if clock is not time.monotonic:
                raise ValueError(
                    "CircuitBreaker(clock=...) is the in-process store's clock; with store=... "
                    "the store keeps time (a RedisStore uses the server's clock)"
                )
        elif not callable(clock):
            raise TypeError(
                f"CircuitBreaker(clock=...) takes a function returning seconds, got {clock!r}"
            )
        self.stage = stage
        self.failures = failures
        self.cooldown = float(cooldown)
        self.on = errors
        self.name = name
        self.store: BreakerStore = store if store is not None else InMemoryStore(clock=clock)
        label = f"CircuitBreaker(name={name!r})" if name is not None else "CircuitBreaker"
        self._calls = StoreCalls(label, self.store, on_store_error)

    def state(self, of: object) -> str:
        """``"closed"``, ``"open"`` or ``"half-open"``: the circuit of a model or a tool now.

        Args:
            of: The model (on ``InvokeModelStage``) or the tool's name (on ``ExecuteToolStage``).

        Raises:
            RuntimeError: the circuit lives in a shared store, whose state is the store's.
        """
        store = cast(object, self.store)
        if not isinstance(store, InMemoryStore):
            raise RuntimeError(
                f"CircuitBreaker(name={self.name!r}).state(): the circuit lives in {store!r}, "
                "not in this process"
            )
        return store.breaker_state(self._circuit(of))

    def _circuit(self, of: object) -> str:
        """The circuit's name in the store: the item's name, then the model's or the tool's."""
        base = self.name if self.name is not None else self.stage.name
        if self.stage is not InvokeModelStage:
            return f"{base}:tool:{of}"
        model_id = _model_id(of)
        if model_id is not None:
            return f"{base}:model:{model_id}"
        kind = f"{type(of).__module__}.{type(of).__qualname__}"
        # Without a store the circuit lives in this process, where the object itself is known.
        return f"{base}:model:{kind}" if self.name is not None else f"{base}:model:{kind}@{id(of)}"

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        store, calls, errors = self.store, self._calls, self.on
        threshold, cooldown = self.failures, self.cooldown
        on_tools = self.stage is not InvokeModelStage

        async def breaker(
            context: Any, next_fn: Callable[[Any], AsyncGenerator[TypedEvent, None]]
        ) -> AsyncGenerator[TypedEvent, None]:
            circuit = self._circuit(
                cast(ExecuteToolContext, context).tool_use["name"]
                if on_tools
                else cast(InvokeModelContext, context).model
            )
            wait = await calls.take(store.breaker_admit(circuit, cooldown=cooldown))
            if wait is not FAILED_OPEN and wait > 0:
                if not on_tools:
                    raise CircuitOpen(circuit, wait)
                yield _unavailable(cast(ExecuteToolContext, context), circuit, wait)
                return
            counted = wait is not FAILED_OPEN
            failed: bool | None = None  # None: the call ended without an outcome to count
            never_halting = NEVER_HALTING
            try:
                if on_tools:
                    async for event in next_fn(context):
                        if event.__class__ not in never_halting and halts_stage(event):
                            counted = False
                        elif isinstance(event, ToolResultEvent):
                            failed = _is_failure(event, errors)
                        yield event
                else:
                    # A model call's events are never tool results: a text delta costs one set
                    # lookup, in a loop of its own.
                    async for event in next_fn(context):
                        if event.__class__ not in never_halting and halts_stage(event):
                            counted = False
                        yield event
                if failed is None:
                    failed = False
            except CONTROL_FLOW_EXCEPTIONS:
                counted = False
                raise
            except GeneratorExit:
                counted = False
                raise
            except errors:
                failed = True
                raise
            finally:
                if counted and failed is not None:
                    await calls.settle(
                        store.breaker_record(
                            circuit, failed=failed, threshold=threshold, cooldown=cooldown
                        ),
                        "count a call's outcome",
                    )

        breaker.__qualname__ = f"CircuitBreaker[{self.stage.name}]"
        if not on_tools:
            watching(breaker, self._watch())
        return [self.stage.wrap(breaker)]

    def _watch(self) -> Enter:
        """The model breaker as a watch (see `watching`): what ``breaker`` does, without a hop."""
        store, calls, errors = self.store, self._calls, self.on
        threshold, cooldown = self.failures, self.cooldown

        async def admit(context: InvokeModelContext) -> Leave | None:
            circuit = self._circuit(context.model)
            wait = await calls.take(store.breaker_admit(circuit, cooldown=cooldown))
            if wait is FAILED_OPEN:
                return None  # the store failed and the call goes through uncounted
            if wait > 0:
                raise CircuitOpen(circuit, wait)

            async def settle(outcome: Outcome) -> None:
                error = outcome.error
                if outcome.halted or not outcome.ended:
                    return  # paused for a human, or left unread: neither success nor failure
                if error is not None and (
                    isinstance(error, _NOT_COUNTED) or not isinstance(error, errors)
                ):
                    return
                await calls.settle(
                    store.breaker_record(
                        circuit, failed=error is not None, threshold=threshold, cooldown=cooldown
                    ),
                    "count a call's outcome",
                )

            return settle

        return cast(Enter, admit)


_NOT_COUNTED = (*CONTROL_FLOW_EXCEPTIONS, GeneratorExit)
"""Exceptions that are control flow, not a call's failure: a call ended by one is not counted."""


def _is_failure(result: ToolResultEvent, errors: tuple[type[BaseException], ...]) -> bool:
    if result.tool_result["status"] != "error":
        return False
    return result.exception is None or isinstance(result.exception, errors)


def _unavailable(context: ExecuteToolContext, circuit: str, wait: float) -> ToolResultEvent:
    name = context.tool_use["name"]
    return ToolResultEvent(
        {
            "toolUseId": context.tool_use["toolUseId"],
            "status": "error",
            "content": [
                {
                    "text": f"The tool {name} is unavailable after repeated failures (circuit "
                    f"{circuit!r} is open); it was not run. Try again in {wait:.0f} s, or do "
                    "without it."
                }
            ],
        }
    )
