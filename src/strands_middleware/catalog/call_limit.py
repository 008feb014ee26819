"""`CallLimit`: cap the model calls and tool calls of an invocation, or of an agent's lifetime.

A model stuck in a loop of tool calls burns money and time; a cap turns that into a clear,
bounded failure. One `CallLimit` spans both stages and counts per agent. The rules:

* **What is counted, and when.** A model call or a tool call counts when it starts, before
  ``next_fn``, so calls running at once cannot all slip under the cap. A refused call is not
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

from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from ..engine.handlers import MiddlewareNext
from ..engine.result import halts_stage
from ..engine.stage import Middleware
from ..events import ToolResultEvent, TypedEvent
from ..exceptions import InterruptException
from ..stages.execute_tool import ExecuteToolContext, ExecuteToolStage
from ..stages.invoke_model import InvokeModelContext, InvokeModelStage
from ._base import CatalogMiddleware, check_whole_number
from ._scoped import Scope, ScopedState

__all__ = ["CallLimit", "CallLimitExceeded"]

_WHERE: dict[Scope, str] = {"invocation": "in this invocation", "agent": "by this agent"}


class CallLimitExceeded(RuntimeError):
    """A model call was refused because `CallLimit` capped the model calls.

    Args:
        limit: The cap (``model_calls``).
        scope: What it counts in.

    Attributes:
        limit: The cap.
        scope: What it counts in.
    """

    def __init__(self, limit: int, scope: Scope) -> None:
        super().__init__(
            f"CallLimit(model_calls={limit}) reached: {_count(limit, 'model call')} already made "
            f"{_WHERE[scope]}; the run stops instead of calling the model again"
        )
        self.limit = limit
        self.scope: Scope = scope

    def __reduce__(self) -> tuple[type[CallLimitExceeded], tuple[int, Scope]]:
        return (type(self), (self.limit, self.scope))


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
        scope: ``"invocation"`` (the default) or ``"agent"``.
    """

    def __init__(
        self,
        *,
        model_calls: int | None = None,
        tool_calls: int | None = None,
        per_tool: Mapping[str, int] | None = None,
        scope: Scope = "invocation",
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
        self._calls: ScopedState[_Calls] = ScopedState("CallLimit", scope, _Calls)
        self.model_calls = model_calls
        self.tool_calls = tool_calls
        self.per_tool: Mapping[str, int] = caps
        self.scope: Scope = scope

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        items: list[Middleware[Any, Any, Any]] = []
        if self.model_calls is not None:
            items.append(InvokeModelStage.wrap(self._limit_model_calls(self.model_calls)))
        if self.tool_calls is not None or self.per_tool:
            items.append(ExecuteToolStage.wrap(self._limit_tool_calls()))
        return items

    def _limit_model_calls(
        self, limit: int
    ) -> Callable[
        [InvokeModelContext, MiddlewareNext[InvokeModelContext, TypedEvent]],
        AsyncGenerator[TypedEvent, None],
    ]:
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

        call_limit.__qualname__ = "CallLimit[invokeModel]"
        return call_limit

    def _limit_tool_calls(
        self,
    ) -> Callable[
        [ExecuteToolContext, MiddlewareNext[ExecuteToolContext, TypedEvent]],
        AsyncGenerator[TypedEvent, None],
    ]:
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

        call_limit.__qualname__ = "CallLimit[executeTool]"
        return call_limit

    def _refusal(self, calls: _Calls, name: str) -> str | None:
        where = _WHERE[self.scope]
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


def _uncount(calls: _Calls, name: str) -> None:
    calls.tools -= 1
    calls.per_tool[name] -= 1


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"
