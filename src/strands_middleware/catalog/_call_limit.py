"""`CallLimit`: cap the model calls and tool calls of an invocation, or of an agent's lifetime.

A model stuck in a loop of tool calls burns money and time; a cap turns that into a clear,
bounded failure. One `CallLimit` spans both stages and counts per agent. The rules:

* **What is counted, and when.** A model call or a tool call counts when it starts, before
  ``next_fn``, so calls running at once cannot all slip under the cap: which of them is refused
  is whichever starts last, so it follows the order the host starts them in (LangChain's
  synchronous tool node starts them on threads, in no fixed order). A refused call is not
  counted. A tool call that pauses for a human (an `InterruptException` raised inside the chain,
  or an interrupt event in its stream) is not counted either: it runs again on resume, and
  counts then. ``per_tool`` counts calls by the tool name the model used (unknown tools
  included); ``tool_calls`` counts them all; a call must fit both.
* **At the model cap the run stops, by raising.** The call that would go over raises
  `CallLimitExceeded` before the model is asked, naming the limit; the host fails the run with
  it (on the reference ``Agent``, ``agent(...)`` raises it, after ``AfterModelCallEvent`` and
  ``AfterInvocationEvent``). Nothing is invented: the history ends with the turn that was never
  answered (the prompt, or the last tool results), exactly as after a model call that failed.
* **At a tool cap the model is told.** The refused call is answered with an error result the
  model reads, ``"Tool call limit reached: ..."``, and the run goes on, so the model can answer
  with what it has. The result carries no ``exception``: nothing failed, so `Retry` leaves it
  alone.
* **Scope.** ``scope="invocation"`` (the default) counts each invocation of each agent afresh;
  ``scope="agent"`` counts for as long as the agent lives. Agents never share counts, even when
  they share the object. A resume after an interrupt is a new invocation.
* **Shared, in a store.** With ``store=`` and ``key=`` (and ``scope="agent"``, the only scope a
  store counts in), every agent in every process using that store and key counts against one set
  of caps for as long as the key lives. Each call's check and count are one atomic step in the
  store, so however many processes race, the calls let through never pass a cap. When the store
  fails, the call raises `StoreError` by default; ``on_store_error="allow"`` lets it through
  uncounted and warns (`StoreWarning`); giving a count back (a paused tool call) only warns.

How an invocation is recognised: by its ``invocation_state`` dict. A host makes one dict per
invocation and hands that very dict to every model call and tool call of it (the reference
``Agent`` and ``strands.Agent`` both do), so a call whose ``invocation_state`` is another object
than the last one seen for its agent starts a new invocation. The last dict is held (not copied)
until the next invocation or until the agent is garbage-collected, so its identity cannot be
reused by a later one. A handler that replaces ``invocation_state`` for a single call makes that
call look like a new invocation: replace it for a whole pass (an AgentStreamStage Input handler)
or not at all.

Order matters as it does for any counter: register ``CallLimit`` before `Retry` (outermost) to
count calls as the agent sees them, after it to count every attempt; `Cache` hits registered
before it are not counted. A hook that retries a tool call (``AfterToolCallEvent.retry``) runs the
chain again, so it counts again.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias, cast

from ..engine import halts_stage
from ..engine._handlers import MiddlewareNext
from ..engine._stage import Middleware
from ..events import ToolResultEvent, TypedEvent
from ..exceptions import InterruptException
from ..host._mixin import MiddlewareHostMixin
from ..stages._execute_tool import ExecuteToolContext, ExecuteToolStage
from ..stages._invoke_model import InvokeModelContext, InvokeModelStage
from ..stores._protocols import CounterStore
from ._base import (
    CatalogMiddleware,
    OnStoreError,
    check_on_store_error,
    check_store,
    check_store_name,
    check_whole_number,
)
from ._scoped import Scope, ScopedState, check_invocation_scope, scope_with_store
from ._store_calls import FAILED_OPEN, StoreCalls

__all__ = ["CallLimit", "CallLimitExceeded"]

_WHERE: dict[Scope, str] = {"invocation": "in this invocation", "agent": "by this agent"}


class CallLimitExceeded(RuntimeError):
    """A model call was refused because `CallLimit` capped the model calls.

    Args:
        limit: The cap (``model_calls``).
        scope: What it counts in.
        key: The key it counts under in a shared store, or ``None``.

    Attributes:
        limit: The cap.
        scope: What it counts in.
        key: The key it counts under in a shared store, or ``None``.
    """

    def __init__(self, limit: int, scope: Scope, key: str | None = None) -> None:
        super().__init__(
            f"CallLimit(model_calls={limit}) reached: {_count(limit, 'model call')} already made "
            f"{_where(scope, key)}; the run stops instead of calling the model again"
        )
        self.limit = limit
        self.scope: Scope = scope
        self.key = key

    def __reduce__(self) -> tuple[type[CallLimitExceeded], tuple[int, Scope, str | None]]:
        return (type(self), (self.limit, self.scope, self.key))


@dataclass
class _Calls:
    model: int = 0
    tools: int = 0
    per_tool: dict[str, int] = field(default_factory=lambda: {})


class CallLimit(CatalogMiddleware):
    """Caps model calls and tool calls (in total, or per tool) per invocation or per agent.

    Example:
        ```python
        agent.use(CallLimit(model_calls=20, tool_calls=50, per_tool={"web_search": 5}))
        agent.use(CallLimit(model_calls=1000, scope="agent"))   # over the agent's lifetime
        ```

    Args:
        model_calls: The most model calls; the next one raises `CallLimitExceeded`.
        tool_calls: The most tool calls, all tools together; further calls get an error result.
        per_tool: The most calls of each named tool (0 forbids one); further calls get an error
            result.
        scope: ``"invocation"`` (the default without a store) or ``"agent"`` (the only scope
            with one).
        store: Where caps shared by every process are counted (a `CounterStore`, such as
            ``RedisStore``).
        key: The counts' key in ``store`` (required with it).
        on_store_error: ``"raise"`` (the default) or ``"allow"``: see the module notes.
    """

    def __init__(
        self,
        *,
        model_calls: int | None = None,
        tool_calls: int | None = None,
        per_tool: Mapping[str, int] | None = None,
        scope: Scope | None = None,
        store: CounterStore | None = None,
        key: str | None = None,
        on_store_error: OnStoreError = "raise",
    ) -> None:
        for name, count in (("model_calls", model_calls), ("tool_calls", tool_calls)):
            if count is not None:
                check_whole_number("CallLimit", name, count, minimum=0)
        caps: dict[str, int] = {}
        if per_tool is not None:
            if not isinstance(cast(object, per_tool), Mapping):
                raise TypeError(
                    f"CallLimit(per_tool=...) takes a mapping of tool name to limit, got "
                    f"{per_tool!r}"
                )
            for name, cap in per_tool.items():
                if not isinstance(cast(object, name), str) or not name:
                    raise TypeError(
                        f"CallLimit(per_tool=...) keys are tool names (non-empty str), got {name!r}"
                    )
                given = cast(object, cap)
                if isinstance(given, bool) or not isinstance(given, int) or cap < 0:
                    raise ValueError(
                        "CallLimit(per_tool=...) limits must be whole numbers >= 0, got "
                        f"{cap!r} for {name!r}"
                    )
                caps[name] = cap
        if model_calls is None and tool_calls is None and not caps:
            raise ValueError(
                "CallLimit needs at least one of model_calls=..., tool_calls=... or a non-empty "
                "per_tool=..."
            )
        check_on_store_error("CallLimit", on_store_error)
        check_store_name("CallLimit", "key", key, store=store, what="the counts")
        resolved = scope_with_store("CallLimit", scope, store)
        if store is not None:
            check_store("CallLimit", store, CounterStore, "async counter_add and counter_read")
        self._calls: ScopedState[_Calls] = ScopedState("CallLimit", resolved, _Calls)
        self.model_calls = model_calls
        self.tool_calls = tool_calls
        self.per_tool: Mapping[str, int] = caps
        self.scope: Scope = resolved
        self.store = store
        self.key = key
        self._store_calls = StoreCalls(f"CallLimit(key={key!r})", store, on_store_error)

    def check_registration(self, host: MiddlewareHostMixin, earlier: Sequence[object]) -> None:
        """Refuse ``scope="invocation"`` on a host that keeps no state for a run (`RUN_STATE`):
        every call there would count as an invocation of its own."""
        check_invocation_scope("CallLimit", "model and tool calls", self.scope, host)

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        items: list[Middleware[Any, Any, Any]] = []
        store = self.store
        if self.model_calls is not None:
            model_handler = (
                self._limit_model_calls(self.model_calls)
                if store is None
                else self._limit_model_calls_in(store, self.model_calls)
            )
            model_handler.__qualname__ = "CallLimit[invokeModel]"
            items.append(InvokeModelStage.wrap(model_handler))
        if self.tool_calls is not None or self.per_tool:
            tool_handler = (
                self._limit_tool_calls() if store is None else self._limit_tool_calls_in(store)
            )
            tool_handler.__qualname__ = "CallLimit[executeTool]"
            items.append(ExecuteToolStage.wrap(tool_handler))
        return items

    def _limit_model_calls(self, limit: int) -> _ModelHandler:
        state = self._calls

        async def call_limit(
            context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            calls = state.get(context.agent, context.invocation_state)
            if calls.model >= limit:
                raise CallLimitExceeded(limit, state.scope)
            calls.model += 1
            async for event in next_fn(context):
                yield event

        return call_limit

    def _limit_model_calls_in(self, store: CounterStore, limit: int) -> _ModelHandler:
        key = cast(str, self.key)
        calls = self._store_calls

        async def call_limit(
            context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            counted = await calls.take(
                store.counter_add(key, {"model": 1}, limits={"model": limit})
            )
            if counted is None:
                raise CallLimitExceeded(limit, "agent", key)
            async for event in next_fn(context):
                yield event

        return call_limit

    def _limit_tool_calls(self) -> _ToolHandler:
        state = self._calls

        async def call_limit(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            calls = state.get(context.agent, context.invocation_state)
            name = context.tool_use["name"]
            refusal = self._refusal(calls, name)
            if refusal is not None:
                yield ToolResultEvent.error(context.tool_use["toolUseId"], refusal)
                return
            calls.tools += 1
            calls.per_tool[name] = calls.per_tool.get(name, 0) + 1
            counted = True
            try:
                async for event in next_fn(context):
                    if counted and halts_stage(event):
                        counted = False
                        _uncount(calls, name)
                    yield event
            except InterruptException:
                if counted:
                    _uncount(calls, name)
                raise

        return call_limit

    def _limit_tool_calls_in(self, store: CounterStore) -> _ToolHandler:
        key = cast(str, self.key)
        calls = self._store_calls

        async def call_limit(
            context: ExecuteToolContext, next_fn: MiddlewareNext[ExecuteToolContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            name = context.tool_use["name"]
            fields = {"tools": 1, _tool_field(name): 1}
            limits: dict[str, int] = {}
            if self.tool_calls is not None:
                limits["tools"] = self.tool_calls
            cap = self.per_tool.get(name)
            if cap is not None:
                limits[_tool_field(name)] = cap
            outcome = await calls.take(store.counter_add(key, fields, limits=limits))
            if outcome is None:
                counts = await calls.take(store.counter_read(key, list(fields)))
                seen = (
                    _Calls()
                    if counts is FAILED_OPEN
                    else _Calls(tools=counts["tools"], per_tool={name: counts[_tool_field(name)]})
                )
                refusal = self._refusal(seen, name) or (
                    f"Tool call limit reached {_where('agent', key)}. Do not call any more tools."
                )
                yield ToolResultEvent.error(context.tool_use["toolUseId"], refusal)
                return
            counted = outcome is not FAILED_OPEN

            async def uncount() -> None:
                back = {field: -amount for field, amount in fields.items()}
                await calls.settle(store.counter_add(key, back), "give back a tool call's count")

            try:
                async for event in next_fn(context):
                    if counted and halts_stage(event):
                        counted = False
                        await uncount()
                    yield event
            except InterruptException:
                if counted:
                    await uncount()
                raise

        return call_limit

    def _refusal(self, calls: _Calls, name: str) -> str | None:
        where = _where(self.scope, self.key)
        cap = self.per_tool.get(name)
        if cap is not None and calls.per_tool.get(name, 0) >= cap:
            return (
                f"Tool call limit reached: {name!r} may be called at most "
                f"{_count(cap, 'time')} {where}. Do not call it again."
            )
        if self.tool_calls is not None and calls.tools >= self.tool_calls:
            return (
                f"Tool call limit reached: at most {_count(self.tool_calls, 'tool call')} "
                f"{where}. Do not call any more tools."
            )
        return None


_ModelHandler: TypeAlias = Callable[
    [InvokeModelContext, MiddlewareNext[InvokeModelContext, TypedEvent]],
    AsyncGenerator[TypedEvent, None],
]
_ToolHandler: TypeAlias = Callable[
    [ExecuteToolContext, MiddlewareNext[ExecuteToolContext, TypedEvent]],
    AsyncGenerator[TypedEvent, None],
]


def _where(scope: Scope, key: str | None) -> str:
    return _WHERE[scope] if key is None else f"under the key {key!r}"


def _tool_field(name: str) -> str:
    return f"tool:{name}"


def _uncount(calls: _Calls, name: str) -> None:
    calls.tools -= 1
    calls.per_tool[name] -= 1


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
