"""`UsageBudget`: stop a run once its model calls have spent a token budget, or a money budget.

The usage a model reports with each answer is the one measure of cost every provider shares. The
rules:

* **What is counted.** The ``usage`` of each model call's result (`ModelStopReason`), added up:
  ``inputTokens``, ``outputTokens`` and ``totalTokens`` as the provider reports them (a result
  without ``totalTokens`` counts input plus output). A call that raised before its result
  reported nothing and adds nothing; a result that did arrive counts even if the call failed
  afterwards or its consumer stopped reading, because those tokens were spent.
* **Money.** ``max_cost`` is a budget in US dollars: each call's usage is priced by its model,
  ``inputTokens`` and ``outputTokens`` at the model's list price per million tokens, from the
  table of known models (`strands_middleware.catalog.KNOWN_MODELS`, matched by the ``model_id``
  the model's ``get_config()`` reports), or from ``prices=`` (the same form, by model id
  fragment), which is read first. A model priced nowhere is a `ValueError` before it is called,
  naming ``prices=``: a budget that cannot price a call cannot stop it, and a guess would be
  worse. Spending is counted in millionths of a dollar.
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
  their ``invocation_state`` dict; see `strands_middleware.catalog._call_limit`).
* **Shared, in a store.** With ``store=`` and ``key=``, every agent in every process using that
  store and key spends one budget, for as long as the key lives (so the scope is ``"agent"``;
  an invocation never spans processes). Put a period in the key (``"team-a:2025-06-01"``) for a
  daily budget. A call is let in only while the spending read from the store is under every
  budget; its usage is added when it reports it, in one atomic step. Calls already running when
  the budget is reached finish and count, as the last call does in one process: across
  processes the spending can pass a budget by at most the usage of the calls in flight at that
  moment, and no call starts after it.
* **When the store fails.** By default the call raises `StoreError` naming the item and the
  store; ``on_store_error="allow"`` lets it run unchecked and warns (`StoreWarning`). Usage
  that cannot be added once the call ran warns too: it is not counted.

A `Cache` registered before this item answers hits without reaching it, so replayed answers cost
nothing; registered after it, a hit counts the usage of the call it replays.
"""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ..content import Usage
from ..engine._handlers import MiddlewareNext
from ..engine._stage import Middleware
from ..engine._watch import Enter, Leave, Outcome, watching
from ..events import ModelStopReason, TypedEvent
from ..host._mixin import MiddlewareHostMixin
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
from ._models_known import KNOWN_MODELS, ModelFacts, facts_for, model_id
from ._scoped import Scope, ScopedState, check_invocation_scope, scope_with_store
from ._store_calls import FAILED_OPEN, StoreCalls

__all__ = ["UsageBudget", "UsageBudgetExceeded"]

_WHERE: dict[Scope, str] = {"invocation": "this invocation", "agent": "this agent"}
_BUDGETS = (
    ("max_total_tokens", "total"),
    ("max_input_tokens", "input"),
    ("max_output_tokens", "output"),
)
_FIELDS = ("input", "output", "total", "cost")
"""The counters of a shared budget in its store."""
_MICRO_DOLLARS = 1_000_000
_SPENT_FIELD = {name: field for name, field in _BUDGETS}
"""The `_Spent` field each token budget limits."""


class UsageBudgetExceeded(RuntimeError):
    """A model call was refused because `UsageBudget` found its budget spent.

    Args:
        spent: The tokens spent so far, as a `Usage`.
        exhausted: Each exhausted budget's argument name and limit, e.g.
            ``{"max_total_tokens": 1000}`` or ``{"max_cost": 0.5}``.
        scope: What the budget counts in.
        key: The budget's key in a shared store, or ``None``.
        cost: The US dollars spent so far (0 when no money budget is set).

    Attributes:
        spent: The tokens spent so far.
        exhausted: The exhausted budgets, by argument name.
        scope: What the budget counts in.
        key: The budget's key in a shared store, or ``None``.
        cost: The US dollars spent so far.
    """

    def __init__(
        self,
        spent: Usage,
        exhausted: dict[str, float],
        scope: Scope,
        key: str | None = None,
        cost: float = 0.0,
    ) -> None:
        amounts = _by_budget(spent)
        parts = [
            f"{amounts[name]} {word} tokens of a budget of {exhausted[name]} ({name})"
            for name, word in _BUDGETS
            if name in exhausted
        ]
        if "max_cost" in exhausted:
            parts.append(f"${cost:.4f} of a budget of ${exhausted['max_cost']:.4f} (max_cost)")
        where = _WHERE[scope] if key is None else f"the budget {key!r}"
        super().__init__(
            f"UsageBudget exhausted: {where} spent {' and '.join(parts)}; the run stops "
            "before the next model call"
        )
        self.spent = spent
        self.exhausted = exhausted
        self.scope: Scope = scope
        self.key = key
        self.cost = cost

    def __reduce__(
        self,
    ) -> tuple[type[UsageBudgetExceeded], tuple[Usage, dict[str, float], Scope, str | None, float]]:
        return (type(self), (self.spent, self.exhausted, self.scope, self.key, self.cost))


