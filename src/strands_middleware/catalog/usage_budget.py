"""`UsageBudget`: stop a run once its model calls have spent a token budget.

The usage a model reports with each answer is the one measure of cost every provider shares. The
rules:

* **What is counted.** The ``usage`` of each model call's result (`ModelStopReason`), added up:
  ``inputTokens``, ``outputTokens`` and ``totalTokens`` as the provider reports them (a result
  without ``totalTokens`` counts input plus output). A call that raised before its result
  reported nothing and adds nothing; a result that did arrive counts even if the call failed
  afterwards or its consumer stopped reading, because those tokens were spent.
* **When the run stops: before the next model call.** A budget is exhausted once the tokens
  spent reach it. The call that gets there is never cut short: its answer is used and the tools
  it asked for run. The next model call raises `UsageBudgetExceeded`, naming what was spent
  against what was allowed, before the model is asked. So a run that reaches its budget on its
  final answer ends normally; with ``scope="agent"`` the next invocation's first model call
  raises.
* **What "stops the run" means on a host.** The exception propagates out of the model call and
  the host fails the run with it, like a provider error: on the reference ``Agent``,
  ``agent(...)`` raises it (``AfterModelCallEvent`` and ``AfterInvocationEvent`` see it) and
  the history ends with the last tool results, unanswered; any host that lets a model error
  propagate does the same. Nothing is invented into the history, and `Retry` with its default
  ``on=(Exception,)`` would retry it in vain: register ``UsageBudget`` before `Retry`.
* **Scope.** ``scope="invocation"`` (the default) gives each invocation of each agent its own
  budget; ``scope="agent"`` one budget for the agent's lifetime. Agents never share spending,
  even when they share the object. Invocations are recognised as `CallLimit` recognises them (by
  their ``invocation_state`` dict; see `strands_middleware.catalog.call_limit`).

A `Cache` registered before this item answers hits without reaching it, so replayed answers cost
nothing; registered after it, a hit counts the usage of the call it replays.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any, cast

from ..content import Usage
from ..engine.handlers import MiddlewareNext
from ..engine.stage import Middleware
from ..events import ModelStopReason, TypedEvent
from ..stages.invoke_model import InvokeModelContext, InvokeModelStage
from ._base import CatalogMiddleware, check_whole_number
from ._scoped import Scope, ScopedState

__all__ = ["UsageBudget", "UsageBudgetExceeded"]

_WHERE: dict[Scope, str] = {"invocation": "this invocation", "agent": "this agent"}
_BUDGETS = (
    ("max_total_tokens", "total"),
    ("max_input_tokens", "input"),
    ("max_output_tokens", "output"),
)


class UsageBudgetExceeded(RuntimeError):
    """A model call was refused because `UsageBudget` found its budget spent.

    Args:
        spent: The tokens spent so far, as a `Usage`.
        exhausted: Each exhausted budget's argument name and limit, e.g.
            ``{"max_total_tokens": 1000}``.
        scope: What the budget counts in.

    Attributes:
        spent: The tokens spent so far.
        exhausted: The exhausted budgets, by argument name.
        scope: What the budget counts in.
    """

    def __init__(self, spent: Usage, exhausted: dict[str, int], scope: Scope) -> None:
        amounts = _by_budget(spent)
        parts = [
            f"{amounts[name]} {word} tokens of a budget of {exhausted[name]} ({name})"
            for name, word in _BUDGETS
            if name in exhausted
        ]
        super().__init__(
            f"UsageBudget exhausted: {_WHERE[scope]} spent {' and '.join(parts)}; the run stops "
            "before the next model call"
        )
        self.spent = spent
        self.exhausted = exhausted
        self.scope: Scope = scope

    def __reduce__(
        self,
    ) -> tuple[type[UsageBudgetExceeded], tuple[Usage, dict[str, int], Scope]]:
        return (type(self), (self.spent, self.exhausted, self.scope))


@dataclass
class _Spent:
    input: int = 0
    output: int = 0
    total: int = 0

    def add(self, usage: Usage) -> None:
        input_tokens = _tokens(usage, "inputTokens")
        output_tokens = _tokens(usage, "outputTokens")
        total = _tokens(usage, "totalTokens") if "totalTokens" in usage else None
        self.input += input_tokens
        self.output += output_tokens
        self.total += total if total is not None else input_tokens + output_tokens

    def usage(self) -> Usage:
        return {"inputTokens": self.input, "outputTokens": self.output, "totalTokens": self.total}


class UsageBudget(CatalogMiddleware):
    """Stops a run before the model call that would start past a token budget.

    Example:
        ```python
        agent.use(UsageBudget(max_total_tokens=50_000))
        agent.use(UsageBudget(max_output_tokens=200_000, scope="agent"))
        try:
            agent("Research the topic thoroughly")
        except UsageBudgetExceeded as stop:
            print(stop)   # ... spent 50412 total tokens of a budget of 50000 (max_total_tokens) ...
        ```

    Args:
        max_total_tokens: The most total tokens (as the provider reports them).
        max_input_tokens: The most input tokens.
        max_output_tokens: The most output tokens.
        scope: ``"invocation"`` (the default) or ``"agent"``.
    """

    def __init__(
        self,
        *,
        max_total_tokens: int | None = None,
        max_input_tokens: int | None = None,
        max_output_tokens: int | None = None,
        scope: Scope = "invocation",
    ) -> None:
        budgets: dict[str, int] = {}
        for name, value in (
            ("max_total_tokens", max_total_tokens),
            ("max_input_tokens", max_input_tokens),
            ("max_output_tokens", max_output_tokens),
        ):
            if value is None:
                continue
            check_whole_number("UsageBudget", name, value, minimum=1, of="tokens")
            budgets[name] = value
        if not budgets:
            raise ValueError(
                "UsageBudget needs at least one of max_total_tokens=..., max_input_tokens=... "
                "or max_output_tokens=..."
            )
        self._spent: ScopedState[_Spent] = ScopedState("UsageBudget", scope, _Spent)
        self.max_total_tokens = max_total_tokens
        self.max_input_tokens = max_input_tokens
        self.max_output_tokens = max_output_tokens
        self.scope: Scope = scope
        self._budgets = budgets

    def spent(self, agent: object) -> Usage:
        """What ``agent`` has spent in its current (or latest) scope; zeros before any call."""
        state = self._spent.current(agent)
        return (state if state is not None else _Spent()).usage()

    def _exhausted(self, spent: _Spent) -> dict[str, int]:
        amounts = _by_budget(spent.usage())
        return {name: limit for name, limit in self._budgets.items() if amounts[name] >= limit}

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        state = self._spent

        async def usage_budget(
            context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            spent = state.get(context.agent, context.invocation_state)
            exhausted = self._exhausted(spent)
            if exhausted:
                raise UsageBudgetExceeded(spent.usage(), exhausted, state.scope)
            usage: Usage | None = None
            try:
                async for event in next_fn(context):
                    if isinstance(event, ModelStopReason):
                        usage = event.usage
                    yield event
            finally:
                if usage is not None:
                    spent.add(usage)

        usage_budget.__qualname__ = "UsageBudget[invokeModel]"
        return [InvokeModelStage.wrap(usage_budget)]


def _by_budget(usage: Usage) -> dict[str, int]:
    """The amount each budget argument limits, read from ``usage``."""
    return {
        "max_total_tokens": usage["totalTokens"],
        "max_input_tokens": usage["inputTokens"],
        "max_output_tokens": usage["outputTokens"],
    }


def _tokens(usage: Usage, key: str) -> int:
    value = cast("dict[str, object]", usage).get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