@dataclass
class _Spent:
    input: int = 0
    output: int = 0
    total: int = 0
    cost: int = 0
    """Millionths of a US dollar."""

    def add(self, amounts: Mapping[str, int]) -> None:
        self.input += amounts["input"]
        self.output += amounts["output"]
        self.total += amounts["total"]
        self.cost += amounts["cost"]

    def usage(self) -> Usage:
        return {"inputTokens": self.input, "outputTokens": self.output, "totalTokens": self.total}


class UsageBudget(CatalogMiddleware):
    """Stops a run before the model call that would start past a token budget.

    Example:
        ```python
        agent.use(UsageBudget(max_total_tokens=50_000))
        agent.use(UsageBudget(max_output_tokens=200_000, scope="agent"))
        dollars = UsageBudget(max_cost=0.50)  # US dollars, each call at its model's list price
        try:
            agent("Research the topic thoroughly")
        except UsageBudgetExceeded as stop:
            print(stop)   # ... spent 50412 total tokens of a budget of 50000 (max_total_tokens) ...
        store = RedisStore.from_url("redis://localhost:6379/0")
        agent.use(UsageBudget(max_total_tokens=10_000_000, store=store, key="team-a:2025-06"))
        ```

    Args:
        max_total_tokens: The most total tokens (as the provider reports them).
        max_input_tokens: The most input tokens.
        max_output_tokens: The most output tokens.
        max_cost: The most US dollars, priced per model (see the module notes).
        prices: Prices (and context windows) by model id fragment, read before the built-in
            table: ``{"my-finetune": ModelFacts(32_000, 1.0, 2.0)}``.
        scope: ``"invocation"`` (the default without a store) or ``"agent"`` (the only scope
            with one).
        store: Where a budget shared by every process is counted (a `CounterStore`, such as
            ``RedisStore``).
        key: The budget's key in ``store`` (required with it).
        on_store_error: ``"raise"`` (the default) or ``"allow"``: see the module notes.
    """

    def __init__(
        self,
        *,
        max_total_tokens: int | None = None,
        max_input_tokens: int | None = None,
        max_output_tokens: int | None = None,
        max_cost: float | None = None,
        prices: Mapping[str, ModelFacts] | None = None,
        scope: Scope | None = None,
        store: CounterStore | None = None,
        key: str | None = None,
        on_store_error: OnStoreError = "raise",
    ) -> None:
        budgets: dict[str, float] = {}
        for name, value in (
            ("max_total_tokens", max_total_tokens),
            ("max_input_tokens", max_input_tokens),
            ("max_output_tokens", max_output_tokens),
        ):
            if value is None:
                continue
            check_whole_number("UsageBudget", name, value, minimum=1, of="tokens")
            budgets[name] = value
        if max_cost is not None:
            given_cost = cast(object, max_cost)
            if (
                isinstance(given_cost, bool)
                or not isinstance(given_cost, (int, float))
                or not math.isfinite(given_cost)
                or given_cost <= 0
            ):
                raise ValueError(
                    f"UsageBudget(max_cost=...) must be a number of US dollars > 0, got "
                    f"{max_cost!r}"
                )
            budgets["max_cost"] = float(given_cost)
        if prices is not None:
            given_prices = cast(object, prices)
            if not isinstance(given_prices, Mapping) or not all(
                isinstance(fragment, str) and fragment and isinstance(facts, ModelFacts)
                for fragment, facts in cast("Mapping[object, object]", given_prices).items()
            ):
                raise TypeError(
                    "UsageBudget(prices=...) takes a mapping of model id fragments to ModelFacts, "
                    f'such as {{"my-finetune": ModelFacts(32_000, 1.0, 2.0)}}, got {prices!r}'
                )
            if max_cost is None:
                raise ValueError(
                    "UsageBudget(prices=...) prices calls for max_cost=...: pass both, or neither"
                )
        if not budgets:
            raise ValueError(
                "UsageBudget needs at least one of max_total_tokens=..., max_input_tokens=..., "
                "max_output_tokens=... or max_cost=..."
            )
        check_on_store_error("UsageBudget", on_store_error)
        check_store_name("UsageBudget", "key", key, store=store, what="the budget")
        resolved = scope_with_store("UsageBudget", scope, store)
        if store is not None:
            check_store("UsageBudget", store, CounterStore, "async counter_add and counter_read")
        self._spent: ScopedState[_Spent] = ScopedState("UsageBudget", resolved, _Spent)
        self.max_total_tokens = max_total_tokens
        self.max_input_tokens = max_input_tokens
        self.max_output_tokens = max_output_tokens
        self.max_cost = max_cost
        self.prices: dict[str, ModelFacts] = {
            fragment.lower(): facts for fragment, facts in (prices or {}).items()
        }
        self.scope: Scope = resolved
        self.store = store
        self.key = key
        self._budgets = budgets
        self._calls = StoreCalls(f"UsageBudget(key={key!r})", store, on_store_error)

    def spent(self, agent: object) -> Usage:
        """What ``agent`` has spent in its current (or latest) scope; zeros before any call.

        Raises:
            RuntimeError: the budget is shared in a store: read it with `spent_in_store`.
        """
        if self.store is not None:
            raise RuntimeError(
                f"UsageBudget(key={self.key!r}) counts in {self.store!r}: read it with "
                "await budget.spent_in_store()"
            )
        state = self._spent.current(agent)
        return (state if state is not None else _Spent()).usage()

    def spent_cost(self, agent: object) -> float:
        """The US dollars ``agent`` has spent in its current (or latest) scope.

        Raises:
            RuntimeError: the budget is shared in a store: read it with `spent_in_store`.
        """
        self.spent(agent)  # the same check
        state = self._spent.current(agent)
        return 0.0 if state is None else state.cost / _MICRO_DOLLARS

    def price(self, model: object, usage: Usage) -> float:
        """What ``usage`` of ``model`` costs in US dollars, at its price (see the module notes).

        Raises:
            ValueError: neither ``prices=`` nor the built-in table prices the model.
        """
        return self._micro_dollars(model, usage) / _MICRO_DOLLARS

    def _facts(self, model: object) -> ModelFacts:
        found = model_id(model)
        facts = facts_for(found, self.prices) or facts_for(found, KNOWN_MODELS)
        if facts is None:
            raise ValueError(
                f"UsageBudget(max_cost=...) cannot price {type(model).__name__} "
                f"(model_id {found!r}): no known model matches it; give its price with "
                'prices={"<model id fragment>": ModelFacts(context_window, input_price, '
                "output_price)}"
            )
        return facts

    def _micro_dollars(self, model: object, usage: Usage) -> int:
        return _priced(self._facts(model), _amounts(usage))

    async def spent_in_store(self) -> Usage:
        """What every process has spent of the shared budget.

        Raises:
            RuntimeError: there is no store (read `spent` instead).
            StoreError: the store failed.
        """
        if self.store is None:
            raise RuntimeError(
                "UsageBudget.spent_in_store(): this budget counts in this process; read "
                "budget.spent(agent)"
            )
        counts = await self.store.counter_read(cast(str, self.key), _FIELDS)
        return _Spent(counts["input"], counts["output"], counts["total"]).usage()

    def _exhausted(self, spent: _Spent) -> dict[str, float]:
        # Run before every model call: reads the counters directly, builds nothing while the
        # budgets hold.
        exhausted: dict[str, float] = {}
        for name, limit in self._budgets.items():
            if name == "max_cost":
                if spent.cost / _MICRO_DOLLARS >= limit:
                    exhausted[name] = limit
            elif getattr(spent, _SPENT_FIELD[name]) >= limit:
                exhausted[name] = limit
        return exhausted

    def _priced_facts(self, model: object) -> ModelFacts | None:
        """The facts a call of ``model`` is priced by (None without a money budget).

        Looked up once per call, before the model is asked: a call that cannot be priced is
        not made, and the usage it reports is priced with the same facts.

        Raises:
            ValueError: the model cannot be priced.
        """
        return self._facts(model) if self.max_cost is not None else None

    @staticmethod
    def _counted(facts: ModelFacts | None, usage: Usage) -> dict[str, int]:
        """What a call's usage adds to each counter, its price included when one is budgeted."""
        amounts = _amounts(usage)
        if facts is not None:
            amounts["cost"] = _priced(facts, amounts)
        return amounts

    def check_registration(self, host: MiddlewareHostMixin, earlier: Sequence[object]) -> None:
        """Refuse ``scope="invocation"`` on a host that keeps no state for a run (`RUN_STATE`):
        every call there would count as an invocation of its own."""
        check_invocation_scope("UsageBudget", "the tokens and money spent", self.scope, host)

    def middleware(self) -> list[Middleware[Any, Any, Any]]:
        admit = self._in_process() if self.store is None else self._in_store(self.store)

        async def usage_budget(
            context: InvokeModelContext, next_fn: MiddlewareNext[InvokeModelContext, TypedEvent]
        ) -> AsyncGenerator[TypedEvent, None]:
            # The generator layer, where the handler is not run as its watch (`watching`): the
            # same before-part and after-part around the call's events.
            count = await admit(context)
            result: ModelStopReason | None = None
            others = _NOT_STOPS
            try:
                async for event in next_fn(context):
                    if event.__class__ not in others:
                        result = _result_of(event, result)
                    yield event
            finally:
                if result is not None:
                    await count(Outcome(None, True, result, False))

        usage_budget.__qualname__ = "UsageBudget[invokeModel]"
        return [InvokeModelStage.wrap(watching(usage_budget, cast(Enter, admit)))]

    def _in_process(self) -> Callable[[InvokeModelContext], Awaitable[Leave]]:
        state = self._spent

        async def admit(context: InvokeModelContext) -> Leave:
            spent = state.get(context.agent, context.invocation_state)
            exhausted = self._exhausted(spent)
            if exhausted:
                raise UsageBudgetExceeded(
                    spent.usage(), exhausted, state.scope, cost=spent.cost / _MICRO_DOLLARS
                )
            facts = self._priced_facts(context.model)

            async def count(outcome: Outcome) -> None:
                # Whatever ended the call: a result that went by was paid for.
                result = outcome.result
                if result is not None and result.usage is not None:
                    spent.add(self._counted(facts, result.usage))

            return count

        return admit

    def _in_store(self, store: CounterStore) -> Callable[[InvokeModelContext], Awaitable[Leave]]:
        key = cast(str, self.key)
        calls = self._calls

        async def admit(context: InvokeModelContext) -> Leave:
            counts = await calls.take(store.counter_read(key, _FIELDS))
            if counts is not FAILED_OPEN:
                spent = _Spent(counts["input"], counts["output"], counts["total"], counts["cost"])
                exhausted = self._exhausted(spent)
                if exhausted:
                    raise UsageBudgetExceeded(
                        spent.usage(), exhausted, "agent", key, cost=spent.cost / _MICRO_DOLLARS
                    )
            facts = self._priced_facts(context.model)

            async def count(outcome: Outcome) -> None:
                result = outcome.result
                if result is not None and result.usage is not None:
                    await calls.settle(
                        store.counter_add(key, self._counted(facts, result.usage)),
                        "count the usage of a call",
                    )

            return count

        return admit


_NOT_STOPS: set[type] = set()
"""Event classes met in a model call's stream that are not `ModelStopReason` (nor a subclass):
a text delta of such a class costs the handler one set lookup."""


def _result_of(event: TypedEvent, result: ModelStopReason | None) -> ModelStopReason | None:
    """``event`` if it is a call's result, else ``result`` as it was."""
    if isinstance(event, ModelStopReason):
        return event
    _NOT_STOPS.add(event.__class__)  # whether a class is a subclass of another never changes
    return result


def _priced(facts: ModelFacts, amounts: Mapping[str, int]) -> int:
    """What the tokens of ``amounts`` cost at ``facts``' prices, in millionths of a dollar."""
    dollars = (
        amounts["input"] * facts.input_price + amounts["output"] * facts.output_price
    ) / 1_000_000
    return math.ceil(dollars * _MICRO_DOLLARS)


def _amounts(usage: Usage) -> dict[str, int]:
    """The tokens a usage report adds to each counter."""
    input_tokens = _tokens(usage, "inputTokens")
    output_tokens = _tokens(usage, "outputTokens")
    total = _tokens(usage, "totalTokens") if "totalTokens" in usage else None
    return {
        "input": input_tokens,
        "output": output_tokens,
        "total": total if total is not None else input_tokens + output_tokens,
        "cost": 0,
    }


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
